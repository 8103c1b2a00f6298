// gaie-legacy admission policy (BLIS HEAD's model of llm-d/GIE's admission):
// requests of sheddable SLO classes (batch, sheddable, background: negative
// GIE priority, or negative by --slo-priorities) are rejected while the pool's saturation — the mean over the
// instances of max(queue depth / gaie_qd_threshold, KV utilization /
// gaie_kv_threshold) — is at least 1; the others always pass. No instance:
// saturation 1 (docs/gateway.md).
#include "../slo_priorities.hpp"

#include <blis/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace {

class GaieLegacy {
 public:
  explicit GaieLegacy(blis::sdk::Context& ctx)
      : qd_(ctx.f64_or("gaie_qd_threshold", 5)), kv_(ctx.f64_or("gaie_kv_threshold", 0.8)), priorities_(ctx) {
    if (!std::isfinite(qd_) || !(qd_ > 0))
      throw blis::sdk::ConfigError("configuration key 'gaie_qd_threshold' must be > 0, got " + std::to_string(qd_));
    if (!std::isfinite(kv_) || !(kv_ > 0) || kv_ > 1)
      throw blis::sdk::ConfigError("configuration key 'gaie_kv_threshold' must be in (0, 1], got " +
                                   std::to_string(kv_));
  }

  bool admit(const blis_route_input& input, std::string& reason) {
    if (!priorities_.sheddable(input.request->slo_class)) return true;
    double sat = 1;
    if (input.count > 0) {
      double total = 0;
      const auto* base = reinterpret_cast<const char*>(input.instances);
      for (int64_t k = 0; k < input.count; ++k) {
        const auto* s = reinterpret_cast<const blis_instance_snapshot*>(base + k * input.snapshot_size);
        total += std::max(static_cast<double>(s->queue_depth) / qd_, s->kv_utilization / kv_);
      }
      sat = total / static_cast<double>(input.count);
    }
    if (sat < 1) return true;
    char buf[160];
    std::snprintf(buf, sizeof buf, "gaie-saturated: class=%s saturation=%.2f", input.request->slo_class_name, sat);
    reason = buf;
    return false;
  }

 private:
  double qd_;
  double kv_;
  SloPriorities priorities_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::admission_policy<GaieLegacy>(
    "gaie-legacy", "1.0.0",
    "Rejects sheddable SLO classes while the mean of max(queue/gaie_qd_threshold, KV/gaie_kv_threshold) over "
    "the instances is >= 1 (defaults 5, 0.8)"))
