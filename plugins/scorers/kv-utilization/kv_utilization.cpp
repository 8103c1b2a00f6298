// kv-utilization routing scorer: prefers instances with free KV cache
// (spec cluster §3.7).
#include <blis/plugin.hpp>

#include <cstdint>

namespace {

class KvUtilization {
 public:
  explicit KvUtilization(blis::sdk::Context&) {}

  void score(const blis_route_input& input, double* scores) const {
    for (int64_t i = 0; i < input.count; ++i)
      scores[i] = 1.0 - blis::sdk::instance_at(input, i).kv_utilization;
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<KvUtilization>("kv-utilization", "1.0.0",
                                                      "1 - KV cache utilization; an idle cache scores 1",
                                                      BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS))
