// queue-depth routing scorer: effective load min-max normalised over the
// candidates, least loaded scores 1 (spec cluster §3.7).
#include <blis/plugin.hpp>

#include <cstdint>
#include <limits>

namespace {

// spec cluster §3.2: the SDK's definition of load, shared with the host.
using blis::sdk::effective_load;

class QueueDepth {
 public:
  explicit QueueDepth(blis::sdk::Context&) {}

  void score(const blis_route_input& input, double* scores) const {
    // spec cluster §3.7: hi starts at 0 and lo at +inf, as in the reference.
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = 0;
    for (int64_t i = 0; i < input.count; ++i) {
      const int64_t load = effective_load(blis::sdk::instance_at(input, i));
      if (load < lo) lo = load;
      if (load > hi) hi = load;
    }
    for (int64_t i = 0; i < input.count; ++i) {
      if (hi == lo) {
        scores[i] = 1.0;
        continue;
      }
      const int64_t load = effective_load(blis::sdk::instance_at(input, i));
      scores[i] = static_cast<double>(hi - load) / static_cast<double>(hi - lo);
    }
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<QueueDepth>(
    "queue-depth", "1.0.0",
    "Min-max normalised effective load (queue + batch + in flight); least loaded scores 1"))
