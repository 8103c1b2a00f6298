#include "observe/http_client.hpp"

#include <blis/errors.hpp>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <chrono>
#include <limits>
#include <optional>

namespace blis::observation {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using beast::error_code;

ServerUrl parse_server_url(const std::string& url, const std::string& where) {
  const std::string scheme = "http://";
  if (url.rfind("https://", 0) == 0)
    throw InputError(where, "'" + url + "': https is not supported; give the server's plain http:// address "
                                      "(or a local TLS-terminating proxy's)");
  if (url.rfind(scheme, 0) != 0)
    throw InputError(where, "'" + url + "' is not an http:// URL; e.g. --server-url http://localhost:8000");
  std::string rest = url.substr(scheme.size());
  ServerUrl s;
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    s.base_path = rest.substr(slash);
    rest.resize(slash);
    while (!s.base_path.empty() && s.base_path.back() == '/') s.base_path.pop_back();
  }
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
    s.port = rest.substr(colon + 1);
    rest.resize(colon);
    const bool digits = !s.port.empty() && s.port.size() <= 5 &&
                        s.port.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(s.port) == 0 || std::stoi(s.port) > 65535)
      throw InputError(where, "'" + url + "': the port must be a number from 1 to 65535");
  }
  if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') rest = rest.substr(1, rest.size() - 2);
  if (rest.empty()) throw InputError(where, "'" + url + "' names no host; e.g. http://localhost:8000");
  s.host = rest;
  return s;
}

int64_t unix_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

// Runs one asynchronous operation of `ioc` to its end; its error.
template <class Start>
error_code run_one(net::io_context& ioc, Start start) {
  error_code result;
  start([&result](error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

// Splits what arrives into lines and hands each to the handler.
struct LineSplitter {
  const LineHandler& on_line;
  std::string pending;
  void feed(const char* data, size_t n, int64_t at) {
    pending.append(data, n);
    size_t start = 0;
    for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
      size_t end = nl;
      if (end > start && pending[end - 1] == '\r') --end;
      on_line(std::string_view(pending).substr(start, end - start), at);
      start = nl + 1;
    }
    pending.erase(0, start);
  }
  void finish(int64_t at) {
    if (!pending.empty()) on_line(pending, at);
    pending.clear();
  }
};

void fail(HttpOutcome& out, const error_code& ec, const char* during) {
  if (ec == beast::error::timeout) {
    out.timed_out = true;
    out.error = std::string("timed out ") + during;
  } else {
    out.error = std::string(during) + ": " + ec.message();
  }
}

}  // namespace

HttpOutcome http_exchange(const ServerUrl& server, const std::string& method, const std::string& path,
                          const Headers& headers, const std::string& body, int timeout_s,
                          const LineHandler* on_line) {
  HttpOutcome out;
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  tcp::resolver resolver(ioc);
  error_code ec;
  const auto endpoints = resolver.resolve(server.host, server.port, ec);
  if (ec) {
    out.error = "resolving " + server.host + ": " + ec.message();
    return out;
  }
  stream.expires_at(deadline);
  ec = run_one(ioc, [&](auto handler) { stream.async_connect(endpoints, handler); });
  if (ec) {
    fail(out, ec, "connecting");
    return out;
  }
  http::request<http::string_body> req{method == "GET" ? http::verb::get : http::verb::post,
                                       server.base_path + path, 11};
  req.set(http::field::host, server.host + (server.port == "80" ? "" : ":" + server.port));
  req.set(http::field::user_agent, "blis-observe");
  for (const auto& [name, value] : headers) req.set(name, value);
  if (method != "GET") {
    req.body() = body;
    req.prepare_payload();
  }
  stream.expires_at(deadline);
  ec = run_one(ioc, [&](auto handler) { http::async_write(stream, req, handler); });
  if (ec) {
    fail(out, ec, "sending the request");
    return out;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  // No limit; not boost::none, which Boost 1.74 compares wrongly with a
  // Content-Length (every sized body then "exceeds" it).
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  stream.expires_at(deadline);
  ec = run_one(ioc, [&](auto handler) { http::async_read_header(stream, buffer, parser, handler); });
  if (ec) {
    fail(out, ec, "waiting for the response");
    return out;
  }
  out.status = static_cast<int>(parser.get().result_int());
  const bool by_line = on_line != nullptr && out.status == 200;
  std::optional<LineSplitter> lines;
  if (by_line) lines.emplace(LineSplitter{*on_line, {}});
  std::array<char, 16384> chunk{};
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    stream.expires_at(deadline);
    ec = run_one(ioc, [&](auto handler) { http::async_read_some(stream, buffer, parser, handler); });
    if (ec == http::error::need_buffer) ec = {};
    const size_t n = chunk.size() - parser.get().body().size;
    if (n > 0) {
      const int64_t now = unix_micros();
      if (out.first_byte_us == 0) out.first_byte_us = now;
      if (lines) lines->feed(chunk.data(), n, now);
      else out.body.append(chunk.data(), n);
    }
    if (ec) {
      fail(out, ec, "reading the response");
      if (lines) lines->finish(unix_micros());
      return out;
    }
  }
  out.done_us = unix_micros();
  if (lines) lines->finish(out.done_us);
  out.sent = true;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return out;
}

}  // namespace blis::observation
