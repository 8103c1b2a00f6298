// tier-shed admission policy (BLIS HEAD's): when the busiest instance's load
// (wait queue + running batch + in flight) is over tier_shed_threshold,
// requests of SLO classes less urgent than tier_shed_min_priority are
// rejected. Priorities are GIE's: critical 4, standard (and the default
// class) 3, batch -1, sheddable -2, background -3, or those of
// --slo-priorities (docs/gateway.md).
#include "../slo_priorities.hpp"

#include <blis/plugin.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

class TierShed {
 public:
  explicit TierShed(blis::sdk::Context& ctx)
      : threshold_(ctx.i64_or("tier_shed_threshold", 0)),
        min_priority_(ctx.i64_or("tier_shed_min_priority", 0)),
        priorities_(ctx) {
    if (threshold_ < 0)
      throw blis::sdk::ConfigError("configuration key 'tier_shed_threshold' must be >= 0, got " +
                                   std::to_string(threshold_));
  }

  bool admit(const blis_route_input& input, std::string& reason) {
    int64_t max_load = 0;
    const auto* base = reinterpret_cast<const char*>(input.instances);
    for (int64_t k = 0; k < input.count; ++k) {
      const auto* s = reinterpret_cast<const blis_instance_snapshot*>(base + k * input.snapshot_size);
      const int64_t load = int64_t{s->queue_depth} + s->batch_size + s->in_flight;
      if (load > max_load) max_load = load;
    }
    if (max_load <= threshold_) return true;
    const int64_t p = priorities_.of(input.request->slo_class);
    if (p >= min_priority_) return true;
    const char* name = input.request->slo_class_name;
    char buf[160];
    std::snprintf(buf, sizeof buf, "tier-shed: class=%s priority=%lld < min=%lld load=%lld", name,
                  static_cast<long long>(p),
                  static_cast<long long>(min_priority_), static_cast<long long>(max_load));
    reason = buf;
    return false;
  }

 private:
  int64_t threshold_;
  int64_t min_priority_;
  SloPriorities priorities_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::admission_policy<TierShed>(
    "tier-shed", "1.0.0",
    "Rejects SLO classes below tier_shed_min_priority (default 0) while the busiest instance's load is over "
    "tier_shed_threshold (default 0)"))
