// `--timeout` from the command line (spec head §4.1): deadlines for the
// synthesised workload and for a workload spec, timed_out_requests and the
// anomaly line only when given, the checks of the value.
#include "catch.hpp"
#include "cli.hpp"

#include <string>

namespace {

const std::string kBase = "run --model qwen/qwen3-14b --rate 30 --num-requests 1000";

}  // namespace

TEST_CASE("CLI: --timeout abandons requests past their deadline and counts them", "[cli][metrics]") {
  // 30 req/s saturates one instance: most requests wait far longer than 5 s.
  const Result r = run_blis(kBase + " --timeout 5");
  REQUIRE(r.status == 0);
  const double completed = metric(r.out, "completed_requests");
  const double timed_out = metric(r.out, "timed_out_requests");
  CHECK(completed == 134);
  CHECK(timed_out == 866);
  CHECK(metric(r.out, "injected_requests") == 1000);
  CHECK(metric(r.out, "still_queued") + metric(r.out, "still_running") == 0);
  // Completed requests finished their last step within 5 s; the E2E adds the
  // model's output overheads (α) after it, a few milliseconds.
  CHECK(metric(r.out, "e2e_p99_ms") <= 5050);
  CHECK(r.out.find("=== Anomaly Counters ===") != std::string::npos);
  CHECK(r.out.find("Dropped Unservable: 0\nTimed Out Requests: 866\n") != std::string::npos);
}

TEST_CASE("CLI: without --timeout the report has no timed_out_requests", "[cli][metrics]") {
  const Result r = run_blis(kBase);
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "completed_requests") == 1000);
  CHECK(r.out.find("timed_out") == std::string::npos);
  CHECK(r.out.find("Timed Out") == std::string::npos);
}

TEST_CASE("CLI: a negative --timeout gives no deadline, a zero one is refused", "[cli][metrics]") {
  const Result r = run_blis(kBase + " --timeout -1");
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "completed_requests") == 1000);
  CHECK(metric(r.out, "timed_out_requests") == 0);
  check_refused("run --model qwen/qwen3-14b --timeout 0",
                "--timeout: must be positive (seconds) or negative to disable, got 0");
}

TEST_CASE("CLI: --timeout applies to a workload spec's clients too", "[cli][metrics]") {
  const Result r = run_blis("run --model qwen/qwen3-14b --workload-spec " + std::string(BLIS_TEST_SOURCE_DIR) +
                            "/examples/workload-spec/prefix-affinity-demo.yaml --timeout 1");
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "timed_out_requests") > 0);
  CHECK(metric(r.out, "completed_requests") + metric(r.out, "timed_out_requests") ==
        metric(r.out, "injected_requests"));
}

TEST_CASE("CLI: --timeout with a trace warns that trace requests have no deadlines", "[cli][metrics]") {
  const Result r = run_blis("run --model qwen/qwen3-14b --workload-trace " + std::string(BLIS_TEST_SOURCE_DIR) +
                            "/examples/trace-replay/trace.csv --timeout 1");
  REQUIRE(r.status == 0);
  CHECK(r.err.find("--timeout has no effect: requests replayed from a trace have no deadlines") != std::string::npos);
}

// docs/differences.md row 38: HEAD counts output tokens at completion only.
TEST_CASE("CLI: a timed-out request's streamed tokens count as output", "[cli][metrics][head]") {
  // Four running slots and 300 s deadlines (the head profile's default):
  // 7 requests time out, some while running, after streaming tokens.
  const Result r =
      run_blis("run --model redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic --seed 53 --rate 5 "
               "--num-requests 100 --latency-model trained-physics --scheduler sjf --max-num-seqs 4 --profile-set head");
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "completed_requests") == 93);
  CHECK(metric(r.out, "timed_out_requests") == 7);
  // HEAD prints 48,166 (the completed requests' tokens only).
  CHECK(metric(r.out, "total_output_tokens") == 49511);
}
