// `blis serve` end to end (docs/serve.md): the binary started on a free port
// at --time-scale 50, spoken to over HTTP with Boost.Beast: a stream of
// max_tokens chunks and [DONE], the whole answer and its usage, chat,
// /v1/models, /health, /metrics as Prometheus text with vLLM's names, the
// errors of bad requests (the server keeps serving), a stalled client, a
// client that leaves (its request cancelled), and SIGTERM: exit 0.
#include "catch.hpp"
#include "serve_process.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

using blis_test::ServeProcess;

struct Reply {
  int status = 0;
  std::string content_type, body;
};

Reply request(unsigned short port, http::verb verb, const std::string& target, const std::string& body = "") {
  net::io_context io;
  tcp::socket sock(io);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  http::write(sock, req);
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(sock, buf, parser);
  auto res = parser.release();
  return Reply{static_cast<int>(res.result_int()), std::string(res[http::field::content_type]), res.body()};
}

Reply post(unsigned short port, const std::string& target, const std::string& body) {
  return request(port, http::verb::post, target, body);
}

std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("data: ", 0) == 0) out.push_back(line.substr(6));
  return out;
}

// An error the API's way, and the status it came with.
void check_error(const Reply& r, int status, const std::string& message) {
  INFO(r.body);
  CHECK(r.status == status);
  CHECK(r.content_type == "application/json");
  CHECK(r.body.find("{\"error\":{") == 0);
  CHECK(r.body.find("\"type\":\"invalid_request_error\"") != std::string::npos);
  CHECK(r.body.find(message) != std::string::npos);
}

}  // namespace

TEST_CASE("CLI: blis serve answers the OpenAI API from the simulation, and stops on SIGTERM", "[cli][serve]") {
  ServeProcess server("--port 0 --time-scale 50 --model qwen/qwen3-14b --read-timeout 1");
  const unsigned short port = server.port();

  CHECK(request(port, http::verb::get, "/health").status == 200);
  const Reply models = request(port, http::verb::get, "/v1/models");
  CHECK(models.status == 200);
  CHECK(models.body.find("\"id\":\"qwen/qwen3-14b\"") != std::string::npos);

  // A stream: one chunk per token, the last with its finish reason, then [DONE].
  const Reply stream = post(port, "/v1/completions",
                            R"({"model":"qwen/qwen3-14b","prompt":"Say hello to the simulated world","max_tokens":16,"stream":true})");
  CHECK(stream.status == 200);
  CHECK(stream.content_type.find("text/event-stream") == 0);
  const std::vector<std::string> events = sse_data(stream.body);
  REQUIRE(events.size() == 17);
  for (size_t k = 0; k < 16; ++k) {
    INFO(events[k]);
    CHECK(events[k].find("\"object\":\"text_completion\"") != std::string::npos);
    CHECK(events[k].find(k == 15 ? "\"finish_reason\":\"length\"" : "\"finish_reason\":null") != std::string::npos);
  }
  CHECK(events[16] == "[DONE]");

  // stream_options.include_usage: a usage chunk before [DONE]; chat chunks.
  const Reply chat = post(port, "/v1/chat/completions",
                          R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}})");
  const std::vector<std::string> chat_events = sse_data(chat.body);
  REQUIRE(chat_events.size() == 6);
  CHECK(chat_events[0].find("\"delta\":{\"content\":") != std::string::npos);
  CHECK(chat_events[0].find("\"role\":\"assistant\"") != std::string::npos);
  CHECK(chat_events[4].find("\"usage\":{\"completion_tokens\":4,\"prompt_tokens\":6,\"total_tokens\":10}") !=
        std::string::npos);

  // The whole answer; prompt tokens from the text (docs/serve.md), or as given.
  const Reply whole = post(port, "/v1/completions", R"({"prompt":"Hello, world!","max_tokens":5,"ignore_eos":true})");
  CHECK(whole.status == 200);
  CHECK(whole.body.find("\"usage\":{\"completion_tokens\":5,\"prompt_tokens\":4,\"total_tokens\":9}") !=
        std::string::npos);
  const Reply ids = post(port, "/v1/completions", R"({"prompt":[1,2,3,4,5,6,7],"max_tokens":2})");
  CHECK(ids.body.find("\"prompt_tokens\":7") != std::string::npos);

  // Bad requests: an error each, and the server keeps serving.
  check_error(post(port, "/v1/completions", "{not json"), 400, "not valid JSON");
  check_error(post(port, "/v1/completions", R"({"model":"gpt-9","prompt":"a"})"), 404, "gpt-9");
  check_error(post(port, "/v1/completions", R"({"prompt":"a","max_tokens":0})"), 400, "at least 1");
  check_error(post(port, "/v1/completions", R"({"prompt":"a","max_tokens":99999999999})"), 400,
              "maximum context length is 40960");
  check_error(post(port, "/v1/completions", R"({"max_tokens":3})"), 400, "'prompt' is required");
  check_error(post(port, "/v1/chat/completions", R"({"messages":[]})"), 400, "'messages'");
  check_error(request(port, http::verb::get, "/v1/nothing"), 404, "no endpoint");
  {
    // A client that stalls mid-request: 408 after --read-timeout.
    net::io_context io;
    tcp::socket sock(io);
    sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    net::write(sock, net::buffer(std::string("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{\"pro")));
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(sock, buf, res);
    CHECK(res.result_int() == 408);
    CHECK(res.body().find("\"type\":\"invalid_request_error\"") != std::string::npos);
  }
  {
    // A client that leaves mid-stream: its request leaves the simulation.
    net::io_context io;
    tcp::socket sock(io);
    sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    const std::string body = R"({"prompt":"a long one","max_tokens":30000,"stream":true})";
    net::write(sock, net::buffer("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n" + body));
    char some[256];
    sock.read_some(net::buffer(some));
    sock.close();
  }
  std::string metrics;
  for (int i = 0; i < 50; ++i) {  // the cancellation reaches the metrics within a few steps
    metrics = request(port, http::verb::get, "/metrics").body;
    if (metrics.find("finished_reason=\"abort\"} 1") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(request(port, http::verb::get, "/health").status == 200);

  // /metrics: Prometheus text exposition, with vLLM's names.
  INFO(metrics);
  CHECK(metrics.find("finished_reason=\"abort\"} 1") != std::string::npos);
  // A value may have a negative exponent: a wall-clock lag of 8.1e-05 s.
  const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? -?[0-9.e+\-Inf]+$)");
  const std::regex comment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  std::set<std::string> names;
  std::istringstream in(metrics);
  std::string line;
  while (std::getline(in, line)) {
    INFO(line);
    std::smatch m;
    if (std::regex_match(line, m, sample))
      names.insert(m[1]);
    else
      CHECK(std::regex_match(line, comment));
  }
  for (const char* name :
       {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
        "vllm:time_to_first_token_seconds_bucket", "vllm:inter_token_latency_seconds_bucket",
        "vllm:e2e_request_latency_seconds_bucket", "vllm:e2e_request_latency_seconds_count",
        "vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total",
        "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"})
    CHECK(names.count(name) == 1);
  CHECK(metrics.find("vllm:num_requests_running{model_name=\"qwen/qwen3-14b\"} 0\n") != std::string::npos);
  CHECK(metrics.find("vllm:e2e_request_latency_seconds_count{model_name=\"qwen/qwen3-14b\"} 4\n") !=
        std::string::npos);

  CHECK(server.terminate() == 0);
}

TEST_CASE("CLI: blis serve refuses what it cannot serve before listening", "[cli][serve]") {
  // No model: the run's own error; a bad time scale names its flag.
  const std::string bin = std::string(BLIS_TEST_STAGE) + "/bin/blis serve ";
  auto status_of = [&](const std::string& args, std::string& err) {
    const std::string cmd = bin + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) err.append(buf, n);
    const int st = ::pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  std::string err;
  CHECK(status_of("--port 0 --model qwen/qwen3-14b --time-scale 0", err) == 2);
  CHECK(err.find("--time-scale") != std::string::npos);
  err.clear();
  CHECK(status_of("--port 0", err) == 2);
  CHECK(err.find("--model") != std::string::npos);
}
