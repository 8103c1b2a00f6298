// `blis serve`'s HTTP side (Boost.Beast on one Asio thread): sessions read
// requests, answer the cheap endpoints at once and hand completions to the
// simulation thread (serve/driver.hpp), whose progress comes back as
// handlers posted to this thread.
#include "run/live.hpp"
#include "run/resolve.hpp"
#include "serve/driver.hpp"
#include "serve/openai.hpp"
#include "serve/prompt_tokens.hpp"

#include <blis/errors.hpp>
#include <blis/run.hpp>
#include <blis/serve.hpp>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <deque>
#include <iostream>
#include <memory>
#include <sstream>

namespace blis::live {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr size_t kBodyLimit = size_t{8} << 20;

// What the sessions share; all of it used on the I/O thread only, but for
// the driver (thread-safe).
struct Server {
  net::io_context& io;
  Driver& driver;
  ApiLimits limits;
  int32_t block_size = 16;
  std::chrono::milliseconds read_timeout{30000};
  std::chrono::milliseconds grace{30000};
  int64_t active = 0;  // completions not fully answered yet
  uint64_t seeds = 0;  // of the requests' own content
  bool stopping = false;
  tcp::acceptor* acceptor = nullptr;
  std::unique_ptr<net::steady_timer> grace_timer;

  void answered() {
    --active;
    if (stopping && active == 0) io.stop();
  }
};

int64_t unix_now() { return static_cast<int64_t>(std::time(nullptr)); }

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Server& srv) : sock_(std::move(socket)), timer_(sock_.get_executor()), srv_(srv) {}
  void start() {
    beast::error_code ignored;
    sock_.non_blocking(true, ignored);  // watch() reads what is there, never waits
    read();
  }
  // The simulation's news of the current completion (posted by its receiver).
  void on_update(int32_t tokens, std::optional<LiveEnd> end);

 private:
  void read();
  void on_read(beast::error_code ec);
  void handle(http::request<http::string_body>& req);
  void complete(const http::request<http::string_body>& req, bool chat);
  // A whole response, then the next request (or the connection closed).
  void respond(http::status status, const std::string& content_type, std::string body, bool keep_alive);
  void respond_error(const ApiError& e, bool keep_alive) {
    respond(static_cast<http::status>(e.status), "application/json", error_body(e), keep_alive);
  }
  void write(std::string bytes, bool last);
  void write_next();
  void chunk(const std::string& data) { write(fmt::format("{:x}\r\n{}\r\n", data.size(), data), false); }
  void watch();
  void close();
  // The completion is answered (or its client gone): counted once.
  void answered() {
    if (!counted_) return;
    counted_ = false;
    srv_.answered();
  }

  tcp::socket sock_;
  net::steady_timer timer_;
  Server& srv_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool reading_ = false, timed_out_ = false, closed_ = false;

  // Output: whole strings, in order; after the last one of a response, the
  // next request is read (keep_alive_) or the connection closed.
  std::deque<std::pair<std::string, bool>> out_;
  bool writing_ = false, keep_alive_ = true;

  // The completion being answered.
  bool busy_ = false, watching_ = false, head_sent_ = false, counted_ = false;
  Completion comp_;
  ResponseHead head_;
  uint64_t id_ = 0;
  int32_t sent_ = 0;
};

class SessionReceiver final : public Receiver {
 public:
  SessionReceiver(std::shared_ptr<Session> s, net::io_context& io) : s_(std::move(s)), io_(io) {}
  // The session is let go on its own thread.
  ~SessionReceiver() override { net::post(io_, [s = std::move(s_)] {}); }
  SessionReceiver(const SessionReceiver&) = delete;
  SessionReceiver& operator=(const SessionReceiver&) = delete;
  void update(int32_t tokens, std::optional<LiveEnd> end) override {
    net::post(io_, [s = s_, tokens, end] { s->on_update(tokens, end); });
  }

 private:
  std::shared_ptr<Session> s_;
  net::io_context& io_;
};

void Session::read() {
  if (closed_) return;
  parser_.emplace();
  parser_->body_limit(kBodyLimit);
  reading_ = true;
  timed_out_ = false;
  timer_.expires_after(srv_.read_timeout);
  timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || !self->reading_) return;
    self->timed_out_ = true;
    beast::error_code ignored;
    self->sock_.cancel(ignored);
  });
  http::async_read(sock_, buf_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
}

void Session::on_read(beast::error_code ec) {
  reading_ = false;
  timer_.cancel();
  if (timed_out_) {
    // A client that stalls mid-request is told so; an idle keep-alive one is let go.
    if (parser_->got_some() || buf_.size() > 0)
      return respond_error(ApiError{408, fmt::format("the request was not received within {} s",
                                                     static_cast<double>(srv_.read_timeout.count()) / 1000),
                                    "invalid_request_error", "", ""},
                           false);
    return close();
  }
  if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset) return close();
  if (ec == http::error::body_limit)
    return respond_error(ApiError{413, fmt::format("the body is larger than {} bytes", kBodyLimit),
                                  "invalid_request_error", "", ""}, false);
  if (ec) {
    if (parser_->got_some())
      return respond_error(ApiError{400, "malformed HTTP request: " + ec.message(), "invalid_request_error", "", ""},
                           false);
    return close();
  }
  http::request<http::string_body> req = parser_->release();
  handle(req);
}

void Session::handle(http::request<http::string_body>& req) {
  const bool keep = req.keep_alive();
  const std::string target(req.target().substr(0, req.target().find('?')));
  const bool get = req.method() == http::verb::get, post = req.method() == http::verb::post;
  auto wrong_method = [&](const char* allowed) {
    respond_error(ApiError{405, fmt::format("{} takes {}", target, allowed), "invalid_request_error", "", ""}, keep);
  };
  if (target == "/health") {
    if (!get) return wrong_method("GET");
    return respond(srv_.stopping ? http::status::service_unavailable : http::status::ok, "text/plain", "", keep);
  }
  if (target == "/metrics") {
    if (!get) return wrong_method("GET");
    return respond(http::status::ok, "text/plain; version=0.0.4; charset=utf-8",
                   srv_.driver.metrics_text(srv_.limits.model), keep);
  }
  if (target == "/v1/models") {
    if (!get) return wrong_method("GET");
    return respond(http::status::ok, "application/json", models_body(srv_.limits, unix_now()), keep);
  }
  if (target == "/v1/completions" || target == "/v1/chat/completions") {
    if (!post) return wrong_method("POST");
    return complete(req, target == "/v1/chat/completions");
  }
  respond_error(ApiError{404, fmt::format("no endpoint {} {}", std::string(req.method_string()), target),
                         "invalid_request_error", "", ""},
                keep);
}

void Session::complete(const http::request<http::string_body>& req, bool chat) {
  keep_alive_ = req.keep_alive();
  if (srv_.stopping)
    return respond_error(ApiError{503, "the server is shutting down", "server_error", "", ""}, false);
  Parsed p = parse_completion(req.body(), chat, srv_.limits);
  if (!p.request) return respond_error(p.error, keep_alive_);
  comp_ = std::move(*p.request);
  WorkloadRequest spec;
  spec.input_tokens = static_cast<int32_t>(comp_.prompt.size());
  spec.output_tokens = comp_.max_tokens;
  spec.max_output_tokens = comp_.max_tokens;
  spec.block_hashes = prompt_block_hashes(comp_.prompt, srv_.block_size);
  spec.shareable_blocks = static_cast<int32_t>(spec.block_hashes.size());
  busy_ = true;
  head_sent_ = false;
  sent_ = 0;
  counted_ = true;
  ++srv_.active;
  spec.own_content = mix64(++srv_.seeds) | 1;  // its output: content no other request has
  id_ = srv_.driver.submit(std::move(spec), std::make_shared<SessionReceiver>(shared_from_this(), srv_.io));
  head_ = ResponseHead{id_, unix_now(), srv_.limits.model, chat};
  watch();
}

// While the completion runs, a client that closes its connection cancels it.
void Session::watch() {
  if (watching_ || !busy_) return;
  watching_ = true;
  sock_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
    self->watching_ = false;
    if (ec || !self->busy_) return;
    beast::error_code rec;
    const size_t n = self->sock_.read_some(self->buf_.prepare(4096), rec);
    if (n > 0) {
      self->buf_.commit(n);  // the next request, pipelined: read once this one is answered
      return;
    }
    if (rec == net::error::would_block || rec == net::error::try_again) return self->watch();
    self->srv_.driver.cancel(self->id_);  // gone: the simulation lets its request go
    self->closed_ = true;
  });
}

void Session::on_update(int32_t tokens, std::optional<LiveEnd> end) {
  if (!busy_) return;
  const int32_t prompt = static_cast<int32_t>(comp_.prompt.size());
  const bool done = end.has_value();
  if (done && *end != LiveEnd::Completed && !head_sent_) {
    busy_ = false;
    if (closed_) {
      answered();
      return close();
    }
    if (*end == LiveEnd::Rejected)
      return respond_error(ApiError{429, "the admission policy rejected the request", "rate_limit_error", "", ""},
                           keep_alive_);
    if (*end == LiveEnd::Dropped)
      return respond_error(ApiError{400, "no instance can ever serve this request: its prompt and max_tokens exceed "
                                         "the KV cache or max-model-len",
                                    "invalid_request_error", "", ""},
                           keep_alive_);
    return respond_error(ApiError{503, "the request was cancelled (the server is shutting down)", "server_error", "", ""},
                         keep_alive_);
  }
  if (closed_) {
    if (done) {
      busy_ = false;
      answered();
      close();
    }
    return;
  }
  if (!comp_.stream) {
    if (!done) return;
    busy_ = false;
    return respond(http::status::ok, "application/json",
                   completion_body(head_, prompt, tokens, *end == LiveEnd::Completed ? "length" : "abort"),
                   keep_alive_);
  }
  if (!head_sent_) {
    head_sent_ = true;
    http::response<http::empty_body> res{http::status::ok, 11};
    res.set(http::field::server, "blis");
    res.set(http::field::content_type, "text/event-stream; charset=utf-8");
    res.set(http::field::cache_control, "no-cache");
    res.keep_alive(keep_alive_);
    res.chunked(true);
    std::ostringstream os;
    os << res.base();
    write(os.str(), false);
  }
  std::string events;
  // A request ends with its max_tokens-th token (no end-of-sequence is
  // simulated, and max-model-len was checked): that one says so.
  const int32_t last = comp_.max_tokens;
  for (; sent_ < tokens && sent_ < last; ++sent_) events += token_event(head_, sent_, sent_ + 1 == last ? "length" : "");
  if (done) {
    if (*end != LiveEnd::Completed) events += abort_event(head_);
    if (comp_.include_usage) events += usage_event(head_, prompt, sent_);
    events += "data: [DONE]\n\n";
  }
  if (!events.empty()) chunk(events);
  if (done) {
    busy_ = false;
    write("0\r\n\r\n", true);
  }
}

void Session::respond(http::status status, const std::string& content_type, std::string body, bool keep_alive) {
  http::response<http::string_body> res{status, 11};
  res.set(http::field::server, "blis");
  res.set(http::field::content_type, content_type);
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  keep_alive_ = keep_alive;
  std::ostringstream os;
  os << res;
  write(os.str(), true);
}

void Session::write(std::string bytes, bool last) {
  out_.emplace_back(std::move(bytes), last);
  if (!writing_) write_next();
}

void Session::write_next() {
  if (out_.empty()) {
    writing_ = false;
    return;
  }
  writing_ = true;
  net::async_write(sock_, net::buffer(out_.front().first),
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     const bool last = self->out_.front().second;
                     self->out_.pop_front();
                     if (ec) {
                       self->closed_ = true;
                       if (self->busy_) {
                         self->srv_.driver.cancel(self->id_);  // a stream whose client left: it ends later
                       } else {
                         self->answered();
                         self->close();
                       }
                       self->out_.clear();
                       self->writing_ = false;
                       return;
                     }
                     if (last) {
                       self->head_sent_ = false;
                       self->writing_ = false;
                       self->out_.clear();
                       if (!self->busy_) self->answered();
                       if (self->keep_alive_ && !self->srv_.stopping) return self->read();
                       return self->close();
                     }
                     self->write_next();
                   });
}

void Session::close() {
  closed_ = true;
  beast::error_code ec;
  sock_.shutdown(tcp::socket::shutdown_both, ec);
  sock_.close(ec);
}

void accept(tcp::acceptor& acceptor, Server& srv) {
  acceptor.async_accept([&acceptor, &srv](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (!ec) {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Session>(std::move(socket), srv)->start();
    }
    accept(acceptor, srv);
  });
}

}  // namespace
}  // namespace blis::live

namespace blis {

int serve(const ServeRequest& req) {
  using namespace live;
  if (!(req.time_scale > 0) || req.time_scale > 1e6)
    throw InputError("--time-scale", fmt::format("must be in (0, 1000000], got {}", req.time_scale));
  if (req.port < 0 || req.port > 65535) throw InputError("--port", fmt::format("must be in [0, 65535], got {}", req.port));
  if (!(req.read_timeout > 0)) throw InputError("--read-timeout", "must be > 0");
  if (!(req.shutdown_grace >= 0)) throw InputError("--shutdown-grace", "must be >= 0");
  const RunConfig config = build_config({&req.command_line});
  set_log_level(config.outputs.log_level);

  // Declared in this order, they go in the reverse one: the simulation
  // thread stops before the simulation goes, and the driver's receivers
  // (which post to `io`) go before `io`.
  net::io_context io(1);
  Driver driver(req.time_scale);
  std::unique_ptr<LiveRun> online = open_live_run(config, driver);
  driver.attach(*online->sim, online->cc.engine.block_size);
  struct StopFirst {
    Driver& d;
    ~StopFirst() { d.stop(); }
  } stop_first{driver};
  Server srv{io, driver, ApiLimits{}, online->cc.engine.block_size, {}, {}, 0, 0, false, nullptr, nullptr};
  srv.limits.model = req.served_model_name.empty() ? online->r.config.pool().model.name.value_or("blis")
                                                   : req.served_model_name;
  srv.limits.max_model_len = online->cc.engine.max_model_len;
  srv.read_timeout = std::chrono::milliseconds(static_cast<int64_t>(req.read_timeout * 1000));
  srv.grace = std::chrono::milliseconds(static_cast<int64_t>(req.shutdown_grace * 1000));

  tcp::acceptor acceptor(io);
  beast::error_code ec;
  const auto address = net::ip::make_address(req.host, ec);
  if (ec) throw InputError("--host", fmt::format("'{}' is not an IP address: {}", req.host, ec.message()));
  const tcp::endpoint at{address, static_cast<unsigned short>(req.port)};
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw InputError("--port", fmt::format("cannot listen on {}:{}: {}", req.host, req.port, ec.message()));
  srv.acceptor = &acceptor;

  net::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code e, int sig) {
    if (e) return;
    spdlog::warn("{}: stopping; {} open request(s) get {} s to finish", sig == SIGINT ? "SIGINT" : "SIGTERM",
                 srv.active, static_cast<double>(srv.grace.count()) / 1000);
    srv.stopping = true;
    beast::error_code ignored;
    acceptor.close(ignored);
    if (srv.active == 0) return io.stop();
    srv.grace_timer = std::make_unique<net::steady_timer>(io, srv.grace);
    srv.grace_timer->async_wait([&](beast::error_code t) {
      if (!t) driver.cancel_all();
    });
    // A second signal: stop now.
    signals.async_wait([&](beast::error_code e2, int) {
      if (!e2) io.stop();
    });
  });

  accept(acceptor, srv);
  driver.start();
  const tcp::endpoint bound = acceptor.local_endpoint();
  std::cerr << fmt::format("blis serve: {} on {} instance(s), time scale {}; POST /v1/completions, "
                           "/v1/chat/completions; GET /v1/models, /health, /metrics\n",
                           srv.limits.model, online->cc.num_instances, req.time_scale);
  std::cerr << fmt::format("listening on http://{}:{}\n", bound.address().to_string(), bound.port()) << std::flush;
  io.run();
  return 0;
}

}  // namespace blis
