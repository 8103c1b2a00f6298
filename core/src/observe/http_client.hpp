// `blis observe`'s side of HTTP (Boost.Beast, blocking, one connection per
// request): a POST whose body is handed over line by line as it arrives, so
// each server-sent event is timed when its bytes come in, and a GET.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace blis::observation {

// An http:// server address: host, port (80 when absent) and the path in
// front of every endpoint ("" or "/prefix", without a trailing slash).
struct ServerUrl {
  std::string host;
  std::string port = "80";
  std::string base_path;
};

// InputError naming `where` for anything but http://host[:port][/path]
// (https is refused with the way round it).
ServerUrl parse_server_url(const std::string& url, const std::string& where);

// Microseconds since the Unix epoch (the trace's send and chunk times).
int64_t unix_micros();

struct HttpOutcome {
  bool sent = false;       // a response arrived (else error/timed_out tell why)
  bool timed_out = false;  // the whole exchange outlasted the timeout
  std::string error;       // transport failure, for the trace's error_message
  int status = 0;
  std::string body;        // the body, unless it went to on_line (status 200 with a line handler)
  int64_t first_byte_us = 0;  // when the body's first bytes arrived (0: empty body)
  int64_t done_us = 0;        // when the body ended
};

using Headers = std::vector<std::pair<std::string, std::string>>;
// Called with each line of a 200 response's body (without its line end) and
// the time its last bytes arrived.
using LineHandler = std::function<void(std::string_view line, int64_t at_us)>;

// One exchange; `timeout_s` bounds all of it. `on_line` may be null (the body
// is then collected). Never throws for what the network or server does.
HttpOutcome http_exchange(const ServerUrl& server, const std::string& method, const std::string& path,
                          const Headers& headers, const std::string& body, int timeout_s,
                          const LineHandler* on_line);

}  // namespace blis::observation
