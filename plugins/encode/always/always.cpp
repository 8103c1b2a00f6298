// always encode decider (BLIS HEAD's): every request goes through the encode
// pool, text or not (docs/epd.md).
#include <blis/plugin.hpp>

namespace {

class Always {
 public:
  explicit Always(blis::sdk::Context&) {}
  bool encode(const blis_encode_input&) { return true; }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::encode_decider<Always>("always", "1.0.0", "Every request goes through the encode pool"))
