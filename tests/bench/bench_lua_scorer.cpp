// Cost of one routing decision through a Lua scorer: the shipped queue-depth
// script over 16 instances (copy into the host buffers, one lua_pcall, NaN
// check, copy out).
#include <benchmark/benchmark.h>

#include "bench_fixtures.hpp"

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
