// While a LogOnce lives, each distinct message is logged once: a command that
// runs many simulations of one configuration (a plan's trials, a sweep's
// points, a fit's candidates) would otherwise print the same warning about
// that configuration once per simulation.
#pragma once

#include <spdlog/common.h>

#include <vector>

namespace blis {

class LogOnce {
 public:
  LogOnce();   // wraps the default logger's sinks
  ~LogOnce();  // puts them back
  LogOnce(const LogOnce&) = delete;
  LogOnce& operator=(const LogOnce&) = delete;

 private:
  std::vector<spdlog::sink_ptr> saved_;
};

}  // namespace blis
