// Own content (RequestBlocks::shareable): a cache that keeps requests' own
// blocks out of its prefix index behaves exactly like one that indexes
// everything, as seen by every lookup the simulator can make; and one that
// keeps own blocks as runs (counted, without ids) exactly like one that
// tracks every block. Three caches are driven by the same random sequence of
// admissions (with prefix hits), decode steps, completions, preemptions and
// re-admissions (which hit their own content), with and without a CPU tier
// (offloads, reloads; the runs then give way to tracking every block).
#include "catch.hpp"

#include "engine/kv_cache.hpp"

#include <blis/go_rand.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <vector>

using namespace blis;

namespace {

constexpr int32_t kBlock = 16;

enum class Where { Waiting, Running, Done };

struct Req {
  std::vector<uint64_t> hashes;
  int32_t shareable = 0;  // complete prefix blocks
  int64_t target = 0;     // tokens it needs in all (grows as it decodes)
  RequestBlocks all, own, runs;  // in the indexing-everything cache, in the others
  Where where = Where::Waiting;
};

// `all` indexes everything and tracks every block (the reference), `own`
// keeps own content out of the index, `runs` also keeps own blocks as runs.
// With `anew`, a preempted request's `shareable` is set anew when it comes
// back (as an instance's queue does for a request routed to it again): it
// may then hit its own content past that boundary. `all` is left out of
// the comparisons then; `runs` must still do what `own` does.
struct Pair {
  KVCache all, own, runs;
  const bool tiered, anew;
  Pair(int64_t blocks, const CpuTierConfig* tier, bool anew)
      : all(blocks, kBlock), own(blocks, kBlock), runs(blocks, kBlock), tiered(tier != nullptr), anew(anew) {
    all.track_every_block();
    own.track_every_block();
    if (tier != nullptr) {
      all.enable_cpu_tier(*tier);
      own.enable_cpu_tier(*tier);
      runs.enable_cpu_tier(*tier);
    }
  }
  KVCache& ref() { return anew ? own : all; }
  void same_counters() {
    KVCache& a = ref();
    const int64_t latency = a.take_transfer_latency();
    for (KVCache* c : {&own, &runs}) {
      if (c == &a) continue;
      REQUIRE(a.used_blocks() == c->used_blocks());
      REQUIRE(a.free_blocks() == c->free_blocks());
      REQUIRE(a.hits() == c->hits());
      REQUIRE(a.misses() == c->misses());
      REQUIRE(a.hit_rate() == c->hit_rate());
      REQUIRE(a.thrashing_rate() == c->thrashing_rate());
      REQUIRE(latency == c->take_transfer_latency());
    }
  }
  // Block ids name the same blocks in `runs` as in `own`: one block in one
  // is one block in the other, for every request (shared blocks alike).
  // With a CPU tier every block is tracked in both: the same ids.
  void same_blocks(const std::deque<Req>& reqs);
};

// Admits a waiting request as the instance does: its cached prefix, then
// the rest of its tokens; on failure a reload and one retry.
void Pair::same_blocks(const std::deque<Req>& reqs) {
  std::map<int32_t, int32_t> to_own, to_runs;
  for (const Req& q : reqs) {
    if (q.where != Where::Running) continue;
    const std::vector<int32_t> ids = own.block_ids(q.own), named = runs.block_ids(q.runs);
    if (!anew) REQUIRE(all.block_ids(q.all) == ids);
    if (tiered) REQUIRE(named == ids);
    REQUIRE(named.size() <= ids.size());
    for (size_t k = 0; k < named.size(); ++k) {
      REQUIRE(to_own.emplace(named[k], ids[k]).first->second == ids[k]);
      REQUIRE(to_runs.emplace(ids[k], named[k]).first->second == named[k]);
    }
  }
}

bool admit(Pair& p, Req& r) {
  const int64_t max_hits = std::min<int64_t>((r.target - 1) / kBlock, static_cast<int64_t>(r.hashes.size()));
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<int32_t> ha, ho, hr;
    const int64_t hits = p.own.cached_prefix(r.hashes.data(), max_hits, ho);
    REQUIRE(p.runs.cached_prefix(r.hashes.data(), max_hits, hr) == hits);
    if (!p.anew) {
      REQUIRE(p.all.cached_prefix(r.hashes.data(), max_hits, ha) == hits);
      REQUIRE(ho == ha);
    }
    const bool ok = p.own.allocate(r.own, ho, r.target - hits * kBlock);
    REQUIRE(p.runs.allocate(r.runs, hr, r.target - hits * kBlock) == ok);
    if (!p.anew) REQUIRE(p.all.allocate(r.all, ha, r.target - hits * kBlock) == ok);
    if (ok) return true;
    const bool reloaded = p.own.reload();
    REQUIRE(p.runs.reload() == reloaded);
    if (!p.anew) REQUIRE(p.all.reload() == reloaded);
    if (!reloaded) return false;
  }
  return false;
}

// A new request: a group's prefix, then its own content.
void new_request(GoRand& rng, std::deque<Req>& reqs, uint64_t& next_own) {
  Req& r = reqs.emplace_back();
  const auto group = static_cast<uint64_t>(rng.intn(3));
  r.shareable = static_cast<int32_t>(rng.intn(5));
  for (int32_t k = 0; k < r.shareable; ++k) r.hashes.push_back(group * 100 + static_cast<uint64_t>(k));
  const int64_t own = rng.intn(8);
  for (int64_t k = 0; k < own; ++k) r.hashes.push_back(next_own++);
  r.target = r.shareable * kBlock + rng.intn(own * kBlock + 1) + 1;
  for (RequestBlocks* b : {&r.all, &r.own, &r.runs}) {
    b->hashes = r.hashes.data();
    b->num_hashes = static_cast<int64_t>(r.hashes.size());
  }
  r.own.shareable = r.shareable;
  r.runs.shareable = r.shareable;
}

// A decode step of n tokens, as the instance takes them: in place, a new
// block for one token, or an allocation.
void decode(Pair& p, Req& r, int64_t n) {
  const bool one_block = n == 1 && r.own.tokens == int64_t{r.own.count} * kBlock;
  std::vector<std::pair<KVCache*, RequestBlocks*>> caches{{&p.own, &r.own}, {&p.runs, &r.runs}};
  if (!p.anew) caches.emplace_back(&p.all, &r.all);
  const bool in_place = p.own.append_in_place(r.own, n);
  bool ok = in_place;
  if (!in_place) ok = one_block ? p.own.add_block(r.own) : p.own.allocate(r.own, {}, n);
  for (size_t i = 1; i < caches.size(); ++i) {
    auto [c, b] = caches[i];
    REQUIRE(c->append_in_place(*b, n) == in_place);
    if (!in_place) REQUIRE((one_block ? c->add_block(*b) : c->allocate(*b, {}, n)) == ok);
  }
  if (ok) r.target += n;
}

void release(Pair& p, Req& r, KVCache::Release how) {
  if (!p.anew) p.all.release(r.all, how);
  p.own.release(r.own, how);
  p.runs.release(r.runs, how);
  r.where = how == KVCache::Release::MayReturn ? Where::Waiting : Where::Done;
}

// What the simulator looks up: anyone's shared prefix, and a waiting
// request's whole content (its own blocks after a preemption).
void same_lookups(Pair& p, const std::deque<Req>& reqs) {
  for (const Req& q : reqs) {
    const int64_t n = q.where == Where::Waiting ? static_cast<int64_t>(q.hashes.size()) : q.shareable;
    const int64_t cached = p.own.cached_prefix_length(q.hashes.data(), n);
    if (!p.anew) REQUIRE(p.all.cached_prefix_length(q.hashes.data(), n) == cached);
    REQUIRE(p.runs.cached_prefix_length(q.hashes.data(), n) == cached);
  }
}

void run(uint64_t seed, const CpuTierConfig* tier, bool anew = false) {
  GoRand rng(seed);
  Pair p(60, tier, anew);
  std::deque<Req> reqs;
  uint64_t next_own = 1'000'000;
  for (int op = 0; op < 6000; ++op) {
    for (KVCache* c : {&p.all, &p.own, &p.runs}) c->set_clock(op * 300);
    const int64_t kind = rng.intn(10);
    if (kind < 3 || reqs.empty()) {
      new_request(rng, reqs, next_own);
      continue;
    }
    Req& r = reqs[static_cast<size_t>(rng.intn(static_cast<int64_t>(reqs.size())))];
    if (r.where == Where::Waiting) {
      if (anew && kind < 6) r.own.shareable = r.runs.shareable = r.shareable;
      if (admit(p, r)) r.where = Where::Running;
    } else if (r.where == Where::Running) {
      if (kind < 7) {
        decode(p, r, rng.intn(20) + 1);
      } else {  // preempted (back to waiting, to recompute all it had), or done
        release(p, r, kind < 9 ? KVCache::Release::MayReturn : KVCache::Release::Done);
      }
    }
    p.same_counters();
    p.same_blocks(reqs);
    same_lookups(p, reqs);
  }
  for (Req& r : reqs)
    if (r.where == Where::Running) release(p, r, KVCache::Release::Done);
  p.same_counters();
  REQUIRE(p.runs.used_blocks() == 0);
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

TEST_CASE("own blocks as runs when a request hits its own content past its boundary", "[kv][invariant]") {
  const CpuTierConfig tier{25, 0.6, 4.0, 10};
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    run(seed, nullptr, true);
    run(seed, &tier, true);
  }
}
