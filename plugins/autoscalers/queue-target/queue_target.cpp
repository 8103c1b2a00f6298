// queue-target autoscaler: a scaling rule on queued requests instead of KV
// demand (docs/autoscaling.md "Your own scaling rule"). It adds one instance
// to the cheapest pool with room when the requests waiting per active
// instance exceed `queue_per_instance` (default 4), and removes one from the
// dearest pool above its minimum when nothing waits and the requests in
// flight per instance fall below `idle_in_flight` (default 8).
#include <blis/plugin.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace {

double positive(const blis::sdk::Context& ctx, const char* key, double fallback) {
  const double v = ctx.f64_or(key, fallback);
  if (!std::isfinite(v) || !(v > 0))
    throw blis::sdk::ConfigError(std::string("configuration key '") + key + "' must be a finite number > 0");
  return v;
}

class QueueTarget {
 public:
  explicit QueueTarget(blis::sdk::Context& ctx)
      : queue_per_instance_(positive(ctx, "queue_per_instance", 4)),
        idle_in_flight_(positive(ctx, "idle_in_flight", 8)) {}

  blis_scaling_decision decide(const blis_scaling_input& in) const {
    int64_t active = 0, queued = 0, in_flight = 0;
    for (int64_t i = 0; i < in.count; ++i) {
      const blis_scaling_variant& v = variant(in, i);
      active += v.count;
      queued += v.queue_depth;
      in_flight += v.in_flight;
    }
    if (active == 0) return {-1, 0};
    const double per = static_cast<double>(queued) / static_cast<double>(active);
    if (per > queue_per_instance_) {
      for (int64_t i = 0; i < in.count; ++i)  // cheapest first
        if (variant(in, i).room > 0) return {variant(in, i).pool, 1};
      return {-1, 0};
    }
    if (queued == 0 && active > 1 &&
        static_cast<double>(in_flight) / static_cast<double>(active) < idle_in_flight_) {
      for (int64_t i = in.count - 1; i >= 0; --i)  // dearest first
        if (variant(in, i).above_min > 0) return {variant(in, i).pool, -1};
    }
    return {-1, 0};
  }

 private:
  // The host may be a newer minor version with a longer variant struct.
  static const blis_scaling_variant& variant(const blis_scaling_input& in, int64_t i) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(in.variants);
    return *reinterpret_cast<const blis_scaling_variant*>(bytes + static_cast<size_t>(i) * in.variant_size);
  }

  double queue_per_instance_, idle_in_flight_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::autoscaler<QueueTarget>("queue-target", "1.0.0",
                                                "Adds an instance while requests queue, removes one when idle"))
