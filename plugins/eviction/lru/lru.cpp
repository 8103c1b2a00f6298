// lru adapter eviction (BLIS HEAD's): a cold load that finds an instance's
// adapter slots full evicts the least recently used adapter that no running
// request uses (docs/lora.md).
#include <blis/plugin.hpp>

namespace {

class Lru {
 public:
  explicit Lru(blis::sdk::Context&) {}
  int64_t choose(const blis_adapter_eviction_input&) { return 0; }  // candidates: least recently used first
};

}  // namespace

BLIS_PLUGINS(blis::sdk::adapter_eviction<Lru>("lru", "1.0.0",
                                              "The least recently used adapter no running request uses"))
