// round-robin fairness policy (BLIS HEAD's): in a band, the tenant after the
// one picked last, in tenant-name order; the first tenant when the last one
// has no request left (docs/gateway.md).
#include <blis/plugin.hpp>

namespace {

class RoundRobin {
 public:
  explicit RoundRobin(blis::sdk::Context&) {}

  int64_t pick(const blis_fairness_input& in) {
    if (in.last < 0) return 0;
    return static_cast<int64_t>((static_cast<uint64_t>(in.last) + 1) % in.count);
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::fairness_policy<RoundRobin>("round-robin", "1.0.0",
                                                    "Tenants of a band in turn, in name order"))
