// global-strict fairness policy (BLIS HEAD's default): in a band, the tenant
// flow whose oldest request entered the gateway queue first, so the band
// sends in arrival order whatever the tenant (docs/gateway.md).
#include <blis/plugin.hpp>

#include <cstddef>

namespace {

class GlobalStrict {
 public:
  explicit GlobalStrict(blis::sdk::Context&) {}

  int64_t pick(const blis_fairness_input& in) {
    const auto* bytes = static_cast<const unsigned char*>(static_cast<const void*>(in.flows));
    auto flow = [&](uint64_t k) {
      return reinterpret_cast<const blis_fairness_flow*>(bytes + k * in.flow_size);
    };
    uint64_t best = 0;
    for (uint64_t k = 1; k < in.count; ++k)
      if (flow(k)->head_seq < flow(best)->head_seq) best = k;
    return static_cast<int64_t>(best);
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::fairness_policy<GlobalStrict>("global-strict", "1.0.0",
                                                      "The tenant flow whose oldest request came first"))
