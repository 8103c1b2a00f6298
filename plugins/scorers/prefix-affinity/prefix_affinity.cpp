// prefix-affinity routing scorer: a router-side index of the block hashes
// routed to each instance, scoring the fraction of a request's leading blocks
// that instance has already been sent (spec cluster §3.7, §3.8).
//
// The index is approximate by design: it learns only from routing decisions,
// never from what the instances actually cache or evict (spec cluster §3.8).
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

// An LRU set of block hashes with a fixed capacity. Recency is an intrusive
// doubly-linked list threaded through a slot array (head = least recent,
// tail = most recent); membership is an open-addressing table (linear
// probing, backward-shift deletion) from hash to slot. Both only grow, up to
// the capacity, so a full set recycles the evicted slot and never allocates.
class LruHashSet {
 public:
  bool contains(uint64_t hash) const {
    if (buckets_.empty()) return false;
    return buckets_[find(hash)].slot != kNone;
  }

  // spec cluster §3.8 "record": an existing hash becomes most recent; a new
  // one first evicts the least recent hash when full, then goes in as most
  // recent.
  void touch(uint64_t hash, uint32_t capacity) {
    if (!buckets_.empty()) {
      const size_t pos = find(hash);
      if (buckets_[pos].slot != kNone) {
        const uint32_t slot = buckets_[pos].slot;
        if (slot != tail_) {
          unlink(slot);
          link_back(slot);
        }
        return;
      }
    }
    uint32_t slot;
    if (slots_.size() >= capacity) {
      slot = head_;
      unlink(slot);
      erase(slots_[slot].hash);
    } else {
      if ((slots_.size() + 1) * 4 > buckets_.size() * 3) grow();
      slot = static_cast<uint32_t>(slots_.size());
      slots_.push_back(Slot{});
    }
    slots_[slot].hash = hash;
    link_back(slot);
    // Re-probed: the eviction may have shifted entries, the growth rehashed.
    buckets_[find(hash)] = Bucket{hash, slot};
  }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  static constexpr size_t kMinBuckets = 16;

  struct Slot {
    uint64_t hash = 0;
    uint32_t prev = kNone;
    uint32_t next = kNone;
  };
  struct Bucket {
    uint64_t hash = 0;
    uint32_t slot = kNone;  // kNone marks an empty bucket
  };

  // Fibonacci hashing over a pre-mixed key: block hashes are not trusted to
  // be uniform in their low bits.
  size_t home(uint64_t hash) const {
    hash ^= hash >> 29;
    return static_cast<size_t>((hash * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  // The bucket holding `hash`, or the empty bucket that ends its probe run.
  size_t find(uint64_t hash) const {
    const size_t mask = buckets_.size() - 1;
    size_t pos = home(hash);
    while (buckets_[pos].slot != kNone && buckets_[pos].hash != hash) pos = (pos + 1) & mask;
    return pos;
  }

  // Backward-shift deletion keeps every probe run unbroken without tombstones.
  void erase(uint64_t hash) {
    const size_t mask = buckets_.size() - 1;
    size_t hole = find(hash);
    size_t next = hole;
    for (;;) {
      next = (next + 1) & mask;
      if (buckets_[next].slot == kNone) break;
      const size_t from_home = (next - home(buckets_[next].hash)) & mask;
      if (from_home >= ((next - hole) & mask)) {
        buckets_[hole] = buckets_[next];
        hole = next;
      }
    }
    buckets_[hole] = Bucket{};
  }

  void grow() {
    const size_t size = buckets_.empty() ? kMinBuckets : buckets_.size() * 2;
    buckets_.assign(size, Bucket{});
    shift_ = 64;
    for (size_t s = size; s > 1; s >>= 1) --shift_;
    for (uint32_t slot = 0; slot < slots_.size(); ++slot)
      buckets_[find(slots_[slot].hash)] = Bucket{slots_[slot].hash, slot};
  }

  void unlink(uint32_t slot) {
    Slot& s = slots_[slot];
    (s.prev == kNone ? head_ : slots_[s.prev].next) = s.next;
    (s.next == kNone ? tail_ : slots_[s.next].prev) = s.prev;
    s.prev = s.next = kNone;
  }

  void link_back(uint32_t slot) {
    Slot& s = slots_[slot];
    s.prev = tail_;
    s.next = kNone;
    (tail_ == kNone ? head_ : slots_[tail_].next) = slot;
    tail_ = slot;
  }

  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;  // size 0 or a power of two
  unsigned shift_ = 64;
  uint32_t head_ = kNone;
  uint32_t tail_ = kNone;
};

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
  LruHashSet hashes;
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
          while (matched < total && set->hashes.contains(req.block_hashes[matched])) ++matched;
        set->seen = decisions_;
        set->seen_version = set->version;
        set->seen_matched = matched;
      }
      scores[i] = static_cast<double>(matched) / static_cast<double>(total);
    }
    last_hashes_.assign(req.block_hashes, req.block_hashes + std::max<int64_t>(total, 0));
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
    // up most recent and its first block is evicted first.
    for (int64_t b = 0; b < req.num_blocks; ++b) set.hashes.touch(req.block_hashes[b], capacity_);
  }

 private:
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
    "Share of the request's leading blocks already routed to the instance (router-side LRU)"))
