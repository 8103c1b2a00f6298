// Paged KV cache with prefix caching (spec engine §4): N blocks of B tokens,
// chained content hashes, an LRU free list whose blocks keep their content
// until reused, reference counts for blocks shared between requests.
//
// Unlike the reference, every allocation is transactional: it checks first
// and mutates only when it will succeed, so a failed allocation never leaks
// blocks (defect D1 of the reference, see docs/differences.md).
#pragma once

#include "engine/block_index.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace blis {

// The CPU tier behind the GPU blocks (spec engine §4.9): when GPU usage is
// above the threshold, cached content of free blocks moves to CPU memory;
// when a GPU allocation fails, CPU content is brought back, at a transfer
// cost added to the step's duration.
struct CpuTierConfig {
  int64_t blocks = 0;            // 0 = no CPU tier
  double offload_threshold = 0.9;
  double bandwidth = 100.0;      // blocks per µs
  int64_t base_latency = 0;      // µs per transfer
  // One block's transfer between the tiers, µs: the base latency plus the
  // block at the bandwidth, rounded up (the seed's tier and HEAD's alike).
  int64_t block_transfer_us(int64_t block_size) const {
    return base_latency + static_cast<int64_t>(std::ceil(static_cast<double>(block_size) / bandwidth));
  }
};

// The blocks one request holds, in sequence order (block k holds tokens
// [kB, (k+1)B) of the request's sequence), and the content of that sequence.
// A plain value, so that a running request's copy can live in a dense
// array; the list of block ids is kept by the cache (KVCache::block_ids).
// Blocks for the request's own content (past `shareable` or its hashes) are
// only counted: see "Own blocks as runs" in docs/design/performance.md.
struct RequestBlocks {
  static constexpr uint32_t kNoList = UINT32_MAX;
  // The sequence's chained hashes (block_hash.hpp): block k, once full, holds
  // the content hashes[k] if k < num_hashes. Set by the owner; must stay
  // valid while the request holds blocks.
  const uint64_t* hashes = nullptr;
  int64_t num_hashes = 0;
  int64_t tokens = 0;        // tokens stored in those blocks
  int32_t count = 0;         // blocks held
  int32_t last_id = -1;      // the last of them
  uint32_t list = kNoList;   // the cache's list of their ids, while any
  // Leading hashes that other requests may share (set by the owner). The
  // content past them is the request's own: the cache leaves it out of the
  // prefix index until the request is preempted (see "Own blocks" in
  // docs/design/performance.md), then indexes everything. Like num_hashes,
  // it must not change while the request holds blocks.
  int32_t shareable = INT32_MAX;
};

// The prefix index of a cache as of one moment: which content the cache held
// then. The router's view of a cache through --cache-signal-delay (spec head
// §7.2); a copy, so it costs two memcpy-like passes over the index.
class PrefixIndexCopy {
 public:
  // Leading hashes (at most n) whose content was cached at the copy.
  int64_t cached_prefix(const uint64_t* hashes, int64_t n) const {
    int64_t k = 0;
    while (k < n && index_.find(hashes[k], [this](int32_t id) { return hashes_[static_cast<size_t>(id)]; }) >= 0) ++k;
    return k;
  }

 private:
  friend class KVCache;
  BlockIndex index_{0};
  std::vector<uint64_t> hashes_;  // by block id
};

class KVCache {
 public:
  KVCache(int64_t total_blocks, int32_t block_size);

  // The bytes a cache of `total_blocks` GPU blocks allocates up front (its
  // blocks, free list and prefix index), for the run's memory pre-flight.
  static int64_t footprint_bytes(int64_t total_blocks);

  int64_t total_blocks() const { return total_; }
  int64_t used_blocks() const { return used_; }
  int64_t free_blocks() const { return total_blocks() - used_; }
  int32_t block_size() const { return block_size_; }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  // GPU and CPU hits over all lookups that allocated or reused a block.
  double hit_rate() const {
    const int64_t h = hits_ + cpu_hits_;
    const int64_t n = h + misses_ + cpu_misses_;
    return n == 0 ? 0.0 : static_cast<double>(h) / static_cast<double>(n);
  }
  double thrashing_rate() const {
    return offloads_ == 0 ? 0.0 : static_cast<double>(thrashes_) / static_cast<double>(offloads_);
  }

  void enable_cpu_tier(const CpuTierConfig& cfg) {
    tier_ = cfg;
    if (has_cpu_tier()) track_every_block();
  }
  // Own blocks get ids and free-list entries of their own, like every other
  // block: for the CPU tier and the offload chain, which see block ids (CPU
  // content is keyed and reloaded by them, reloads pick free blocks, hits
  // join a running request). Only on a cache that has allocated nothing.
  void track_every_block();
  // Scenario `tier` events: reloads from now on take `factor` times as long
  // (rounded up; 1 restores).
  void set_cpu_transfer_factor(double factor) { tier_slow_ = factor; }
  bool has_cpu_tier() const { return tier_.blocks > 0; }
  void set_clock(int64_t now) { clock_ = now; }
  // Brings CPU content back into free GPU blocks after an allocation failed.
  // True if anything was reloaded (then retry the allocation).
  bool reload();
  // Transfer time accumulated since the last call.
  int64_t take_transfer_latency() {
    int64_t t = pending_transfer_;
    pending_transfer_ = 0;
    return t;
  }

  // For the offload chain (engine/kv_offload.hpp): whether some GPU block
  // holds the content `hash` (and which: -1 if none), and content brought
  // back from the CPU tier into the least recently freed block not in `keep`
  // (which forgets its own), kept free and cached at the free list's tail:
  // its id, or -1 when every free block is kept. `passed` counts the kept
  // free blocks passed over.
  bool holds(uint64_t hash) { return index_find(hash) >= 0; }
  int32_t block_of(uint64_t hash) { return index_find(hash); }
  int32_t reload_into_free(uint64_t hash, const std::vector<int32_t>& keep, int64_t& passed);

  // Leading blocks of `hashes` (at most max_blocks) whose content is cached;
  // their ids go to `out`. Changes nothing observable.
  int64_t cached_prefix(const uint64_t* hashes, int64_t max_blocks, std::vector<int32_t>& out);

  // The length of cached_prefix() without the ids. Changes nothing observable.
  int64_t cached_prefix_length(const uint64_t* hashes, int64_t n) {
    int64_t k = 0;
    while (k < n && index_find(hashes[k]) >= 0) ++k;
    return k;
  }
  // Overwrites `out` with the current prefix index (reusing its memory).
  void copy_prefix_index(PrefixIndexCopy& out) {
    apply_updates();
    out.index_ = by_hash_;
    // Only the ids given out so far can be named.
    out.hashes_.resize(blocks_.size());
    for (size_t i = 0; i < blocks_.size(); ++i) out.hashes_[i] = blocks_[i].hash;
  }

  // Adds `hit_ids` (cached blocks, only for a request holding nothing yet)
  // and then `n` new tokens to the request; a block that becomes full is
  // registered under its hash. Returns false, changing nothing, if the free
  // blocks do not suffice.
  bool allocate(RequestBlocks& r, const std::vector<int32_t>& hit_ids, int64_t n);

  // The common case of a decode step: n > 0 more tokens that fit into the
  // request's last block. Returns false when they do not (use allocate()).
  bool append_in_place(RequestBlocks& r, int64_t n) {
    const int64_t blocks = r.count;
    if (n > blocks * block_size_ - r.tokens) return false;
    r.tokens += n;
    if (r.tokens == blocks * block_size_) last_block_full(r);
    return true;
  }

  // allocate(r, {}, 1) for a request whose last block is full (the common
  // new block of a decode step), when the block does not fill with that
  // token (block size > 1).
  bool add_block(RequestBlocks& r) {
    if (free_blocks() < 1) return allocate(r, {}, 1);
    if (is_own(r, r.count)) {
      add_own(r, 1);
    } else {
      if (r.list == RequestBlocks::kNoList) return allocate(r, {}, 1);
      list_new_block(r, pop_head());
      ++used_;
      ++misses_;
    }
    ++r.tokens;
    return true;
  }

  // add_block() without its token, for a request whose next block is an
  // own block (counted, no id) while blocks are free: false, changing
  // nothing, otherwise. The request's tokens may lag (only its count and
  // content are read).
  bool add_own_block(RequestBlocks& r) {
    if (free_blocks() < 1 || !is_own(r, r.count)) return false;
    add_own(r, 1);
    return true;
  }

  // Whether the first n free blocks (n <= free_blocks()) are all own blocks
  // in runs, so that taking them touches no cached content.
  bool runs_cover(int64_t n) const;
  // The largest m <= limit with runs_cover(m): how many blocks steps may
  // take one after another with add_own_runs() (a step's runs_cover(n)
  // after others took k is this one's runs_cover(k + n)).
  int64_t own_run_room(int64_t limit) const;
  // n own blocks for requests that count them themselves (runs_cover(n)).
  void add_own_runs(int64_t n);

  // Whether r's next block would be an own block.
  bool next_is_own(const RequestBlocks& r) const { return is_own(r, r.count); }

  // Releases every block of the request, last block first (so a sequence's
  // later blocks are evicted before its earlier ones). A request that may
  // return (preempted) can hit its own content later: it is indexed now.
  enum class Release { Done, MayReturn };
  void release(RequestBlocks& r, Release how = Release::Done);

  // The ids of the blocks r holds, in sequence order: all of them when
  // every block is tracked, else those that are not own blocks (a prefix).
  std::vector<int32_t> block_ids(const RequestBlocks& r) const {
    return r.list == RequestBlocks::kNoList ? std::vector<int32_t>{} : lists_[r.list];
  }

  // Blocks needed for n more tokens of r (0 if they fit in its last block).
  int64_t blocks_needed(const RequestBlocks& r, int64_t n) const;

 private:
  // Blocks are used in an order unrelated to their ids, so each one touched
  // is a likely cache miss. The layout keeps those few: a block is 16 bytes;
  // the content of a free block travels with its free-list entry, so reusing
  // one reads only the free list (sequentially); index updates are queued
  // and applied in batches whose misses overlap.
  struct Block {
    uint64_t hash = 0;      // its content, valid once registered
    int32_t ref = 0;        // requests holding it
    uint32_t free_pos = 0;  // its entry in ring_ while ref == 0; without an id: the next such
  };
  // A free-list entry: a free block and the content it still holds. A block
  // that leaves the list from the middle (revived by a hit, moved by an
  // offload) leaves its entry behind, stale. Or a run of `hash` free own
  // blocks (id == kRun), freed together, taken from the head one by one.
  struct FreeEntry {
    uint64_t hash;  // kRun: the run's blocks
    int32_t id;
    bool hashed;   // the block holds cached content under `hash`
    bool indexed;  // ... and by_hash_ names it (not a request's own content)
    bool stale;
  };

  uint64_t hash_of(int32_t id) const { return blocks_[id].hash; }
  // by_hash_ is only read through this.
  int32_t index_find(uint64_t hash) {
    apply_updates();
    return by_hash_.find(hash, [this](int32_t i) { return hash_of(i); });
  }

  static constexpr int32_t kRun = -1;
  static constexpr uint32_t kNoBlock = UINT32_MAX;

  // Whether block k of r is an own block: counted, without an id. Own
  // blocks follow r's other blocks: k is own only past what it may index,
  // which stays put while r holds blocks. And only while r lists no block
  // past that: a request that was given its own content as hits (its
  // `shareable` set anew after a preemption), or took a free block the index
  // still names, lists every block from then on, as every block is listed
  // when all are tracked (see add_own_in_turn).
  bool is_own(const RequestBlocks& r, int64_t k) const {
    if (!runs_) return false;
    const int64_t limit = std::min<int64_t>(r.num_hashes, r.shareable);
    return k >= limit &&
           (r.list == RequestBlocks::kNoList || static_cast<int64_t>(lists_[r.list].size()) <= limit);
  }

  uint32_t ring_next(uint32_t pos) const { return pos + 1 == ring_cap_ ? 0 : pos + 1; }
  void push_tail(int32_t id, uint64_t hash, bool hashed, bool indexed);
  void push_run(int64_t n);
  FreeEntry& live_head();
  void drop_head();
  // The least recently freed block, for content with an id; from a run it
  // is any block without one.
  int32_t pop_head();
  // Adds n own blocks to r, the least recently freed (no tokens). Inline
  // the common case (a decode step's block from the head run); runs are
  // never stale, as nothing takes an own block from the middle of the list.
  void add_own(RequestBlocks& r, int64_t n) {
    FreeEntry& e = ring_[ring_head_];
    used_ += n;
    misses_ += n;
    if (ring_size_ > 0 && e.id == kRun && e.hash > static_cast<uint64_t>(n)) {
      e.hash -= static_cast<uint64_t>(n);
      r.count += static_cast<int32_t>(n);
      r.last_id = -1;
      return;
    }
    add_own_in_turn(r, n);
  }
  void add_own_in_turn(RequestBlocks& r, int64_t n);
  void list_own_blocks(RequestBlocks& r);
  // Block `id`, new to r, goes to its list.
  void list_new_block(RequestBlocks& r, int32_t id) {
    blocks_[id].ref = 1;
    lists_[r.list].push_back(id);
    ++r.count;
    r.last_id = id;
  }
  void acquire_list(RequestBlocks& r);
  // Blocks without an id (own blocks, held or in runs), a stack linked
  // through Block::free_pos, over the ids never given out (from
  // blocks_.size() up, in order): the stack of every block, block 0 on top,
  // that the cache starts with.
  void push_unnamed(int32_t id) {
    blocks_[id].free_pos = unnamed_;
    unnamed_ = static_cast<uint32_t>(id);
  }
  int32_t pop_unnamed() {
    if (unnamed_ == kNoBlock) {
      blocks_.emplace_back();  // within its capacity: nothing moves
      return static_cast<int32_t>(blocks_.size() - 1);
    }
    const auto id = static_cast<int32_t>(unnamed_);
    unnamed_ = blocks_[id].free_pos;
    return id;
  }
  void release_own(RequestBlocks& r, int64_t from, int64_t hashed, bool index_own);
  void release_listed(RequestBlocks& r, int64_t hashed, int64_t indexed, bool index_own);
  bool fill_new_blocks(RequestBlocks& r, int64_t& n, int64_t indexed);
  // The block leaves the free list from the middle.
  void take_from_free_list(const Block& b);
  void compact_ring();
  // Block `id` now holds the content hashed at *hash (which must stay valid
  // until the next apply_updates()).
  void register_hash(int32_t id, const uint64_t* hash);
  void last_block_full(const RequestBlocks& r);
  void forget_hash(uint64_t hash);
  void queue_update(int32_t id, uint64_t key, const uint64_t* hash);
  void apply_updates();
  void offload();

  struct CpuEntry {
    uint64_t hash;
    int64_t offloaded_at;
  };

  std::vector<Block> blocks_;  // the ids given out (capacity: every block)
  int64_t total_ = 0;
  int32_t block_size_;
  int64_t used_ = 0;
  int64_t hits_ = 0, misses_ = 0;
  // Index entries only ever name a block whose `hash` is that key: a block
  // is registered once per reuse, after its old entry was erased.
  BlockIndex by_hash_;
  // Updates of by_hash_ (and of registered blocks' hash) wait here, in
  // order, their memory prefetched, and are applied as a batch before
  // anything reads the index or releases blocks: every outcome is what it
  // would have been, while the cache misses of a batch overlap.
  struct IndexUpdate {
    int32_t id;            // the block to register, or kForget
    uint64_t key;          // kForget: the hash to erase
    const uint64_t* hash;  // registration: where the block's hash is
  };
  static constexpr int32_t kForget = -1;
  static constexpr int kMaxUpdates = 32;
  static constexpr int kSlotLag = 4;  // see register_hash()
  IndexUpdate updates_[kMaxUpdates];
  int num_updates_ = 0;

  // The free list, least recently freed first, as a ring of entries;
  // compacted when full.
  std::unique_ptr<FreeEntry[]> ring_;
  uint32_t ring_cap_ = 0;
  uint32_t ring_head_ = 0;  // position of the oldest entry
  uint32_t ring_size_ = 0;  // entries, live and stale
  int64_t hashed_free_ = 0;  // live entries that still hold cached content
  // Own blocks as runs (else every block tracked), and the top of the stack
  // of blocks without an id.
  bool runs_ = true;
  uint32_t unnamed_ = kNoBlock;
  std::vector<int32_t> moved_;  // offload()'s scratch

  // Block id lists of the requests holding blocks, by RequestBlocks::list:
  // as many as requests running, so the headers stay in cache, and a list
  // keeps its capacity for the next request.
  std::vector<std::vector<int32_t>> lists_;
  std::vector<uint32_t> free_lists_;

  CpuTierConfig tier_;
  double tier_slow_ = 1.0;           // the reloads' time factor (scenario `tier` events)
  std::map<int32_t, CpuEntry> cpu_;  // by the GPU block the content came from
  int64_t clock_ = 0;
  int64_t pending_transfer_ = 0;
  int64_t cpu_hits_ = 0, cpu_misses_ = 0, offloads_ = 0, thrashes_ = 0;
};

}  // namespace blis
