#include "engine/kv_offload.hpp"
#include "engine/wait_queue.hpp"

#include <blis/policies.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace blis {

namespace {

constexpr int64_t kMaxServiceUs = int64_t{1} << 60;
// A deferral older than this (~1000 s) gives up and recomputes (a backstop
// that legitimate configurations never reach).
constexpr int64_t kMaxDeferUs = 1'000'000'000;

}  // namespace

// ---- transfer station ----

TransferStation::TransferStation(const std::vector<OffloadTierParams>& tiers) {
  for (const OffloadTierParams& p : tiers) {
    Tier t;
    t.p = p;
    t.free_read = p.n_read;
    t.free_write = p.n_write;
    tiers_.push_back(std::move(t));
  }
}

// Heap order: the earliest completion on top; ties by submit time, tier,
// direction, id (so the order never depends on the heap's mechanics).
bool TransferStation::later(const Job& a, const Job& b) {
  if (a.complete_at != b.complete_at) return a.complete_at > b.complete_at;
  if (a.submit != b.submit) return a.submit > b.submit;
  if (a.tier != b.tier) return a.tier > b.tier;
  if (a.dir != b.dir) return a.dir > b.dir;
  return a.id > b.id;
}

int64_t TransferStation::service_us(const Tier& t, Direction dir, int64_t bytes, int64_t q) const {
  const double bw = dir == kRead ? t.p.read_bytes_per_us : t.p.write_bytes_per_us;
  double eff = bw;
  const int64_t qsat = t.p.saturation_queue_depth;
  const double f1 = t.p.single_transfer_fraction;
  if (qsat >= 2 && f1 > 0 && f1 < 1 && q < qsat) {
    const int64_t qq = std::max<int64_t>(q, 1);
    eff = bw * (f1 + (1 - f1) * static_cast<double>(qq - 1) / static_cast<double>(qsat - 1));
  }
  const double variable = static_cast<double>(bytes) / eff;
  const int64_t v = variable >= static_cast<double>(kMaxServiceUs) ? kMaxServiceUs : static_cast<int64_t>(variable);
  if (t.slow == 1.0) return t.p.base_us + v;
  const double slowed = std::ceil(static_cast<double>(t.p.base_us + v) * t.slow);
  return slowed >= static_cast<double>(kMaxServiceUs) ? kMaxServiceUs : static_cast<int64_t>(slowed);
}

void TransferStation::start(Tier& t, int64_t job, bool read_server, int64_t at) {
  Job& j = jobs_[static_cast<size_t>(job)];
  j.read_server = read_server;
  int64_t& active = j.dir == kRead ? t.active_read : t.active_write;
  j.complete_at = at + service_us(t, j.dir, j.bytes, active + 1);
  ++active;
  in_service_.push_back(job);
  std::push_heap(in_service_.begin(), in_service_.end(),
                 [this](int64_t a, int64_t b) { return later(jobs_[static_cast<size_t>(a)], jobs_[static_cast<size_t>(b)]); });
}

void TransferStation::assign(int tier, int64_t at) {
  Tier& t = tiers_[static_cast<size_t>(tier)];
  auto take = [](std::vector<int64_t>& q, size_t& head) {
    const int64_t j = q[head++];
    if (head == q.size()) {
      q.clear();
      head = 0;
    }
    return j;
  };
  auto pending = [](const std::vector<int64_t>& q, size_t head) { return head < q.size(); };
  while (t.free_read > 0 && (pending(t.read_q, t.read_head) || pending(t.write_q, t.write_head))) {
    const int64_t j = pending(t.read_q, t.read_head) ? take(t.read_q, t.read_head) : take(t.write_q, t.write_head);
    start(t, j, true, at);
    --t.free_read;
  }
  while (t.free_write > 0 && (pending(t.write_q, t.write_head) || pending(t.read_q, t.read_head))) {
    const int64_t j = pending(t.write_q, t.write_head) ? take(t.write_q, t.write_head) : take(t.read_q, t.read_head);
    start(t, j, false, at);
    --t.free_write;
  }
}

void TransferStation::advance(int64_t target) {
  if (target <= last_) return;
  auto cmp = [this](int64_t a, int64_t b) { return later(jobs_[static_cast<size_t>(a)], jobs_[static_cast<size_t>(b)]); };
  while (!in_service_.empty()) {
    const int64_t top = in_service_.front();
    const Job& j = jobs_[static_cast<size_t>(top)];
    if (j.complete_at > target) break;
    std::pop_heap(in_service_.begin(), in_service_.end(), cmp);
    in_service_.pop_back();
    Tier& t = tiers_[static_cast<size_t>(j.tier)];
    ++(j.read_server ? t.free_read : t.free_write);
    --(j.dir == kRead ? t.active_read : t.active_write);
    done_.push_back(j.id);
    assign(j.tier, j.complete_at);
  }
  last_ = target;
}

int64_t TransferStation::submit(int tier, Direction dir, int64_t bytes, int64_t now) {
  advance(now);
  const int64_t id = static_cast<int64_t>(jobs_.size()) + 1;
  jobs_.push_back(Job{id, bytes, now, 0, tier, dir, false});
  Tier& t = tiers_[static_cast<size_t>(tier)];
  (dir == kRead ? t.read_q : t.write_q).push_back(id - 1);
  assign(tier, std::max(now, last_));
  return id;
}

void TransferStation::poll(int64_t now, std::vector<int64_t>& out) {
  advance(now);
  out.insert(out.end(), done_.begin(), done_.end());
  done_.clear();
}

// ---- the chain ----

OffloadChain::OffloadChain(KVCache& gpu, const OffloadChainConfig& cfg)
    : gpu_(gpu), cfg_(cfg), reload_us_(cfg.reload_us) {
  gpu_.track_every_block();  // the chain sees block ids, and joins hits to running requests
  secondary_.resize(cfg.tiers.size());
  if (!cfg.tiers.empty()) station_ = std::make_unique<TransferStation>(cfg.tiers);
}

void OffloadChain::set_tier_slowdown(int32_t tier, double factor) {
  if (tier == 0) {
    reload_us_ = factor == 1.0
                     ? cfg_.reload_us
                     : static_cast<int64_t>(std::ceil(static_cast<double>(cfg_.reload_us) * factor));
    return;
  }
  if (station_ && tier <= secondary_tiers()) station_->set_slowdown(tier - 1, factor);
}

OffloadChain::Lookup OffloadChain::lookup(uint64_t key) const {
  const int32_t id = cpu_.find(key);
  if (id == KeyedLru::kNone) return Lookup::Miss;
  return cpu_[id].ref == -1 ? Lookup::Pending : Lookup::Hit;
}

void OffloadChain::touch(uint64_t key) {
  const int32_t id = cpu_.find(key);
  if (id != KeyedLru::kNone) touch_id(id);
}

void OffloadChain::touch_id(int32_t id) {
  if (cpu_[id].ref != 0) return;
  cpu_.unlink(id);
  cpu_.append(id);
}

int64_t OffloadChain::evict(int64_t n) {
  if (cfg_.eviction) return evict_chosen(n);
  int64_t k = 0;
  while (k < n && cpu_.head() != KeyedLru::kNone) {
    cpu_.erase(cpu_.head());
    --used_;
    --evictable_;
    ++k;
  }
  evictions_ += k;
  return k;
}

// Block by block, the policy's choice among the (at most
// BLIS_OFFLOAD_EVICTION_CANDIDATES) least recently used evictable blocks.
int64_t OffloadChain::evict_chosen(int64_t n) {
  std::array<blis_offload_block, BLIS_OFFLOAD_EVICTION_CANDIDATES> blocks{};
  std::array<int32_t, BLIS_OFFLOAD_EVICTION_CANDIDATES> ids{};
  int64_t k = 0;
  for (; k < n && cpu_.head() != KeyedLru::kNone; ++k) {
    size_t count = 0;
    for (int32_t id = cpu_.head(); id != KeyedLru::kNone && count < blocks.size(); id = cpu_[id].next) {
      ids[count] = id;
      blocks[count++] = blis_offload_block{cpu_[id].key, find_secondary(cpu_[id].key), 0};
    }
    const size_t pick =
        count < 2 ? 0
                  : cfg_.eviction->choose(blis_offload_eviction_input{sizeof(blis_offload_eviction_input),
                                                                      sizeof(blis_offload_block), clock_, used_,
                                                                      cfg_.cpu_blocks, blocks.data(), count});
    cpu_.erase(ids[pick]);
    --used_;
    --evictable_;
  }
  evictions_ += k;
  return k;
}

bool OffloadChain::store_new(uint64_t key) {
  if (used_ >= cfg_.cpu_blocks && evict(1) == 0) return false;  // full, nothing evictable
  cpu_.append(cpu_.insert(key, 0));
  ++used_;
  ++evictable_;
  ++stores_;
  return true;
}

// All or nothing: room for every absent key among free and evictable blocks.
int64_t OffloadChain::prepare_store(const std::vector<uint64_t>& keys) {
  int64_t fresh = 0;
  for (uint64_t k : keys)
    if (cpu_.find(k) == KeyedLru::kNone) ++fresh;
  if (fresh == 0) return 0;
  const int64_t free = cfg_.cpu_blocks - used_;
  if (fresh > free + evictable_) return 0;
  if (fresh > free) evict(fresh - free);
  for (uint64_t k : keys) {
    if (cpu_.find(k) != KeyedLru::kNone) continue;
    cpu_.insert(k, -1);  // not readable, not in the LRU list
    ++used_;
  }
  return fresh;
}

void OffloadChain::complete_store(uint64_t key, bool ok) {
  const int32_t id = cpu_.find(key);
  if (id == KeyedLru::kNone || cpu_[id].ref != -1) return;
  if (ok) {
    cpu_[id].ref = 0;
    cpu_.append(id);
    ++evictable_;
  } else {
    cpu_.erase(id);
    --used_;
  }
}

void OffloadChain::pin(uint64_t key) {
  const int32_t id = cpu_.find(key);
  if (id == KeyedLru::kNone || cpu_[id].ref < 0) return;
  if (cpu_[id].ref == 0) {
    cpu_.unlink(id);
    --evictable_;
  }
  ++cpu_[id].ref;
}

void OffloadChain::unpin(uint64_t key) {
  const int32_t id = cpu_.find(key);
  if (id == KeyedLru::kNone || cpu_[id].ref <= 0) return;
  if (--cpu_[id].ref == 0) {
    cpu_.append(id);
    ++evictable_;
  }
}

bool OffloadChain::conserved() const {
  int64_t ready = 0, listed = 0, linked = 0;
  cpu_.for_each([&](const KeyedLru::Entry& b) {
    ready += b.ref == 0;
    linked += b.listed;
  });
  for (int32_t id = cpu_.head(); id != KeyedLru::kNone && listed <= used_; id = cpu_[id].next) ++listed;
  return used_ == cpu_.size() && used_ <= cfg_.cpu_blocks && evictable_ == ready && listed == ready &&
         linked == ready && used_ >= 0;
}

int OffloadChain::find_secondary(uint64_t key) const {
  for (size_t t = 0; t < secondary_.size(); ++t)
    if (secondary_[t].count(key)) return static_cast<int>(t);
  return -1;
}

bool OffloadChain::secondary_run(const uint64_t* hashes, int64_t i, int64_t n, std::vector<uint64_t>& run,
                                 int& tier) const {
  run.clear();
  if (!station_) return false;
  tier = find_secondary(hashes[i]);
  if (tier < 0) return false;
  run.push_back(hashes[i]);
  for (int64_t j = i + 1; j < n; ++j) {
    if (gpu_.holds(hashes[j]) || lookup(hashes[j]) != Lookup::Miss || find_secondary(hashes[j]) != tier) break;
    run.push_back(hashes[j]);
  }
  return true;
}

bool OffloadChain::promote(const std::vector<uint64_t>& run, int tier) {
  const int64_t granted = prepare_store(run);
  if (granted == 0) {
    ++promotions_failed_;  // no room without evicting pinned blocks: recompute
    return false;
  }
  const int64_t id = station_->submit(tier, TransferStation::kRead, granted * cfg_.per_block_bytes, clock_);
  ++promotions_;
  inflight_[id] = Inflight{run, tier, true};
  return true;
}

void OffloadChain::cascade(uint64_t key) {
  if (!station_) return;
  for (size_t t = 0; t < secondary_.size(); ++t) {
    pin(key);
    const int64_t id = station_->submit(static_cast<int>(t), TransferStation::kWrite, cfg_.per_block_bytes, clock_);
    inflight_[id] = Inflight{{key}, static_cast<int>(t), false};
  }
}

void OffloadChain::set_clock(int64_t now) {
  clock_ = now;
  if (!station_) return;
  completed_.clear();
  station_->poll(now, completed_);
  for (int64_t id : completed_) {
    auto it = inflight_.find(id);
    if (it == inflight_.end()) continue;
    const Inflight f = std::move(it->second);
    inflight_.erase(it);
    if (f.read) {
      for (uint64_t k : f.keys) complete_store(k, true);
    } else {
      for (uint64_t k : f.keys) {
        secondary_[static_cast<size_t>(f.tier)].insert(k);
        unpin(k);
      }
    }
  }
}

// The prompt's blocks the GPU holds, in keep_ (the reloads must not take them).
void OffloadChain::collect_own_blocks(const uint64_t* hashes, int64_t n) {
  keep_.clear();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t id = gpu_.block_of(hashes[i]);
    if (id >= 0) keep_.push_back(id);
  }
}

// A reload takes the least recently freed GPU block that does not hold the
// prompt's own content (docs/differences.md row 55: HEAD takes the least
// recently freed one, which may be part of the prefix the request hits).
bool OffloadChain::reload_block(uint64_t key) {
  int64_t passed = 0;
  const int32_t id = gpu_.reload_into_free(key, keep_, passed);
  if (passed > 0) {
    own_kept_ += passed;
    spdlog::debug(
        "kv offload: at {} µs a CPU reload passed over {} free GPU blocks holding the prompt's own content "
        "(HEAD reuses them: docs/differences.md row 55)",
        clock_, passed);
  }
  if (id < 0) return false;
  keep_.push_back(id);
  return true;
}

bool OffloadChain::consult_and_reload(const uint64_t* hashes, int64_t from, int64_t n) {
  if (from >= n) return false;
  const int64_t max_reloads = gpu_.free_blocks();  // never take a reloaded block again
  int64_t reloads = 0;
  for (int64_t i = from; i < n; ++i) {
    const uint64_t key = hashes[i];
    if (gpu_.holds(key)) continue;
    switch (lookup(key)) {
      case Lookup::Hit:
        if (reloads == 0) collect_own_blocks(hashes, n);
        if (reloads >= max_reloads || !reload_block(key)) return reloads > 0;
        touch(key);
        ++reloads;
        if (cfg_.tiered) pending_ += reload_us_;
        break;
      case Lookup::Pending: return reloads > 0;
      case Lookup::Miss: {
        int tier = -1;
        if (secondary_run(hashes, i, n, run_, tier)) promote(run_, tier);
        return reloads > 0;
      }
    }
  }
  return reloads > 0;
}

OffloadChain::Admit OffloadChain::allocate_through_chain(RequestBlocks& kv, const uint64_t* hashes,
                                                         int64_t full_blocks, std::vector<int32_t>& hit_ids,
                                                         int64_t n) {
  const int64_t b = gpu_.block_size();
  const auto cached = static_cast<int64_t>(hit_ids.size());
  if (!consult_and_reload(hashes, cached, full_blocks)) {
    if (gpu_.allocate(kv, hit_ids, n)) return Admit::Ok;
    ++miss_;
    return Admit::Failed;
  }
  // Reloaded content lengthens the cached prefix. The step still computes
  // the tokens planned before (HEAD's accounting); only the blocks differ.
  const int64_t start = cached * b, end = start + n;
  std::vector<int32_t> now_cached;
  const int64_t k = gpu_.cached_prefix(hashes, full_blocks, now_cached);
  const int64_t new_start = k * b;
  if (new_start <= start) return gpu_.allocate(kv, hit_ids, n) ? Admit::Ok : Admit::Failed;
  if (new_start >= end) {
    now_cached.resize(static_cast<size_t>(std::min((end + b - 1) / b, k)));
    return gpu_.allocate(kv, now_cached, 0) ? Admit::Ok : Admit::Failed;
  }
  return gpu_.allocate(kv, now_cached, end - new_start) ? Admit::Ok : Admit::Failed;
}

bool OffloadChain::extend_running(RequestBlocks& kv, int64_t full_blocks, int64_t start, int64_t n) {
  if (!consult_and_reload(kv.hashes, kv.count, full_blocks)) return false;
  const int64_t b = gpu_.block_size();
  const int64_t end = start + n;
  std::vector<int32_t> now_cached;
  const int64_t k = gpu_.cached_prefix(kv.hashes, full_blocks, now_cached);
  if (k * b <= start) return false;
  const int64_t first = (start + b - 1) / b;
  if (k * b >= end) {
    const int64_t last = std::min((end + b - 1) / b, k);
    if (first < last) {
      std::vector<int32_t> join(now_cached.begin() + first, now_cached.begin() + last);
      gpu_.allocate(kv, join, 0);
    }
    return true;  // (HEAD: nothing more is allocated for the chunk)
  }
  std::vector<int32_t> join(now_cached.begin() + std::min(first, k), now_cached.end());
  return gpu_.allocate(kv, join, end - k * b);
}

OffloadChain::Fetch OffloadChain::classify(const uint64_t* hashes, int64_t from, int64_t n, std::vector<uint64_t>& run,
                                           int& tier) const {
  if (!station_) return Fetch::None;
  for (int64_t i = from; i < n; ++i) {
    const uint64_t key = hashes[i];
    if (gpu_.holds(key)) continue;
    switch (lookup(key)) {
      case Lookup::Hit: continue;  // reloadable at admission
      case Lookup::Pending:
        run.assign(1, key);
        tier = -1;
        return Fetch::Pending;
      case Lookup::Miss: return secondary_run(hashes, i, n, run, tier) ? Fetch::Secondary : Fetch::None;
    }
  }
  return Fetch::None;
}

OffloadChain::Lookup OffloadChain::awaited(const std::vector<uint64_t>& keys) const {
  bool all = true;
  for (uint64_t k : keys) {
    const Lookup l = lookup(k);
    if (l == Lookup::Miss) return Lookup::Miss;
    if (l == Lookup::Pending) all = false;
  }
  return all ? Lookup::Hit : Lookup::Pending;
}

OffloadChain::Admit OffloadChain::admit(uint64_t id, RequestBlocks& kv, const uint64_t* hashes, int64_t full_blocks,
                                        std::vector<int32_t>& hit_ids, int64_t n) {
  if (station_) {
    auto it = deferred_.find(id);
    if (it != deferred_.end()) {
      if (!it->second.resolved && !it->second.recompute) return Admit::Deferred;
      const Admit a = allocate_through_chain(kv, hashes, full_blocks, hit_ids, n);
      if (a == Admit::Ok) deferred_.erase(id);
      return a;
    }
    int tier = -1;
    const Fetch f = classify(hashes, static_cast<int64_t>(hit_ids.size()), full_blocks, run_, tier);
    if (f != Fetch::None) {
      Deferral d;
      d.keys = run_;
      d.tier = tier;
      d.start = clock_;
      if (f == Fetch::Pending) {
        d.promoting = true;
      } else if (std::all_of(d.keys.begin(), d.keys.end(), [&](uint64_t k) { return known_.count(k) != 0; })) {
        if (promote(d.keys, tier))
          d.promoting = true;
        else
          d.recompute = true;
      } else {
        d.promoting = false;  // one round to look the keys up first
      }
      const bool waits = !d.recompute;
      deferred_[id] = std::move(d);
      // A refused fetch leaves the request at the head: it recomputes at the next step.
      return waits ? Admit::Deferred : Admit::Failed;
    }
  }
  return allocate_through_chain(kv, hashes, full_blocks, hit_ids, n);
}

void OffloadChain::poll_deferred() {
  still_.clear();
  if (deferred_.empty()) return;
  std::vector<uint64_t> ids;
  ids.reserve(deferred_.size());
  for (const auto& [id, d] : deferred_) ids.push_back(id);
  std::sort(ids.begin(), ids.end(), id_string_less);  // HEAD's order: "request_<n>" as strings
  for (uint64_t id : ids) {
    Deferral& d = deferred_.find(id)->second;
    if (d.resolved || d.recompute) continue;
    if (!d.promoting) {
      for (uint64_t k : d.keys) known_.insert(k);
      switch (awaited(d.keys)) {
        case Lookup::Hit: d.resolved = true; break;
        case Lookup::Pending: d.promoting = true; break;
        case Lookup::Miss:
          if (promote(d.keys, d.tier))
            d.promoting = true;
          else
            d.recompute = true;
          break;
      }
    } else {
      switch (awaited(d.keys)) {
        case Lookup::Hit: d.resolved = true; break;
        case Lookup::Miss: d.recompute = true; break;
        case Lookup::Pending: break;
      }
    }
    if (!d.resolved && !d.recompute) {
      if (clock_ - d.start > kMaxDeferUs)
        d.recompute = true;
      else
        still_.insert(id);
    }
  }
}

void OffloadChain::mirror(const RequestBlocks& kv, int64_t input_tokens) {
  const int64_t b = gpu_.block_size();
  int64_t offloadable = int64_t{kv.count} * b;
  if (cfg_.prompt_only) offloadable = std::min(offloadable, input_tokens);
  const int64_t full = std::min(kv.tokens / b, kv.num_hashes);
  const int64_t last = std::min(offloadable / b, full);
  for (int64_t k = 0; k < last; ++k) {
    const uint64_t key = kv.hashes[k];
    const int32_t id = cpu_.find(key);
    if (id != KeyedLru::kNone) {
      touch_id(id);  // already held: only its recency
      continue;
    }
    if (!store_new(key)) continue;  // full and every block pinned: skipped
    cascade(key);
  }
}

}  // namespace blis
