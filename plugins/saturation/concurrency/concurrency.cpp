// concurrency saturation detector (BLIS HEAD's): requests in flight (routed,
// not finished) over what the instances may hold, instances x
// max_concurrency (--max-concurrency, default 100). No instance: 1
// (docs/gateway.md).
#include <blis/config_keys.h>
#include <blis/plugin.hpp>

#include <string>

namespace {

class Concurrency {
 public:
  explicit Concurrency(blis::sdk::Context& ctx) : max_(ctx.i64_or(BLIS_KEY_MAX_CONCURRENCY, 100)) {
    if (max_ < 1)
      throw blis::sdk::ConfigError(std::string("configuration key '") + BLIS_KEY_MAX_CONCURRENCY +
                                   "' must be >= 1, got " + std::to_string(max_));
  }

  double saturation(const blis_route_input& in) {
    if (in.count == 0) return 1;
    const auto* base = reinterpret_cast<const char*>(in.instances);
    int64_t in_flight = 0;
    for (int64_t k = 0; k < in.count; ++k)
      in_flight += reinterpret_cast<const blis_instance_snapshot*>(base + k * in.snapshot_size)->in_flight;
    return static_cast<double>(in_flight) / static_cast<double>(in.count * max_);
  }

 private:
  int64_t max_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::saturation_detector<Concurrency>(
    "concurrency", "1.0.0", "Requests in flight / (instances x max_concurrency) (default 100)"))
