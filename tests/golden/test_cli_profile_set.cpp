// --profile-set (spec head §0.3): a named bundle of the data tables switches
// every default the reference changed after c9ca689b; explicit settings win;
// --dump-config shows the outcome; a spec keeps its clients' timeouts.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

namespace {

const std::string kModel = "run --model qwen/qwen3-14b";

bool has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

}  // namespace

TEST_CASE("CLI: --profile-set head switches HEAD's defaults, shown by --dump-config", "[cli][config]") {
  const Result d = run_blis(kModel + " --profile-set head --dump-config");
  REQUIRE(d.status == 0);
  INFO(d.out);
  CHECK(has(d.out, "profile_set = \"head\"\n"));
  CHECK(has(d.out, "latency_model = \"trained-physics\"\n"));
  CHECK(has(d.out, "routing_scorers = \"precise-prefix-cache:2,queue-depth:1,kv-utilization:1\"\n"));
  CHECK(has(d.out, "snapshot_refresh_interval = 50000\n"));
  CHECK(has(d.out, "cache_signal_delay = 50000\n"));
  CHECK(has(d.out, "timeout = 300\n"));
  CHECK(has(d.out, "gpu_memory_utilization = 0.9\n"));
  // HEAD has no KV table: the count is computed from GPU memory (the table has 17600).
  CHECK(has(d.out, "total_kv_blocks = 15909\n"));
  CHECK(has(d.out, "hardware-head.toml\"\n"));

  // Without the bundle, or with the c9ca689b one, the usual defaults.
  for (const std::string& extra : {std::string(), std::string(" --profile-set c9ca689b")}) {
    const Result plain = run_blis(kModel + extra + " --dump-config");
    INFO(plain.out);
    CHECK(has(plain.out, "latency_model = \"roofline\"\n"));
    CHECK(has(plain.out, "total_kv_blocks = 17600\n"));
    CHECK(!has(plain.out, "\ntimeout = "));
    CHECK(!has(plain.out, "routing_scorers"));
    CHECK(has(plain.out, "snapshot_refresh_interval = 0\n"));
  }
}

TEST_CASE("CLI: explicit settings win over --profile-set head", "[cli][config]") {
  const Result d = run_blis(kModel + " --profile-set head --latency-model roofline --timeout 10 "
                                     "--snapshot-refresh-interval 0 --total-kv-blocks 9000 --dump-config");
  REQUIRE(d.status == 0);
  INFO(d.out);
  CHECK(has(d.out, "latency_model = \"roofline\"\n"));
  CHECK(has(d.out, "timeout = 10\n"));
  CHECK(has(d.out, "snapshot_refresh_interval = 0\n"));
  CHECK(has(d.out, "total_kv_blocks = 9000\n"));
  CHECK(has(d.out, "routing_scorers = \"precise-prefix-cache:2,queue-depth:1,kv-utilization:1\"\n"));
  // A scenario's value wins too: the dump of a head run, edited, is such a scenario.
  blis::test::TempDir dir;
  const std::string scenario = dir.write("run.toml", "[simulation]\nprofile_set = \"head\"\n[model]\nmodel = "
                                                     "\"qwen/qwen3-14b\"\n[latency]\nlatency_model = \"blackbox\"\n");
  const Result s = run_blis("run " + scenario + " --dump-config");
  REQUIRE(s.status == 0);
  CHECK(has(s.out, "latency_model = \"blackbox\"\n"));
  CHECK(has(s.out, "timeout = 300\n"));
}

TEST_CASE("CLI: a --profile-set head run prints what the same flags print, and its dump reruns it", "[cli][config]") {
  const std::string base = kModel + " --rate 20 --num-requests 300";
  const Result head = run_blis(base + " --profile-set head");
  REQUIRE(head.status == 0);
  // trained-physics, computed KV blocks, 300 s deadlines (none reached), the
  // key printed. H100's figures are the same in both GPU tables.
  const Result flags = run_blis(base + " --latency-model trained-physics --gpu-memory-utilization 0.9 "
                                       "--timeout 300 --snapshot-refresh-interval 50000");
  CHECK(head.out == flags.out);
  CHECK(metric(head.out, "timed_out_requests") == 0);
  CHECK(metric(head.out, "completed_requests") == 300);
  const Result plain = run_blis(base);
  CHECK(plain.out != head.out);
  CHECK(!has(plain.out, "timed_out_requests"));

  blis::test::TempDir dir;
  const Result dump = run_blis(base + " --profile-set head --dump-config");
  const std::string file = dir.write("head.toml", dump.out);
  const Result again = run_blis("run " + file);
  REQUIRE(again.status == 0);
  CHECK(again.out == head.out);
}

TEST_CASE("CLI: --profile-set head with a workload spec keeps the spec's timeouts", "[cli][config]") {
  blis::test::TempDir dir;
  const std::string spec = dir.write("spec.yaml", R"(version: "2"
seed: 5
num_requests: 200
aggregate_rate: 40
clients:
  - id: a
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 2000}}
    output_distribution: {type: constant, params: {value: 400}}
)");
  // 40 req/s overloads the instance: with 300 s deadlines nothing times out,
  // and the bundle's timeout does not reach a spec (HEAD: only an explicit
  // --timeout does), but timed_out_requests is printed as HEAD prints it.
  const Result head = run_blis(kModel + " --profile-set head --workload-spec " + spec);
  REQUIRE(head.status == 0);
  CHECK(metric(head.out, "timed_out_requests") == 0);
  CHECK(metric(head.out, "completed_requests") == 200);
  const Result dump = run_blis(kModel + " --profile-set head --workload-spec " + spec + " --dump-config");
  CHECK(!has(dump.out, "\ntimeout = "));
  // An explicit --timeout does reach it: every request needs more than 2 s.
  const Result tight = run_blis(kModel + " --profile-set head --timeout 2 --workload-spec " + spec);
  REQUIRE(tight.status == 0);
  CHECK(has(tight.out, "Timed Out Requests: 200\n"));
}

TEST_CASE("CLI: --profile-set head makes queue-depth score the wait queue when the run uses it", "[cli][config]") {
  const std::string weighted = kModel + " --profile-set head --routing-policy weighted --num-instances 2";
  const Result d = run_blis(weighted + " --dump-config");
  REQUIRE(d.status == 0);
  CHECK(has(d.out, "[plugin-config.\"queue-depth\"]\n\"signal\" = \"queue\"\n"));
  // A writer's key wins; a run without queue-depth gets no key (and no error).
  const Result mine = run_blis(weighted + " --plugin-config queue-depth.signal=load --dump-config");
  CHECK(has(mine.out, "\"signal\" = \"load\"\n"));
  const Result rr = run_blis(kModel + " --profile-set head --num-instances 2 --dump-config");
  REQUIRE(rr.status == 0);
  CHECK(!has(rr.out, "plugin-config"));
  const Result own = run_blis(weighted + " --routing-scorers kv-utilization:1 --dump-config");
  REQUIRE(own.status == 0);
  CHECK(!has(own.out, "plugin-config"));
  // The run itself: the bundle's outcome equals the same keys given by hand.
  const Result run = run_blis(weighted + " --rate 40 --num-requests 300");
  REQUIRE(run.status == 0);
  const Result by_hand = run_blis(weighted + " --rate 40 --num-requests 300 --plugin-config queue-depth.signal=queue");
  CHECK(run.out == by_hand.out);
  const Result old_signal = run_blis(weighted + " --rate 40 --num-requests 300 --plugin-config queue-depth.signal=load");
  CHECK(run.out != old_signal.out);
}

TEST_CASE("CLI: an unknown profile set is refused", "[cli][config]") {
  check_refused(kModel + " --profile-set heads", "--profile-set: unknown profile set 'heads'; valid: c9ca689b, head");
}

TEST_CASE("CLI: with no --tp, --profile-set head uses HEAD's default TP of every bundled model", "[cli][config]") {
  // model, TP in HEAD's defaults.yaml (f90a1e3a), TP in the seed's (c9ca689b).
  struct Row {
    const char* model;
    int head, seed;
  };
  const Row rows[] = {
      {"codellama/codellama-34b-instruct-hf", 2, 1},
      {"ibm-granite/granite-3.1-8b-instruct", 1, 4},
      {"meta-llama/llama-3.1-8b-instruct", 1, 1},
      {"meta-llama/llama-3.3-70b-instruct", 4, 4},
      {"meta-llama/llama-4-maverick-17b-128e-instruct-fp8", 8, 8},
      {"meta-llama/llama-4-scout-17b-16e-instruct", 4, 4},
      {"microsoft/phi-4", 1, 2},
      {"mistralai/mistral-small-24b-instruct-2501", 1, 2},
      {"mistralai/mistral-small-3.1-24b-instruct-2503", 1, 8},
      {"nvidia/llama-3.1-nemotron-70b-instruct-hf", 4, 4},
      {"openai/gpt-oss-120b", 4, 2},
      {"openai/gpt-oss-20b", 1, 1},
      {"qwen/qwen2.5-3b-instruct", 1, 1},
      {"qwen/qwen2.5-7b-instruct", 1, 1},
      {"qwen/qwen3-14b", 1, 1},
      {"redhatai/llama-3.1-nemotron-70b-instruct-hf-fp8-dynamic", 2, 2},
      {"redhatai/llama-3.3-70b-instruct-quantized.w4a16", 1, 4},
      {"redhatai/llama-3.3-70b-instruct-quantized.w8a8", 2, 4},
      {"redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic", 2, 8},
      {"redhatai/llama-4-scout-17b-16e-instruct-quantized.w4a16", 1, 8},
      {"redhatai/mistral-small-3.1-24b-instruct-2503-fp8-dynamic", 1, 8},
      {"redhatai/mistral-small-3.1-24b-instruct-2503-quantized.w4a16", 1, 8},
      {"redhatai/mistral-small-3.1-24b-instruct-2503-quantized.w8a8", 1, 4},
      {"redhatai/phi-4-fp8-dynamic", 1, 2},
      {"redhatai/phi-4-quantized.w4a16", 1, 1},
      {"redhatai/phi-4-quantized.w8a8", 1, 2},
      {"redhatai/qwen2.5-7b-instruct-fp8-dynamic", 1, 4},
      {"redhatai/qwen2.5-7b-instruct-quantized.w4a16", 1, 4},
      {"redhatai/qwen2.5-7b-instruct-quantized.w8a8", 1, 4},
      {"redhatai/smollm3-3b-fp8-dynamic", 1, 1},
  };
  for (const Row& row : rows) {
    INFO(row.model);
    // Explicit coefficients and KV blocks: nothing else of the model is looked up.
    const std::string base = std::string("run --model ") + row.model +
                             " --latency-model blackbox --alpha-coeffs 1,1,1 --beta-coeffs 1,1,1"
                             " --total-kv-blocks 1000 --dump-config";
    const Result head = run_blis(base + " --profile-set head");
    const Result seed = run_blis(base);
    INFO(head.err << seed.err);
    REQUIRE(head.status == 0);
    REQUIRE(seed.status == 0);
    CHECK(has(head.out, "tp = " + std::to_string(row.head) + "\n"));
    CHECK(has(seed.out, "tp = " + std::to_string(row.seed) + "\n"));
  }
  // A --tp given wins over either.
  CHECK(has(run_blis("run --model microsoft/phi-4 --latency-model blackbox --alpha-coeffs 1,1,1 --beta-coeffs 1,1,1 "
                     "--total-kv-blocks 1000 --tp 4 --profile-set head --dump-config")
                .out,
            "tp = 4\n"));
}

TEST_CASE("CLI: with a GPU memory share, KV blocks that cannot be computed stop the run, as in HEAD",
          "[cli][config]") {
  // 40 % of an H100 cannot hold qwen3-14b's weights: HEAD stops, naming the fewest GPUs.
  const Result r = check_refused("run --model qwen/qwen3-14b --gpu-memory-utilization 0.4 --num-requests 10",
                                 "--gpu-memory-utilization: KV blocks cannot be computed from GPU memory: ");
  CHECK(r.err.find("minimum GPUs required per instance: 2;") != std::string::npos);
  CHECK(run_blis("run --model qwen/qwen3-14b --gpu-memory-utilization 0.4 --tp 2 --num-requests 10").status == 0);
  // A 70B model on one GPU: HEAD's profile stops; the seed's defaults warn and run on a million blocks.
  const std::string big =
      "run --model llama-3.1-70b-instruct --hardware H100 --tp 1 --latency-model roofline --num-requests 5";
  const Result head = check_refused(big + " --profile-set head", "profile-set head: gpu-memory-utilization: ");
  CHECK(head.err.find("minimum GPUs required per instance: 2;") != std::string::npos);
  const Result seed = run_blis(big);
  CHECK(seed.status == 0);
  CHECK(seed.err.find("KV capacity auto-calculation failed") != std::string::npos);
}

TEST_CASE("CLI: --profile-set head computes the roofline as HEAD does (numbers from a HEAD build)", "[cli][golden]") {
  // Each printed by BLIS HEAD (f90a1e3a) for the same command line without the
  // profile flag: truncated µs (qwen3-14b), and FP8 rate, interleaved MoE layers,
  // expected experts and quantised weights in the KV capacity (Llama-4-Scout FP8,
  // HEAD's default TP 2).
  struct Case {
    const char* args;
    const char* ttft_mean;
    const char* itl_mean;
    const char* e2e_mean;
  };
  const Case cases[] = {
      {"run --model qwen/qwen3-14b --rate 5 --num-requests 20 --latency-model roofline", "27.367150000000002",
       "6.529741974984693", "3760.09415"},
      {"run --model redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic --rate 5 --num-requests 30 "
       "--latency-model roofline",
       "8.297866666666668", "3.1812231825114385", "1885.5376666666668"},
  };
  for (const Case& c : cases) {
    const Result r = run_blis(std::string(c.args) + " --profile-set head");
    INFO(c.args << "\n" << r.err);
    REQUIRE(r.status == 0);
    CHECK(has(r.out, std::string("\"ttft_mean_ms\": ") + c.ttft_mean + ",\n"));
    CHECK(has(r.out, std::string("\"itl_mean_ms\": ") + c.itl_mean + ",\n"));
    CHECK(has(r.out, std::string("\"e2e_mean_ms\": ") + c.e2e_mean + ",\n"));
  }
}
