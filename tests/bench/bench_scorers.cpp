// Cost of the built-in routing scorers through the real plugin loader (one
// C ABI call each): queue-depth over 16 instances, and prefix-affinity's
// score + observe for 32-block requests that mostly share a prefix.
#include <benchmark/benchmark.h>

#include "bench_fixtures.hpp"

#include <blis/config_table.hpp>
#include <blis/plugin.h>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kInstances = 16;
constexpr int kBlocks = 32;

struct LoadedScorer {
  std::shared_ptr<blis::LoadedLibrary> lib;
  blis::Registries reg;
  std::unique_ptr<blis::RoutingScorer> scorer;

  explicit LoadedScorer(const std::string& name) {
    lib = blis::open_plugin_library(blis::bench::stage_dir() + "/lib/blis/plugins/libblis-scorer-" + name +
                                    ".so");
    blis::register_library(reg, lib);
    blis::ConfigTable cfg;
    scorer = reg.scorers.create(name, blis::CreateArgs{&cfg, 42});
  }
};

std::vector<blis_instance_snapshot> snapshots() { return blis::bench::varied_snapshots(kInstances); }

blis_route_input route_input(const blis_request_view& request,
                             const std::vector<blis_instance_snapshot>& snaps) {
  blis_route_input input{};
  input.struct_size = sizeof(input);
  input.snapshot_size = sizeof(blis_instance_snapshot);
  input.request = &request;
  input.instances = snaps.data();
  input.count = static_cast<int64_t>(snaps.size());
  return input;
}

void bench_queue_depth_score(benchmark::State& state) {
  LoadedScorer s("queue-depth");
  const auto snaps = snapshots();
  blis_request_view request{};
  request.struct_size = sizeof(request);
  request.input_tokens = 512;
  blis_route_input input = route_input(request, snaps);
  std::vector<double> scores(kInstances);

  for (auto _ : state) {
    ++input.now_us;
    s.scorer->score(input, scores.data());
    benchmark::DoNotOptimize(scores.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bench_queue_depth_score);

// Requests share their first 24 blocks within one of 64 prefix groups and end
// in 8 unique blocks, so the per-instance sets fill up and then evict on
// every request (default capacity 10000) while lookups hit along the shared
// run.
void bench_prefix_affinity_score_observe(benchmark::State& state) {
  LoadedScorer s("prefix-affinity");
  const auto snaps = snapshots();
  std::vector<uint64_t> hashes(kBlocks);
  blis_request_view request{};
  request.struct_size = sizeof(request);
  request.block_size = 16;
  request.input_tokens = kBlocks * 16;
  request.block_hashes = hashes.data();
  request.num_blocks = kBlocks;
  blis_route_input input = route_input(request, snaps);
  std::vector<double> scores(kInstances);

  uint64_t n = 0;
  for (auto _ : state) {
    // Building the hashes is a few dozen integer operations, timed with the
    // rest (PauseTiming would cost more than it hides).
    ++n;
    const uint64_t group = (n * 0x9E3779B97F4A7C15ull) >> 58;  // 64 groups
    for (int b = 0; b < kBlocks; ++b)
      hashes[b] = b < 24 ? (group << 32) + static_cast<uint64_t>(b)
                         : (n << 8) + static_cast<uint64_t>(b) + (uint64_t{1} << 62);
    s.scorer->score(input, scores.data());
    s.scorer->observe(input, static_cast<int64_t>(n % kInstances));
    benchmark::DoNotOptimize(scores.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bench_prefix_affinity_score_observe);

}  // namespace
