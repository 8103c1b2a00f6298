#include "engine/kv_cache.hpp"
#include "util/arith.hpp"

#include <blis/errors.hpp>

#include <algorithm>
#include <cmath>

namespace blis {

namespace {

// Free-list entries for a cache of `total_blocks`: room for stale entries
// keeps compactions rare; positions fit in 32 bits.
int64_t ring_entries(int64_t total_blocks) {
  return std::min<int64_t>(total_blocks + std::max<int64_t>(total_blocks / 2, 16), UINT32_MAX);
}

}  // namespace

int64_t KVCache::footprint_bytes(int64_t total_blocks) {
  if (total_blocks <= 0) return 0;
  return total_blocks * static_cast<int64_t>(sizeof(Block)) +
         ring_entries(total_blocks) * static_cast<int64_t>(sizeof(FreeEntry)) +
         static_cast<int64_t>(BlockIndex::slots_for(total_blocks) * BlockIndex::kSlotBytes);
}

KVCache::KVCache(int64_t total_blocks, int32_t block_size)
    : block_size_(block_size), by_hash_(total_blocks > 0 ? total_blocks : 1) {
  if (total_blocks <= 0 || block_size <= 0)
    throw InputError("", "KV cache needs total blocks > 0 and block size > 0");
  if (total_blocks > INT32_MAX) throw InputError("--total-kv-blocks", "at most 2147483647 blocks");
  total_ = total_blocks;
  // Memory is written only as blocks are used: an instance of a large fleet
  // touches a small part of its tables. blocks_ grows within its capacity
  // (its elements never move) as ids are given out; the ring's entries are
  // written before they are read (an entry is read only at the head or
  // within ring_size_ of it; live_head() and add_own() check the size).
  blocks_.reserve(static_cast<size_t>(total_blocks));
  ring_cap_ = static_cast<uint32_t>(ring_entries(total_blocks));
  ring_ = std::unique_ptr<FreeEntry[]>(new FreeEntry[ring_cap_]);
  // Initially every block is free: one run, whose blocks get ids in id
  // order (the order of the free list when every block is tracked).
  ring_[0] = FreeEntry{static_cast<uint64_t>(total_blocks), kRun, false, false, false};
  ring_size_ = 1;
}

void KVCache::track_every_block() {
  if (!runs_) return;
  if (used_ > 0 || hits_ + misses_ > 0)
    throw RuntimeError("internal error: KV block tracking changed in use");
  runs_ = false;
  unnamed_ = kNoBlock;
  blocks_.resize(static_cast<size_t>(total_));
  // Every block free, in id order (head = block 0).
  for (int32_t i = 0; i < static_cast<int32_t>(blocks_.size()); ++i) {
    ring_[i] = FreeEntry{0, i, false, false, false};
    blocks_[i].free_pos = static_cast<uint32_t>(i);
  }
  ring_head_ = 0;
  ring_size_ = static_cast<uint32_t>(blocks_.size());
}

void KVCache::push_tail(int32_t id, uint64_t hash, bool hashed, bool indexed) {
  if (ring_size_ == ring_cap_) compact_ring();
  uint64_t pos = uint64_t{ring_head_} + ring_size_;
  if (pos >= ring_cap_) pos -= ring_cap_;
  ring_[pos] = FreeEntry{hash, id, hashed, indexed, false};
  ++ring_size_;
  blocks_[id].free_pos = static_cast<uint32_t>(pos);
  if (hashed) ++hashed_free_;
}

// Own blocks freed together go to the tail as one run (joining the tail's
// run if there is one): which block a later request takes is decided by the
// order of the list alone, and own blocks are alike but for their ids.
void KVCache::push_run(int64_t n) {
  if (ring_size_ > 0) {
    uint64_t pos = uint64_t{ring_head_} + ring_size_ - 1;
    if (pos >= ring_cap_) pos -= ring_cap_;
    FreeEntry& tail = ring_[pos];
    if (tail.id == kRun && !tail.stale) {
      tail.hash += static_cast<uint64_t>(n);
      return;
    }
  }
  if (ring_size_ == ring_cap_) compact_ring();
  uint64_t pos = uint64_t{ring_head_} + ring_size_;
  if (pos >= ring_cap_) pos -= ring_cap_;
  ring_[pos] = FreeEntry{static_cast<uint64_t>(n), kRun, false, false, false};
  ++ring_size_;
}

KVCache::FreeEntry& KVCache::live_head() {
  while (ring_size_ > 0 && ring_[ring_head_].stale) drop_head();  // blocks that left from the middle
  // Callers take a free block only when there is one: a live entry.
  if (ring_size_ == 0) throw RuntimeError("internal error: a block taken from an empty KV free list");
  return ring_[ring_head_];
}

void KVCache::drop_head() {
  ring_head_ = ring_next(ring_head_);
  --ring_size_;
}

bool KVCache::runs_cover(int64_t n) const { return own_run_room(n) == n; }

int64_t KVCache::own_run_room(int64_t limit) const {
  limit = std::min(limit, free_blocks());
  int64_t have = 0;
  for (uint32_t pos = ring_head_; have < limit; pos = ring_next(pos)) {
    const FreeEntry& e = ring_[pos];
    if (e.stale) continue;
    if (e.id != kRun) break;
    have += static_cast<int64_t>(e.hash);
  }
  return std::min(have, limit);
}

void KVCache::add_own_runs(int64_t n) {
  used_ += n;
  misses_ += n;
  while (n > 0) {
    FreeEntry& e = live_head();
    const int64_t take = std::min<int64_t>(n, static_cast<int64_t>(e.hash));
    e.hash -= static_cast<uint64_t>(take);
    n -= take;
    if (e.hash == 0) drop_head();
  }
}

void KVCache::add_own_in_turn(RequestBlocks& r, int64_t n) {
  while (n > 0) {
    FreeEntry& e = live_head();
    if (e.id == kRun) {
      const int64_t take = std::min<int64_t>(n, static_cast<int64_t>(e.hash));
      e.hash -= static_cast<uint64_t>(take);
      n -= take;
      r.count += static_cast<int32_t>(take);
      r.last_id = -1;
      if (e.hash == 0) drop_head();
      continue;
    }
    const bool forgotten = e.indexed;
    const int32_t id = pop_head();  // forgets its content if the entry says the index names it
    --n;
    // The index may name a block whose entry does not say so: one a request
    // had as a hit past its own boundary (is_own), or that held such a block
    // since. Lookups find it as long as it keeps its id and hash, so it keeps
    // them: r lists it, and all its blocks.
    if (forgotten || index_find(hash_of(id)) != id) {
      push_unnamed(id);
      ++r.count;
      r.last_id = -1;
      continue;
    }
    list_own_blocks(r);
    list_new_block(r, id);
    for (; n > 0; --n) list_new_block(r, pop_head());
  }
}

// r's own blocks get ids and go to its list (see add_own_in_turn).
void KVCache::list_own_blocks(RequestBlocks& r) {
  if (r.list == RequestBlocks::kNoList) acquire_list(r);
  for (auto k = static_cast<int64_t>(lists_[r.list].size()); k < r.count; ++k) {
    const int32_t id = pop_unnamed();
    blocks_[id].ref = 1;
    lists_[r.list].push_back(id);
  }
}

void KVCache::acquire_list(RequestBlocks& r) {
  if (free_lists_.empty()) {
    free_lists_.push_back(static_cast<uint32_t>(lists_.size()));
    lists_.emplace_back();
  }
  r.list = free_lists_.back();
  free_lists_.pop_back();
}

int32_t KVCache::pop_head() {
  FreeEntry& head = live_head();
  if (head.id == kRun) {
    if (--head.hash == 0) drop_head();
    return pop_unnamed();
  }
  const FreeEntry& e = head;
  drop_head();
  // Pops are too far apart for the hardware to see the ring as a stream:
  // fetch its entries kRingAhead pops ahead, and the blocks (which the
  // caller writes) kBlockAhead pops ahead.
  constexpr uint32_t kRingAhead = 16, kBlockAhead = 8;
  auto ahead = [&](uint32_t k) {
    uint64_t pos = uint64_t{ring_head_} + k;
    return pos >= ring_cap_ ? pos - ring_cap_ : pos;
  };
  if (ring_size_ > kRingAhead) __builtin_prefetch(&ring_[ahead(kRingAhead)]);
  if (ring_size_ > kBlockAhead) {
    const int32_t next = ring_[ahead(kBlockAhead)].id;
    if (next != kRun) __builtin_prefetch(&blocks_[next], 1);
  }
  // Reusing a block forgets its old content. As in the reference, the hash's
  // map entry goes even if a later duplicate took it over (spec engine §4.5).
  if (e.hashed) --hashed_free_;
  if (e.indexed) forget_hash(e.hash);
  return e.id;
}

void KVCache::take_from_free_list(const Block& b) {
  FreeEntry& e = ring_[b.free_pos];
  e.stale = true;
  if (e.hashed) --hashed_free_;
}

// Drops the stale entries; live ones keep their order and move to the front.
void KVCache::compact_ring() {
  std::vector<FreeEntry> kept;
  for (uint32_t k = 0, pos = ring_head_; k < ring_size_; ++k, pos = ring_next(pos))
    if (!ring_[pos].stale) kept.push_back(ring_[pos]);
  for (uint32_t pos = 0; pos < kept.size(); ++pos) {
    ring_[pos] = kept[pos];
    if (kept[pos].id != kRun) blocks_[kept[pos].id].free_pos = pos;
  }
  ring_head_ = 0;
  ring_size_ = static_cast<uint32_t>(kept.size());
}

// A registration's sequence hash and block are fetched when it is queued,
// its index slot kSlotLag updates later (once the hash is there to say which
// slot), or when the batch is applied for the last few.
void KVCache::register_hash(int32_t id, const uint64_t* hash) {
  __builtin_prefetch(hash);
  __builtin_prefetch(&blocks_[id], 1);
  queue_update(id, 0, hash);
}

// Registers the block; its request will soon want another one, whose id
// goes after this one's in the request's list: fetch that place too.
void KVCache::last_block_full(const RequestBlocks& r) {
  if (r.count - 1 < std::min<int64_t>(r.num_hashes, r.shareable)) register_hash(r.last_id, &r.hashes[r.count - 1]);
  if (is_own(r, r.count)) return;  // the next one is only counted
  const std::vector<int32_t>& ids = lists_[r.list];
  if (ids.size() < ids.capacity()) __builtin_prefetch(ids.data() + ids.size(), 1);
}

void KVCache::forget_hash(uint64_t hash) {
  by_hash_.prefetch(hash);
  queue_update(kForget, hash, nullptr);
}

void KVCache::queue_update(int32_t id, uint64_t key, const uint64_t* hash) {
  if (num_updates_ >= kSlotLag) {
    const IndexUpdate& u = updates_[num_updates_ - kSlotLag];
    if (u.id != kForget) by_hash_.prefetch(*u.hash);
  }
  updates_[num_updates_++] = IndexUpdate{id, key, hash};
  if (num_updates_ == kMaxUpdates) apply_updates();
}

void KVCache::apply_updates() {
  for (int i = std::max(num_updates_ - kSlotLag, 0); i < num_updates_; ++i)
    if (updates_[i].id != kForget) by_hash_.prefetch(*updates_[i].hash);
  auto key_of = [this](int32_t id) { return hash_of(id); };
  for (int i = 0; i < num_updates_; ++i) {
    const IndexUpdate& u = updates_[i];
    if (u.id == kForget) {
      by_hash_.erase(u.key, key_of);
    } else {
      blocks_[u.id].hash = *u.hash;
      by_hash_.put(*u.hash, u.id, key_of);  // last writer wins
    }
  }
  num_updates_ = 0;
}

int64_t KVCache::cached_prefix(const uint64_t* hashes, int64_t max_blocks,
                               std::vector<int32_t>& out) {
  out.clear();
  for (int64_t k = 0; k < max_blocks; ++k) {
    int32_t id = index_find(hashes[k]);
    if (id < 0) break;
    out.push_back(id);
  }
  return static_cast<int64_t>(out.size());
}

int64_t KVCache::blocks_needed(const RequestBlocks& r, int64_t n) const {
  int64_t room = int64_t{r.count} * block_size_ - r.tokens;
  int64_t rest = n - room;
  return rest <= 0 ? 0 : ceil_div(rest, block_size_);
}

bool KVCache::allocate(RequestBlocks& r, const std::vector<int32_t>& hit_ids, int64_t n) {
  // Check first: new blocks come from the free list, and so do cached hits
  // that nobody holds at the moment.
  int64_t revived = 0;
  for (int32_t id : hit_ids)
    if (blocks_[id].ref == 0) ++revived;
  const int64_t room = int64_t{r.count} * block_size_ - r.tokens;
  const int64_t rest = n - room;  // hits are full blocks: they add no room
  const int64_t need = rest <= 0 ? 0 : ceil_div(rest, block_size_);
  if (need + revived > free_blocks()) return false;

  const bool listed = !hit_ids.empty() || (need > 0 && !is_own(r, r.count));
  if (r.list == RequestBlocks::kNoList && listed) acquire_list(r);

  for (int32_t id : hit_ids) {
    Block& b = blocks_[id];
    if (b.ref++ == 0) {
      take_from_free_list(b);
      ++used_;
    }
    ++hits_;
    lists_[r.list].push_back(id);
    ++r.count;
    r.last_id = id;
    r.tokens += block_size_;
  }
  const int64_t indexed = std::min<int64_t>(r.num_hashes, r.shareable);
  // Fill the partially filled last block first.
  if (room > 0 && n > 0) {
    int64_t take = n < room ? n : room;
    r.tokens += take;
    n -= take;
    int64_t index = r.count - 1;
    if (r.tokens - index * block_size_ == block_size_ && index < indexed)
      register_hash(r.last_id, &r.hashes[index]);
  }
  if (fill_new_blocks(r, n, indexed)) return true;
  // The rest is own content: its blocks are only counted.
  add_own(r, ceil_div(n, block_size_));
  r.tokens += n;
  return true;
}

// New blocks with ids for the first of n tokens, until they are all placed
// (true) or the rest is own content (false: the tokens left in n).
bool KVCache::fill_new_blocks(RequestBlocks& r, int64_t& n, int64_t indexed) {
  while (n > 0) {
    if (is_own(r, r.count)) return false;
    list_new_block(r, pop_head());
    ++used_;
    ++misses_;
    int64_t take = n < block_size_ ? n : block_size_;
    r.tokens += take;
    n -= take;
    if (take == block_size_ && r.count - 1 < indexed) register_hash(r.last_id, &r.hashes[r.count - 1]);
  }
  return true;
}

void KVCache::release(RequestBlocks& r, Release how) {
  if (r.count > 0) {
    // Blocks' hashes must be complete, and registrations may point into the
    // request's hashes.
    apply_updates();
    // Block k holds cached content if it is full and the sequence has its
    // hash; the index names it if the content may be shared.
    const int64_t hashed = std::min(r.tokens / block_size_, r.num_hashes);
    const int64_t indexed = std::min<int64_t>(hashed, r.shareable);
    // A request that comes back looks its own content up: index it now, and
    // all it fills from now on (the index then holds what it always would).
    const bool index_own = how == Release::MayReturn && indexed < hashed;
    if (how == Release::MayReturn) r.shareable = RequestBlocks{}.shareable;
    // Last block first: the own blocks, then those with ids.
    const int64_t listed = r.list == RequestBlocks::kNoList ? 0 : static_cast<int64_t>(lists_[r.list].size());
    if (listed < r.count) release_own(r, listed, hashed, index_own);
    if (listed > 0) release_listed(r, hashed, indexed, index_own);
    if (index_own) apply_updates();  // the registrations point into r.hashes
  }
  r.count = 0;
  r.tokens = 0;
  r.last_id = -1;
  if (has_cpu_tier()) offload();
}

// Own blocks [from, r.count) go to the free list's tail, the last first. They
// hold no content anyone can look up, so they go as one run; unless the
// request may return, which indexes the content they hold: those take ids.
void KVCache::release_own(RequestBlocks& r, int64_t from, int64_t hashed, bool index_own) {
  const int64_t run_from = index_own ? std::max(from, hashed) : from;
  if (run_from < r.count) push_run(r.count - run_from);
  for (int64_t k = run_from - 1; k >= from; --k) {
    const int32_t id = pop_unnamed();
    register_hash(id, &r.hashes[k]);
    push_tail(id, r.hashes[k], true, true);
  }
  used_ -= r.count - from;
}

// The blocks with ids, the last first; a block others hold stays theirs.
void KVCache::release_listed(RequestBlocks& r, int64_t hashed, int64_t indexed, bool index_own) {
  std::vector<int32_t>& ids = lists_[r.list];
  // The blocks lie anywhere in memory: ask for them a few iterations ahead.
  constexpr int64_t kAhead = 8;
  for (auto k = static_cast<int64_t>(ids.size()) - 1; k >= 0; --k) {
    if (k >= kAhead) __builtin_prefetch(&blocks_[ids[k - kAhead]]);
    const int32_t id = ids[k];
    Block& b = blocks_[id];
    // Own content (k >= indexed) is unique: the block holds only this
    // request's reference, and its hash is the request's, not b.hash.
    if (k >= indexed && k < hashed && index_own) register_hash(id, &r.hashes[k]);
    if (--b.ref == 0) {
      --used_;
      if (k < indexed)
        push_tail(id, b.hash, true, true);
      else
        push_tail(id, k < hashed ? r.hashes[k] : 0, k < hashed, index_own && k < hashed);
    }
  }
  ids.clear();
  free_lists_.push_back(r.list);
  r.list = RequestBlocks::kNoList;
}

// spec engine §4.9: above the threshold, every free block that still holds
// cached content moves it to the CPU tier, least recently freed first, until
// the CPU tier is full. (The reference also counted a re-offloaded block
// twice against the CPU capacity; here the capacity is the number of entries.)
void KVCache::offload() {
  const double n = static_cast<double>(total_blocks());
  if (!(static_cast<double>(used_) / n > tier_.offload_threshold)) return;
  // Offloaded blocks stay free, without content, and go to the tail in the
  // order they were visited; the visit covers the entries present now.
  moved_.clear();
  for (uint32_t k = 0, size = ring_size_, pos = ring_head_;
       k < size && hashed_free_ > 0 && static_cast<int64_t>(cpu_.size()) < tier_.blocks;
       ++k, pos = ring_next(pos)) {
    FreeEntry& e = ring_[pos];
    if (e.stale || !e.hashed) continue;
    cpu_[e.id] = CpuEntry{e.hash, clock_};
    ++offloads_;
    if (e.indexed && index_find(e.hash) == e.id) forget_hash(e.hash);
    e.stale = true;
    --hashed_free_;
    moved_.push_back(e.id);
  }
  for (int32_t id : moved_) push_tail(id, 0, false, false);
}

int32_t KVCache::reload_into_free(uint64_t hash, const std::vector<int32_t>& keep, int64_t& passed) {
  int32_t id = -1;
  int64_t skipped = 0;
  for (uint32_t k = 0, pos = ring_head_; k < ring_size_ && id < 0; ++k, pos = ring_next(pos)) {
    FreeEntry& e = ring_[pos];
    if (e.stale) continue;
    if (std::find(keep.begin(), keep.end(), e.id) != keep.end()) {
      ++skipped;
      continue;
    }
    if (skipped == 0) {
      id = pop_head();  // the least recently freed block (stale entries before it go too)
    } else {
      // From the middle of the list: it forgets its content as pop_head() does.
      id = e.id;
      e.stale = true;
      if (e.hashed) --hashed_free_;
      if (e.indexed) forget_hash(e.hash);
    }
  }
  passed += skipped;
  if (id < 0) return -1;
  register_hash(id, &hash);
  apply_updates();  // before `hash` goes
  push_tail(id, hash, true, true);
  return id;
}

bool KVCache::reload() {
  if (!has_cpu_tier()) return false;
  int64_t reloaded = 0;
  int64_t transfer = tier_.block_transfer_us(block_size_);
  if (tier_slow_ != 1.0)
    transfer = static_cast<int64_t>(std::ceil(static_cast<double>(transfer) * tier_slow_));
  for (auto it = cpu_.begin(); it != cpu_.end();) {
    if (index_find(it->second.hash) >= 0) {  // already on the GPU
      ++it;
      continue;
    }
    if (free_blocks() == 0) break;
    const int32_t id = pop_head();
    const uint64_t hash = it->second.hash;
    register_hash(id, &hash);
    apply_updates();  // before `hash` goes
    push_tail(id, hash, true, true);  // cached but free, like any released block
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
