// vllm-dp routing scorer: vLLM's data-parallel load balancing, which weighs
// a waiting request four times a running one (spec head §7.1).
#include <blis/plugin.hpp>

#include "../min_max.hpp"

namespace {

class VllmDp {
 public:
  explicit VllmDp(blis::sdk::Context&) {}

  void score(const blis_route_input& input, double* scores) const {
    blis::scorers::min_max_lowest_best(input, scores, [](const blis_instance_snapshot& s) {
      return 4 * static_cast<int64_t>(s.queue_depth) + s.batch_size;
    });
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<VllmDp>(
    "vllm-dp", "1.0.0", "Min-max normalised 4 x queue depth + batch size; the least loaded scores 1",
    BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS))
