// Engine throughput: roofline Qwen3-14B on H100s (TP 1), 17600 KV blocks per
// instance, the default distribution workload.
//  - One instance at 500 requests/s: deep saturation, far beyond what the
//    instance serves, so the wait queue grows for the whole run and every
//    step carries a full batch.
//  - Sixteen instances at 300 requests/s, round-robin: each instance runs
//    just above its capacity, with sixteen KV caches and batches in memory at
//    once (the cache-bound case of `blis run --num-instances 16`).
#include <benchmark/benchmark.h>

#include "bench_fixtures.hpp"

#include "cluster/cluster.hpp"

#include <blis/config_table.hpp>
#include <blis/registry.hpp>
#include <blis/workload.hpp>

#include <vector>

namespace {

constexpr int64_t kRequests = 20000;
constexpr double kRate = 500;
constexpr int32_t kClusterInstances = 16;
constexpr double kClusterRate = 300;
constexpr int64_t kBlocks = 17600;
constexpr int32_t kBlockSize = 16;

blis::WorkloadSpec workload_spec(double rate) {
  blis::DistributionWorkload w;
  w.rate = rate;
  w.num_requests = kRequests;
  return blis::synthesize_distribution_spec(w, 42);
}

std::vector<blis::WorkloadRequest> generate(double rate) {
  auto src = blis::make_spec_workload(workload_spec(rate), blis::kNoHorizon, kRequests, kBlockSize);
  std::vector<blis::WorkloadRequest> out;
  blis::WorkloadRequest r;
  while (src->next(r)) out.push_back(r);
  return out;
}

struct Setup {
  blis::Registries registries;
  blis::ConfigTable latency;
  blis::ClusterConfig cluster;  // one instance
  std::vector<blis::WorkloadRequest> requests;          // at kRate
  std::vector<blis::WorkloadRequest> cluster_requests;  // at kClusterRate
};

const Setup& setup() {
  static const Setup* s = [] {
    auto* out = new Setup();
    blis::bench::qwen3_14b_on_h100(out->registries, out->latency, out->cluster.engine, kBlocks,
                                   kBlockSize);
    out->cluster.engine.max_running = 256;
    out->cluster.engine.max_scheduled_tokens = 2048;

    out->requests = generate(kRate);
    out->cluster_requests = generate(kClusterRate);
    return out;
  }();
  return *s;
}

class VectorSource final : public blis::WorkloadSource {
 public:
  explicit VectorSource(const std::vector<blis::WorkloadRequest>& reqs) : reqs_(reqs) {}
  bool next(blis::WorkloadRequest& out) override {
    if (at_ >= reqs_.size()) return false;
    out = reqs_[at_++];
    return true;
  }

 private:
  const std::vector<blis::WorkloadRequest>& reqs_;
  size_t at_ = 0;
};

void report(benchmark::State& state, int64_t completed, int64_t steps, int64_t preemptions) {
  state.counters["requests/s"] =
      benchmark::Counter(static_cast<double>(completed), benchmark::Counter::kIsRate);
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  state.counters["preemptions"] = benchmark::Counter(static_cast<double>(preemptions),
                                                     benchmark::Counter::kAvgIterations);
  state.SetItemsProcessed(completed);
}

struct Totals {
  int64_t completed = 0, steps = 0, preemptions = 0;
};

// One simulation with `cfg` over `src`, added to `t`.
void simulate(const Setup& s, const blis::ClusterConfig& cfg, blis::WorkloadSource& src, Totals& t) {
  blis::ClusterSimulation sim(cfg, src, [&](int32_t) {
    return s.registries.latency.create("roofline", blis::CreateArgs{&s.latency, 42});
  });
  blis::ClusterResult result = sim.run();
  for (const auto& m : result.instances) {
    t.completed += m.completed;
    t.preemptions += m.preemptions;
  }
  t.steps += static_cast<int64_t>(result.steps);
  benchmark::DoNotOptimize(result);
}

// The engine alone: requests are generated once, outside the timing.
void BM_SaturatedInstance(benchmark::State& state) {
  const Setup& s = setup();
  Totals t;
  for (auto _ : state) {
    VectorSource src(s.requests);
    simulate(s, s.cluster, src, t);
  }
  report(state, t.completed, t.steps, t.preemptions);
}
BENCHMARK(BM_SaturatedInstance)->Unit(benchmark::kMillisecond);

// End to end: the generator runs lazily inside the simulation, as in `blis run`.
void BM_SaturatedInstanceWithGeneration(benchmark::State& state) {
  const Setup& s = setup();
  const blis::WorkloadSpec spec = workload_spec(kRate);
  Totals t;
  for (auto _ : state) {
    auto src = blis::make_spec_workload(spec, blis::kNoHorizon, kRequests, kBlockSize);
    simulate(s, s.cluster, *src, t);
  }
  report(state, t.completed, t.steps, t.preemptions);
}
BENCHMARK(BM_SaturatedInstanceWithGeneration)->Unit(benchmark::kMillisecond);

// Sixteen instances behind the default round-robin router; the engine alone.
void BM_SixteenInstances(benchmark::State& state) {
  const Setup& s = setup();
  blis::ClusterConfig cfg = s.cluster;
  cfg.num_instances = kClusterInstances;
  Totals t;
  for (auto _ : state) {
    VectorSource src(s.cluster_requests);
    simulate(s, cfg, src, t);
  }
  report(state, t.completed, t.steps, t.preemptions);
}
BENCHMARK(BM_SixteenInstances)->Unit(benchmark::kMillisecond);

// The same with scenario events (issue 15: within 10 % of the run without):
// a straggler, a drain and its restore, a failure with re-routing and its
// restore, and a threshold trigger that never fires (checked every 100 ms).
void BM_SixteenInstancesWithEvents(benchmark::State& state) {
  const Setup& s = setup();
  blis::ClusterConfig cfg = s.cluster;
  cfg.num_instances = kClusterInstances;
  for (const char* text : {"at=5s action=slow instance=7 factor=1.5", "at=10s action=drain instance=3",
                           "at=15s action=fail instance=5 requests=reroute", "at=20s action=restore instance=3",
                           "at=30s action=restore instance=5", "when=queue_depth>1000000 action=drain instance=0"})
    cfg.events.push_back(blis::parse_scenario_event(text, "bench"));
  Totals t;
  for (auto _ : state) {
    VectorSource src(s.cluster_requests);
    simulate(s, cfg, src, t);
  }
  report(state, t.completed, t.steps, t.preemptions);
}
BENCHMARK(BM_SixteenInstancesWithEvents)->Unit(benchmark::kMillisecond);

// The same with --timeseries at 1 s intervals.
void BM_SixteenInstancesWithTimeseries(benchmark::State& state) {
  const Setup& s = setup();
  blis::ClusterConfig cfg = s.cluster;
  cfg.num_instances = kClusterInstances;
  cfg.timeseries_interval = 1000000;
  Totals t;
  for (auto _ : state) {
    VectorSource src(s.cluster_requests);
    simulate(s, cfg, src, t);
  }
  report(state, t.completed, t.steps, t.preemptions);
}
BENCHMARK(BM_SixteenInstancesWithTimeseries)->Unit(benchmark::kMillisecond);

}  // namespace
