// The N-tier KV offload chain of --kv-offload-config (docs/kv-offload.md,
// HEAD's multi-tier offload model): behind the GPU blocks, a CPU tier of reference-counted
// blocks with LRU eviction, and ordered secondary tiers (disks, object
// stores) fed by a transfer station of read and write servers.
//
//  - After each step's batch is formed, the prompt blocks of every running
//    request are stored in the CPU tier (mirror) and, when newly stored,
//    written through to every secondary tier; a block being written is
//    pinned in the CPU tier until its write completes.
//  - A new admission whose prompt continues in the CPU tier has those blocks
//    reloaded into free GPU blocks (they then hit as cached content).
//  - A new admission whose prompt continues only in a secondary tier waits
//    in the queue (deferred) while the run is read back into the CPU tier,
//    and is re-examined at every step; requests behind it may go first.
//
// Off (no chain) the engine never calls any of this.
#pragma once

#include "engine/keyed_lru.hpp"
#include "engine/kv_cache.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace blis {

class OffloadEviction;

// One secondary tier's transfer physics (device_class resolved).
struct OffloadTierParams {
  int64_t n_read = 16, n_write = 16;  // servers preferring reads, writes
  int64_t base_us = 0;                // per access
  double read_bytes_per_us = 1.0, write_bytes_per_us = 1.0;
  // Queue-depth ramp: a transfer alone gets fraction f1 of the bandwidth,
  // rising linearly to all of it at qsat transfers in service (qsat < 2: off).
  int64_t saturation_queue_depth = 1;
  double single_transfer_fraction = 1.0;
};

struct OffloadChainConfig {
  int64_t cpu_blocks = 0;        // CPU tier capacity in GPU blocks (>= 1)
  int64_t per_block_bytes = 0;   // KV bytes of one block on one TP rank
  bool prompt_only = true;       // store only blocks wholly inside the prompt
  std::vector<OffloadTierParams> tiers;
  // HEAD's mirror tier of --kv-cpu-blocks (sim/kv/tiered.go): no secondary
  // tier; each block reloaded into the GPU adds reload_us to the step that
  // reloads it; the thrashing rate is CPU evictions over blocks stored.
  bool tiered = false;
  int64_t reload_us = 0;
  // The file's eviction_policy: an offload-eviction plugin, "lru" the
  // built-in (the list's head, without a call); `eviction` the policy object
  // (null for lru).
  std::string eviction_policy = "lru";
  std::string eviction_where;
  std::shared_ptr<OffloadEviction> eviction;
};

// The transfer station: per tier, FIFO queues of reads and writes served by
// read-priority and write-priority servers (each takes the other direction
// when its own queue is empty); completions in (time, submit time, tier,
// direction, id) order.
class TransferStation {
 public:
  enum Direction : int { kRead = 0, kWrite = 1 };
  explicit TransferStation(const std::vector<OffloadTierParams>& tiers);
  // Queues a transfer submitted at `now` (never before an earlier one); its id.
  int64_t submit(int tier, Direction dir, int64_t bytes, int64_t now);
  // Every transfer complete at `now`, in completion order, appended to out.
  void poll(int64_t now, std::vector<int64_t>& out);
  // Scenario `tier` events: tier's transfers that start service from now on
  // take `factor` times as long (rounded up; 1 restores).
  void set_slowdown(int tier, double factor) { tiers_[static_cast<size_t>(tier)].slow = factor; }

 private:
  struct Job {
    int64_t id, bytes, submit, complete_at;
    int tier;
    Direction dir;
    bool read_server;
  };
  struct Tier {
    OffloadTierParams p;
    std::vector<int64_t> read_q, write_q;  // job indices, FIFO from *_head
    size_t read_head = 0, write_head = 0;
    int64_t free_read = 0, free_write = 0, active_read = 0, active_write = 0;
    double slow = 1.0;  // transfer time factor (scenario `tier` events)
  };
  static bool later(const Job& a, const Job& b);
  void advance(int64_t target);
  void assign(int tier, int64_t start);
  void start(Tier& t, int64_t job, bool read_server, int64_t at);
  int64_t service_us(const Tier& t, Direction dir, int64_t bytes, int64_t q) const;

  std::vector<Tier> tiers_;
  std::vector<Job> jobs_;          // by id - 1
  std::vector<int64_t> in_service_;  // heap of job indices, earliest first
  std::vector<int64_t> done_;      // completed, not yet polled
  int64_t last_ = 0;
};

class OffloadChain {
 public:
  OffloadChain(KVCache& gpu, const OffloadChainConfig& cfg);

  bool defers() const { return !secondary_.empty(); }
  // Top of every step: transfers complete up to now land.
  void set_clock(int64_t now);
  // Start of admissions: advances every deferred request (HEAD's step-boundary
  // re-poll); waiting() then names those still waiting for a fetch.
  void poll_deferred();
  bool waiting(uint64_t id) const { return still_.count(id) != 0; }
  // A request left the queue without being admitted (timeout, eviction).
  void forget(uint64_t id) { deferred_.erase(id); }

  enum class Admit { Ok, Failed, Deferred };
  // A new admission: `hashes` its sequence's block hashes, `full_blocks` the
  // prompt's full blocks, hit_ids the GPU prefix the caller found (it may be
  // replaced), n the tokens to allocate after it. On Ok, kv holds them.
  Admit admit(uint64_t id, RequestBlocks& kv, const uint64_t* hashes, int64_t full_blocks,
              std::vector<int32_t>& hit_ids, int64_t n);
  // A running request's next prompt chunk of n tokens from `start`: prompt
  // blocks past those it holds that the CPU tier has are reloaded, and the
  // ones now cached join it. True when that allocated the chunk.
  bool extend_running(RequestBlocks& kv, int64_t full_blocks, int64_t start, int64_t n);
  // A running request's allocation failed.
  void allocation_failed() { ++miss_; }
  // After batch formation: stores the batch's blocks (kv, prompt tokens).
  void mirror(const RequestBlocks& kv, int64_t input_tokens);

  double hit_rate() const {
    const int64_t n = gpu_.hits() + gpu_.misses() + miss_;
    return n == 0 ? 0.0 : static_cast<double>(gpu_.hits()) / static_cast<double>(n);
  }
  double thrashing_rate() const {
    if (cfg_.tiered)
      return stores_ == 0 ? 0.0 : static_cast<double>(evictions_) / static_cast<double>(stores_);
    const int64_t n = promotions_ + promotions_failed_;
    return n == 0 ? 0.0 : static_cast<double>(promotions_failed_) / static_cast<double>(n);
  }
  // The reloads' transfer time since the last call (tiered: reload_us each).
  int64_t take_transfer_latency() {
    const int64_t t = pending_;
    pending_ = 0;
    return t;
  }
  // Scenario `tier` events: tier 0 is the CPU tier (timed only as HEAD's
  // mirror tier: reload_us each), k >= 1 the k-th secondary tier; from now on
  // its transfers take `factor` times as long (rounded up; 1 restores).
  int32_t secondary_tiers() const { return static_cast<int32_t>(secondary_.size()); }
  bool cpu_reloads_timed() const { return cfg_.tiered; }
  void set_tier_slowdown(int32_t tier, double factor);
  // Diagnostics for tests: CPU blocks held, of them evictable, pinned; held per secondary tier.
  int64_t cpu_used() const { return used_; }
  int64_t cpu_evictable() const { return evictable_; }
  int64_t cpu_capacity() const { return cfg_.cpu_blocks; }
  int64_t secondary_held(size_t tier) const { return static_cast<int64_t>(secondary_[tier].size()); }
  int64_t transfers_in_flight() const { return static_cast<int64_t>(inflight_.size()); }
  // Free GPU blocks holding a reloading prompt's own content that a reload
  // passed over (HEAD would have reused them: docs/differences.md row 55).
  int64_t own_blocks_kept() const { return own_kept_; }
  // Every CPU block accounted once (used = entries, evictable = LRU length).
  bool conserved() const;

 private:
  // CPU tier (vLLM v1's ref_cnt model): ref -1 = a read back from a
  // secondary tier in flight (not readable), 0 = evictable (in the LRU
  // list), n > 0 = pinned by n writes to secondary tiers.
  enum class Lookup { Miss, Hit, Pending };
  Lookup lookup(uint64_t key) const;
  int64_t prepare_store(const std::vector<uint64_t>& keys);
  void complete_store(uint64_t key, bool ok);
  void pin(uint64_t key);
  void unpin(uint64_t key);
  int64_t evict(int64_t n);
  int64_t evict_chosen(int64_t n);  // the eviction policy's choices
  void touch(uint64_t key);
  void touch_id(int32_t id);
  bool store_new(uint64_t key);  // an absent key

  int find_secondary(uint64_t key) const;
  // The run of blocks from hashes[i] held by the same first secondary tier.
  bool secondary_run(const uint64_t* hashes, int64_t i, int64_t n, std::vector<uint64_t>& run, int& tier) const;
  bool promote(const std::vector<uint64_t>& run, int tier);
  bool consult_and_reload(const uint64_t* hashes, int64_t from, int64_t n);
  void collect_own_blocks(const uint64_t* hashes, int64_t n);
  bool reload_block(uint64_t key);
  Admit allocate_through_chain(RequestBlocks& kv, const uint64_t* hashes, int64_t full_blocks,
                               std::vector<int32_t>& hit_ids, int64_t n);
  void cascade(uint64_t key);

  // Deferral of a new admission waiting for a secondary read.
  struct Deferral {
    bool promoting = false;  // false: the existence lookup round (retry)
    bool resolved = false, recompute = false;
    int tier = -1;
    int64_t start = 0;
    std::vector<uint64_t> keys;
  };
  enum class Fetch { None, Secondary, Pending };
  Fetch classify(const uint64_t* hashes, int64_t from, int64_t n, std::vector<uint64_t>& run, int& tier) const;
  Lookup awaited(const std::vector<uint64_t>& keys) const;

  KVCache& gpu_;
  OffloadChainConfig cfg_;
  KeyedLru cpu_;
  int64_t used_ = 0, evictable_ = 0;
  std::vector<std::unordered_set<uint64_t>> secondary_;
  std::unique_ptr<TransferStation> station_;
  struct Inflight {
    std::vector<uint64_t> keys;
    int tier;
    bool read;
  };
  std::unordered_map<int64_t, Inflight> inflight_;
  std::unordered_map<uint64_t, Deferral> deferred_;
  std::unordered_set<uint64_t> known_;  // secondary existence already looked up
  std::unordered_set<uint64_t> still_;  // deferred and waiting, this step
  std::vector<int64_t> completed_;
  std::vector<uint64_t> run_;
  std::vector<int32_t> keep_;  // GPU blocks holding the reloading prompt's content
  int64_t clock_ = 0;
  int64_t miss_ = 0, promotions_ = 0, promotions_failed_ = 0, own_kept_ = 0;
  int64_t stores_ = 0, evictions_ = 0, pending_ = 0;  // blocks stored new, evicted; reload µs to charge
  int64_t reload_us_ = 0;  // tiered: a reload's µs, cfg_.reload_us times its `tier` event factor
};

}  // namespace blis
