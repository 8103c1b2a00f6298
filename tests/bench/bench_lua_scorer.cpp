// Cost of one routing decision through a Lua scorer: the shipped queue-depth
// script over 16 instances (copy into the host buffers, one lua_pcall, NaN
// check, copy out).
#include <benchmark/benchmark.h>

#include "bench_fixtures.hpp"

#include <blis/block_hash.hpp>
#include <blis/lua.hpp>

#include <string>
#include <vector>

namespace {

void bench_lua_queue_depth_score(benchmark::State& state) {
  blis::LuaVm vm(42);
  auto scorer = blis::make_lua_routing_scorer(vm, blis::bench::shipped_script("scorers/queue_depth.lua"));

  constexpr int kInstances = 16;
  std::vector<blis_instance_snapshot> snaps = blis::bench::varied_snapshots(kInstances);
  blis_request_view request{};
  request.struct_size = sizeof(request);
  request.input_tokens = 512;
  blis_route_input input{};
  input.struct_size = sizeof(input);
  input.snapshot_size = sizeof(blis_instance_snapshot);
  input.request = &request;
  input.instances = snaps.data();
  input.count = kInstances;
  std::vector<double> scores(kInstances);

  for (auto _ : state) {
    ++input.now_us;
    scorer->score(input, scores.data());
    benchmark::DoNotOptimize(scores.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bench_lua_queue_depth_score);

}  // namespace

namespace {

// The shipped prefix_affinity.lua, score and observe per decision, on
// requests shaped like the prefix-heavy run of scripts/bench.sh (--prefix-
// tokens 512): one 32-block prefix shared by all, then 32 blocks of their
// own; hashes mixed like real content hashes (the script keys tables by
// their bits). The sets fill up and then evict on every observe.
void bench_lua_prefix_affinity_score_observe(benchmark::State& state) {
  blis::LuaVm vm(42);
  auto scorer =
      blis::make_lua_routing_scorer(vm, blis::bench::shipped_script("scorers/prefix_affinity.lua"));
  constexpr int kInstances = 16, kBlocks = 64;
  std::vector<blis_instance_snapshot> snaps = blis::bench::varied_snapshots(kInstances);
  std::vector<uint64_t> hashes(kBlocks);
  blis_request_view request{};
  request.struct_size = sizeof(request);
  request.block_size = 16;
  request.input_tokens = kBlocks * 16;
  request.block_hashes = hashes.data();
  request.num_blocks = kBlocks;
  request.slo_class_name = "";
  request.tenant_id = "";
  blis_route_input input{};
  input.struct_size = sizeof(input);
  input.snapshot_size = sizeof(blis_instance_snapshot);
  input.request = &request;
  input.instances = snaps.data();
  input.count = kInstances;
  std::vector<double> scores(kInstances);

  uint64_t n = 0;
  for (auto _ : state) {
    ++n;
    request.id = n;
    for (int b = 0; b < kBlocks; ++b)
      hashes[b] = blis::mix64(b < 32 ? static_cast<uint64_t>(b)
                                     : (n << 8) + static_cast<uint64_t>(b) + (uint64_t{1} << 62));
    scorer->score(input, scores.data());
    scorer->observe(input, static_cast<int64_t>(n % kInstances));
    benchmark::DoNotOptimize(scores.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bench_lua_prefix_affinity_score_observe);

}  // namespace
