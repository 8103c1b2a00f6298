// utilization saturation detector (BLIS HEAD's): the mean over the instances
// of the larger of wait-queue depth / queue_depth_threshold and KV
// utilization / kv_cache_util_threshold (--queue-depth-threshold, default 5;
// --kv-cache-util-threshold, default 0.8). No instance: 1 (docs/gateway.md).
#include <blis/config_keys.h>
#include <blis/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace {

double positive(blis::sdk::Context& ctx, const char* key, double fallback) {
  const double v = ctx.f64_or(key, fallback);
  if (!std::isfinite(v) || !(v > 0))
    throw blis::sdk::ConfigError(std::string("configuration key '") + key + "' must be a finite value > 0, got " +
                                 std::to_string(v));
  return v;
}

class Utilization {
 public:
  explicit Utilization(blis::sdk::Context& ctx)
      : queue_(positive(ctx, BLIS_KEY_QUEUE_DEPTH_THRESHOLD, 5)),
        kv_(positive(ctx, BLIS_KEY_KV_CACHE_UTIL_THRESHOLD, 0.8)) {}

  double saturation(const blis_route_input& in) {
    if (in.count == 0) return 1;
    const auto* base = reinterpret_cast<const char*>(in.instances);
    double sum = 0;
    for (int64_t k = 0; k < in.count; ++k) {
      const auto* s = reinterpret_cast<const blis_instance_snapshot*>(base + k * in.snapshot_size);
      const double q = static_cast<double>(s->queue_depth) / queue_;
      const double kv = s->kv_utilization / kv_;
      sum += std::max(q, kv);
    }
    return sum / static_cast<double>(in.count);
  }

 private:
  double queue_;
  double kv_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::saturation_detector<Utilization>(
    "utilization", "1.0.0",
    "Mean over instances of max(queue/queue_depth_threshold, KV/kv_cache_util_threshold) (defaults 5, 0.8)"))
