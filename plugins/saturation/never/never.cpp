// never saturation detector (BLIS HEAD's default): the instances are never
// saturated, so the gateway queue passes requests straight through to
// routing (docs/gateway.md).
#include <blis/plugin.hpp>

namespace {

class Never {
 public:
  explicit Never(blis::sdk::Context&) {}
  double saturation(const blis_route_input&) { return 0; }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::saturation_detector<Never>("never", "1.0.0",
                                                   "Never saturated: the gateway queue holds nothing back"))
