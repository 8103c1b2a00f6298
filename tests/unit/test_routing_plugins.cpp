// The built-in routing scorers and admission policies, loaded from the staged
// .so files through the real plugin loader, against spec cluster §2 and
// §3.2–§3.8 (and engine §12 row 17 for the token bucket's figures).
#include "catch.hpp"

#include <blis/config_table.hpp>
#include <blis/plugin.h>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

// ---- loading through the real plugin loader -----------------------------------

std::string plugin_path(const std::string& kind, const std::string& name) {
  return std::string(BLIS_TEST_STAGE) + "/lib/blis/plugins/libblis-" + kind + "-" + name + ".so";
}

class ScorerPlugin {
 public:
  explicit ScorerPlugin(const std::string& name, const blis::ConfigTable& cfg = {})
      : lib_(blis::open_plugin_library(plugin_path("scorer", name))) {
    blis::register_library(reg_, lib_);
    scorer_ = reg_.scorers.create(name, blis::CreateArgs{&cfg, 42});
  }
  blis::RoutingScorer& operator*() { return *scorer_; }
  blis::RoutingScorer* operator->() { return scorer_.get(); }

 private:
  std::shared_ptr<blis::LoadedLibrary> lib_;
  blis::Registries reg_;
  std::unique_ptr<blis::RoutingScorer> scorer_;
};

class AdmissionPlugin {
 public:
  explicit AdmissionPlugin(const std::string& name, const blis::ConfigTable& cfg = {})
      : lib_(blis::open_plugin_library(plugin_path("admission", name))) {
    blis::register_library(reg_, lib_);
    policy_ = reg_.admission.create(name, blis::CreateArgs{&cfg, 42});
  }
  blis::AdmissionPolicy* operator->() { return policy_.get(); }

 private:
  std::shared_ptr<blis::LoadedLibrary> lib_;
  blis::Registries reg_;
  std::unique_ptr<blis::AdmissionPolicy> policy_;
};

// The message create() fails with, or "" when it succeeds.
template <class Plugin>
std::string create_error(const std::string& name, const blis::ConfigTable& cfg) {
  try {
    Plugin p(name, cfg);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// ---- inputs -----------------------------------------------------------------

blis_instance_snapshot snap(int32_t index, int32_t queue, int32_t batch, int32_t in_flight,
                            double kv_utilization = 0) {
  blis_instance_snapshot s{};
  s.index = index;
  s.queue_depth = queue;
  s.batch_size = batch;
  s.in_flight = in_flight;
  s.total_kv_blocks = 1000;
  s.free_kv_blocks = 1000;
  s.kv_utilization = kv_utilization;
  return s;
}

// A snapshot followed by bytes the plugin must skip: the host may append
// fields, so plugins index by snapshot_size, never sizeof.
struct GrownSnapshot {
  blis_instance_snapshot s;
  double appended[3] = {-7, -7, -7};
};

// One routing decision's input, owning everything it points to.
struct Decision {
  blis_request_view request{};
  std::vector<uint64_t> hashes;
  std::vector<GrownSnapshot> instances;
  int64_t now_us = 0;

  explicit Decision(const std::vector<blis_instance_snapshot>& snaps,
                    std::vector<uint64_t> block_hashes = {}, int64_t input_tokens = 0)
      : hashes(std::move(block_hashes)) {
    for (const auto& s : snaps) instances.push_back(GrownSnapshot{s});
    request.struct_size = sizeof request;
    request.block_size = 16;
    request.id = 0;
    request.input_tokens = input_tokens != 0 ? input_tokens : static_cast<int64_t>(hashes.size()) * 16;
    request.block_hashes = hashes.empty() ? nullptr : hashes.data();
    request.num_blocks = static_cast<int64_t>(hashes.size());
    request.slo_class_name = "";
    request.tenant_id = "";
  }

  blis_route_input input() const {
    blis_route_input in{};
    in.struct_size = sizeof in;
    in.snapshot_size = sizeof(GrownSnapshot);
    in.now_us = now_us;
    in.request = &request;
    in.instances = &instances[0].s;
    in.count = static_cast<int64_t>(instances.size());
    return in;
  }
};

// Scores with every slot pre-set to NaN, so a slot the plugin skips shows up;
// one extra trailing slot must stay untouched.
std::vector<double> score(blis::RoutingScorer& scorer, const Decision& d) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> out(d.instances.size() + 1, nan);
  scorer.score(d.input(), out.data());
  CHECK(std::isnan(out.back()));
  out.pop_back();
  return out;
}

std::vector<blis_instance_snapshot> idle(int n) {
  std::vector<blis_instance_snapshot> v;
  for (int i = 0; i < n; ++i) v.push_back(snap(i, 0, 0, 0));
  return v;
}

}  // namespace

// ---- queue-depth (spec cluster §3.2, §3.7) -------------------------------------

TEST_CASE("queue-depth: min-max of effective load, least loaded scores 1", "[routing][plugin]") {
  ScorerPlugin qd("queue-depth");
  CHECK_FALSE(qd->observes());

  SECTION("loads 0, 4, 2, 4: ties at the maximum both score 0") {
    Decision d({snap(0, 0, 0, 0), snap(1, 2, 1, 1), snap(2, 1, 1, 0), snap(3, 0, 4, 0)});
    CHECK(score(*qd, d) == std::vector<double>{1.0, 0.0, 0.5, 0.0});
  }
  SECTION("every counter contributes and the quotient is taken in doubles") {
    // L = 1, 7, 3 -> lo 1, hi 7: (7-1)/6, 0, (7-3)/6.
    Decision d({snap(0, 1, 0, 0), snap(1, 3, 2, 2), snap(2, 0, 0, 3)});
    const auto s = score(*qd, d);
    CHECK(s[0] == 1.0);
    CHECK(s[1] == 0.0);
    CHECK(s[2] == static_cast<double>(4) / static_cast<double>(6));
  }
  SECTION("ties at the minimum both score 1") {
    Decision d({snap(0, 1, 1, 0), snap(1, 0, 5, 0), snap(2, 0, 2, 0)});
    CHECK(score(*qd, d) == std::vector<double>{1.0, 0.0, 1.0});
  }
  SECTION("all-equal loads score 1.0 everywhere") {
    CHECK(score(*qd, Decision({snap(0, 3, 0, 0), snap(1, 0, 3, 0), snap(2, 1, 1, 1)})) ==
          std::vector<double>{1.0, 1.0, 1.0});
    CHECK(score(*qd, Decision(idle(4))) == std::vector<double>{1.0, 1.0, 1.0, 1.0});
    CHECK(score(*qd, Decision({snap(0, 9, 9, 9)})) == std::vector<double>{1.0});
  }
  SECTION("large counters do not overflow") {
    const int32_t big = std::numeric_limits<int32_t>::max();
    Decision d({snap(0, big, big, big), snap(1, 0, 0, 0)});
    CHECK(score(*qd, d) == std::vector<double>{0.0, 1.0});
  }
}

TEST_CASE("queue-depth: signal = \"queue\" scores the wait queue alone (spec head §7.1)", "[routing][plugin]") {
  blis::ConfigTable cfg;
  cfg.set("signal", std::string("queue"));
  ScorerPlugin qd("queue-depth", cfg);
  // Queues 0, 2, 1, 0 (effective loads 0, 4, 2, 4): lo 0, hi 2.
  Decision d({snap(0, 0, 0, 0), snap(1, 2, 1, 1), snap(2, 1, 1, 0), snap(3, 0, 4, 0)});
  CHECK(score(*qd, d) == std::vector<double>{1.0, 0.0, 0.5, 1.0});
  // Equal queues, whatever the batches: every instance scores 1.
  CHECK(score(*qd, Decision({snap(0, 3, 0, 0), snap(1, 3, 9, 9)})) == std::vector<double>{1.0, 1.0});
  blis::ConfigTable load;
  load.set("signal", std::string("load"));
  ScorerPlugin by_load("queue-depth", load);
  CHECK(score(*by_load, d) == std::vector<double>{1.0, 0.0, 0.5, 0.0});
  blis::ConfigTable bad;
  bad.set("signal", std::string("batch"));
  CHECK_THAT(create_error<ScorerPlugin>("queue-depth", bad), Catch::Contains("'signal' must be"));
}

// ---- kv-utilization (spec cluster §3.7) ----------------------------------------

TEST_CASE("kv-utilization: 1 - kv_utilization", "[routing][plugin]") {
  ScorerPlugin kv("kv-utilization");
  CHECK_FALSE(kv->observes());
  Decision d({snap(0, 5, 5, 5, 0.0), snap(1, 0, 0, 0, 0.25), snap(2, 0, 0, 0, 1.0),
              snap(3, 0, 0, 0, 0.7), snap(4, 0, 0, 0, 0.25)});
  CHECK(score(*kv, d) == std::vector<double>{1.0, 0.75, 0.0, 1.0 - 0.7, 0.75});
}

// ---- load-balance (spec cluster §3.7) ------------------------------------------

TEST_CASE("load-balance: 1 / (1 + effective load)", "[routing][plugin]") {
  ScorerPlugin lb("load-balance");
  CHECK_FALSE(lb->observes());
  Decision d({snap(0, 0, 0, 0), snap(1, 1, 0, 0), snap(2, 1, 1, 1), snap(3, 0, 2, 1),
              snap(4, 0, 1, 1)});
  CHECK(score(*lb, d) == std::vector<double>{1.0, 0.5, 0.25, 0.25, 1.0 / 3.0});
  // Unlike queue-depth, all-equal loads do not score 1.
  CHECK(score(*lb, Decision({snap(0, 1, 0, 0), snap(1, 0, 1, 0)})) ==
        std::vector<double>{0.5, 0.5});
}

// ---- prefix-affinity (spec cluster §3.7, §3.8) ---------------------------------

namespace {

blis::ConfigTable capacity(int64_t n) {
  blis::ConfigTable cfg;
  cfg.set("prefix_cache_capacity", n);
  return cfg;
}

// Routes `hashes` to the instance at position `chosen` (the observer only;
// scores are whatever the test asks for separately).
void record(blis::RoutingScorer& s, const std::vector<blis_instance_snapshot>& snaps,
            const std::vector<uint64_t>& hashes, int64_t chosen) {
  Decision d(snaps, hashes);
  s.observe(d.input(), chosen);
}

// Score of instance 0 of a one-instance cluster.
double score0(blis::RoutingScorer& s, const std::vector<uint64_t>& hashes) {
  return score(s, Decision(idle(1), hashes))[0];
}

}  // namespace

TEST_CASE("prefix-affinity: leading-run match over the blocks routed to each instance",
          "[routing][plugin]") {
  ScorerPlugin pa("prefix-affinity");
  REQUIRE(pa->observes());
  const auto three = idle(3);

  // Nothing recorded yet: every instance matches 0.
  CHECK(score(*pa, Decision(three, {1, 2, 3, 4})) == std::vector<double>{0.0, 0.0, 0.0});

  record(*pa, three, {1, 2, 3, 4}, 1);
  CHECK(score(*pa, Decision(three, {1, 2, 3, 4})) == std::vector<double>{0.0, 1.0, 0.0});
  // The run stops at the first miss even though block 3 is present.
  CHECK(score(*pa, Decision(three, {1, 2, 9, 4})) == std::vector<double>{0.0, 0.5, 0.0});
  // A miss on block 0 matches nothing.
  CHECK(score(*pa, Decision(three, {9, 2, 3, 4})) == std::vector<double>{0.0, 0.0, 0.0});
  // A longer request: 4 of 6 leading blocks.
  CHECK(score(*pa, Decision(three, {1, 2, 3, 4, 5, 6}))[1] ==
        static_cast<double>(4) / static_cast<double>(6));
  // 3 of 7 blocks: matched / total in doubles.
  CHECK(score(*pa, Decision(three, {1, 2, 3, 7, 8, 9, 10}))[1] ==
        static_cast<double>(3) / static_cast<double>(7));
  // A request with no complete block (total == 0) scores 0 everywhere.
  CHECK(score(*pa, Decision(three, {}, 15)) == std::vector<double>{0.0, 0.0, 0.0});

  // Recording on instance 0 too: both match, instance 2 still does not.
  record(*pa, three, {1, 2}, 0);
  CHECK(score(*pa, Decision(three, {1, 2, 3, 4})) == std::vector<double>{0.5, 1.0, 0.0});
}

TEST_CASE("prefix-affinity: instance identity is snapshot.index, not the array position",
          "[routing][plugin]") {
  ScorerPlugin pa("prefix-affinity");
  // The chosen position 0 holds instance_2.
  record(*pa, {snap(2, 0, 0, 0), snap(0, 0, 0, 0), snap(1, 0, 0, 0)}, {11, 12}, 0);
  CHECK(score(*pa, Decision(idle(3), {11, 12})) == std::vector<double>{0.0, 0.0, 1.0});
  CHECK(score(*pa, Decision({snap(1, 0, 0, 0), snap(2, 0, 0, 0)}, {11, 12})) ==
        std::vector<double>{0.0, 1.0});
  // An instance beyond any recorded one (the cluster grew) matches 0.
  CHECK(score(*pa, Decision({snap(7, 0, 0, 0), snap(2, 0, 0, 0)}, {11})) ==
        std::vector<double>{0.0, 1.0});
  // Recording on a high index grows the index lazily.
  record(*pa, {snap(7, 0, 0, 0)}, {11}, 0);
  CHECK(score(*pa, Decision({snap(7, 0, 0, 0), snap(0, 0, 0, 0)}, {11})) ==
        std::vector<double>{1.0, 0.0});
}

TEST_CASE("prefix-affinity: LRU eviction order with capacity 4", "[routing][plugin]") {
  ScorerPlugin pa("prefix-affinity", capacity(4));
  const auto one = idle(1);

  SECTION("touches go in block order: the first block is the least recent") {
    record(*pa, one, {1, 2, 3, 4}, 0);  // LRU .. MRU: 1 2 3 4
    CHECK(score0(*pa, {1, 2, 3, 4}) == 1.0);
    record(*pa, one, {5}, 0);  // evicts 1: 2 3 4 5
    CHECK(score0(*pa, {1, 2, 3, 4}) == 0.0);
    CHECK(score0(*pa, {2, 3, 4, 5}) == 1.0);
    record(*pa, one, {6}, 0);  // evicts 2: 3 4 5 6
    CHECK(score0(*pa, {2}) == 0.0);
    CHECK(score0(*pa, {3, 4, 5, 6}) == 1.0);
  }
  SECTION("a request longer than the capacity keeps only its last blocks") {
    record(*pa, one, {10, 11, 12, 13, 14, 15}, 0);  // 12 13 14 15
    CHECK(score0(*pa, {10}) == 0.0);
    CHECK(score0(*pa, {11}) == 0.0);
    CHECK(score0(*pa, {12, 13, 14, 15}) == 1.0);
    record(*pa, one, {16}, 0);  // evicts 12: 13 14 15 16
    CHECK(score0(*pa, {12}) == 0.0);
    CHECK(score0(*pa, {13, 14, 15, 16}) == 1.0);
  }
  SECTION("observing an existing hash makes it the most recent") {
    record(*pa, one, {1, 2, 3, 4}, 0);  // 1 2 3 4
    record(*pa, one, {2}, 0);           // 1 3 4 2
    record(*pa, one, {1}, 0);           // 3 4 2 1
    record(*pa, one, {5}, 0);           // evicts 3: 4 2 1 5
    CHECK(score0(*pa, {3}) == 0.0);
    CHECK(score0(*pa, {4, 2, 1, 5}) == 1.0);
    record(*pa, one, {6, 7}, 0);  // evicts 4 then 2: 1 5 6 7
    CHECK(score0(*pa, {4}) == 0.0);
    CHECK(score0(*pa, {2}) == 0.0);
    CHECK(score0(*pa, {1, 5, 6, 7}) == 1.0);
  }
  SECTION("re-recording a request refreshes all of its blocks in block order") {
    record(*pa, one, {1, 2, 3, 4}, 0);  // 1 2 3 4
    record(*pa, one, {3, 4, 1}, 0);     // 2 3 4 1
    record(*pa, one, {9}, 0);           // evicts 2: 3 4 1 9
    CHECK(score0(*pa, {2}) == 0.0);
    CHECK(score0(*pa, {3, 4, 1, 9}) == 1.0);
  }
  SECTION("matching does not refresh recency") {
    record(*pa, one, {1, 2, 3, 4}, 0);  // 1 2 3 4
    for (int i = 0; i < 5; ++i) CHECK(score0(*pa, {1}) == 1.0);
    record(*pa, one, {5}, 0);  // still evicts 1
    CHECK(score0(*pa, {1}) == 0.0);
    CHECK(score0(*pa, {2}) == 1.0);
  }
  SECTION("eviction breaks the leading run of an old prefix") {
    record(*pa, one, {1, 2, 3}, 0);  // 1 2 3
    record(*pa, one, {7, 8}, 0);     // evicts 1: 2 3 7 8
    CHECK(score0(*pa, {1, 2, 3}) == 0.0);
  }
  SECTION("instances evict independently") {
    const auto two = idle(2);
    record(*pa, two, {1, 2, 3, 4}, 0);
    record(*pa, two, {1, 2, 3, 4}, 1);
    record(*pa, two, {5}, 1);  // instance 1 evicts 1; instance 0 keeps it
    CHECK(score(*pa, Decision(two, {1, 2, 3, 4})) == std::vector<double>{1.0, 0.0});
  }
}

TEST_CASE("prefix-affinity: capacity 1", "[routing][plugin]") {
  ScorerPlugin pa("prefix-affinity", capacity(1));
  record(*pa, idle(1), {1, 2, 3}, 0);
  CHECK(score0(*pa, {3}) == 1.0);
  CHECK(score0(*pa, {2}) == 0.0);
  record(*pa, idle(1), {3}, 0);
  CHECK(score0(*pa, {3}) == 1.0);
  record(*pa, idle(1), {4}, 0);
  CHECK(score0(*pa, {3}) == 0.0);
  CHECK(score0(*pa, {4}) == 1.0);
}

namespace {

// A deliberately simple LRU model (std::list + std::map) to compare against.
class ModelLru {
 public:
  explicit ModelLru(size_t capacity) : capacity_(capacity) {}
  bool contains(uint64_t h) const { return where_.count(h) != 0; }
  void touch(uint64_t h) {
    auto it = where_.find(h);
    if (it != where_.end()) {
      order_.erase(it->second);
    } else if (order_.size() == capacity_) {
      where_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(h);
    where_[h] = std::prev(order_.end());
  }

 private:
  size_t capacity_;
  std::list<uint64_t> order_;  // front = least recent
  std::map<uint64_t, std::list<uint64_t>::iterator> where_;
};

}  // namespace

TEST_CASE("prefix-affinity: matches a reference LRU over random traffic", "[routing][plugin]") {
  // Capacities around the table's growth steps, and hash values that share
  // their low bits (multiples of 2^32) next to dense small ones, so probe
  // runs collide and backward-shift deletion is exercised.
  const int64_t cap = GENERATE(3, 12, 13, 64, 100);
  const uint64_t stride = GENERATE(uint64_t{1}, uint64_t{1} << 32);
  CAPTURE(cap, stride);

  ScorerPlugin pa("prefix-affinity", capacity(cap));
  constexpr int kInstances = 3;
  std::vector<ModelLru> model(kInstances, ModelLru(static_cast<size_t>(cap)));
  const auto snaps = idle(kInstances);
  std::mt19937_64 rng(7);
  const uint64_t universe = static_cast<uint64_t>(cap) * 3;

  for (int step = 0; step < 3000; ++step) {
    std::vector<uint64_t> hashes(rng() % 9);
    for (auto& h : hashes) h = (rng() % universe + 1) * stride;
    Decision d(snaps, hashes);

    const auto got = score(*pa, d);
    for (int i = 0; i < kInstances; ++i) {
      int64_t matched = 0;
      while (matched < static_cast<int64_t>(hashes.size()) &&
             model[static_cast<size_t>(i)].contains(hashes[static_cast<size_t>(matched)]))
        ++matched;
      const double want = hashes.empty() ? 0.0
                                         : static_cast<double>(matched) /
                                               static_cast<double>(hashes.size());
      if (got[static_cast<size_t>(i)] != want) {
        FAIL("step " << step << " instance " << i << ": got " << got[static_cast<size_t>(i)]
                     << ", want " << want);
      }
    }
    const int64_t chosen = static_cast<int64_t>(rng() % kInstances);
    pa->observe(d.input(), chosen);
    for (uint64_t h : hashes) model[static_cast<size_t>(chosen)].touch(h);
  }
  SUCCEED();
}

TEST_CASE("prefix-affinity: reusing the previous decision's match stays exact", "[routing][plugin]") {
  // Consecutive requests share leading runs of varying length (a few prefix
  // groups, random cuts), some decisions observe nothing, and sets evict:
  // the scorer's reuse of its previous match must agree with a full walk.
  const int64_t cap = GENERATE(8, 40);
  CAPTURE(cap);
  ScorerPlugin pa("prefix-affinity", capacity(cap));
  constexpr int kInstances = 4;
  std::vector<ModelLru> model(kInstances, ModelLru(static_cast<size_t>(cap)));
  const auto snaps = idle(kInstances);
  std::mt19937_64 rng(11);
  for (int step = 0; step < 4000; ++step) {
    const uint64_t group = rng() % 3;
    const size_t shared = rng() % 12;
    std::vector<uint64_t> hashes(shared + rng() % 4);
    for (size_t b = 0; b < hashes.size(); ++b)
      hashes[b] = b < shared ? group * 1000 + b + 1 : 100000 + static_cast<uint64_t>(step) * 16 + b;
    Decision d(snaps, hashes);
    const auto got = score(*pa, d);
    for (int i = 0; i < kInstances; ++i) {
      int64_t matched = 0;
      while (matched < static_cast<int64_t>(hashes.size()) &&
             model[static_cast<size_t>(i)].contains(hashes[static_cast<size_t>(matched)]))
        ++matched;
      const double want = hashes.empty() ? 0.0
                                         : static_cast<double>(matched) /
                                               static_cast<double>(hashes.size());
      if (got[static_cast<size_t>(i)] != want) {
        FAIL("step " << step << " instance " << i << ": got " << got[static_cast<size_t>(i)]
                     << ", want " << want);
      }
    }
    if (rng() % 4 == 0) continue;  // no observation this time
    const int64_t chosen = static_cast<int64_t>(rng() % kInstances);
    pa->observe(d.input(), chosen);
    for (uint64_t h : hashes) model[static_cast<size_t>(chosen)].touch(h);
  }
  SUCCEED();
}

TEST_CASE("prefix-affinity: the default capacity is 10000 hashes", "[routing][plugin]") {
  ScorerPlugin pa("prefix-affinity");
  std::vector<uint64_t> first(100);
  for (size_t i = 0; i < first.size(); ++i) first[i] = 1'000'000 + i;
  record(*pa, idle(1), first, 0);
  // 9900 more distinct hashes fill the set exactly: nothing evicted yet.
  std::vector<uint64_t> more(9900);
  for (size_t i = 0; i < more.size(); ++i) more[i] = 2'000'000 + i;
  record(*pa, idle(1), more, 0);
  CHECK(score0(*pa, first) == 1.0);
  // One more evicts the oldest hash, first[0], which breaks the whole run.
  record(*pa, idle(1), {42}, 0);
  CHECK(score0(*pa, first) == 0.0);
  CHECK(score0(*pa, {first[1], first[2]}) == 1.0);
}

TEST_CASE("prefix-affinity: prefix_cache_capacity is validated", "[routing][plugin]") {
  CHECK_THAT(create_error<ScorerPlugin>("prefix-affinity", capacity(0)),
             Catch::Contains("prefix_cache_capacity"));
  CHECK_THAT(create_error<ScorerPlugin>("prefix-affinity", capacity(-5)),
             Catch::Contains("prefix_cache_capacity"));
  blis::ConfigTable wrong_type;
  wrong_type.set("prefix_cache_capacity", 4.5);
  CHECK_THAT(create_error<ScorerPlugin>("prefix-affinity", wrong_type),
             Catch::Contains("prefix_cache_capacity"));
  CHECK(create_error<ScorerPlugin>("prefix-affinity", capacity(1)).empty());
}

// ---- admission (spec cluster §2) ----------------------------------------------

namespace {

// Admits one request of `tokens` input tokens at `now_us`.
bool admit(AdmissionPlugin& p, int64_t now_us, int64_t tokens, std::string* reason = nullptr) {
  Decision d(idle(2), {}, tokens);
  d.now_us = now_us;
  std::string why = "unset";
  const bool ok = p->admit(d.input(), why);
  if (reason != nullptr) *reason = why;
  return ok;
}

blis::ConfigTable bucket(double capacity, double rate) {
  blis::ConfigTable cfg;
  cfg.set("token_bucket_capacity", capacity);
  cfg.set("token_bucket_refill_rate", rate);
  return cfg;
}

}  // namespace

TEST_CASE("always-admit admits everything with an empty reason", "[routing][plugin]") {
  AdmissionPlugin p("always-admit");
  std::string why;
  for (int64_t t : {0, 1, 1000000})
    for (int64_t tokens : {0, 1, 512, 1 << 30}) {
      CHECK(admit(p, t, tokens, &why));
      CHECK(why.empty());
    }
}

TEST_CASE("reject-all rejects everything with reason reject-all", "[routing][plugin]") {
  AdmissionPlugin p("reject-all");
  std::string why;
  for (int64_t t : {0, 5, 1000000}) {
    CHECK_FALSE(admit(p, t, 1, &why));
    CHECK(why == "reject-all");
  }
}

TEST_CASE("token-bucket: defaults 10000 / 1000 per second (engine §12 row 17)",
          "[routing][plugin]") {
  AdmissionPlugin p("token-bucket");
  std::string why;

  // Burst at one tick from a full bucket: floor(10000 / 512) = 19 admissions.
  int burst = 0;
  while (admit(p, 0, 512, &why)) ++burst;
  CHECK(burst == 19);
  CHECK(why == "insufficient tokens");
  // 10000 - 19 * 512 = 272 left, and no refill at clock 0.
  CHECK_FALSE(admit(p, 0, 273));
  CHECK(admit(p, 0, 272));
  CHECK_FALSE(admit(p, 0, 1));

  // 512 µs refill 0.512 tokens; 1 ms exactly 1 token (equality admits).
  CHECK_FALSE(admit(p, 512, 1));
  CHECK(admit(p, 1000, 1));
  CHECK_FALSE(admit(p, 1000, 1));
  // 511 ms later 511 tokens, 512 ms later 512.
  CHECK_FALSE(admit(p, 512'000, 512));
  CHECK(admit(p, 513'000, 512));

  // Sustained: one 512-token request offered every millisecond for 100 s
  // admits 1000 / 512 ≈ 1.95 per second.
  int admitted = 0;
  const int64_t start = 513'000;
  constexpr int64_t kSeconds = 100;
  for (int64_t t = start + 1000; t <= start + kSeconds * 1'000'000; t += 1000)
    if (admit(p, t, 512)) ++admitted;
  const double rate = static_cast<double>(admitted) / kSeconds;
  CHECK(admitted == 195);  // floor(100 s * 1000 / 512)
  CHECK(rate == Approx(1000.0 / 512.0).epsilon(0.01));
}

TEST_CASE("token-bucket: refill arithmetic and the capacity cap", "[routing][plugin]") {
  SECTION("refill is (elapsed * R) / 1e6, capped at C") {
    AdmissionPlugin p("token-bucket", bucket(1000, 1000));
    CHECK(admit(p, 0, 1000));
    CHECK_FALSE(admit(p, 0, 1));
    // Idle for a long time: back to exactly C, never above.
    CHECK_FALSE(admit(p, 1'000'000'000'000, 1001));
    CHECK(admit(p, 1'000'000'000'000, 1000));
    CHECK_FALSE(admit(p, 1'000'000'000'000, 1));
  }
  SECTION("last refill moves only when time advances") {
    AdmissionPlugin p("token-bucket", bucket(1000, 1000));
    CHECK(admit(p, 0, 1000));      // tokens 0
    CHECK(admit(p, 1000, 1));      // +1 at t=1000, tokens 0
    CHECK_FALSE(admit(p, 500, 1)); // clock behind: no refill, last refill stays 1000
    CHECK_FALSE(admit(p, 1500, 1));  // +0.5
    CHECK(admit(p, 2000, 1));        // +0.5 = 1
  }
  SECTION("fractional rates accumulate in doubles") {
    // R = 3 tokens/s: 333333 µs refills 0.999999 tokens, one more µs 0.000003.
    AdmissionPlugin p("token-bucket", bucket(10, 3));
    CHECK(admit(p, 0, 10));
    CHECK_FALSE(admit(p, 333'333, 1));
    CHECK(admit(p, 333'334, 1));
  }
  SECTION("a rejected request costs nothing") {
    AdmissionPlugin p("token-bucket", bucket(100, 1));
    std::string why;
    CHECK_FALSE(admit(p, 0, 101, &why));
    CHECK(why == "insufficient tokens");
    CHECK(admit(p, 0, 100));
  }
  SECTION("integer configuration values are accepted") {
    blis::ConfigTable cfg;
    cfg.set("token_bucket_capacity", int64_t{600});
    cfg.set("token_bucket_refill_rate", int64_t{1});
    AdmissionPlugin p("token-bucket", cfg);
    CHECK(admit(p, 0, 512));
    CHECK_FALSE(admit(p, 0, 512));
  }
}

TEST_CASE("token-bucket: a request larger than the capacity is never admitted",
          "[routing][plugin]") {
  AdmissionPlugin p("token-bucket");
  std::string why;
  for (int64_t t : {int64_t{0}, int64_t{1'000'000}, int64_t{1'000'000'000'000}}) {
    CHECK_FALSE(admit(p, t, 10001, &why));
    CHECK(why == "insufficient tokens");
  }
  CHECK(admit(p, 1'000'000'000'000, 10000));
}

TEST_CASE("token-bucket: capacity and refill rate must be finite and > 0", "[routing][plugin]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {0.0, -1.0, inf, nan}) {
    CAPTURE(bad);
    CHECK_THAT(create_error<AdmissionPlugin>("token-bucket", bucket(bad, 1000)),
               Catch::Contains("token_bucket_capacity") && Catch::Contains("> 0"));
    CHECK_THAT(create_error<AdmissionPlugin>("token-bucket", bucket(10000, bad)),
               Catch::Contains("token_bucket_refill_rate") && Catch::Contains("> 0"));
  }
  blis::ConfigTable wrong_type;
  wrong_type.set("token_bucket_capacity", std::string("lots"));
  CHECK_THAT(create_error<AdmissionPlugin>("token-bucket", wrong_type),
             Catch::Contains("token_bucket_capacity"));
  CHECK(create_error<AdmissionPlugin>("token-bucket", bucket(0.5, 1e-9)).empty());
}
