// What routing through a Lua scorer costs end to end: 16 instances, weighted
// routing with queue-depth alone, the built-in plugin against its Lua twin
// (scripts/scorers/queue_depth.lua), roofline Qwen3-14B on H100, the default
// distribution workload at 300 requests/s — `blis run --num-instances 16
// --rate 300 --routing-policy weighted --routing-scorers queue-depth:1` on a
// smaller request count. Both runs make the same decisions.
#include <benchmark/benchmark.h>

#include "bench_fixtures.hpp"

#include "cluster/cluster.hpp"

#include <blis/config_table.hpp>
#include <blis/lua.hpp>
#include <blis/registry.hpp>
#include <blis/workload.hpp>

#include <memory>
#include <vector>

namespace {

constexpr int32_t kInstances = 16;
constexpr int64_t kRequests = 50000;
constexpr double kRate = 300;
constexpr int64_t kBlocks = 17600;  // the defaults table's count for Qwen3-14B on H100, TP 1
constexpr int32_t kBlockSize = 16;

struct Setup {
  blis::Registries registries;
  blis::ConfigTable latency;
  blis::ConfigTable scorer;
  blis::ClusterConfig cluster;
  blis::WorkloadSpec workload;
};

const Setup& setup() {
  static const Setup* s = [] {
    auto* out = new Setup();
    blis::bench::qwen3_14b_on_h100(out->registries, out->latency, out->cluster.engine, kBlocks,
                                   kBlockSize);
    out->scorer.set("block_size", int64_t{kBlockSize});
    out->cluster.num_instances = kInstances;
    blis::DistributionWorkload w;
    w.rate = kRate;
    w.num_requests = kRequests;
    out->workload = blis::synthesize_distribution_spec(w, 42);
    return out;
  }();
  return *s;
}

void BM_Cluster16QueueDepth(benchmark::State& state, bool lua) {
  const Setup& s = setup();
  int64_t completed = 0;
  for (auto _ : state) {
    blis::LuaVm vm(42);  // outlives the simulation and its router
    std::vector<blis::WeightedScorer> scorers;
    scorers.push_back(
        {"queue-depth", 1,
         lua ? blis::make_lua_routing_scorer(vm, blis::bench::shipped_script("scorers/queue_depth.lua"),
                                             s.scorer)
             : s.registries.scorers.create("queue-depth", blis::CreateArgs{&s.scorer, 42})});
    blis::ClusterPolicies policies;
    policies.router =
        std::make_unique<blis::Router>(blis::RoutingPolicy::Weighted, std::move(scorers), 42);
    auto src = blis::make_spec_workload(s.workload, blis::kNoHorizon, kRequests, kBlockSize);
    blis::ClusterSimulation sim(s.cluster, *src, [&](int32_t) {
      return s.registries.latency.create("roofline", blis::CreateArgs{&s.latency, 42});
    }, std::move(policies));
    blis::ClusterResult result = sim.run();
    for (const auto& m : result.instances) completed += m.completed;
    benchmark::DoNotOptimize(result);
  }
  state.counters["requests/s"] =
      benchmark::Counter(static_cast<double>(completed), benchmark::Counter::kIsRate);
  state.SetItemsProcessed(completed);
}
BENCHMARK_CAPTURE(BM_Cluster16QueueDepth, native, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Cluster16QueueDepth, lua, true)->Unit(benchmark::kMillisecond);

}  // namespace
