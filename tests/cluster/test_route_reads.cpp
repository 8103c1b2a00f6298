// What the router fills of a decision's input (ABI 1.8 reads, cluster/router.hpp):
// only what the run's policies declare they read. The declarations of the
// built-in plugins are checked the way a user would notice a wrong one: a run
// with the lazy state must decide exactly as the run given everything.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"
#include "cluster/router.hpp"

#include <blis/config_keys.h>
#include <blis/go_rand.hpp>

#include <sstream>
#include <utility>

using namespace blis;
using namespace blis::test;

TEST_CASE("a plugin's reads come from its needs; undeclared means everything", "[routing]") {
  CHECK(route_reads(0) == kReadsAll);
  CHECK(route_reads(BLIS_NEED_PREFIX_CACHE) == kReadsAll);
  CHECK(route_reads(BLIS_NEED_SNAPSHOTS | BLIS_NEED_REQUEST) == kReadsAll);  // not declared as reads
  CHECK(route_reads(BLIS_NEED_DECLARED_READS) == kReadsNothing);
  CHECK(route_reads(BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS) == kReadsSnapshots);
  CHECK(route_reads(BLIS_NEED_DECLARED_READS | BLIS_NEED_REQUEST) == kReadsRequest);

  Registries& reg = builtin_registries();
  CHECK(route_reads(reg.admission.find("always-admit")->needs) == kReadsNothing);
  CHECK(route_reads(reg.admission.find("token-bucket")->needs) == kReadsRequest);
  CHECK(route_reads(reg.admission.find("gaie-legacy")->needs) == kReadsAll);
  CHECK(route_reads(reg.scorers.find("queue-depth")->needs) == kReadsSnapshots);
  CHECK(route_reads(reg.scorers.find("prefix-affinity")->needs) == kReadsRequest);
  CHECK(route_reads(reg.scorers.find("precise-prefix-cache")->needs) == kReadsAll);
}

TEST_CASE("a policy reads what its rule or its scorers read", "[routing]") {
  CHECK(Router(RoutingPolicy::RoundRobin, {}, 1).reads() == kReadsNothing);
  CHECK(Router(RoutingPolicy::LeastLoaded, {}, 1).reads() == kReadsSnapshots);
  CHECK(Router(RoutingPolicy::AlwaysBusiest, {}, 1).reads() == kReadsSnapshots);
  std::vector<WeightedScorer> scorers;
  scorers.push_back({"a", 1, nullptr, kReadsRequest});
  CHECK(Router(RoutingPolicy::Weighted, std::move(scorers), 1).reads() == kReadsRequest);
  std::vector<WeightedScorer> two;
  two.push_back({"a", 1, nullptr, kReadsRequest});
  two.push_back({"b", 1, nullptr, kReadsSnapshots});
  Router weighted(RoutingPolicy::Weighted, std::move(two), 1);
  CHECK(weighted.reads() == kReadsAll);
  weighted.set_policy(RoutingPolicy::RoundRobin);
  CHECK(weighted.reads() == kReadsNothing);
}

namespace {

// One random run: cluster settings, a policy made of built-in plugins, a workload.
struct RandomRouting {
  ClusterConfig cfg;
  WorkloadSpec spec;
  RoutingPolicy policy = RoutingPolicy::RoundRobin;
  std::vector<std::string> scorers;
  std::string admission;  // "" = none
  std::string description;
};

RandomRouting draw(GoRand& rng, int i) {
  RandomRouting r;
  r.cfg.num_instances = 1 + static_cast<int32_t>(rng.intn(6));
  r.cfg.engine.total_kv_blocks = rng.intn(2) == 0 ? 200 + rng.intn(400) : 5000;
  r.cfg.keep_records = true;
  const int64_t refresh[] = {0, 0, 1000, 20000, 500000};
  r.cfg.snapshot_refresh_interval = refresh[rng.intn(5)];
  r.cfg.trace_decisions = rng.intn(2) == 0;
  r.cfg.counterfactual_k = r.cfg.trace_decisions ? rng.intn(3) : 0;
  r.cfg.routing_latency = rng.intn(3) * 100;
  r.policy = static_cast<RoutingPolicy>(rng.intn(4));
  if (r.policy == RoutingPolicy::Weighted) {
    const char* names[] = {"queue-depth",     "kv-utilization",   "prefix-affinity", "load-balance",
                           "active-requests", "running-requests", "vllm-dp",         "load-aware"};
    const int64_t n = 1 + rng.intn(3);
    for (int64_t k = 0; k < n; ++k) r.scorers.emplace_back(names[rng.intn(8)]);
  }
  const char* admissions[] = {"", "always-admit", "token-bucket", "always-admit"};
  r.admission = admissions[rng.intn(4)];
  r.spec.seed = 100 + i;
  r.spec.aggregate_rate = 20.0 + static_cast<double>(rng.intn(300));
  r.spec.num_requests = 120 + rng.intn(200);
  ClientSpec client;
  client.id = "c";
  client.rate_fraction = 1;
  if (rng.intn(2) == 0) {
    client.prefix_group = "g";
    client.prefix_length = 16 * (1 + rng.intn(40));
  }
  client.input_distribution = {"gaussian", {{"mean", 300}, {"std_dev", 150}, {"min", 1}, {"max", 2000}}};
  client.output_distribution = {"gaussian", {{"mean", 60}, {"std_dev", 30}, {"min", 1}, {"max", 200}}};
  r.spec.clients.push_back(client);
  std::ostringstream d;
  d << "run " << i << ": " << r.cfg.num_instances << " instances, kv " << r.cfg.engine.total_kv_blocks
    << ", refresh " << r.cfg.snapshot_refresh_interval << ", policy " << static_cast<int>(r.policy)
    << ", scorers";
  for (const std::string& s : r.scorers) d << " " << s;
  d << ", admission '" << r.admission << "', counterfactual " << r.cfg.counterfactual_k << ", rate "
    << r.spec.aggregate_rate << ", requests " << r.spec.num_requests;
  r.description = d.str();
  return r;
}

// The policies of `r` from the built-in registry, with their declared reads,
// or all reads when `full`.
ClusterPolicies policies_of(const RandomRouting& r, bool full) {
  Registries& reg = builtin_registries();
  ClusterPolicies p;
  if (!r.admission.empty()) {
    ConfigTable cfg;
    cfg.set(BLIS_KEY_TOKEN_BUCKET_CAPACITY, 4000.0);
    cfg.set(BLIS_KEY_TOKEN_BUCKET_REFILL_RATE, 20000.0);
    p.admission = reg.admission.create(r.admission, CreateArgs{&cfg, 7});
    p.admission_reads = full ? kReadsAll : route_reads(reg.admission.find(r.admission)->needs);
  }
  std::vector<WeightedScorer> weighted;
  for (const std::string& name : r.scorers) {
    ConfigTable cfg;
    cfg.set(BLIS_KEY_BLOCK_SIZE, r.cfg.engine.block_size);
    weighted.push_back({name, 1.0, reg.scorers.create(name, CreateArgs{&cfg, 7}),
                        full ? kReadsAll : route_reads(reg.scorers.find(name)->needs)});
  }
  p.router = std::make_unique<Router>(r.policy, std::move(weighted), 7);
  return p;
}

struct Decisions {
  std::string json;                  // the metrics with every request's record
  std::vector<int32_t> instance_of;  // by record
  std::vector<int64_t> targets;
  double regret = 0;
  int64_t rejected = 0;
  uint64_t events = 0, steps = 0;
};

Decisions run(const RandomRouting& r, ClusterPolicies policies) {
  auto source = make_spec_workload(r.spec, kNoHorizon, r.spec.num_requests, r.cfg.engine.block_size);
  RunOutcome out = run_cluster(r.cfg, *source, "blackbox", step_1000_10_5(), std::move(policies));
  Decisions d{out.json,
              {},
              out.result.trace.targets,
              out.result.trace.regret_sum,
              out.result.rejected,
              out.result.events,
              out.result.steps};
  for (const auto& rec : out.cluster.records) d.instance_of.push_back(rec.instance);
  return d;
}

void check_same(const Decisions& lazy, const Decisions& full) {
  CHECK(lazy.instance_of == full.instance_of);
  CHECK(lazy.targets == full.targets);
  CHECK(lazy.regret == full.regret);
  CHECK(lazy.rejected == full.rejected);
  CHECK(lazy.events == full.events);
  CHECK(lazy.steps == full.steps);
  CHECK(lazy.json == full.json);
}

// A scorer that reads the snapshots' queue depths but declares it reads nothing.
struct Misdeclared : RoutingScorer {
  void score(const blis_route_input& in, double* out) override {
    for (int64_t i = 0; i < in.count; ++i)
      out[i] = 1.0 / (1.0 + in.instances[i].queue_depth + in.instances[i].batch_size);
  }
};

}  // namespace

TEST_CASE("the lazy routing state decides as the full one over random configurations", "[routing][cluster]") {
  const char* runs_env = std::getenv("BLIS_INVARIANT_RUNS");
  const int runs = runs_env != nullptr ? std::atoi(runs_env) : 40;
  GoRand rng(20261127);
  int lazy_runs = 0;
  for (int i = 0; i < runs; ++i) {
    const RandomRouting r = draw(rng, i);
    INFO(r.description);
    ClusterPolicies lazy = policies_of(r, false);
    uint32_t reads = lazy.router->reads() | (lazy.admission ? lazy.admission_reads : kReadsNothing);
    if (r.cfg.counterfactual_k > 0 && r.cfg.trace_decisions) reads |= kReadsSnapshots;
    if (reads != kReadsAll) ++lazy_runs;
    check_same(run(r, std::move(lazy)), run(r, policies_of(r, true)));
  }
  CHECK(lazy_runs > runs / 4);  // the draws do leave things out
}

TEST_CASE("the comparison notices a scorer that reads more than it declares", "[routing][cluster]") {
  // The same runs as above with a scorer of queue depths declared as reading
  // nothing: its lazy state holds no loads, so some decisions differ.
  GoRand rng(20261127);
  int differing = 0;
  for (int i = 0; i < 10; ++i) {
    RandomRouting r = draw(rng, i);
    r.cfg.num_instances = 4;
    r.cfg.trace_decisions = false;
    r.spec.aggregate_rate = 400;
    auto with = [&](uint32_t reads) {
      std::vector<WeightedScorer> one;
      one.push_back({"misdeclared", 1.0, std::make_unique<Misdeclared>(), reads});
      ClusterPolicies p;
      p.router = std::make_unique<Router>(RoutingPolicy::Weighted, std::move(one), 7);
      return run(r, std::move(p));
    };
    if (with(kReadsNothing).instance_of != with(kReadsAll).instance_of) ++differing;
  }
  CHECK(differing > 5);
}
