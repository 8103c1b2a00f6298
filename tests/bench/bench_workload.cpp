// Workload generation throughput: requests per second of the default
// distribution workload (spec workload §2), token draws and block hashing included.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "blis/workload.hpp"

namespace {

void run_generator(benchmark::State& state, const blis::WorkloadSpec& spec) {
  // An effectively unbounded stream, pulled one request per iteration.
  auto src = blis::make_spec_workload(spec, blis::kNoHorizon, int64_t{1} << 60, 16);
  blis::WorkloadRequest request;
  int64_t tokens = 0;
  for (auto _ : state) {
    src->next(request);
    tokens += request.input_tokens + request.output_tokens;
    benchmark::DoNotOptimize(request.block_hashes.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

void BM_DefaultWorkload(benchmark::State& state) {
  blis::DistributionWorkload w;
  w.rate = 10;
  run_generator(state, blis::synthesize_distribution_spec(w, 42));
}
BENCHMARK(BM_DefaultWorkload);

void BM_DefaultWorkloadWithPrefix(benchmark::State& state) {
  blis::DistributionWorkload w;
  w.rate = 10;
  w.prefix_tokens = 512;
  run_generator(state, blis::synthesize_distribution_spec(w, 42));
}
BENCHMARK(BM_DefaultWorkloadWithPrefix);

void BM_ManyPoissonClients(benchmark::State& state) {
  blis::WorkloadSpec spec;
  spec.seed = 42;
  spec.aggregate_rate = 1000;
  for (int i = 0; i < 64; ++i) {
    blis::ClientSpec c;
    c.rate_fraction = 1;
    c.arrival.process = "poisson";
    c.input_distribution = {"exponential", {{"mean", 512}}};
    c.output_distribution = {"exponential", {{"mean", 256}}};
    spec.clients.push_back(c);
  }
  run_generator(state, spec);
}
BENCHMARK(BM_ManyPoissonClients);

}  // namespace
