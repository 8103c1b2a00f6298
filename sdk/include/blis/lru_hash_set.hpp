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
// doubly-linked list threaded through a slot array (head = least recent,
// tail = most recent); membership is an open-addressing table (linear
// probing, backward-shift deletion) from hash to slot. Both only grow, up to
// the capacity, so a full set recycles the evicted slot and never allocates.
class LruHashSet {
 public:
  size_t size() const { return slots_.size(); }

  // Bytes the set holds now, and the bytes a touch() of a new hash would
  // add (0 unless it grows an array): for callers that keep a memory budget.
  size_t bytes() const { return slots_.capacity() * sizeof(Slot) + buckets_.size() * sizeof(Bucket); }
  size_t growth_bytes(uint32_t capacity) const {
    if (slots_.size() >= capacity) return 0;
    size_t more = 0;
    if (slots_.size() == slots_.capacity()) more += std::max<size_t>(slots_.capacity(), 1) * sizeof(Slot);
    if ((slots_.size() + 1) * 4 > buckets_.size() * 3)
      more += (buckets_.empty() ? kMinBuckets : buckets_.size()) * sizeof(Bucket);
    return more;
  }

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

}  // namespace blis::sdk
