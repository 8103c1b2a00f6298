// Content hash -> block id, as a flat open-addressing table (linear probing,
// backward-shift deletion). It never holds more keys than its bound (the
// blocks); it starts small and doubles as keys come, up to the size the bound
// needs, so that an instance of a large fleet that uses a few blocks writes
// a few kilobytes, not half a megabyte. Lookups depend only on the keys held.
//
// Every insertion and eviction of a block lands on a random slot, so the
// table is built for one cache miss per operation: a slot is 8 bytes, the
// block id and a 32-bit tag (the low bits of the key's mixed hash, which also
// give the home slot). Full keys live with the blocks; the caller supplies
// them as `key_of(id)`, read only when a tag matches.
#pragma once

#include <blis/block_hash.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace blis {

class BlockIndex {
 public:
  explicit BlockIndex(int64_t max_keys) : max_cap_(slots_for(max_keys)) {
    const std::size_t cap = std::min(max_cap_, slots_for(kFirstKeys));
    slots_.assign(cap, Slot{0, kEmpty});
    mask_ = cap - 1;
  }

  // Slots of a table for `max_keys` keys (a power of two, load at most 1/2).
  static std::size_t slots_for(int64_t max_keys) {
    std::size_t cap = 16;
    while (cap < static_cast<std::size_t>(max_keys) * 2) cap <<= 1;
    return cap;
  }
  static constexpr std::size_t kSlotBytes = 8;

  // Block id for `key`, or -1.
  template <class KeyOf>
  int32_t find(uint64_t key, KeyOf&& key_of) const {
    const uint32_t tag = tag_of(key);
    for (std::size_t i = tag & mask_;; i = (i + 1) & mask_) {
      const Slot s = slots_[i];
      if (s.id == kEmpty) return -1;
      if (s.tag == tag && key_of(s.id) == key) return s.id;
    }
  }

  // Inserts or overwrites.
  template <class KeyOf>
  void put(uint64_t key, int32_t id, KeyOf&& key_of) {
    if ((keys_ + 1) * 2 > slots_.size() && slots_.size() < max_cap_) grow();
    const uint32_t tag = tag_of(key);
    std::size_t i = tag & mask_;
    while (slots_[i].id != kEmpty && !(slots_[i].tag == tag && key_of(slots_[i].id) == key))
      i = (i + 1) & mask_;
    keys_ += slots_[i].id == kEmpty ? 1 : 0;
    slots_[i] = Slot{tag, id};
  }

  template <class KeyOf>
  void erase(uint64_t key, KeyOf&& key_of) {
    const uint32_t tag = tag_of(key);
    std::size_t i = tag & mask_;
    while (true) {
      const Slot s = slots_[i];
      if (s.id == kEmpty) return;
      if (s.tag == tag && key_of(s.id) == key) break;
      i = (i + 1) & mask_;
    }
    // Shift later members of the probe run back so lookups need no tombstones.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j].id != kEmpty; j = (j + 1) & mask_) {
      const std::size_t home = slots_[j].tag & mask_;
      // Move j into the hole if its home is not in (hole, j] cyclically.
      bool between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!between) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].id = kEmpty;
    --keys_;
  }

  // Hints the memory system that `key`'s home slot is needed soon.
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[tag_of(key) & mask_]); }

 private:
  static constexpr int32_t kEmpty = -1;
  struct Slot {
    uint32_t tag;
    int32_t id;
  };
  static_assert(sizeof(Slot) == kSlotBytes);
  // The table has at most 2^32 slots, so the home slot is tag & mask_.
  static uint32_t tag_of(uint64_t key) { return static_cast<uint32_t>(mix64(key)); }

  // Twice the slots, every key moved to its home in them (tags give it).
  void grow() {
    std::vector<Slot> old(slots_.size() * 2, Slot{0, kEmpty});
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.id == kEmpty) continue;
      std::size_t i = s.tag & mask_;
      while (slots_[i].id != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  static constexpr int64_t kFirstKeys = 256;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t max_cap_ = 16;  // slots_for(the bound)
  std::size_t keys_ = 0;
};

}  // namespace blis
