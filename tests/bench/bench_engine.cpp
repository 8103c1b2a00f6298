// Engine throughput in deep saturation: one instance, roofline Qwen3-14B on
// one H100 (TP 1), 17600 KV blocks, the default distribution workload at
// 500 requests/s — far beyond what the instance serves, so the wait queue
// grows for the whole run and every step carries a full batch.
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
constexpr int64_t kBlocks = 17600;
constexpr int32_t kBlockSize = 16;

struct Setup {
  blis::Registries registries;
  blis::ConfigTable latency;
  blis::ClusterConfig cluster;
  std::vector<blis::WorkloadRequest> requests;
};

const Setup& setup() {
  static const Setup* s = [] {
    auto* out = new Setup();
    blis::bench::qwen3_14b_on_h100(out->registries, out->latency, out->cluster.engine, kBlocks,
                                   kBlockSize);
    out->cluster.engine.max_running = 256;
    out->cluster.engine.max_scheduled_tokens = 2048;

    blis::DistributionWorkload w;
    w.rate = kRate;
    w.num_requests = kRequests;
    auto src = blis::make_spec_workload(blis::synthesize_distribution_spec(w, 42), blis::kNoHorizon,
                                        kRequests, kBlockSize);
    blis::WorkloadRequest r;
    while (src->next(r)) out->requests.push_back(r);
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

// One simulation of the saturated instance over `src`, added to `t`.
void simulate(const Setup& s, blis::WorkloadSource& src, Totals& t) {
  blis::ClusterSimulation sim(s.cluster, src, [&](int32_t) {
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
    simulate(s, src, t);
  }
  report(state, t.completed, t.steps, t.preemptions);
}
BENCHMARK(BM_SaturatedInstance)->Unit(benchmark::kMillisecond);

// End to end: the generator runs lazily inside the simulation, as in `blis run`.
void BM_SaturatedInstanceWithGeneration(benchmark::State& state) {
  const Setup& s = setup();
  blis::DistributionWorkload w;
  w.rate = kRate;
  w.num_requests = kRequests;
  const blis::WorkloadSpec spec = blis::synthesize_distribution_spec(w, 42);
  Totals t;
  for (auto _ : state) {
    auto src = blis::make_spec_workload(spec, blis::kNoHorizon, kRequests, kBlockSize);
    simulate(s, *src, t);
  }
  report(state, t.completed, t.steps, t.preemptions);
}
BENCHMARK(BM_SaturatedInstanceWithGeneration)->Unit(benchmark::kMillisecond);

}  // namespace
