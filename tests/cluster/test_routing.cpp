// Routing policies, the weighted pipeline, snapshots, admission and the
// decision trace (spec cluster §1-§5), through the real cluster driver.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"
#include "cluster/router.hpp"

#include <blis/go_rand.hpp>
#include <blis/scenario_events.hpp>

#include <algorithm>
#include <functional>
#include <utility>

using namespace blis;
using namespace blis::test;

namespace {

blis_instance_snapshot snap(int32_t i, int32_t queue, int32_t batch, int32_t in_flight, double kv = 0) {
  return blis_instance_snapshot{i, queue, batch, in_flight, 0, 100, kv, 0, -1, 0, 1, -1, 0};
}

blis_route_input input_of(std::vector<blis_instance_snapshot>& s) {
  static blis_request_view view{};
  view.struct_size = sizeof view;
  return blis_route_input{sizeof(blis_route_input), sizeof(blis_instance_snapshot), 0, &view,
                          s.data(), static_cast<int64_t>(s.size())};
}

// A scorer whose scores a test sets, and which counts observations.
struct FixedScorer : RoutingScorer {
  std::vector<double> values;
  std::vector<int64_t>* observed = nullptr;
  void score(const blis_route_input& in, double* out) override {
    for (int64_t i = 0; i < in.count; ++i) out[i] = values[static_cast<size_t>(i)];
  }
  bool observes() const override { return observed != nullptr; }
  void observe(const blis_route_input&, int64_t chosen) override { observed->push_back(chosen); }
};

std::unique_ptr<FixedScorer> fixed(std::vector<double> v, std::vector<int64_t>* observed = nullptr) {
  auto s = std::make_unique<FixedScorer>();
  s->values = std::move(v);
  s->observed = observed;
  return s;
}

}  // namespace

TEST_CASE("round-robin cycles through instances in index order", "[routing]") {
  Router r(RoutingPolicy::RoundRobin, {}, 42);
  std::vector<blis_instance_snapshot> s{snap(0, 9, 9, 9), snap(1, 0, 0, 0), snap(2, 0, 0, 0)};
  std::vector<double> scores;
  std::vector<int32_t> picks;
  for (int i = 0; i < 5; ++i) picks.push_back(r.route(input_of(s), scores));
  CHECK(picks == std::vector<int32_t>{0, 1, 2, 0, 1});
  CHECK(scores.empty());
}

TEST_CASE("least-loaded picks the minimum effective load, ties from the router stream", "[routing]") {
  std::vector<blis_instance_snapshot> s{snap(0, 1, 1, 0), snap(1, 0, 1, 0), snap(2, 0, 0, 1),
                                        snap(3, 3, 0, 0)};
  std::vector<double> scores;
  SECTION("a unique minimum draws nothing") {
    std::vector<blis_instance_snapshot> u{snap(0, 1, 1, 0), snap(1, 0, 0, 0)};
    Router r(RoutingPolicy::LeastLoaded, {}, 42);
    CHECK(r.route(input_of(u), scores) == 1);
  }
  SECTION("ties: tied[Intn(len(tied))] of the 'router' stream") {
    // Loads 2, 1, 1, 3: instances 1 and 2 tie.
    GoRand expected(derive_seed(42, "router"));
    Router r(RoutingPolicy::LeastLoaded, {}, 42);
    for (int i = 0; i < 20; ++i) {
      const int32_t want = expected.intn(2) == 0 ? 1 : 2;
      CHECK(r.route(input_of(s), scores) == want);
    }
  }
}

TEST_CASE("always-busiest picks the maximum load, lowest index on ties", "[routing]") {
  std::vector<blis_instance_snapshot> s{snap(0, 1, 0, 0), snap(1, 2, 1, 0), snap(2, 0, 3, 0)};
  Router r(RoutingPolicy::AlwaysBusiest, {}, 42);
  std::vector<double> scores;
  CHECK(r.route(input_of(s), scores) == 1);
}

TEST_CASE("weighted: normalised weights, clamped scores, argmax, observers after", "[routing]") {
  std::vector<int64_t> observed;
  std::vector<WeightedScorer> ws;
  ws.push_back({"a", 3, fixed({0.2, 0.9, 1.7}, &observed)});  // 1.7 clamps to 1
  ws.push_back({"b", 1, fixed({1.0, 0.0, -3.0})});             // -3 clamps to 0
  Router r(RoutingPolicy::Weighted, std::move(ws), 42);
  std::vector<blis_instance_snapshot> s{snap(0, 0, 0, 0), snap(1, 0, 0, 0), snap(2, 0, 0, 0)};
  std::vector<double> scores;
  CHECK(r.route(input_of(s), scores) == 2);
  REQUIRE(scores.size() == 3);
  CHECK(scores[0] == Approx(0.2 * 0.75 + 1.0 * 0.25));
  CHECK(scores[1] == Approx(0.9 * 0.75));
  CHECK(scores[2] == Approx(0.75));
  CHECK(observed == std::vector<int64_t>{2});
}

TEST_CASE("weighted: exact ties are broken from the router stream", "[routing]") {
  std::vector<WeightedScorer> ws;
  ws.push_back({"a", 1, fixed({0.5, 0.5, 0.1})});
  Router r(RoutingPolicy::Weighted, std::move(ws), 7);
  GoRand expected(derive_seed(7, "router"));
  std::vector<blis_instance_snapshot> s{snap(0, 0, 0, 0), snap(1, 0, 0, 0), snap(2, 0, 0, 0)};
  std::vector<double> scores;
  for (int i = 0; i < 20; ++i) CHECK(r.route(input_of(s), scores) == static_cast<int32_t>(expected.intn(2)));
}

TEST_CASE("weighted: a NaN score stops the run naming the scorer", "[routing]") {
  std::vector<WeightedScorer> ws;
  ws.push_back({"broken", 1, fixed({0.5, std::nan("")})});
  Router r(RoutingPolicy::Weighted, std::move(ws), 7);
  std::vector<blis_instance_snapshot> s{snap(0, 0, 0, 0), snap(1, 0, 0, 0)};
  std::vector<double> scores;
  CHECK_THROWS_WITH(r.route(input_of(s), scores), Catch::Contains("routing scorer 'broken' returned NaN for instance_1"));
}

TEST_CASE("unknown routing policy names are refused", "[routing]") {
  CHECK_THROWS_WITH(parse_routing_policy("random"), Catch::Contains("valid: always-busiest, least-loaded, round-robin, weighted"));
  CHECK(parse_routing_policy("") == RoutingPolicy::RoundRobin);
}

namespace {

ClusterConfig cluster_config(int32_t n) {
  ClusterConfig c;
  c.num_instances = n;
  c.engine.total_kv_blocks = 1000;
  c.keep_records = true;
  return c;
}

std::vector<WorkloadRequest> burst(int count, int64_t gap) {
  std::vector<WorkloadRequest> out;
  for (int i = 0; i < count; ++i)
    out.push_back(make_request(static_cast<uint64_t>(i), i * gap, 64, 8, static_cast<uint32_t>(i) * 1000));
  return out;
}

}  // namespace

TEST_CASE("admission and routing latency add one-for-one to TTFT and E2E", "[cluster]") {
  auto cfg0 = cluster_config(1);
  VectorSource a(burst(1, 0));
  auto base = run_cluster(cfg0, a, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}));
  auto cfg1 = cluster_config(1);
  cfg1.admission_latency = 1000;
  cfg1.routing_latency = 500;
  VectorSource b(burst(1, 0));
  auto late = run_cluster(cfg1, b, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}));
  CHECK(late.cluster.records[0].ttft == base.cluster.records[0].ttft + 1500);
  CHECK(late.cluster.records[0].e2e == base.cluster.records[0].e2e + 1500);
  CHECK(late.cluster.records[0].scheduling_delay == base.cluster.records[0].scheduling_delay + 1500);
}

TEST_CASE("least-loaded spreads a burst using live in-flight counts", "[cluster]") {
  // Four requests at the same instant: each routing sees the previous ones in
  // flight (the counter is live even before the instance has queued them).
  auto cfg = cluster_config(4);
  ClusterPolicies p;
  p.router = std::make_unique<Router>(RoutingPolicy::LeastLoaded, std::vector<WeightedScorer>{}, 42);
  VectorSource src(burst(4, 0));
  ConfigTable lat = blackbox_config({0, 0, 0}, {1000, 10, 5});
  ClusterSimulation sim(cfg, src, [&](int32_t) { return builtin_registries().latency.create("blackbox", CreateArgs{&lat, 42}); },
                        std::move(p));
  auto result = sim.run();
  for (const auto& m : result.instances) CHECK(m.completed == 1);
}

TEST_CASE("stale snapshots: the router sees zeros until the first refresh", "[cluster]") {
  // always-busiest with signals refreshed every 10 s: queue and batch read 0,
  // only in-flight is live, so the burst piles onto instance 0 (it is the
  // busiest by in-flight count from the second request on).
  auto cfg = cluster_config(3);
  cfg.snapshot_refresh_interval = 10'000'000;
  ClusterPolicies p;
  p.router = std::make_unique<Router>(RoutingPolicy::AlwaysBusiest, std::vector<WeightedScorer>{}, 42);
  VectorSource src(burst(6, 1000));
  ConfigTable lat = blackbox_config({0, 0, 0}, {1000, 10, 5});
  ClusterSimulation sim(cfg, src, [&](int32_t) { return builtin_registries().latency.create("blackbox", CreateArgs{&lat, 42}); },
                        std::move(p));
  auto result = sim.run();
  CHECK(result.instances[0].completed == 6);
}

TEST_CASE("decision trace: counts, targets and regret", "[cluster]") {
  auto cfg = cluster_config(2);
  cfg.trace_decisions = true;
  cfg.counterfactual_k = 2;
  VectorSource src(burst(4, 0));
  ConfigTable lat = blackbox_config({0, 0, 0}, {1000, 10, 5});
  // always-busiest piles everything onto instance 0; without scores the
  // regret is the chosen load minus the minimum load (spec cluster §5.3).
  ClusterPolicies p;
  p.router = std::make_unique<Router>(RoutingPolicy::AlwaysBusiest, std::vector<WeightedScorer>{}, 42);
  ClusterSimulation sim(cfg, src, [&](int32_t) { return builtin_registries().latency.create("blackbox", CreateArgs{&lat, 42}); },
                        std::move(p));
  auto result = sim.run();
  CHECK(result.trace.admitted == 4);
  CHECK(result.trace.rejected == 0);
  CHECK(result.trace.routings == 4);
  CHECK(result.trace.targets == std::vector<int64_t>{4, 0});
  // In-flight before each routing: (0,0) (1,0) (2,0) (3,0): regrets 0, 1, 2, 3.
  CHECK(result.trace.regret_sum == 6);
  CHECK(result.trace.regret_max == 3);
}

#include "metrics/fitness.hpp"

TEST_CASE("fitness: parsing, normalisation and score", "[cluster][metrics]") {
  auto w = parse_fitness_weights(" p99_ttft : 3, mean_e2e:1,throughput:2 ", "--fitness-weights");
  CHECK(w.size() == 3);
  CHECK(w["p99_ttft"] == 3);
  CHECK_THROWS_WITH(parse_fitness_weights("p99_ttft", "--fitness-weights"), Catch::Contains("expected key:value"));
  CHECK_THROWS_WITH(parse_fitness_weights("p99_ttft:x", "--fitness-weights"), Catch::Contains("is not a number"));
  CHECK_THROWS_WITH(parse_fitness_weights("p99_ttft:-1", "--fitness-weights"), Catch::Contains("finite non-negative"));
  CHECK_THROWS_WITH(parse_fitness_weights("p99_ttfx:1", "--fitness-weights"), Catch::Contains("unknown fitness metric key \"p99_ttfx\""));
  CHECK_THROWS_WITH(parse_fitness_weights("p99_ttft:1,", "--fitness-weights"), Catch::Contains("expected key:value"));

  InstanceMetrics m;
  m.completed = 50;
  m.end_time = 1'000'000;  // 50 req/s
  m.output_tokens = 10000;
  m.ttft = {1000, 3000};
  m.e2e = {9000, 11000};
  Fitness f = evaluate_fitness(m, {{"throughput", 2}, {"mean_ttft", 1}, {"p50_e2e", 1}, {"tokens_per_sec", 0}});
  CHECK(f.components["throughput"] == Approx(50.0 / 150.0));
  CHECK(f.components["mean_ttft"] == Approx(1.0 / 3.0));    // 2000 µs
  CHECK(f.components["p50_e2e"] == Approx(1.0 / 11.0));     // 10000 µs
  CHECK(f.components["tokens_per_sec"] == Approx(0.5));     // 10000 tok/s
  CHECK(f.score == Approx(2 * 50.0 / 150.0 + 1.0 / 3.0 + 1.0 / 11.0));
  CHECK(fitness_block(f).rfind("=== Fitness Evaluation ===\nScore: ", 0) == 0);
}

#include "metrics/report.hpp"

TEST_CASE("Jain fairness index and SLO attainment", "[cluster][metrics]") {
  CHECK(jain_fairness({}) == 0);
  CHECK(jain_fairness({{"a", 0}, {"b", 0}}) == 1.0);
  CHECK(jain_fairness({{"a", 5}, {"b", 5}, {"c", 5}}) == Approx(1.0));
  CHECK(jain_fairness({{"a", 10}, {"b", 0}}) == Approx(0.5));
  CHECK(jain_fairness({{"a", 1}, {"b", 2}, {"c", 3}}) == Approx(36.0 / (3 * 14.0)));

  InstanceMetrics m;
  m.e2e = {100, 200, 300, 400};
  m.e2e_slo = {BLIS_SLO_CRITICAL, BLIS_SLO_CRITICAL, BLIS_SLO_BATCH, BLIS_SLO_DEFAULT};
  CHECK(slo_attainment(m, {{BLIS_SLO_CRITICAL, 150}}) == Approx(0.75));
  CHECK(slo_attainment(m, {{BLIS_SLO_CRITICAL, 150}, {BLIS_SLO_BATCH, 250}}) == Approx(0.5));
  CHECK(slo_attainment(InstanceMetrics{}, {}) == 0);
}

namespace {

// Records (num_blocks, own_blocks) of every request it scores.
struct OwnBlocksRecorder : RoutingScorer {
  std::vector<std::pair<int64_t, int64_t>>* seen = nullptr;
  void score(const blis_route_input& in, double* out) override {
    seen->emplace_back(in.request->num_blocks, in.request->own_blocks);
    for (int64_t i = 0; i < in.count; ++i) out[i] = 0;
  }
};

std::vector<std::pair<int64_t, int64_t>> own_blocks_seen(std::vector<ScenarioEvent> events) {
  WorkloadSpec spec;
  spec.seed = 3;
  spec.aggregate_rate = 50;
  spec.num_requests = 200;
  ClientSpec client;
  client.id = "c";
  client.rate_fraction = 1;
  client.prefix_group = "g";
  client.prefix_length = 512;  // 32 whole blocks
  client.input_distribution = {"gaussian", {{"mean", 256}, {"std_dev", 100}, {"min", 1}, {"max", 1024}}};
  client.output_distribution = {"gaussian", {{"mean", 32}, {"std_dev", 8}, {"min", 1}, {"max", 64}}};
  spec.clients.push_back(client);
  std::vector<std::pair<int64_t, int64_t>> seen;
  auto recorder = std::make_unique<OwnBlocksRecorder>();
  recorder->seen = &seen;
  std::vector<WeightedScorer> scorers;
  scorers.push_back({"own", 1, std::move(recorder)});
  ClusterPolicies policies;
  policies.router = std::make_unique<Router>(RoutingPolicy::Weighted, std::move(scorers), 42);
  ClusterConfig cfg;
  cfg.num_instances = 2;
  cfg.events = std::move(events);
  auto source = make_spec_workload(spec, kNoHorizon, spec.num_requests, cfg.engine.block_size);
  run_cluster(cfg, *source, "blackbox", step_1000_10_5(), std::move(policies));
  return seen;
}

}  // namespace

TEST_CASE("the request view names the request's own blocks when each request is routed once", "[routing]") {
  // ABI 1.6 own_blocks: the blocks past the shared prefix's 32.
  const auto seen = own_blocks_seen({});
  REQUIRE(seen.size() == 200);
  for (const auto& [blocks, own] : seen) CHECK(own == std::max<int64_t>(blocks - 32, 0));
  CHECK(std::count_if(seen.begin(), seen.end(), [](const auto& s) { return s.second > 0; }) > 150);
  // With scenario events a request may be routed again (re-routed after a
  // failure): nothing is declared own.
  const auto with_events = own_blocks_seen({parse_scenario_event("at=100000s action=fail instance=1", "test")});
  REQUIRE(with_events.size() == 200);
  for (const auto& s : with_events) CHECK(s.second == 0);
}
