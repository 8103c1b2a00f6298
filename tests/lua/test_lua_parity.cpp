// The Lua twins of the built-in plugins decide exactly as the built-ins do:
// every scorer over a long cluster run (the instance of every request), and
// the blackbox latency model step by step.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"
#include "cluster/router.hpp"

#include <blis/go_rand.hpp>
#include <blis/lua.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

using namespace blis;
using namespace blis::test;

namespace {

std::string shipped(const std::string& relative) {
  return std::string(BLIS_TEST_SOURCE_DIR) + "/scripts/" + relative;
}

// Four clients, each with its own shared prefix (so prefix-affinity has
// something to find), Poisson arrivals fast enough for queues to form.
WorkloadSpec prefix_groups_spec(int64_t requests) {
  WorkloadSpec spec;
  spec.seed = 7;
  spec.aggregate_rate = 140;
  spec.num_requests = requests;
  const int64_t prefixes[] = {1024, 512, 256, 768};
  for (int c = 0; c < 4; ++c) {
    ClientSpec client;
    client.id = "client-" + std::to_string(c);
    client.rate_fraction = 0.25;
    client.prefix_group = "group-" + std::to_string(c);
    client.prefix_length = prefixes[c];
    client.input_distribution = {"gaussian", {{"mean", 256}, {"std_dev", 128}, {"min", 8}, {"max", 2048}}};
    client.output_distribution = {"gaussian", {{"mean", 128}, {"std_dev", 64}, {"min", 2}, {"max", 1024}}};
    spec.clients.push_back(std::move(client));
  }
  return spec;
}

struct Scorer {
  std::string native;  // built-in name
  std::string script;  // its Lua twin under scripts/
  double weight;
};

// The instance of every request of one 8-instance weighted run.
std::vector<int32_t> placements(const std::vector<Scorer>& scorers, bool lua,
                                const ConfigTable& scorer_cfg) {
  LuaVm vm(42);
  std::vector<WeightedScorer> weighted;
  for (const auto& s : scorers)
    weighted.push_back({s.native, s.weight,
                        lua ? make_lua_routing_scorer(vm, shipped(s.script), scorer_cfg)
                            : builtin_registries().scorers.create(s.native, CreateArgs{&scorer_cfg, 42})});
  ClusterPolicies policies;
  policies.router = std::make_unique<Router>(RoutingPolicy::Weighted, std::move(weighted), 42);

  ClusterConfig cfg;
  cfg.num_instances = 8;
  cfg.engine.total_kv_blocks = 3000;  // small enough for kv-utilization to vary
  cfg.keep_records = true;
  const WorkloadSpec spec = prefix_groups_spec(4000);
  auto source = make_spec_workload(spec, kNoHorizon, spec.num_requests, cfg.engine.block_size);
  const ConfigTable latency = blackbox_config({1601.35, 3.51, 1805.54}, {6910.42, 17.67, 2.84});
  RunOutcome out = run_cluster(cfg, *source, "blackbox", latency, std::move(policies));
  std::vector<int32_t> instance_of;
  for (const auto& r : out.cluster.records) instance_of.push_back(r.instance);
  REQUIRE(instance_of.size() == 4000);
  return instance_of;
}

const Scorer kPrefix{"prefix-affinity", "scorers/prefix_affinity.lua", 3};
const Scorer kQueue{"queue-depth", "scorers/queue_depth.lua", 2};
const Scorer kKv{"kv-utilization", "scorers/kv_utilization.lua", 2};
const Scorer kLoad{"load-balance", "scorers/load_balance.lua", 1};

}  // namespace

TEST_CASE("Lua scorers route every request of a long run as the built-ins do", "[lua][routing]") {
  ConfigTable cfg;
  cfg.set("block_size", int64_t{16});
  std::vector<std::vector<Scorer>> profiles = {
      {kPrefix}, {kQueue}, {kKv}, {kLoad}, {kPrefix, kQueue, kKv}, {kPrefix, kLoad}};
  for (const auto& profile : profiles) {
    std::string names;
    for (const auto& s : profile) names += s.native + " ";
    INFO("scorers: " << names);
    const auto native = placements(profile, false, cfg);
    CHECK(placements(profile, true, cfg) == native);
    if (profile.size() == 1) {
      // The run exercises the scorer: requests do not all land on one instance.
      std::vector<int> per(8, 0);
      for (int32_t i : native) ++per[static_cast<size_t>(i)];
      CHECK(std::count(per.begin(), per.end(), 0) < 7);
    }
  }
}

TEST_CASE("Lua prefix-affinity evicts like the built-in when its index is full", "[lua][routing]") {
  // 64 block hashes per instance: every request evicts, and the leading-run
  // match breaks where the built-in's does.
  ConfigTable cfg;
  cfg.set("block_size", int64_t{16});
  cfg.set("prefix_cache_capacity", int64_t{64});
  const auto native = placements({kPrefix, kQueue}, false, cfg);
  CHECK(placements({kPrefix, kQueue}, true, cfg) == native);
  ConfigTable full;
  full.set("block_size", int64_t{16});
  CHECK(placements({kPrefix, kQueue}, false, full) != native);  // the capacity mattered
}

// Random requests over a few shared prefixes, random choices, capacity 40:
// the two indexes must agree on every score. `transform` rewrites each block
// hash before both scorers see it.
template <class Transform>
void check_decisions_match(Transform transform) {
  ConfigTable cfg;
  cfg.set("prefix_cache_capacity", int64_t{40});
  LuaVm vm(42);
  auto lua = make_lua_routing_scorer(vm, shipped("scorers/prefix_affinity.lua"), cfg);
  auto native = builtin_registries().scorers.create("prefix-affinity", CreateArgs{&cfg, 42});
  REQUIRE(lua->observes());
  std::vector<blis_instance_snapshot> snaps(5);
  for (int32_t i = 0; i < 5; ++i) snaps[static_cast<size_t>(i)].index = 10 + i;  // identity != position
  GoRand rng(3);
  for (int step = 0; step < 2000; ++step) {
    const auto group = static_cast<uint32_t>(rng.intn(4));
    const auto prefix = static_cast<int32_t>(16 * rng.intn(12));
    const auto own = static_cast<int32_t>(rng.intn(100));
    std::vector<uint32_t> tokens;
    for (int32_t t = 0; t < prefix; ++t) tokens.push_back(group * 1000 + static_cast<uint32_t>(t));
    for (int32_t t = 0; t < own; ++t) tokens.push_back(50000 + static_cast<uint32_t>(step * 100 + t));
    std::vector<uint64_t> hashes = block_hashes_of(tokens, 16);
    for (uint64_t& h : hashes) h = transform(h);
    blis_request_view req{};
    req.struct_size = sizeof req;
    req.block_size = 16;
    req.id = static_cast<uint64_t>(step);
    req.input_tokens = static_cast<int64_t>(tokens.size());
    req.block_hashes = hashes.data();
    req.num_blocks = static_cast<int64_t>(hashes.size());
    req.slo_class_name = "";
    req.tenant_id = "";
    blis_route_input in{sizeof in, sizeof(blis_instance_snapshot), step, &req, snaps.data(), 5};
    std::vector<double> a(5), b(5);
    native->score(in, a.data());
    lua->score(in, b.data());
    INFO("step " << step);
    REQUIRE(b == a);
    const int64_t chosen = rng.intn(5);
    native->observe(in, chosen);
    lua->observe(in, chosen);
  }
}

TEST_CASE("prefix-affinity told of a request's own blocks scores as without, native and Lua", "[lua][routing]") {
  // Shared prefixes of whole blocks, then content unique to each request:
  // declared as own_blocks (ABI 1.6), the scorers count those blocks without
  // storing them; a scorer not told stores them. Capacity 40, so anonymous
  // entries evict and get evicted. Every score agrees.
  ConfigTable cfg;
  cfg.set("prefix_cache_capacity", int64_t{40});
  LuaVm vm(42);
  auto lua = make_lua_routing_scorer(vm, shipped("scorers/prefix_affinity.lua"), cfg);
  auto told = builtin_registries().scorers.create("prefix-affinity", CreateArgs{&cfg, 42});
  auto plain = builtin_registries().scorers.create("prefix-affinity", CreateArgs{&cfg, 42});
  std::vector<blis_instance_snapshot> snaps(4);
  for (int32_t i = 0; i < 4; ++i) snaps[static_cast<size_t>(i)].index = i;
  GoRand rng(11);
  for (int step = 0; step < 3000; ++step) {
    const auto group = static_cast<uint32_t>(rng.intn(5));
    const auto prefix = static_cast<int32_t>(16 * rng.intn(10));
    const auto own = static_cast<int32_t>(rng.intn(160));
    std::vector<uint32_t> tokens;
    for (int32_t t = 0; t < prefix; ++t) tokens.push_back(group * 1000 + static_cast<uint32_t>(t));
    for (int32_t t = 0; t < own; ++t) tokens.push_back(50000 + static_cast<uint32_t>(step * 1000 + t));
    std::vector<uint64_t> hashes = block_hashes_of(tokens, 16);
    blis_request_view req{};
    req.struct_size = sizeof req;
    req.block_size = 16;
    req.id = static_cast<uint64_t>(step);
    req.input_tokens = static_cast<int64_t>(tokens.size());
    req.block_hashes = hashes.data();
    req.num_blocks = static_cast<int64_t>(hashes.size());
    req.slo_class_name = "";
    req.tenant_id = "";
    blis_request_view told_req = req;
    told_req.own_blocks = req.num_blocks - prefix / 16;
    blis_route_input in{sizeof in, sizeof(blis_instance_snapshot), step, &req, snaps.data(), 4};
    blis_route_input told_in = in;
    told_in.request = &told_req;
    std::vector<double> a(4), b(4), c(4);
    plain->score(in, a.data());
    told->score(told_in, b.data());
    lua->score(told_in, c.data());
    INFO("step " << step);
    REQUIRE(b == a);
    REQUIRE(c == a);
    const int64_t chosen = rng.intn(4);
    plain->observe(in, chosen);
    told->observe(told_in, chosen);
    lua->observe(told_in, chosen);
  }
}

TEST_CASE("Lua prefix-affinity scores like the built-in, decision by decision", "[lua][routing]") {
  check_decisions_match([](uint64_t h) { return h; });
}

TEST_CASE("Lua prefix-affinity tells apart hashes that share their low 52 bits", "[lua][routing]") {
  // The script keys its index by a hash's low 52 bits; here only 8 values of
  // them remain, so nearly every hash shares them with another and goes
  // through the script's side table.
  constexpr uint64_t kHigh12 = ~((uint64_t{1} << 52) - 1);
  check_decisions_match([](uint64_t h) { return (h & kHigh12) | (h & 7); });
}

TEST_CASE("the Lua blackbox latency model computes the built-in's times", "[lua][latency]") {
  const ConfigTable cfg = blackbox_config({1601.350510688092, 3.512476196805965, 1805.5430360826988},
                                          {6910.42, 17.67, 2.84});
  LuaVm vm(42);
  auto lua = make_lua_latency_model(vm, shipped("latency/blackbox.lua"), cfg);
  auto native = builtin_registries().latency.create("blackbox", CreateArgs{&cfg, 42});
  CHECK(lua->output_token_time() == native->output_token_time());
  CHECK(lua->post_decode_overhead() == native->post_decode_overhead());
  GoRand rng(11);
  for (int step = 0; step < 500; ++step) {
    std::vector<blis_batch_entry> entries(static_cast<size_t>(rng.intn(70)));
    for (auto& e : entries) {
      e.phase = rng.intn(3) == 0 ? BLIS_PHASE_PREFILL : BLIS_PHASE_DECODE;
      e.new_tokens = e.phase == BLIS_PHASE_PREFILL ? static_cast<int32_t>(rng.intn(600)) : static_cast<int32_t>(rng.intn(2));
    }
    blis_step_batch batch{sizeof batch, sizeof(blis_batch_entry), step, static_cast<int64_t>(entries.size()),
                          entries.data()};
    INFO("step " << step);
    REQUIRE(lua->step_time(batch) == native->step_time(batch));
    blis_request_view req{};
    req.struct_size = sizeof req;
    req.input_tokens = rng.intn(8000);
    REQUIRE(lua->queueing_time(req) == native->queueing_time(req));
  }
  // Coefficients are checked as the built-in checks them.
  LuaVm vm2(42);
  const ConfigTable short_beta = blackbox_config({1, 2, 3}, {1, 2});
  CHECK_THROWS_WITH(make_lua_latency_model(vm2, shipped("latency/blackbox.lua"), short_beta),
                    Catch::Contains("beta_coeffs needs at least 3 values"));
}
