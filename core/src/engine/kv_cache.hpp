// Paged KV cache with prefix caching (spec engine §4): N blocks of B tokens,
// chained content hashes, an LRU free list whose blocks keep their content
// until reused, reference counts for blocks shared between requests.
//
// Unlike the reference, every allocation is transactional: it checks first
// and mutates only when it will succeed, so a failed allocation never leaks
// blocks (defect D1 of the reference, see docs/differences.md).
#pragma once

#include "engine/block_index.hpp"

#include <cstdint>
#include <map>
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
};

// The blocks one request holds, in sequence order (block k holds tokens
// [kB, (k+1)B) of the request's sequence).
struct RequestBlocks {
  std::vector<int32_t> ids;
  int64_t tokens = 0;  // tokens stored in those blocks
};

class KVCache {
 public:
  KVCache(int64_t total_blocks, int32_t block_size);

  int64_t total_blocks() const { return static_cast<int64_t>(blocks_.size()); }
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

  void enable_cpu_tier(const CpuTierConfig& cfg) { tier_ = cfg; }
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

  // Leading blocks of `hashes` (at most max_blocks) whose content is cached;
  // their ids go to `out`. Pure query.
  int64_t cached_prefix(const uint64_t* hashes, int64_t max_blocks, std::vector<int32_t>& out) const;

  // Adds `hit_ids` (cached blocks, only for a request holding nothing yet)
  // and then `n` new tokens to the request. `seq_hashes` are the request's
  // chained hashes; a block that becomes full is registered under its hash.
  // Returns false, changing nothing, if the free blocks do not suffice.
  bool allocate(RequestBlocks& r, const std::vector<int32_t>& hit_ids, int64_t n,
                const uint64_t* seq_hashes, int64_t num_seq_hashes);

  // The common case of a decode step: n more tokens that fit into the
  // request's last block. Returns false when they do not (use allocate()).
  bool append_in_place(RequestBlocks& r, int64_t n, const uint64_t* seq_hashes,
                       int64_t num_seq_hashes) {
    const int64_t blocks = static_cast<int64_t>(r.ids.size());
    if (n > blocks * block_size_ - r.tokens) return false;
    r.tokens += n;
    if (r.tokens == blocks * block_size_ && blocks - 1 < num_seq_hashes)
      register_hash(r.ids.back(), seq_hashes[blocks - 1]);
    return true;
  }

  // Releases every block of the request, last block first (so a sequence's
  // later blocks are evicted before its earlier ones).
  void release(RequestBlocks& r);

  // Blocks needed for n more tokens of r (0 if they fit in its last block).
  int64_t blocks_needed(const RequestBlocks& r, int64_t n) const;

 private:
  struct Block {
    uint64_t hash = 0;
    int32_t ref = 0;
    int32_t prev = -1, next = -1;  // free-list links
    bool hashed = false;
    bool in_free_list = true;
  };

  void unlink(int32_t id);
  void push_tail(int32_t id);
  int32_t pop_head();
  void register_hash(int32_t id, uint64_t hash);
  void offload();

  struct CpuEntry {
    uint64_t hash;
    int64_t offloaded_at;
  };

  std::vector<Block> blocks_;
  int32_t block_size_;
  int32_t head_ = -1, tail_ = -1;
  int64_t used_ = 0;
  int64_t hits_ = 0, misses_ = 0;
  BlockIndex by_hash_;

  CpuTierConfig tier_;
  std::map<int32_t, CpuEntry> cpu_;  // by the GPU block the content came from
  int64_t clock_ = 0;
  int64_t pending_transfer_ = 0;
  int64_t hashed_free_ = 0;  // free blocks that still hold cached content
  int64_t cpu_hits_ = 0, cpu_misses_ = 0, offloads_ = 0, thrashes_ = 0;
};

}  // namespace blis
