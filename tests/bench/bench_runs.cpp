// The runs that guard blis's speed (issue 16, the same as scripts/bench.sh)
// as named benchmarks: `blis run` in process, one iteration each, against
// the build's stage. Counters: requests and events per second and peak RSS
// bytes per request. They take seconds each; pick them with
// --benchmark_filter=BM_Run (or a name, e.g. BM_Run/16x100k).
#include "bench_fixtures.hpp"

#include <blis/plan.hpp>
#include <blis/run.hpp>

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

struct NamedRun {
  int64_t requests;
  std::vector<std::pair<std::string, std::string>> settings;  // key (settings table), value
};

// The process's peak resident set (VmHWM) in bytes, reset to the current
// resident set first when `reset` (clear_refs 5, Linux >= 4.0).
int64_t peak_rss(bool reset) {
  if (reset) std::ofstream("/proc/self/clear_refs") << "5";
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return 0;
}

// The event count of a `--profile` line.
int64_t events_of(const std::string& profile) {
  const auto at = profile.find("profile: ");
  return at == std::string::npos ? 0 : std::stoll(profile.substr(at + 9));
}

void BM_Run(benchmark::State& state, const NamedRun& run) {
  const std::string stage = blis::bench::stage_dir();
  setenv("BLIS_DATA_DIR", (stage + "/share/blis/data").c_str(), 0);
  setenv("BLIS_PLUGIN_PATH", (stage + "/lib/blis/plugins").c_str(), 0);
  blis::RunRequest request;
  for (const auto& [key, value] : run.settings) request.command_line.push_back({key, value, "--" + key, {}});
  request.command_line.push_back({"profile", "true", "--profile", {}});
  int64_t events = 0, peak = 0;
  for (auto _ : state) {
    peak_rss(true);
    std::ostringstream out, err;
    std::streambuf* old = std::cerr.rdbuf(err.rdbuf());  // the profile line
    blis::run(request, out);
    std::cerr.rdbuf(old);
    events += events_of(err.str());
    peak = std::max(peak, peak_rss(false));
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["requests/s"] =
      benchmark::Counter(n * static_cast<double>(run.requests), benchmark::Counter::kIsRate);
  state.counters["bytes/request"] = static_cast<double>(peak) / static_cast<double>(run.requests);
  state.counters["peak_MiB"] = static_cast<double>(peak) / (1024.0 * 1024.0);
}

using Settings = std::vector<std::pair<std::string, std::string>>;

Settings cluster(const std::string& instances, const std::string& rate, int64_t requests) {
  return {{"model", "qwen/qwen3-14b"},
          {"num_instances", instances},
          {"rate", rate},
          {"num_requests", std::to_string(requests)}};
}

Settings prefix_heavy(const std::string& prefix_affinity) {
  Settings s = cluster("16", "300", 200000);
  s.push_back({"routing_policy", "weighted"});
  s.push_back({"prefix_tokens", "512"});
  s.push_back({"routing_scorers", prefix_affinity + ":3,queue-depth:2,kv-utilization:2"});
  return s;
}

void register_runs() {
  const std::vector<std::pair<std::string, NamedRun>> runs = {
      {"16x100k", {100000, cluster("16", "300", 100000)}},
      {"16x1M", {1000000, cluster("16", "300", 1000000)}},
      {"1x1M-rate500", {1000000, cluster("1", "500", 1000000)}},
      // The tutorial plan's costliest trial: small batches, long stretches of plain steps.
      {"128x12k", {12000, cluster("128", "200", 12000)}},
      {"prefix-16x200k-native", {200000, prefix_heavy("prefix-affinity")}},
      {"prefix-16x200k-lua",
       {200000, prefix_heavy(blis::bench::shipped_script("scorers/prefix_affinity.lua"))}},
  };
  for (const auto& [name, run] : runs)
    benchmark::RegisterBenchmark(("BM_Run/" + name).c_str(), BM_Run, run)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
}

// The tutorial's plan (README, docs/planning.md): `blis plan --model
// qwen/qwen3-14b --rate 200 --slo 'ttft_p99<500ms'`, 14 trials from 1 to 128
// instances. Issue 31's target: at most 1 s of CPU.
void BM_Plan(benchmark::State& state) {
  const std::string stage = blis::bench::stage_dir();
  setenv("BLIS_DATA_DIR", (stage + "/share/blis/data").c_str(), 0);
  setenv("BLIS_PLUGIN_PATH", (stage + "/lib/blis/plugins").c_str(), 0);
  blis::PlanRequest request;
  request.command_line.push_back({"model", "qwen/qwen3-14b", "--model", {}});
  request.command_line.push_back({"rate", "200", "--rate", {}});
  request.slo = "ttft_p99<500ms";
  request.quiet = true;
  for (auto _ : state) {
    std::ostringstream out;
    if (!blis::plan(request, out)) state.SkipWithError("the plan found no answer");
  }
}
BENCHMARK(BM_Plan)->Name("BM_Plan/tutorial")->Iterations(1)->Unit(benchmark::kMillisecond);

// A sweep of many small configurations (issue 31): what each one costs
// besides its simulation (data tables, plugin libraries, a Lua VM). Reported
// per configuration.
void BM_Sweep(benchmark::State& state) {
  const std::string stage = blis::bench::stage_dir();
  setenv("BLIS_DATA_DIR", (stage + "/share/blis/data").c_str(), 0);
  setenv("BLIS_PLUGIN_PATH", (stage + "/lib/blis/plugins").c_str(), 0);
  const int64_t rates = 20, seeds = 10;
  const std::string path = "/tmp/blis-bench-sweep-" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream f(path);
    f << "model = \"qwen/qwen3-14b\"\nnum_requests = 500\nquiet = true\n[sweep]\nrate = [";
    for (int64_t r = 0; r < rates; ++r) f << (r > 0 ? "," : "") << 5 + r;
    f << "]\nseed = [";
    for (int64_t k = 0; k < seeds; ++k) f << (k > 0 ? "," : "") << k;
    f << "]\n";
  }
  blis::RunRequest request;
  request.scenario = path;
  request.command_line.push_back({"jobs", "1", "--jobs", {}});
  for (auto _ : state) {
    std::ostringstream out;
    blis::run(request, out);
  }
  std::remove(path.c_str());
  state.counters["configs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * rates * seeds), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Sweep)->Iterations(1)->Unit(benchmark::kMillisecond);

// A sweep over the fleet alone (issue 31, item 7): 25 instance counts x 4
// routing policies x 2 batch sizes of one 500-request workload, which the
// sweep generates once (run/workload_reuse.hpp). Reported per configuration.
void BM_FleetSweep(benchmark::State& state) {
  const std::string stage = blis::bench::stage_dir();
  setenv("BLIS_DATA_DIR", (stage + "/share/blis/data").c_str(), 0);
  setenv("BLIS_PLUGIN_PATH", (stage + "/lib/blis/plugins").c_str(), 0);
  const int64_t configs = 25 * 4 * 2;
  const std::string path = "/tmp/blis-bench-fleet-sweep-" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream f(path);
    f << "model = \"qwen/qwen3-14b\"\nnum_requests = 500\nrate = 40\nquiet = true\n";
    f << "[sweep]\nnum_instances = [";
    for (int64_t n = 1; n <= 25; ++n) f << (n > 1 ? "," : "") << n;
    f << "]\nrouting_policy = [\"round-robin\", \"least-loaded\", \"weighted\", \"always-busiest\"]\n"
      << "max_num_running_reqs = [64, 128]\n";
  }
  blis::RunRequest request;
  request.scenario = path;
  request.command_line.push_back({"jobs", "1", "--jobs", {}});
  for (auto _ : state) {
    std::ostringstream out;
    blis::run(request, out);
  }
  std::remove(path.c_str());
  state.counters["configs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * configs), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FleetSweep)->Iterations(1)->Unit(benchmark::kMillisecond);

const bool registered = (register_runs(), true);

}  // namespace
