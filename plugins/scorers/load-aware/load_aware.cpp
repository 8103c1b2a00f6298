// load-aware routing scorer: the wait queue against a fixed ceiling of 128,
// on a scale of 0 to 0.5 (spec head §7.1).
#include <blis/plugin.hpp>

#include <algorithm>
#include <cstdint>

namespace {

// A queue this long (or longer) scores 0.
constexpr int64_t kQueueCeiling = 128;

class LoadAware {
 public:
  explicit LoadAware(blis::sdk::Context&) {}

  // 0.5 at an empty queue, falling linearly to 0 at the ceiling: an idle
  // instance never scores above 0.5.
  void score(const blis_route_input& input, double* scores) const {
    for (int64_t i = 0; i < input.count; ++i) {
      const int64_t q = std::clamp<int64_t>(blis::sdk::instance_at(input, i).queue_depth, 0, kQueueCeiling);
      scores[i] = q == 0 ? 0.5
                         : 0.5 * (1.0 - static_cast<double>(q) / static_cast<double>(kQueueCeiling));
    }
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<LoadAware>(
    "load-aware", "1.0.0",
    "0.5 x (1 - min(queue depth, 128) / 128): 0.5 for an empty queue, 0 from 128 waiting",
    BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS))
