#include "metrics/pd_metrics.hpp"

#include "metrics/collector.hpp"
#include "metrics/stats.hpp"
#include "util/json_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace blis {

std::pair<double, double> PdMetrics::throughputs(const std::vector<InstanceMetrics>& instances,
                                                double seconds) const {
  int64_t prefill = 0, decode = 0;
  for (size_t i = 0; i < roles_.size() && i < instances.size(); ++i) {
    const int64_t n = instances[i].completed + prefills_[i];
    if (roles_[i] & kPdPrefill) prefill += n;
    if (roles_[i] & kPdDecode) decode += n;
  }
  if (seconds <= 0) return {0.0, 0.0};
  return {static_cast<double>(prefill) / seconds, static_cast<double>(decode) / seconds};
}

// spec head §5.4, with the requests still on the wire when the run stopped.
// An instance's sub-requests are its completions and the prefills it
// finished: a prefill-decode instance counts both in both pools.
std::string PdMetrics::block(const std::vector<InstanceMetrics>& instances, double seconds, bool head_form) const {
  if (head_form && disaggregated_ == 0) return "";
  std::string out = "=== PD Metrics ===\n";
  out += fmt::format("Disaggregated Requests: {}\n", disaggregated_);
  if (!head_form) out += fmt::format("KV Transfers: {}\n", transfers_);
  out += fmt::format("Dropped at Decode KV: {}\n", dropped_at_decode_);
  if (!head_form) out += fmt::format("Still in KV Transfer: {}\n", in_transfer_);
  const auto [p, d] = throughputs(instances, seconds);
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

std::string PdMetrics::json(const std::vector<InstanceMetrics>& instances, double seconds) const {
  const auto [p, d] = throughputs(instances, seconds);
  std::string ratio = "1";
  if (p == 0 && d == 0) ratio = "1";
  else if (p == 0 || d == 0) ratio = "null";
  else ratio = go_float(std::max(p, d) / std::min(p, d));
  std::string out = fmt::format(
      "{{\n    \"disaggregated_requests\": {},\n    \"kv_transfers\": {},\n    \"dropped_at_decode_kv\": {},\n"
      "    \"still_in_kv_transfer\": {},\n    \"prefill_throughput\": {},\n    \"decode_throughput\": {},\n"
      "    \"load_imbalance_ratio\": {}",
      disaggregated_, transfers_, dropped_at_decode_, in_transfer_, go_float(p), go_float(d), ratio);
  auto stats = [&](const char* key, std::vector<int64_t> v) {
    if (v.empty()) return;
    const Summary s = summarize(v, 1);
    out += fmt::format(",\n    \"{}\": {{\"mean\": {}, \"p50\": {}, \"p95\": {}, \"p99\": {}}}", key, go_float(s.mean),
                       go_float(s.p50), go_float(s.p95), go_float(s.p99));
  };
  stats("parent_ttft_us", parent_ttft_);
  stats("kv_transfer_us", durations_);
  if (contention_)
    out += fmt::format(",\n    \"peak_concurrent_transfers\": {},\n    \"mean_transfer_queue_depth\": {}", peak_,
                       go_float(mean_depth_));
  return out + "\n  }";
}

}  // namespace blis
