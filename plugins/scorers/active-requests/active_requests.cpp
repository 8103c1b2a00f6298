// active-requests routing scorer: the share of the busiest instance's
// in-flight requests an instance does not have (spec head §7.1).
#include <blis/plugin.hpp>

#include <algorithm>
#include <cstdint>

namespace {

class ActiveRequests {
 public:
  explicit ActiveRequests(blis::sdk::Context&) {}

  // mx = the largest in-flight count; an idle instance, or an idle cluster,
  // scores 1, any other (mx - own) / mx.
  void score(const blis_route_input& input, double* scores) const {
    int64_t mx = 0;
    for (int64_t i = 0; i < input.count; ++i)
      mx = std::max<int64_t>(mx, blis::sdk::instance_at(input, i).in_flight);
    for (int64_t i = 0; i < input.count; ++i) {
      const int64_t own = blis::sdk::instance_at(input, i).in_flight;
      scores[i] = own == 0 || mx == 0 ? 1.0
                                      : static_cast<double>(mx - own) / static_cast<double>(mx);
    }
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<ActiveRequests>(
    "active-requests", "1.0.0",
    "(max in flight - own) / max in flight; an instance with nothing in flight scores 1",
    BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS))
