// Content hash -> block id, as a flat open-addressing table (linear probing,
// backward-shift deletion). It never holds more keys than there are blocks,
// so it is sized once and never allocates again: the cache's hot path.
#pragma once

#include <blis/block_hash.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blis {

class BlockIndex {
 public:
  explicit BlockIndex(int64_t max_keys) {
    std::size_t cap = 16;
    while (cap < static_cast<std::size_t>(max_keys) * 2) cap <<= 1;
    keys_.assign(cap, 0);
    values_.assign(cap, kEmpty);
    mask_ = cap - 1;
  }

  // Block id for `key`, or -1.
  int32_t find(uint64_t key) const {
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (values_[i] == kEmpty) return -1;
      if (keys_[i] == key) return values_[i];
    }
  }
  // Inserts or overwrites.
  void put(uint64_t key, int32_t value) {
    std::size_t i = slot(key);
    while (values_[i] != kEmpty && keys_[i] != key) i = (i + 1) & mask_;
    keys_[i] = key;
    values_[i] = value;
  }
  void erase(uint64_t key) {
    std::size_t i = slot(key);
    while (true) {
      if (values_[i] == kEmpty) return;
      if (keys_[i] == key) break;
      i = (i + 1) & mask_;
    }
    // Shift later members of the probe run back so lookups need no tombstones.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; values_[j] != kEmpty; j = (j + 1) & mask_) {
      std::size_t home = slot(keys_[j]);
      // Move j into the hole if its home is not in (hole, j] cyclically.
      bool between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!between) {
        keys_[hole] = keys_[j];
        values_[hole] = values_[j];
        hole = j;
      }
    }
    values_[hole] = kEmpty;
  }

 private:
  static constexpr int32_t kEmpty = -1;
  std::size_t slot(uint64_t key) const { return static_cast<std::size_t>(mix64(key)) & mask_; }

  std::vector<uint64_t> keys_;
  std::vector<int32_t> values_;
  std::size_t mask_ = 0;
};

}  // namespace blis
