// running-requests routing scorer: the running batch's size, min-max
// normalised, the smallest batch scoring 1 (spec head §7.1).
#include <blis/plugin.hpp>

#include "../min_max.hpp"

namespace {

class RunningRequests {
 public:
  explicit RunningRequests(blis::sdk::Context&) {}

  void score(const blis_route_input& input, double* scores) const {
    blis::scorers::min_max_lowest_best(
        input, scores, [](const blis_instance_snapshot& s) { return static_cast<int64_t>(s.batch_size); });
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<RunningRequests>(
    "running-requests", "1.0.0", "Min-max normalised running batch size; the smallest batch scores 1",
    BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS))
