// An LRU set of 64-bit block hashes with a fixed capacity: the index the
// prefix-affinity scorer keeps per instance (spec cluster §3.8), shared by
// the built-in scorer, Lua scripts (`lru_set`, docs/lua.md) and any plugin
// that wants the same structure. Header-only; C++17.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace blis::sdk {

// An LRU set of block hashes with a fixed capacity. Recency is an intrusive
// doubly-linked list of nodes (head = least recent, tail = most recent);
// membership is an open-addressing table (linear probing, backward-shift
// deletion) from hash to node. A node is one hash, or a run of anonymous
// entries (add_anonymous): content nobody will ever look up, which takes
// room and evicts like that many new hashes without being stored. Nodes and
// the table only grow, up to what the capacity needs; freed nodes are
// reused, so a full set does not allocate.
class LruHashSet {
 public:
  // Entries held: hashes and anonymous entries.
  size_t size() const { return entries_; }

  // Bytes the set holds now, and the bytes a touch() of a new hash (or an
  // add_anonymous()) would add (0 unless it grows an array): for callers that
  // keep a memory budget.
  size_t bytes() const {
    return (slots_.capacity() + runs_.capacity()) * sizeof(Node) + buckets_.size() * sizeof(Bucket);
  }
  size_t growth_bytes(uint32_t capacity) const {
    const bool reuse_head = entries_ >= capacity && head_ != kNone && !is_run(head_);
    if (reuse_head) return 0;
    size_t more = 0;
    if (free_slots_ == kNone && slots_.size() == slots_.capacity())
      more += std::max<size_t>(slots_.capacity(), 1) * sizeof(Node);
    if ((hashes_ + 1) * 4 > buckets_.size() * 3)
      more += (buckets_.empty() ? kMinBuckets : buckets_.size()) * sizeof(Bucket);
    return more;
  }
  size_t anonymous_growth_bytes() const {
    if ((tail_ != kNone && is_run(tail_)) || free_runs_ != kNone || runs_.size() < runs_.capacity()) return 0;
    return std::max<size_t>(runs_.capacity(), 1) * sizeof(Node);
  }

  bool contains(uint64_t hash) const {
    if (buckets_.empty()) return false;
    return buckets_[find(hash)].node != kNone;
  }

  // touch() of a hash the set holds (it becomes the most recent); false,
  // changing nothing, for a hash it does not hold.
  bool refresh(uint64_t hash) {
    if (buckets_.empty()) return false;
    const uint32_t slot = buckets_[find(hash)].node;
    if (slot == kNone) return false;
    if (slot != tail_) {
      unlink(slot);
      link_back(slot);
    }
    return true;
  }

  // spec cluster §3.8 "record": an existing hash becomes most recent; a new
  // one first evicts the least recent entry when full, then goes in as most
  // recent.
  void touch(uint64_t hash, uint32_t capacity) {
    if (!buckets_.empty()) {
      const size_t pos = find(hash);
      if (buckets_[pos].node != kNone) {
        const uint32_t slot = buckets_[pos].node;
        if (slot != tail_) {
          unlink(slot);
          link_back(slot);
        }
        return;
      }
    }
    uint32_t slot;
    if (entries_ >= capacity && !is_run(head_)) {
      slot = head_;  // the least recent hash gives its node to the new one
      unlink(slot);
      erase(slots_[slot].value);
    } else {
      if (entries_ >= capacity) evict_anonymous(1);
      if ((hashes_ + 1) * 4 > buckets_.size() * 3) grow();
      slot = new_slot();
      ++hashes_;
      ++entries_;
    }
    slots_[slot].value = hash;
    link_back(slot);
    // Re-probed: the eviction may have shifted entries, the growth rehashed.
    buckets_[find(hash)] = Bucket{hash, slot};
  }

  // `count` new entries that no lookup will ever find (content only one
  // request has): the same as touching `count` new hashes that never occur
  // again, one after another, without storing them.
  void add_anonymous(uint64_t count, uint32_t capacity) {
    if (count == 0) return;
    if (tail_ != kNone && is_run(tail_)) {
      node(tail_).value += count;
    } else {
      const uint32_t run = new_run();
      runs_[run & ~kRunBit].value = count;
      link_back(run);
    }
    entries_ += count;
    // Touching them one by one evicts the least recent entry for each one
    // past the capacity; the run itself goes last, oldest entries first.
    while (entries_ > capacity) {
      if (is_run(head_)) {
        evict_anonymous(entries_ - capacity);
      } else {
        const uint32_t slot = head_;
        unlink(slot);
        erase(slots_[slot].value);
        free_slot(slot);
        --hashes_;
        --entries_;
      }
    }
  }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  static constexpr uint32_t kRunBit = 0x80000000u;  // node ids of runs; hash slots are below
  static constexpr size_t kMinBuckets = 16;

  // A hash (in slots_: value is the hash) or a run of anonymous entries (in
  // runs_: value is how many). Free nodes are chained through `next`.
  struct Node {
    uint64_t value = 0;
    uint32_t prev = kNone;
    uint32_t next = kNone;
  };
  struct Bucket {
    uint64_t hash = 0;
    uint32_t node = kNone;  // kNone marks an empty bucket
  };

  static bool is_run(uint32_t id) { return (id & kRunBit) != 0; }
  Node& node(uint32_t id) { return is_run(id) ? runs_[id & ~kRunBit] : slots_[id]; }

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
    while (buckets_[pos].node != kNone && buckets_[pos].hash != hash) pos = (pos + 1) & mask;
    return pos;
  }

  // Backward-shift deletion keeps every probe run unbroken without tombstones.
  void erase(uint64_t hash) {
    const size_t mask = buckets_.size() - 1;
    size_t hole = find(hash);
    size_t next = hole;
    for (;;) {
      next = (next + 1) & mask;
      if (buckets_[next].node == kNone) break;
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
    // The hashes in the list (free slots are not).
    for (uint32_t id = head_; id != kNone; id = node(id).next)
      if (!is_run(id)) buckets_[find(slots_[id].value)] = Bucket{slots_[id].value, id};
  }

  // Takes up to `count` entries from the run at the head.
  void evict_anonymous(uint64_t count) {
    Node& run = node(head_);
    const uint64_t take = std::min(count, run.value);
    run.value -= take;
    entries_ -= take;
    if (run.value == 0) {
      const uint32_t id = head_;
      unlink(id);
      node(id).next = free_runs_;
      free_runs_ = id;
    }
  }

  uint32_t new_slot() {
    if (free_slots_ != kNone) {
      const uint32_t slot = free_slots_;
      free_slots_ = slots_[slot].next;
      slots_[slot] = Node{};
      return slot;
    }
    slots_.push_back(Node{});
    return static_cast<uint32_t>(slots_.size() - 1);
  }
  void free_slot(uint32_t slot) {
    slots_[slot].next = free_slots_;
    free_slots_ = slot;
  }
  uint32_t new_run() {
    if (free_runs_ != kNone) {
      const uint32_t id = free_runs_;
      free_runs_ = node(id).next;
      node(id) = Node{};
      return id;
    }
    runs_.push_back(Node{});
    return static_cast<uint32_t>(runs_.size() - 1) | kRunBit;
  }

  void unlink(uint32_t id) {
    Node& s = node(id);
    (s.prev == kNone ? head_ : node(s.prev).next) = s.next;
    (s.next == kNone ? tail_ : node(s.next).prev) = s.prev;
    s.prev = s.next = kNone;
  }

  void link_back(uint32_t id) {
    Node& s = node(id);
    s.prev = tail_;
    s.next = kNone;
    (tail_ == kNone ? head_ : node(tail_).next) = id;
    tail_ = id;
  }

  std::vector<Node> slots_;      // hashes' nodes, by id
  std::vector<Node> runs_;       // runs' nodes, by id without kRunBit
  std::vector<Bucket> buckets_;  // size 0 or a power of two
  unsigned shift_ = 64;
  uint64_t entries_ = 0;  // hashes and anonymous entries in the list
  size_t hashes_ = 0;     // hashes in the list (and the table)
  uint32_t head_ = kNone;
  uint32_t tail_ = kNone;
  uint32_t free_slots_ = kNone;
  uint32_t free_runs_ = kNone;
};

}  // namespace blis::sdk
