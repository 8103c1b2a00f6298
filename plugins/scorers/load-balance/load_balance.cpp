// load-balance routing scorer: 1 / (1 + effective load), independent of the
// other candidates (spec cluster §3.7).
#include <blis/plugin.hpp>

#include <cstdint>

namespace {

// spec cluster §3.2: the SDK's definition of load, shared with the host.
using blis::sdk::effective_load;

class LoadBalance {
 public:
  explicit LoadBalance(blis::sdk::Context&) {}

  void score(const blis_route_input& input, double* scores) const {
    for (int64_t i = 0; i < input.count; ++i) {
      const int64_t load = effective_load(blis::sdk::instance_at(input, i));
      scores[i] = 1.0 / (1.0 + static_cast<double>(load));
    }
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<LoadBalance>("load-balance", "1.0.0",
                                                    "1 / (1 + effective load); an idle instance scores 1",
                                                    BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS))
