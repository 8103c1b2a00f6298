// never encode decider (BLIS HEAD's default): no request goes through the
// encode pool (docs/epd.md).
#include <blis/plugin.hpp>

namespace {

class Never {
 public:
  explicit Never(blis::sdk::Context&) {}
  bool encode(const blis_encode_input&) { return false; }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::encode_decider<Never>("never", "1.0.0", "No request goes through the encode pool"))
