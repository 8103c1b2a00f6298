// --session-mode closed-loop (set by --profile-set head): a single-session
// multi-turn client sends its later rounds when the previous one completes,
// and inference_perf expands as HEAD's does. Two of HEAD's own golden
// experiments (testdata/trained_physics_iter29.json at f90a1e3a) are
// reproduced to 1e-9, with the command line HEAD's golden README gives, and
// two of testdata/roofline_goldendataset.json (HEAD's roofline).
#include "catch.hpp"
#include "cli.hpp"
#include "head_golden.hpp"
#include "temp_dir.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

// HEAD's iter29 coefficients, as the golden file gives them.
const std::string kHeadCoefficients =
    " --latency-model trained-physics --alpha-coeffs 15563.199579,777.3455,45.907545"
    " --beta-coeffs 0.152128,0,1.36252915,0.752037,32.09546717,4.41684444,126.024825,481.8613888,0,1.94710771";

void check_expected(const Result& r, const std::map<std::string, double>& expected) {
  REQUIRE(r.status == 0);
  INFO(r.err);
  for (const auto& [key, want] : expected) {
    INFO(key);
    const double got = golden_value(r.out, key);
    CHECK(std::abs(got - want) <= 1e-9 * std::abs(want));
  }
}

}  // namespace

TEST_CASE("CLI: --profile-set head reproduces HEAD's golden experiment 67 (one stage of multi-turn chat)",
          "[cli][workload][head]") {
  blis::test::TempDir dir;
  const std::string spec = dir.write("w.yaml", R"(version: "2"
seed: 42
num_requests: 1200
inference_perf:
  stages:
    - {rate: 1.0, duration: 1200}
  shared_prefix:
    num_unique_system_prompts: 23
    num_users_per_system_prompt: 1
    system_prompt_len: 100
    question_len: 934
    output_len: 1448
    enable_multi_turn_chat: true
)");
  const std::string cmd = "run --profile-set head --model meta-llama/Llama-2-7b-hf --hardware H100 --tp 1" +
                          kHeadCoefficients +
                          " --max-num-seqs 128 --max-num-batched-tokens 2048 --total-kv-blocks 7463"
                          " --kv-cpu-blocks 1023 --kv-offload-threshold 0.9 --kv-transfer-bandwidth 0.2"
                          " --workload-spec " + spec + " --seed 42 --num-requests 1200";
  const Result head = run_blis(cmd);
  // 1200 requests over 23 sessions: 4 of 53 rounds, 19 of 52.
  check_expected(head, {{"completed_requests", 1200},
                        {"total_input_tokens", 1240800},
                        {"total_output_tokens", 1737600},
                        {"ttft_sum_us", 42155660},
                        {"ttft_mean_ms", 35.12971666666667},
                        {"ttft_p90_ms", 40.125},
                        {"ttft_p99_ms", 42.35174},
                        {"e2e_mean_ms", 17031.301476666667},
                        {"e2e_p90_ms", 17353.2964},
                        {"e2e_p99_ms", 17797.124789999998},
                        {"itl_mean_ms", 11.745262446440913}});
  // Open-loop sessions (the baseline's) send rounds on their schedule
  // instead: the same requests, other latencies.
  // --timeout reaches the clients inference_perf expands into: at 17 s,
  // about the mean E2E, some rounds are abandoned and end their sessions.
  const Result short_deadlines = run_blis(cmd + " --timeout 17");
  REQUIRE(short_deadlines.status == 0);
  CHECK(metric(short_deadlines.out, "timed_out_requests") > 0);
  CHECK(metric(short_deadlines.out, "completed_requests") < 1200);
  const Result open = run_blis(cmd + " --session-mode open-loop");
  REQUIRE(open.status == 0);
  CHECK(metric(open.out, "completed_requests") == 1200);
  CHECK(metric(open.out, "e2e_mean_ms") != metric(head.out, "e2e_mean_ms"));
}

TEST_CASE("CLI: --profile-set head reproduces HEAD's golden experiment 62 (two stages of multi-turn chat)",
          "[cli][workload][head]") {
  blis::test::TempDir dir;
  const std::string spec = dir.write("w.yaml", R"(version: "2"
seed: 42
num_requests: 5100
inference_perf:
  stages:
    - {rate: 2.5, duration: 600}
    - {rate: 6.0, duration: 600}
  shared_prefix:
    num_unique_system_prompts: 9
    num_users_per_system_prompt: 5
    system_prompt_len: 100
    question_len: 447
    output_len: 248
    enable_multi_turn_chat: true
)");
  const Result head = run_blis(
      "run --profile-set head --model mistralai/Mistral-Nemo-Instruct-2407 --hardware H100 --tp 2" +
      kHeadCoefficients +
      " --max-num-seqs 128 --max-num-batched-tokens 1024 --total-kv-blocks 48009 --kv-cpu-blocks 6553"
      " --kv-offload-threshold 0.9 --kv-transfer-bandwidth 0.2 --workload-spec " + spec +
      " --seed 42 --num-requests 5100");
  // Every session finishes its rounds, past its stage's end: 1500 + 3600.
  check_expected(head, {{"completed_requests", 5100},
                        {"total_input_tokens", 2789700},
                        {"total_output_tokens", 1264800},
                        {"ttft_sum_us", 133517082},
                        {"ttft_mean_ms", 26.17982},
                        {"ttft_p90_ms", 28.7232},
                        {"ttft_p99_ms", 30.229},
                        {"e2e_mean_ms", 1626.6830668627451},
                        {"e2e_p90_ms", 1669.2038},
                        {"e2e_p99_ms", 1731.42632},
                        {"itl_mean_ms", 6.476624481225688}});
}

TEST_CASE("CLI: --profile-set head reproduces HEAD's roofline golden experiments 67 (dense) and 17 (MoE, FP8)",
          "[cli][workload][head]") {
  // testdata/roofline_goldendataset.json at f90a1e3a: HEAD's roofline
  // (roofline.form = "head", which the profile sets).
  blis::test::TempDir dir;
  const std::string one = dir.write("one.yaml", R"(version: "2"
seed: 42
num_requests: 1200
inference_perf:
  stages:
    - {rate: 1, duration: 1200}
  shared_prefix:
    num_unique_system_prompts: 23
    num_users_per_system_prompt: 1
    system_prompt_len: 100
    question_len: 934
    output_len: 1448
    enable_multi_turn_chat: true
)");
  check_expected(run_blis("run --profile-set head --model meta-llama/Llama-2-7b-hf --hardware H100 --tp 1"
                          " --latency-model roofline --max-num-seqs 128 --max-num-batched-tokens 2048"
                          " --total-kv-blocks 7463 --kv-cpu-blocks 1023 --kv-offload-threshold 0.9"
                          " --kv-transfer-bandwidth 0.2 --workload-spec " + one + " --seed 42 --num-requests 1200"),
                 {{"completed_requests", 1200},
                  {"total_input_tokens", 1240800},
                  {"total_output_tokens", 1737600},
                  {"ttft_sum_us", 31127971},
                  {"ttft_mean_ms", 25.939975833333335},
                  {"ttft_p90_ms", 26.929000000000002},
                  {"ttft_p99_ms", 62.339},
                  {"e2e_mean_ms", 6547.379883333334},
                  {"e2e_p90_ms", 7035.1229},
                  {"e2e_p99_ms", 7532.97888},
                  {"itl_mean_ms", 4.506869321008984}});
  const std::string two = dir.write("two.yaml", R"(version: "2"
seed: 42
num_requests: 5100
inference_perf:
  stages:
    - {rate: 2.5, duration: 600}
    - {rate: 6, duration: 600}
  shared_prefix:
    num_unique_system_prompts: 9
    num_users_per_system_prompt: 5
    system_prompt_len: 100
    question_len: 447
    output_len: 248
    enable_multi_turn_chat: true
)");
  const std::string scout = "run --profile-set head --model RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"
                            " --hardware H100 --tp 2 --latency-model roofline --max-num-seqs 128"
                            " --max-num-batched-tokens 2048 --total-kv-blocks 8253 --kv-cpu-blocks 0"
                            " --kv-offload-threshold 0.9 --kv-transfer-bandwidth 0.2 --workload-spec " + two +
                            " --seed 42 --num-requests 5100";
  const Result head = run_blis(scout);
  check_expected(head, {{"completed_requests", 5100},
                        {"total_input_tokens", 2789700},
                        {"total_output_tokens", 1264800},
                        {"ttft_sum_us", 165629225},
                        {"ttft_mean_ms", 32.47631862745098},
                        {"ttft_p90_ms", 89.672},
                        {"ttft_p99_ms", 158.903},
                        {"e2e_mean_ms", 1013.1004780392157},
                        {"e2e_p90_ms", 1749.715},
                        {"e2e_p99_ms", 1749.715},
                        {"itl_mean_ms", 3.970138297213622}});
  // The baseline's roofline (all experts loaded every step) is far slower here.
  const Result seed = run_blis(scout + " --plugin-config roofline.form=seed");
  REQUIRE(seed.status == 0);
  CHECK(metric(seed.out, "e2e_mean_ms") > 2 * metric(head.out, "e2e_mean_ms"));
  check_refused(scout + " --plugin-config roofline.form=newest", "'form' must be");
}

TEST_CASE("CLI: closed-loop sessions send a round only after the previous one completed", "[cli][workload]") {
  // One session of 4 rounds, no think time. Open-loop, the rounds arrive
  // 1 µs per output token apart and queue behind each other; closed-loop,
  // each starts on an idle instance, so every round has the same TTFT.
  blis::test::TempDir dir;
  const std::string spec = dir.write("s.yaml", R"(version: "2"
seed: 7
aggregate_rate: 1
num_requests: 4
clients:
  - id: chat
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 300}}
    output_distribution: {type: constant, params: {value: 200}}
    reasoning:
      reason_ratio_distribution: {type: constant, params: {value: 0}}
      multi_turn: {max_rounds: 4, think_time_us: 0, single_session: true}
)");
  const std::string cmd = "run --model qwen/qwen3-14b --workload-spec " + spec;
  const Result closed = run_blis(cmd + " --session-mode closed-loop");
  const Result open = run_blis(cmd);
  REQUIRE(closed.status == 0);
  REQUIRE(open.status == 0);
  CHECK(metric(closed.out, "completed_requests") == 4);
  // Session rounds have HEAD's 300 s deadlines: the key is printed.
  CHECK(metric(closed.out, "timed_out_requests") == 0);
  CHECK(open.out.find("timed_out_requests") == std::string::npos);
  CHECK(metric(open.out, "completed_requests") == 4);
  CHECK(metric(closed.out, "ttft_p99_ms") == metric(closed.out, "ttft_mean_ms"));
  CHECK(metric(open.out, "ttft_p99_ms") > metric(open.out, "ttft_mean_ms"));
  // No round waits behind another: each finishes sooner.
  CHECK(metric(closed.out, "e2e_mean_ms") < metric(open.out, "e2e_mean_ms"));
  CHECK(run_blis(cmd + " --session-mode open-loop").out == open.out);
  CHECK(run_blis(cmd + " --session-mode closed-loop").out == closed.out);

  check_refused(cmd + " --session-mode sometimes", "session mode");
  const Result dump = run_blis("run --model qwen/qwen3-14b --profile-set head --dump-config");
  CHECK(dump.out.find("session_mode = \"closed-loop\"\n") != std::string::npos);
  CHECK(run_blis("run --model qwen/qwen3-14b --dump-config").out.find("session_mode") == std::string::npos);
}

namespace {

std::string head_expected(const std::string& name) {
  std::ifstream f(std::string(BLIS_TEST_SOURCE_DIR) + "/tests/golden/expected/head/" + name);
  REQUIRE(f.good());
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("CLI: --profile-set head runs many-session multi-turn clients as HEAD does, and prints its session block",
          "[cli][workload][head]") {
  // tests/golden/expected/head/multiturn_sessions.txt is HEAD's stdout for
  // this command line. 200 requests generated: the rounds 0 of 80 sessions
  // of five rounds, whose later rounds follow completions (400 requests),
  // each round's prompt the conversation so far.
  const std::string cmd = "run --model qwen/qwen3-14b --num-instances 2 --num-requests 200 --workload-spec " +
                          std::string(BLIS_TEST_SOURCE_DIR) + "/examples/workload-spec/multiturn-chat-demo.yaml";
  const Result head = run_blis(cmd + " --profile-set head");
  INFO(head.err);
  REQUIRE(head.status == 0);
  CHECK(head.out == head_expected("multiturn_sessions.txt"));
  CHECK(head.out.find("  Sessions: 80\n") != std::string::npos);
  // The baseline: open-loop rounds, 200 in all, no session block.
  const Result seed = run_blis(cmd);
  REQUIRE(seed.status == 0);
  CHECK(metric(seed.out, "completed_requests") == 200);
  CHECK(seed.out.find("Session Metrics") == std::string::npos);
  // Closed-loop users are sessions too (HEAD: concurrency_<client>_user_<u>).
  const Result users = run_blis("run --model qwen/qwen3-14b --concurrency 4 --num-requests 20 --profile-set head");
  REQUIRE(users.status == 0);
  CHECK(users.out == head_expected("concurrency_sessions.txt"));
  const Result seed_form = run_blis("run --model qwen/qwen3-14b --concurrency 4 --num-requests 20 --profile-set head "
                                    "--output-form seed");
  CHECK(seed_form.out.find("Session Metrics") == std::string::npos);
}

TEST_CASE("CLI: HEAD's metrics file names session rounds and sessions as HEAD does, ties in HEAD's order",
          "[cli][workload][head]") {
  // tests/golden/expected/head/metrics_path_{sessions,users}.json are HEAD's
  // --metrics-path files for these command lines: a follow-up round is
  // "session_<session>_round_<r>_<n>", every session request carries its
  // "session_id", requests tied in arrival time are in the order Go's
  // sort.Slice leaves them, and the cache hit rate is the instances' mean
  // summed before it is divided.
  blis::test::TempDir dir;
  const std::string path = dir.str() + "/m.json";
  auto slurp = [](const std::string& file) {
    std::ifstream f(file);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  const std::string sessions =
      "run --model qwen/qwen3-14b --num-instances 2 --num-requests 40 --workload-spec " +
      std::string(BLIS_TEST_SOURCE_DIR) + "/examples/workload-spec/multiturn-chat-demo.yaml";
  REQUIRE(run_blis(sessions + " --profile-set head --metrics-path " + path).status == 0);
  std::string written = slurp(path);
  CHECK(written == head_expected("metrics_path_sessions.json"));
  CHECK(written.find("\"requestID\": \"session_sess_") != std::string::npos);
  const std::string users = "run --model qwen/qwen3-14b --concurrency 4 --num-requests 20";
  REQUIRE(run_blis(users + " --profile-set head --metrics-path " + path).status == 0);
  written = slurp(path);
  CHECK(written == head_expected("metrics_path_users.json"));
  CHECK(written.find("\"session_id\": \"concurrency_") != std::string::npos);
  // The seed's form keeps its request_<n> ids and has no session ids.
  REQUIRE(run_blis(users + " --profile-set head --output-form seed --metrics-path " + path).status == 0);
  CHECK(slurp(path).find("session_") == std::string::npos);
}

TEST_CASE(
    "CLI: under HEAD's output the per-class ITL mean sums session rounds in HEAD's order, with or without a "
    "metrics file",
    "[cli][workload][head]") {
  // HEAD sums the per-request ITLs of a class in the order of the requests'
  // names, a follow-up round by its session's name. blis knew those names
  // only when it wrote the metrics file, so stdout's sum took another order
  // and its last digits differed (12.117674740405777 here). The figure is
  // HEAD's (f90a1e3a) for this command, stdout and metrics file alike.
  blis::test::TempDir dir;
  const std::string spec = dir.write("w.yaml", R"(version: "2"
seed: 648
aggregate_rate: 5
num_requests: 120
clients:
  - id: c0
    rate_fraction: 0.333
    slo_class: standard
    tenant_id: t2
    arrival: {process: gamma, cv: 1.5}
    input_distribution: {type: gaussian, params: {mean: 400, std_dev: 100, min: 8, max: 1600}}
    output_distribution: {type: exponential, params: {mean: 16}}
  - id: c1
    rate_fraction: 0.333
    slo_class: sheddable
    tenant_id: t1
    arrival: {process: gamma, cv: 1.5}
    input_distribution: {type: gaussian, params: {mean: 64, std_dev: 16, min: 8, max: 256}}
    output_distribution: {type: exponential, params: {mean: 16}}
  - id: c2
    rate_fraction: 0.333
    slo_class: standard
    arrival: {process: constant}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: constant, params: {value: 16}}
    prefix_group: g1
    prefix_length: 32
    reasoning:
      multi_turn:
        max_rounds: 4
        think_time_us: 500000
)");
  const std::string run =
      "run --model qwen/qwen3-14b --workload-spec " + spec +
      " --num-instances 4 --seed 99 --slo-ttft critical=100ms,standard=1.5s --profile-set head";
  const Result plain = run_blis(run);
  REQUIRE(plain.status == 0);
  CHECK(plain.out.find("\"itl_mean_ms\": 12.117674740405764,") != std::string::npos);
  const Result with_file = run_blis(run + " --metrics-path " + dir.str() + "/m.json");
  REQUIRE(with_file.status == 0);
  CHECK(with_file.out == plain.out);
}
