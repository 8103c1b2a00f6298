// Own content (RequestBlocks::shareable): a cache that keeps requests' own
// blocks out of its prefix index behaves exactly like one that indexes
// everything, as seen by every lookup the simulator can make. Two caches are
// driven by the same random sequence of admissions (with prefix hits),
// decode steps, completions, preemptions and re-admissions (which hit their
// own content), with and without a CPU tier (offloads, reloads).
#include "catch.hpp"

#include "engine/kv_cache.hpp"

#include <blis/go_rand.hpp>

#include <algorithm>
#include <deque>
#include <vector>

using namespace blis;

namespace {

constexpr int32_t kBlock = 16;

enum class Where { Waiting, Running, Done };

struct Req {
  std::vector<uint64_t> hashes;
  int32_t shareable = 0;  // complete prefix blocks
  int64_t target = 0;     // tokens it needs in all (grows as it decodes)
  RequestBlocks all, own;  // in the indexing-everything cache, in the other
  Where where = Where::Waiting;
};

struct Pair {
  KVCache all, own;
  Pair(int64_t blocks, const CpuTierConfig* tier) : all(blocks, kBlock), own(blocks, kBlock) {
    if (tier != nullptr) {
      all.enable_cpu_tier(*tier);
      own.enable_cpu_tier(*tier);
    }
  }
  void same_counters() {
    REQUIRE(all.used_blocks() == own.used_blocks());
    REQUIRE(all.hits() == own.hits());
    REQUIRE(all.misses() == own.misses());
    REQUIRE(all.hit_rate() == own.hit_rate());
    REQUIRE(all.thrashing_rate() == own.thrashing_rate());
    REQUIRE(all.take_transfer_latency() == own.take_transfer_latency());
  }
};

// Admits a waiting request as the instance does: its cached prefix, then
// the rest of its tokens; on failure a reload and one retry.
bool admit(Pair& p, Req& r) {
  const int64_t max_hits = std::min<int64_t>((r.target - 1) / kBlock, static_cast<int64_t>(r.hashes.size()));
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<int32_t> ha, ho;
    const int64_t hits = p.all.cached_prefix(r.hashes.data(), max_hits, ha);
    REQUIRE(p.own.cached_prefix(r.hashes.data(), max_hits, ho) == hits);
    REQUIRE(ho == ha);
    const bool ok = p.all.allocate(r.all, ha, r.target - hits * kBlock);
    REQUIRE(p.own.allocate(r.own, ho, r.target - hits * kBlock) == ok);
    if (ok) return true;
    const bool reloaded = p.all.reload();
    REQUIRE(p.own.reload() == reloaded);
    if (!reloaded) return false;
  }
  return false;
}

void run(uint64_t seed, const CpuTierConfig* tier) {
  GoRand rng(seed);
  Pair p(60, tier);
  std::deque<Req> reqs;
  uint64_t next_own = 1'000'000;
  for (int op = 0; op < 6000; ++op) {
    p.all.set_clock(op * 300);
    p.own.set_clock(op * 300);
    const int64_t kind = rng.intn(10);
    if (kind < 3 || reqs.empty()) {  // a new request: a group's prefix, then its own content
      Req& r = reqs.emplace_back();
      const uint64_t group = static_cast<uint64_t>(rng.intn(3));
      r.shareable = static_cast<int32_t>(rng.intn(5));
      for (int32_t k = 0; k < r.shareable; ++k) r.hashes.push_back(group * 100 + static_cast<uint64_t>(k));
      const int64_t own = rng.intn(8);
      for (int64_t k = 0; k < own; ++k) r.hashes.push_back(next_own++);
      r.target = r.shareable * kBlock + rng.intn(own * kBlock + 1) + 1;
      for (RequestBlocks* b : {&r.all, &r.own}) {
        b->hashes = r.hashes.data();
        b->num_hashes = static_cast<int64_t>(r.hashes.size());
      }
      r.own.shareable = r.shareable;
      continue;
    }
    Req& r = reqs[static_cast<size_t>(rng.intn(static_cast<int64_t>(reqs.size())))];
    if (r.where == Where::Waiting) {
      if (admit(p, r)) r.where = Where::Running;
    } else if (r.where == Where::Running) {
      if (kind < 7) {  // a decode step of 1..20 tokens
        const int64_t n = rng.intn(20) + 1;
        const bool in_place = p.all.append_in_place(r.all, n);
        REQUIRE(p.own.append_in_place(r.own, n) == in_place);
        bool ok = in_place;
        if (!in_place) {
          ok = p.all.allocate(r.all, {}, n);
          REQUIRE(p.own.allocate(r.own, {}, n) == ok);
        }
        if (ok) r.target += n;
      } else if (kind < 9) {  // preempted: back to waiting, to recompute all it had
        p.all.release(r.all, KVCache::Release::MayReturn);
        p.own.release(r.own, KVCache::Release::MayReturn);
        r.where = Where::Waiting;
      } else {
        p.all.release(r.all);
        p.own.release(r.own);
        r.where = Where::Done;
      }
    }
    p.same_counters();
    for (const Req& q : reqs) {
      if (q.where == Where::Running) REQUIRE(p.all.block_ids(q.all) == p.own.block_ids(q.own));
      // What the simulator looks up: anyone's shared prefix, and a waiting
      // request's whole content (its own blocks after a preemption).
      const int64_t n = q.where == Where::Waiting ? static_cast<int64_t>(q.hashes.size()) : q.shareable;
      REQUIRE(p.all.cached_prefix_length(q.hashes.data(), n) == p.own.cached_prefix_length(q.hashes.data(), n));
    }
  }
  for (Req& r : reqs) {
    if (r.where != Where::Running) continue;
    p.all.release(r.all);
    p.own.release(r.own);
  }
  p.same_counters();
  REQUIRE(p.own.used_blocks() == 0);
}

}  // namespace

TEST_CASE("own content kept out of the prefix index changes no lookup", "[kv][invariant]") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    run(seed, nullptr);
  }
}

TEST_CASE("own content kept out of the prefix index changes nothing with a CPU tier", "[kv][invariant]") {
  const CpuTierConfig tier{25, 0.6, 4.0, 10};
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    run(seed, &tier);
  }
}
