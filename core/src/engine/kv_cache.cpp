#include "engine/kv_cache.hpp"

#include <blis/errors.hpp>

#include <algorithm>
#include <cmath>

namespace blis {

KVCache::KVCache(int64_t total_blocks, int32_t block_size)
    : blocks_(static_cast<size_t>(total_blocks > 0 ? total_blocks : 0)), block_size_(block_size),
      by_hash_(total_blocks > 0 ? total_blocks : 1) {
  if (total_blocks <= 0 || block_size <= 0)
    throw InputError("", "KV cache needs total blocks > 0 and block size > 0");
  if (total_blocks > INT32_MAX) throw InputError("--total-kv-blocks", "at most 2147483647 blocks");
  // Initially every block is free, in id order (head = block 0).
  for (int32_t i = 0; i < static_cast<int32_t>(total_blocks); ++i) {
    blocks_[i].prev = i - 1;
    blocks_[i].next = i + 1 < total_blocks ? i + 1 : -1;
  }
  head_ = 0;
  tail_ = static_cast<int32_t>(total_blocks - 1);
}

void KVCache::unlink(int32_t id) {
  Block& b = blocks_[id];
  if (b.hashed) --hashed_free_;
  if (b.prev >= 0) blocks_[b.prev].next = b.next;
  else head_ = b.next;
  if (b.next >= 0) blocks_[b.next].prev = b.prev;
  else tail_ = b.prev;
  b.prev = b.next = -1;
  b.in_free_list = false;
}

void KVCache::push_tail(int32_t id) {
  Block& b = blocks_[id];
  if (b.hashed) ++hashed_free_;
  b.prev = tail_;
  b.next = -1;
  if (tail_ >= 0) blocks_[tail_].next = id;
  else head_ = id;
  tail_ = id;
  b.in_free_list = true;
}

int32_t KVCache::pop_head() {
  int32_t id = head_;
  unlink(id);
  Block& b = blocks_[id];
  // Reusing a block forgets its old content. As in the reference, the hash's
  // map entry goes even if a later duplicate took it over (spec engine §4.5).
  if (b.hashed) {
    by_hash_.erase(b.hash);
    b.hashed = false;
  }
  return id;
}

void KVCache::register_hash(int32_t id, uint64_t hash) {
  Block& b = blocks_[id];
  b.hash = hash;
  b.hashed = true;
  by_hash_.put(hash, id);  // last writer wins
}

int64_t KVCache::cached_prefix(const uint64_t* hashes, int64_t max_blocks,
                               std::vector<int32_t>& out) const {
  out.clear();
  for (int64_t k = 0; k < max_blocks; ++k) {
    int32_t id = by_hash_.find(hashes[k]);
    if (id < 0) break;
    out.push_back(id);
  }
  return static_cast<int64_t>(out.size());
}

int64_t KVCache::blocks_needed(const RequestBlocks& r, int64_t n) const {
  int64_t room = static_cast<int64_t>(r.ids.size()) * block_size_ - r.tokens;
  int64_t rest = n - room;
  return rest <= 0 ? 0 : (rest + block_size_ - 1) / block_size_;
}

bool KVCache::allocate(RequestBlocks& r, const std::vector<int32_t>& hit_ids, int64_t n,
                       const uint64_t* seq_hashes, int64_t num_seq_hashes) {
  // Check first: new blocks come from the free list, and so do cached hits
  // that nobody holds at the moment.
  int64_t revived = 0;
  for (int32_t id : hit_ids)
    if (blocks_[id].ref == 0) ++revived;
  const int64_t room = static_cast<int64_t>(r.ids.size()) * block_size_ - r.tokens;
  const int64_t rest = n - room;  // hits are full blocks: they add no room
  const int64_t need = rest <= 0 ? 0 : (rest + block_size_ - 1) / block_size_;
  if (need + revived > free_blocks()) return false;

  for (int32_t id : hit_ids) {
    Block& b = blocks_[id];
    if (b.ref++ == 0) {
      unlink(id);
      ++used_;
    }
    ++hits_;
    r.ids.push_back(id);
    r.tokens += block_size_;
  }
  auto hash_if_full = [&](int32_t id, int64_t index, int64_t fill) {
    if (fill == block_size_ && index < num_seq_hashes) register_hash(id, seq_hashes[index]);
  };
  // Fill the partially filled last block first.
  if (room > 0 && n > 0) {
    int64_t take = n < room ? n : room;
    r.tokens += take;
    n -= take;
    int64_t index = static_cast<int64_t>(r.ids.size()) - 1;
    hash_if_full(r.ids.back(), index, r.tokens - index * block_size_);
  }
  while (n > 0) {
    int32_t id = pop_head();
    Block& b = blocks_[id];
    b.ref = 1;
    ++used_;
    ++misses_;
    int64_t take = n < block_size_ ? n : block_size_;
    r.ids.push_back(id);
    r.tokens += take;
    n -= take;
    hash_if_full(id, static_cast<int64_t>(r.ids.size()) - 1, take);
  }
  return true;
}

void KVCache::release(RequestBlocks& r) {
  for (auto it = r.ids.rbegin(); it != r.ids.rend(); ++it) {
    Block& b = blocks_[*it];
    if (--b.ref == 0) {
      --used_;
      push_tail(*it);
    }
  }
  r.ids.clear();
  r.tokens = 0;
  if (has_cpu_tier()) offload();
}

// spec engine §4.9: above the threshold, every free block that still holds
// cached content moves it to the CPU tier, least recently freed first, until
// the CPU tier is full. (The reference also counted a re-offloaded block
// twice against the CPU capacity; here the capacity is the number of entries.)
void KVCache::offload() {
  const double n = static_cast<double>(total_blocks());
  if (!(static_cast<double>(used_) / n > tier_.offload_threshold)) return;
  int32_t id = head_;
  int32_t stop = tail_;
  while (hashed_free_ > 0 && id >= 0 && static_cast<int64_t>(cpu_.size()) < tier_.blocks) {
    const int32_t next = id == stop ? -1 : blocks_[id].next;
    Block& b = blocks_[id];
    if (b.hashed) {
      cpu_[id] = CpuEntry{b.hash, clock_};
      ++offloads_;
      unlink(id);
      if (by_hash_.find(b.hash) == id) by_hash_.erase(b.hash);
      b.hashed = false;
      push_tail(id);
    }
    id = next;
  }
}

bool KVCache::reload() {
  if (!has_cpu_tier()) return false;
  int64_t reloaded = 0;
  const int64_t transfer =
      tier_.base_latency + static_cast<int64_t>(std::ceil(static_cast<double>(block_size_) / tier_.bandwidth));
  for (auto it = cpu_.begin(); it != cpu_.end();) {
    if (by_hash_.find(it->second.hash) >= 0) {  // already on the GPU
      ++it;
      continue;
    }
    if (head_ < 0) break;
    int32_t id = pop_head();
    register_hash(id, it->second.hash);
    push_tail(id);  // cached but free, like any released block
    pending_transfer_ += transfer;
    if (clock_ > 0 && clock_ - it->second.offloaded_at < 1000) ++thrashes_;
    ++cpu_hits_;
    ++reloaded;
    it = cpu_.erase(it);
  }
  if (reloaded == 0) ++cpu_misses_;
  return reloaded > 0;
}

}  // namespace blis
