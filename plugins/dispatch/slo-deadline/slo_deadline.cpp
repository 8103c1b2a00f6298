// slo-deadline dispatch order (BLIS HEAD's): as priority, but from the tenant
// flow the fairness policy picks, the request with the earliest deadline:
// its enqueue time plus its own target (a client's slo_target_us), else its
// SLO class's target (--slo-targets, the config
// keys slo_target_us.CLASS in µs); a class without a target comes last, ties
// go to the earlier arrival (docs/gateway.md).
#include <blis/config_keys.h>
#include <blis/plugin.hpp>

#include <array>
#include <cstddef>
#include <limits>
#include <string>

namespace {

class SloDeadline {
 public:
  explicit SloDeadline(blis::sdk::Context& ctx) {
    const char* const classes[] = {"critical", "standard", "sheddable", "batch", "background"};
    const int32_t values[] = {BLIS_SLO_CRITICAL, BLIS_SLO_STANDARD, BLIS_SLO_SHEDDABLE, BLIS_SLO_BATCH,
                              BLIS_SLO_BACKGROUND};
    for (size_t k = 0; k < 5; ++k) {
      const std::string key = std::string(BLIS_KEY_SLO_TARGET_US_PREFIX) + classes[k];
      const int64_t target = ctx.i64_or(key.c_str(), 0);
      if (target < 0)
        throw blis::sdk::ConfigError("configuration key '" + key + "' must be >= 0 µs, got " + std::to_string(target));
      target_us_[static_cast<size_t>(values[k])] = target;
    }
  }

  double key(const blis_dispatch_input& in) {
    const int32_t slo = in.request->slo_class;
    // The request's own target first (a client's slo_target_us), then its class's.
    const int64_t own = in.struct_size > offsetof(blis_dispatch_input, slo_target_us) ? in.slo_target_us : 0;
    const int64_t target = own > 0 ? own : slo >= 0 && slo < 6 ? target_us_[static_cast<size_t>(slo)] : 0;
    if (target <= 0) return std::numeric_limits<double>::infinity();
    return static_cast<double>(in.now_us + target);
  }

 private:
  std::array<int64_t, 6> target_us_{};
};

}  // namespace

BLIS_PLUGINS(blis::sdk::dispatch_order<SloDeadline>(
    "slo-deadline", "1.0.0", "Most urgent band first; in a tenant flow the earliest enqueue + slo_target_us.CLASS"))
