// priority dispatch order (BLIS HEAD's): the most urgent band with a request
// first; in it, the head of the tenant flow the fairness policy picks. Every
// request has the same key, so each flow leaves in enqueue order
// (docs/gateway.md).
#include <blis/plugin.hpp>

namespace {

class Priority {
 public:
  explicit Priority(blis::sdk::Context&) {}
  double key(const blis_dispatch_input&) { return 0; }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::dispatch_order<Priority>("priority", "1.0.0",
                                                 "Most urgent band first; each tenant flow in arrival order"))
