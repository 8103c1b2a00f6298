// prefix-affinity routing scorer: a router-side index of the block hashes
// routed to each instance, scoring the fraction of a request's leading blocks
// that instance has already been sent (spec cluster §3.7, §3.8).
//
// The index is approximate by design: it learns only from routing decisions,
// never from what the instances actually cache or evict (spec cluster §3.8).
#include <blis/lru_hash_set.hpp>
#include <blis/plugin.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr const char* kCapacityKey = "prefix_cache_capacity";
// spec cluster §3.8: 10000 block hashes per instance in the reference.
constexpr int64_t kDefaultCapacity = 10000;
// Slot numbers are 32-bit with one value reserved as "none".
constexpr int64_t kMaxCapacity = std::numeric_limits<int32_t>::max();

uint32_t capacity_from(const blis::sdk::Context& ctx) {
  const int64_t v = ctx.i64_or(kCapacityKey, kDefaultCapacity);
  if (v < 1 || v > kMaxCapacity)
    throw blis::sdk::ConfigError(std::string("configuration key '") + kCapacityKey +
                                 "' must be between 1 and " + std::to_string(kMaxCapacity) +
                                 ", got " + std::to_string(v));
  return static_cast<uint32_t>(v);
}

// One instance's index and what its last score found.
struct InstanceSet {
  blis::sdk::LruHashSet hashes;
  uint64_t version = 0;       // observations so far
  uint64_t seen = 0;          // the decision (1, 2, ...) that last scored it
  uint64_t seen_version = 0;  // its version then
  int64_t seen_matched = 0;   // the leading blocks it matched then
};

class PrefixAffinity {
 public:
  explicit PrefixAffinity(blis::sdk::Context& ctx) : capacity_(capacity_from(ctx)) {}

  // spec cluster §3.7: matched / total over the complete input blocks; a
  // request without a complete block scores 0 everywhere.
  //
  // Most requests share a prefix with the one scored before, and only the
  // chosen instance's set changes between decisions. A set unchanged since
  // it matched m leading blocks of the previous request, which shares its
  // first `common` blocks with this one, matches the same m here if
  // m < common (block m is the same block, still absent), and at least
  // `common` otherwise: the walk starts there.
  void score(const blis_route_input& input, double* scores) {
    const blis_request_view& req = *input.request;
    const int64_t total = req.num_blocks;
    const int64_t shared = total - own_blocks(req);  // no set holds the blocks past these
    ++decisions_;
    const int64_t limit = std::min(total, static_cast<int64_t>(last_hashes_.size()));
    int64_t common = 0;
    while (common < limit && req.block_hashes[common] == last_hashes_[static_cast<size_t>(common)]) ++common;
    for (int64_t i = 0; i < input.count; ++i) {
      if (total <= 0) {
        scores[i] = 0.0;
        continue;
      }
      InstanceSet* set = set_of(blis::sdk::instance_at(input, i).index);
      int64_t matched = 0;
      // spec cluster §3.8 "match": the leading run only, without refreshing
      // recency; an instance never routed to matches 0.
      if (set != nullptr) {
        bool walk = true;
        if (set->seen + 1 == decisions_ && set->seen_version == set->version) {
          matched = std::min(set->seen_matched, common);
          walk = set->seen_matched >= common;
        }
        if (walk)
          while (matched < shared && set->hashes.contains(req.block_hashes[matched])) ++matched;
        set->seen = decisions_;
        set->seen_version = set->version;
        set->seen_matched = matched;
      }
      scores[i] = static_cast<double>(matched) / static_cast<double>(total);
    }
    // Its own blocks equal no block of another request: `common` never reaches them.
    last_hashes_.assign(req.block_hashes, req.block_hashes + std::max<int64_t>(shared, 0));
  }

  // `chosen` is a position in input.instances; the index's key is the
  // instance identity, snapshot.index.
  void observe(const blis_route_input& input, int64_t chosen) {
    if (chosen < 0 || chosen >= input.count) return;
    const int32_t index = blis::sdk::instance_at(input, chosen).index;
    if (index < 0) return;
    if (static_cast<size_t>(index) >= sets_.size()) {
      if (sets_.empty() && input.count > index) sets_.reserve(static_cast<size_t>(input.count));
      sets_.resize(static_cast<size_t>(index) + 1);
    }
    InstanceSet& set = sets_[static_cast<size_t>(index)];
    const blis_request_view& req = *input.request;
    ++set.version;
    // spec cluster §3.8: block order 0, 1, 2, … so a request's last block ends
    // up most recent and its first block is evicted first. Its own blocks
    // come last and are never looked up again: they only take room.
    const int64_t own = own_blocks(req);
    for (int64_t b = 0; b < req.num_blocks - own; ++b) set.hashes.touch(req.block_hashes[b], capacity_);
    set.hashes.add_anonymous(static_cast<uint64_t>(own), capacity_);
  }

 private:
  // The request's own trailing blocks (ABI 1.6; 0 from an older host).
  static int64_t own_blocks(const blis_request_view& req) {
    if (req.struct_size < offsetof(blis_request_view, own_blocks) + sizeof(req.own_blocks)) return 0;
    return std::clamp<int64_t>(req.own_blocks, 0, std::max<int64_t>(req.num_blocks, 0));
  }

  InstanceSet* set_of(int32_t index) {
    if (index < 0 || static_cast<size_t>(index) >= sets_.size()) return nullptr;
    return &sets_[static_cast<size_t>(index)];
  }

  uint32_t capacity_;
  std::vector<InstanceSet> sets_;  // by snapshot.index; an empty set is "none yet"
  uint64_t decisions_ = 0;             // score() calls so far
  std::vector<uint64_t> last_hashes_;  // the block hashes of the request scored last
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<PrefixAffinity>(
    "prefix-affinity", "1.0.0",
    "Share of the request's leading blocks already routed to the instance (router-side LRU)",
    BLIS_NEED_DECLARED_READS | BLIS_NEED_REQUEST))
