#include "metrics/pd_metrics.hpp"

#include "metrics/collector.hpp"
#include "metrics/stats.hpp"

#include <fmt/format.h>

#include <limits>

namespace blis {

// spec head §5.4, with the requests still on the wire when the run stopped.
// An instance's sub-requests are its completions and the prefills it
// finished: a prefill-decode instance counts both in both pools.
std::string PdMetrics::block(const std::vector<InstanceMetrics>& instances, double seconds) const {
  std::string out = "=== PD Metrics ===\n";
  out += fmt::format("Disaggregated Requests: {}\n", disaggregated_);
  out += fmt::format("KV Transfers: {}\n", transfers_);
  out += fmt::format("Dropped at Decode KV: {}\n", dropped_at_decode_);
  out += fmt::format("Still in KV Transfer: {}\n", in_transfer_);
  int64_t prefill = 0, decode = 0;
  for (size_t i = 0; i < roles_.size() && i < instances.size(); ++i) {
    const int64_t n = instances[i].completed + prefills_[i];
    if (roles_[i] & kPdPrefill) prefill += n;
    if (roles_[i] & kPdDecode) decode += n;
  }
  const double p = seconds > 0 ? static_cast<double>(prefill) / seconds : 0;
  const double d = seconds > 0 ? static_cast<double>(decode) / seconds : 0;
  out += fmt::format("Prefill Throughput: {:.4f} sub-req/s\n", p);
  out += fmt::format("Decode Throughput: {:.4f} sub-req/s\n", d);
  if (p == 0 && d == 0) out += "Load Imbalance Ratio: 1.0000\n";
  else if (p == 0 || d == 0) out += "Load Imbalance Ratio: inf (one pool idle)\n";
  else out += fmt::format("Load Imbalance Ratio: {:.4f}\n", std::max(p, d) / std::min(p, d));
  auto line = [&](const char* what, std::vector<int64_t> v) {
    const Summary s = summarize(v, 1);
    out += fmt::format("{} (us): mean={:.1f} p50={:.1f} p95={:.1f} p99={:.1f}\n", what, s.mean, s.p50, s.p95, s.p99);
  };
  if (!parent_ttft_.empty()) line("Parent TTFT", parent_ttft_);
  if (!durations_.empty()) line("KV Transfer Duration", durations_);
  if (contention_) {
    out += fmt::format("Peak Concurrent Transfers: {}\n", peak_);
    out += fmt::format("Mean Transfer Queue Depth: {:.4f}\n", mean_depth_);
  }
  return out;
}

}  // namespace blis
