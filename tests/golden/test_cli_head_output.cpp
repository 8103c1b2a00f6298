// Under --profile-set head, blis prints what BLIS HEAD (f90a1e3a) prints, byte
// for byte: tests/golden/expected/head/NAME.txt is HEAD's stdout for the
// command line below (built per ../shared/reference/BUILD-head-f90a1e3a.md).
// Each case holds one of HEAD's semantics the profile sets:
// --preemption-mode restart and --output-form head.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string head_file(const std::string& name) {
  return read_file(std::string(BLIS_TEST_SOURCE_DIR) + "/tests/golden/expected/head/" + name);
}

std::string head_stdout(const std::string& name) { return head_file(name + ".txt"); }

Result run_head(const std::string& args) {
  Result r = run_blis(args + " --profile-set head");
  INFO("blis " << args << " --profile-set head\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  return r;
}

const std::string kRestart =
    "run --model qwen/qwen3-14b --seed 57 --rate 50 --num-requests 50 --total-kv-blocks 500 "
    "--prompt-tokens 2048 --output-tokens 16";
const std::string kRestartPrefix =
    "run --model qwen/qwen2.5-7b-instruct --seed 489 --rate 2 --num-requests 100 --latency-model trained-physics "
    "--max-num-batched-tokens 512 --total-kv-blocks 500 --prompt-tokens 2048 --output-tokens 128 --prefix-tokens 256";
const std::string kInversions =
    "run --model qwen/qwen3-14b --seed 409 --rate 20 --num-requests 20 --num-instances 1 --routing-policy "
    "round-robin --latency-model roofline --scheduler priority-fcfs";
const std::string kIdle =
    "run --model codellama/codellama-34b-instruct-hf --seed 732 --rate 20 --num-requests 10 --num-instances 4 "
    "--routing-policy weighted --latency-model trained-physics --scheduler fcfs --max-num-seqs 4 "
    "--max-num-batched-tokens 8192 --prefix-tokens 256";

}  // namespace

TEST_CASE("CLI: under KV pressure, --profile-set head restarts preempted requests as HEAD does",
          "[cli][head][preemption]") {
  // 23 and 46 preemptions: each victim prefills its prompt again and makes
  // its output anew; TTFT, ITL and scheduling delay are its last attempt's.
  CHECK(run_head(kRestart).out == head_stdout("preemption_restart"));
  CHECK(run_head(kRestartPrefix).out == head_stdout("preemption_prefix"));
  // vLLM's recompute (blis's default) keeps delivered tokens: other latencies.
  const Result recompute = run_head(kRestart + " --preemption-mode recompute");
  CHECK(recompute.out != head_stdout("preemption_restart"));
  CHECK(metric(recompute.out, "preemption_count") > 0);
  CHECK(metric(recompute.out, "e2e_mean_ms") < metric(head_stdout("preemption_restart"), "e2e_mean_ms"));
}

TEST_CASE("CLI: --output-form head counts priority inversions under priority-fcfs and prints idle instances",
          "[cli][head][output]") {
  const std::string inversions = run_head(kInversions).out;
  CHECK(inversions == head_stdout("priority_inversions"));
  CHECK(inversions.find("Priority Inversions: 9\n") != std::string::npos);
  // The seed counts inversions only when a priority policy makes priorities
  // differ: none here, and no anomaly block.
  const Result seed_form = run_blis(kInversions + " --profile-set head --output-form seed");
  REQUIRE(seed_form.status == 0);
  CHECK(seed_form.out.find("Anomaly Counters") == std::string::npos);

  // Four instances, ten requests at 20/s, weighted routing: instance_0 gets
  // none and HEAD still prints its block (the seed's form leaves it out).
  const std::string idle = run_head(kIdle).out;
  CHECK(idle == head_stdout("idle_instances"));
  CHECK(metric(idle, "completed_requests", "instance_0") == 0);
  const Result seed_idle = run_blis(kIdle + " --profile-set head --output-form seed");
  REQUIRE(seed_idle.status == 0);
  CHECK(seed_idle.out.find("\"instance_id\": \"instance_0\"") == std::string::npos);
}

TEST_CASE("CLI: --metrics-path writes HEAD's metrics file byte for byte under --profile-set head",
          "[cli][head][output]") {
  blis::test::TempDir dir;
  const std::string path = dir.str() + "/m.json";
  const std::string cmd =
      "run --model qwen/qwen3-14b --seed 5 --rate 20 --num-requests 30 --num-instances 3 --routing-policy weighted "
      "--scheduler priority-fcfs --metrics-path " + path;
  run_head(cmd);
  // The cluster's metrics, its cache_hit_rate (the instances' mean) and each
  // request with its round_index, as HEAD writes them, with no final newline.
  const std::string written = read_file(path);
  CHECK(written == head_file("metrics_path.json"));
  CHECK(written.find("\"cache_hit_rate\": ") != std::string::npos);
  // Without the profile it is the seed's --results-path file: no such keys.
  const Result seed = run_blis(cmd);
  REQUIRE(seed.status == 0);
  CHECK(read_file(path).find("round_index") == std::string::npos);
}

namespace {

// One request's value of `key` in a metrics file (-1 when its record has no
// such key).
double record_value(const std::string& file, const std::string& id, const std::string& key) {
  const size_t named = file.find("\"requestID\": \"" + id + "\",");
  REQUIRE(named != std::string::npos);
  const size_t at = file.rfind('{', named), end = file.find('}', named);
  const size_t k = file.find("\"" + key + "\": ", at);
  if (k == std::string::npos || k > end) return -1;
  return std::stod(file.substr(k + key.size() + 4));
}

}  // namespace

TEST_CASE("CLI: under --profile-set head the metrics file has each request's wait at the gateway, as HEAD's",
          "[cli][head][output][gateway]") {
  // Six equal requests 1 ms apart, one instance, a gateway that lets one
  // request in flight at a time: request_0 finds it empty; each other waits
  // there until the one before it has finished.
  blis::test::TempDir dir;
  const std::string spec = dir.str() + "/w.yaml";
  std::ofstream(spec) << "version: \"2\"\nseed: 3\naggregate_rate: 1000\nnum_requests: 6\nclients:\n"
                         "  - id: a\n    rate_fraction: 1.0\n    arrival: {process: constant}\n"
                         "    input_distribution: {type: constant, params: {value: 64}}\n"
                         "    output_distribution: {type: constant, params: {value: 32}}\n";
  const std::string path = dir.str() + "/m.json";
  const std::string cmd = "run --model qwen/qwen3-14b --workload-spec " + spec +
                          " --num-instances 1 --flow-control --saturation-detector concurrency "
                          "--max-concurrency 1 --metrics-path " +
                          path;
  run_head(cmd);
  const std::string written = read_file(path);
  CHECK(written == head_file("metrics_path_gateway.json"));  // HEAD's file for this command
  // No wait, no key; then 393 ms more for each request: the 394 ms between
  // two departures less the 1 ms between two arrivals.
  CHECK(record_value(written, "request_0", "gateway_queue_delay_ms") == -1);
  for (int k = 1; k < 6; ++k) {
    const std::string id = "request_" + std::to_string(k), before = "request_" + std::to_string(k - 1);
    INFO(id);
    CHECK(record_value(written, id, "gateway_queue_delay_ms") == Approx(393.0 * k));
    const double departure =
        record_value(written, id, "arrived_at") * 1e3 + record_value(written, id, "e2e_ms");
    const double previous =
        record_value(written, before, "arrived_at") * 1e3 + record_value(written, before, "e2e_ms");
    CHECK(departure - previous == Approx(394.0));
    // Past the gateway each waits as long as request_0 did for its first step.
    CHECK(record_value(written, id, "scheduling_delay_ms") -
              record_value(written, id, "gateway_queue_delay_ms") ==
          Approx(record_value(written, "request_0", "scheduling_delay_ms")));
  }
  // blis's own form of the file (without the profile) has no such key.
  const Result seed = run_blis(cmd);
  REQUIRE(seed.status == 0);
  CHECK(read_file(path).find("gateway_queue_delay_ms") == std::string::npos);
}

namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("CLI: the metrics file has a record for each request the gateway evicted, as HEAD's",
          "[cli][head][output][gateway]") {
  // 100 requests, half of them sheddable (batch) and evicted from the
  // instance when a standard one waits at a saturated gateway.
  blis::test::TempDir dir;
  const std::string spec = dir.str() + "/w.yaml";
  std::ofstream(spec)
      << "version: \"2\"\nseed: 251\naggregate_rate: 100\nnum_requests: 100\nclients:\n"
         "  - id: c0\n    rate_fraction: 0.5\n    slo_class: batch\n    tenant_id: t2\n"
         "    arrival: {process: poisson}\n"
         "    input_distribution: {type: gaussian, params: {mean: 64, std_dev: 16, min: 8, max: 256}}\n"
         "    output_distribution: {type: exponential, params: {mean: 16}}\n"
         "  - id: c1\n    rate_fraction: 0.5\n    slo_class: standard\n"
         "    arrival: {process: constant}\n"
         "    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, "
         "max: 1024}}\n"
         "    output_distribution: {type: exponential, params: {mean: 200}}\n";
  const std::string path = dir.str() + "/m.json";
  const std::string cmd =
      "run --model qwen/qwen3-14b --workload-spec " + spec +
      " --num-instances 1 --seed 78 --flow-control --saturation-detector utilization "
      "--queue-depth-threshold 1 --kv-cache-util-threshold 0.05 --dispatch-order priority "
      "--fairness-policy round-robin --per-band-capacity 30 --in-flight-eviction --metrics-path " +
      path;
  // HEAD's file for this command: 74 completed and 26 evicted requests.
  const std::string out = run_head(cmd).out;
  CHECK(out.find("\"completed_requests\": 74,") != std::string::npos);
  CHECK(out.find("Gateway Evicted (in-flight): 26\n") != std::string::npos);
  const std::string written = read_file(path);
  CHECK(written == head_file("metrics_path_eviction.json"));
  CHECK(count_of(written, "\"requestID\": ") == 100);
  // blis's own form flags them: as many as the gateway evicted in that run.
  const Result seed = run_blis(cmd);
  REQUIRE(seed.status == 0);
  const std::string seed_file = read_file(path);
  CHECK(count_of(seed_file, "\"requestID\": ") == 100);
  CHECK(seed.out.find("Gateway Evicted (in-flight): 16\n") != std::string::npos);
  CHECK(count_of(seed_file, "\"evicted\": true") == 16);
}

TEST_CASE(
    "CLI: under --profile-set head --kv-cpu-blocks is HEAD's mirror tier: reloads, evictions, thrashing",
    "[cli][head][kv]") {
  // Two prefix groups on a 250-block GPU cache with a 10-block CPU tier:
  // prompts come back from the CPU tier at 300 + ceil(16 / 4) µs a block,
  // the tier evicts nearly every block it stores (thrashing 0.9999), and one
  // request is preempted. HEAD's stdout, byte for byte.
  blis::test::TempDir dir;
  const std::string spec = dir.str() + "/w.yaml";
  std::ofstream(spec)
      << "version: \"2\"\nseed: 696\naggregate_rate: 20\nnum_requests: 120\nclients:\n"
         "  - id: c0\n    rate_fraction: 0.5\n    prefix_group: g0\n    prefix_length: 512\n"
         "    arrival: {process: poisson}\n"
         "    input_distribution: {type: gaussian, params: {mean: 400, std_dev: 100, min: 8, max: 800}}\n"
         "    output_distribution: {type: exponential, params: {mean: 32}}\n"
         "  - id: c1\n    rate_fraction: 0.5\n    prefix_group: g1\n    prefix_length: 512\n"
         "    arrival: {process: poisson}\n"
         "    input_distribution: {type: gaussian, params: {mean: 200, std_dev: 50, min: 8, max: 400}}\n"
         "    output_distribution: {type: exponential, params: {mean: 8}}\n";
  const std::string cmd = "run --model qwen/qwen3-14b --workload-spec " + spec +
                          " --total-kv-blocks 250 --seed 89 --kv-cpu-blocks 10 --kv-transfer-bandwidth 4.0 "
                          "--latency-model trained-physics --kv-transfer-base-latency 300";
  const std::string out = run_head(cmd).out;
  CHECK(out == head_stdout("cpu_tier_mirror"));
  CHECK(out.find("KV Thrashing Rate: 0.9999\n") != std::string::npos);
  // The seed's threshold tier, kept under the profile, is another model.
  CHECK(run_head(cmd + " --kv-cpu-model threshold").out != out);
  // Without the profile the seed's tier runs; --kv-cpu-model mirror gives HEAD's tier there too.
  const Result seed = run_blis(cmd + " --kv-cpu-model mirror --output-form head --preemption-mode restart");
  REQUIRE(seed.status == 0);
  CHECK(seed.out.find("KV Thrashing Rate: 0.9999\n") != std::string::npos);
}

TEST_CASE("CLI: HEAD's metrics file has the goodput and saturation members after its requests",
          "[cli][head][output][goodput]") {
  blis::test::TempDir dir;
  const std::string path = dir.str() + "/m.json";
  const Result r = run_head(
      "run --model qwen/qwen3-14b --seed 5 --rate 20 --num-requests 30 --slo-ttft default=50ms "
      "--detectors threshold --metrics-path " +
      path);
  const std::string written = read_file(path);
  // HEAD writes the object it prints, with its requests after its own keys:
  // the file's members after the requests are stdout's after timed_out_requests.
  const size_t requests_end = written.find("\n  ],\n");
  REQUIRE(requests_end != std::string::npos);
  const std::string tail = written.substr(requests_end + 5);
  CHECK(tail.rfind("\n  \"saturation\": {", 0) == 0);
  CHECK(tail.find("\n  \"goodput_rps\": ") != std::string::npos);
  CHECK(tail.find("\n  \"per_class\": {") != std::string::npos);
  const size_t own_end = r.out.find("\"timed_out_requests\": ");
  REQUIRE(own_end != std::string::npos);
  const size_t block_end = r.out.find("\n}", own_end);
  const std::string printed =
      r.out.substr(r.out.find('\n', own_end), block_end + 2 - r.out.find('\n', own_end));
  CHECK(tail == printed);
}

TEST_CASE("CLI: under --profile-set head a goodput target's class is reported with no requests, and per-SLO ITL",
          "[cli][head][goodput]") {
  // A target for `standard`, every request in the default class: HEAD lists
  // `standard` with count 0 and its targeted dimension, and its per-SLO block
  // has an ITL line (the requests' mean ITLs) between TTFT and E2E.
  const std::string out =
      run_head("run --model qwen/qwen3-14b --seed 26 --rate 10 --num-requests 100 --num-instances 1 "
               "--routing-policy least-loaded --latency-model trained-physics --prompt-tokens 512 "
               "--output-tokens 16 --slo-ttft standard=2s")
          .out;
  CHECK(out == head_stdout("goodput_untargeted"));
  CHECK(out.find("\"standard\": {\n      \"count\": 0,") != std::string::npos);
  CHECK(out.find("    ITL:  mean=") != std::string::npos);
}

TEST_CASE("CLI: under --profile-set head P/D pools that disaggregate nothing print no P/D or pools block",
          "[cli][head][pd]") {
  const std::string cmd =
      "run --model qwen/qwen3-14b --seed 835 --rate 1 --num-requests 50 --scheduler fcfs --max-num-seqs 256 "
      "--num-instances 3 --prefill-instances 1 --decode-instances 2 --pd-decider never";
  const std::string out = run_head(cmd).out;
  CHECK(out == head_stdout("pd_never"));
  CHECK(out.find("=== PD Metrics ===") == std::string::npos);
  // blis's own form keeps both blocks.
  const Result seed_form = run_blis(cmd + " --profile-set head --output-form seed");
  REQUIRE(seed_form.status == 0);
  CHECK(seed_form.out.find("=== Pools ===") != std::string::npos);
  CHECK(seed_form.out.find("Disaggregated Requests: 0") != std::string::npos);
}

TEST_CASE(
    "CLI: under --profile-set head, priority-fcfs and reverse-priority order the wait queue by SLO class",
    "[cli][head]") {
  // HEAD gives each request its class's vLLM priority (critical 0, batch 5)
  // and sorts the wait queue by it, then by arrival (sim/scheduler.go); the
  // seed's priorities are ages, an arrival order. Figures: HEAD (f90a1e3a)
  // for the same commands.
  blis::test::TempDir dir;
  const std::string spec = dir.write("mix.yaml", R"(version: "2"
seed: 5
aggregate_rate: 60
num_requests: 200
clients:
  - id: a
    rate_fraction: 0.5
    slo_class: critical
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 400, std_dev: 100, min: 8, max: 1600}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: b
    rate_fraction: 0.5
    slo_class: batch
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 400, std_dev: 100, min: 8, max: 1600}}
    output_distribution: {type: exponential, params: {mean: 64}}
)");
  const std::string run = "run --model qwen/qwen3-14b --max-num-seqs 4 --profile-set head --workload-spec " +
                          spec + " --scheduler ";
  const Result first = run_blis(run + "priority-fcfs");
  INFO(first.err);
  REQUIRE(first.status == 0);
  CHECK(first.out.find("\"ttft_mean_ms\": 19775.327815,") != std::string::npos);
  // Critical requests wait a third as long as batch ones.
  CHECK(first.out.find("TTFT: mean=10012587.94 p99=20246802.56 (n=103)") != std::string::npos);
  CHECK(first.out.find("TTFT: mean=30141948.51 p99=39318573.96 (n=97)") != std::string::npos);
  const Result last = run_blis(run + "reverse-priority");
  REQUIRE(last.status == 0);
  CHECK(last.out.find("\"ttft_mean_ms\": 17525.11233,") != std::string::npos);
  // The seed's order, asked for: arrival order, whatever the class.
  const Result seed = run_blis(run + "priority-fcfs --priority-policy constant");
  REQUIRE(seed.status == 0);
  CHECK(seed.out.find("\"ttft_mean_ms\": 18246.562825,") != std::string::npos);
}
