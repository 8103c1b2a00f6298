// The value HEAD's golden datasets expect under `key`, read from blis's
// stdout: the printed metric, or for ttft_sum_us (not printed) the mean TTFT
// times the completed requests, in µs.
#pragma once

#include "cli.hpp"

#include <cmath>
#include <string>

inline double golden_value(const std::string& out, const std::string& key) {
  if (key == "ttft_sum_us") return std::round(metric(out, "ttft_mean_ms") * metric(out, "completed_requests") * 1000);
  return metric(out, key);
}
