// Keyed entries with an intrusive least-recently-used list: the CPU tier's
// blocks (engine/kv_offload.hpp). Entries live in one dense vector, their ids
// reused through a free list, and are found through a BlockIndex that grows
// by doubling; the list links ids, so moving an entry to the tail or evicting
// the head touches no allocator and looks up no neighbour by key.
#pragma once

#include "engine/block_index.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blis {

class KeyedLru {
 public:
  static constexpr int32_t kNone = -1;
  struct Entry {
    uint64_t key = 0;
    int32_t ref = 0;                     // the owner's count (the CPU tier's ref_cnt)
    int32_t prev = kNone, next = kNone;  // list neighbours, when listed
    bool listed = false;
  };

  KeyedLru() : index_(kFirstKeys) {}

  // The entry's id, or kNone.
  int32_t find(uint64_t key) const {
    return index_.find(key, [this](int32_t id) { return entries_[static_cast<std::size_t>(id)].key; });
  }
  Entry& operator[](int32_t id) { return entries_[static_cast<std::size_t>(id)]; }
  const Entry& operator[](int32_t id) const { return entries_[static_cast<std::size_t>(id)]; }
  int64_t size() const { return live_; }

  // A new entry for an absent key, not listed.
  int32_t insert(uint64_t key, int32_t ref) {
    if (live_ + 1 > capacity_) grow();
    int32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
      entries_[static_cast<std::size_t>(id)] = Entry{key, ref, kNone, kNone, false};
    } else {
      id = static_cast<int32_t>(entries_.size());
      entries_.push_back(Entry{key, ref, kNone, kNone, false});
    }
    index_.put(key, id, [this](int32_t x) { return entries_[static_cast<std::size_t>(x)].key; });
    ++live_;
    return id;
  }

  void erase(int32_t id) {
    Entry& e = entries_[static_cast<std::size_t>(id)];
    if (e.listed) unlink(id);
    index_.erase(e.key, [this](int32_t x) { return entries_[static_cast<std::size_t>(x)].key; });
    free_.push_back(id);
    --live_;
  }

  // The list: append at the tail (most recent), the head is the oldest.
  void append(int32_t id) {
    Entry& e = entries_[static_cast<std::size_t>(id)];
    e.prev = tail_;
    e.next = kNone;
    e.listed = true;
    if (tail_ != kNone)
      entries_[static_cast<std::size_t>(tail_)].next = id;
    else
      head_ = id;
    tail_ = id;
  }
  void unlink(int32_t id) {
    Entry& e = entries_[static_cast<std::size_t>(id)];
    if (e.prev != kNone)
      entries_[static_cast<std::size_t>(e.prev)].next = e.next;
    else
      head_ = e.next;
    if (e.next != kNone)
      entries_[static_cast<std::size_t>(e.next)].prev = e.prev;
    else
      tail_ = e.prev;
    e.prev = e.next = kNone;
    e.listed = false;
  }
  int32_t head() const { return head_; }

  // Every live entry, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    std::vector<bool> dead(entries_.size(), false);
    for (int32_t id : free_) dead[static_cast<std::size_t>(id)] = true;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (!dead[i]) f(entries_[i]);
  }

 private:
  static constexpr int64_t kFirstKeys = 64;

  void grow() {
    capacity_ *= 2;
    index_ = BlockIndex(capacity_);
    std::vector<bool> dead(entries_.size(), false);
    for (int32_t id : free_) dead[static_cast<std::size_t>(id)] = true;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (!dead[i])
        index_.put(entries_[i].key, static_cast<int32_t>(i),
                   [this](int32_t x) { return entries_[static_cast<std::size_t>(x)].key; });
  }

  std::vector<Entry> entries_;
  std::vector<int32_t> free_;
  BlockIndex index_;
  int64_t capacity_ = kFirstKeys, live_ = 0;
  int32_t head_ = kNone, tail_ = kNone;
};

}  // namespace blis
