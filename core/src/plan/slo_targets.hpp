// Percentile targets in the planner's language: "ttft_p99<500ms,itl_p95<50ms,
// e2e_p99<20s" (docs/planning.md).
#pragma once

#include "metrics/report.hpp"

#include <string>
#include <vector>

namespace blis {

struct SloTarget {
  std::string text;    // as written: "ttft_p99<500ms"
  std::string metric;  // the metrics-block key: "ttft_p99_ms"
  double limit_ms = 0;
  bool inclusive = false;  // <= rather than <
};

// Parses a comma-separated list; InputError naming `where` with the accepted
// forms on a bad item. Metrics: ttft, tpot (a request's mean time per output
// token after the first, as vLLM defines it), itl, e2e with mean, p50, p90,
// p95, p99, p99.9, and scheduling_delay_p99; units us, ms (the default), s.
std::vector<SloTarget> parse_slo_targets(const std::string& text, const std::string& where);

// The value of the target's metric in `metrics` (ms), and whether it is met.
double metric_value(const std::vector<MetricField>& metrics, const std::string& name);
bool met(const SloTarget& t, const std::vector<MetricField>& metrics);

}  // namespace blis
