// lru offload eviction (BLIS HEAD's): a full KV offload CPU tier evicts its
// least recently used evictable block (docs/kv-offload.md). The host runs
// this rule itself without calling the plugin when a run names lru; the
// plugin states it for `blis plugins list` and for libraries that build on it.
#include <blis/plugin.hpp>

namespace {

class Lru {
 public:
  explicit Lru(blis::sdk::Context&) {}
  int64_t choose(const blis_offload_eviction_input&) { return 0; }  // candidates: least recently used first
};

}  // namespace

BLIS_PLUGINS(blis::sdk::offload_eviction<Lru>("lru", "1.0.0", "The least recently used evictable CPU block"))
