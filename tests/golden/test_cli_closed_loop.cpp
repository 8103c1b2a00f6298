// Closed-loop users from the command line and from a workload spec (spec head
// §4.2): --concurrency, --think-time-ms, clients[].concurrency,
// think_time_us and timeout, and what is refused.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

namespace {

const std::string kModel = "run --model qwen/qwen3-14b";

}  // namespace

TEST_CASE("CLI: --concurrency runs closed-loop users until --num-requests", "[cli][workload]") {
  const Result r = run_blis(kModel + " --concurrency 4 --num-requests 40");
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "completed_requests") == 40);
  CHECK(metric(r.out, "injected_requests") == 40);
  // Closed-loop users have 300 s deadlines: the key is there.
  CHECK(metric(r.out, "timed_out_requests") == 0);
  // Four users, ten requests each, one after the other: far below the open-loop
  // run's queueing at the same count.
  CHECK(metric(r.out, "ttft_mean_ms") < 100);
  CHECK(run_blis(kModel + " --concurrency 4 --num-requests 40").out == r.out);
  // Its dump (no rate in it) runs the same.
  blis::test::TempDir dir;
  const Result dump = run_blis(kModel + " --concurrency 4 --num-requests 40 --dump-config");
  CHECK(dump.out.find("\nconcurrency = 4\n") != std::string::npos);
  CHECK(dump.out.find("\nrate = ") == std::string::npos);
  const Result again = run_blis("run " + dir.write("users.toml", dump.out));
  INFO(again.err);
  CHECK(again.out == r.out);
}

TEST_CASE("CLI: --think-time-ms spaces a user's requests", "[cli][workload]") {
  const Result fast = run_blis(kModel + " --concurrency 4 --num-requests 40");
  const Result slow = run_blis(kModel + " --concurrency 4 --think-time-ms 500 --num-requests 40");
  REQUIRE(slow.status == 0);
  CHECK(metric(slow.out, "completed_requests") == 40);
  // Ten rounds per user, each 0.5 s longer (less the overlap of the staggered start).
  const double gained = metric(slow.out, "vllm_estimated_duration_s") - metric(fast.out, "vllm_estimated_duration_s");
  CHECK(gained > 4.0);
  CHECK(gained < 5.5);
  const Result alone = run_blis(kModel + " --think-time-ms 500 --num-requests 5");
  CHECK(alone.err.find("--think-time-ms has no effect") != std::string::npos);
}

TEST_CASE("CLI: --concurrency with --horizon leaves the users' last requests in flight", "[cli][workload]") {
  const Result r = run_blis(kModel + " --concurrency 2 --horizon 60000000");
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "completed_requests") > 0);
  CHECK(metric(r.out, "still_queued") + metric(r.out, "still_running") <= 2);
  // Conservation, with users stopped by their timeouts and others cut by the horizon.
  const Result t = run_blis(kModel + " --concurrency 64 --horizon 60s --timeout 8 --prompt-tokens 2000");
  REQUIRE(t.status == 0);
  const double injected = metric(t.out, "injected_requests");
  CHECK(injected == 127);
  CHECK(metric(t.out, "timed_out_requests") == 60);
  CHECK(metric(t.out, "still_running") == 4);
  CHECK(injected == metric(t.out, "completed_requests") + metric(t.out, "timed_out_requests") +
                        metric(t.out, "dropped_unservable") + metric(t.out, "still_queued") +
                        metric(t.out, "still_running"));
}

TEST_CASE("CLI: what --concurrency refuses", "[cli][workload]") {
  check_refused(kModel + " --concurrency 4", "--num-requests: 0 requests and no --horizon");
  check_refused(kModel + " --concurrency 4 --rate 3", "--concurrency: closed-loop users set their own pace");
  check_refused(kModel + " --concurrency -1", "--concurrency: must be >= 0, got -1");
  check_refused(kModel + " --concurrency 2 --think-time-ms -5", "--think-time-ms: must be >= 0, got -5");
}

TEST_CASE("CLI: a workload spec's concurrency client", "[cli][workload]") {
  blis::test::TempDir dir;
  const std::string spec = dir.write("users.yaml", R"(version: "2"
seed: 5
num_requests: 50
clients:
  - id: users
    concurrency: 3
    think_time_us: 200000
    timeout: 60000000
    input_distribution: {type: constant, params: {value: 128}}
    output_distribution: {type: constant, params: {value: 64}}
)");
  const Result r = run_blis(kModel + " --workload-spec " + spec);
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "completed_requests") == 50);
  CHECK(metric(r.out, "timed_out_requests") == 0);
  check_refused(kModel + " --workload-spec " + spec + " --concurrency 2", "--concurrency: not with --workload-spec");
  const std::string rated = dir.write("rated.yaml", R"(version: "2"
num_requests: 5
clients:
  - concurrency: 3
    rate_fraction: 1
    input_distribution: {type: constant, params: {value: 128}}
    output_distribution: {type: constant, params: {value: 64}}
)");
  check_refused(kModel + " --workload-spec " + rated, "rated.yaml:5:20: clients[0].rate_fraction: a concurrency client has no rate");
  const std::string windows = dir.write("windows.yaml", R"(version: "2"
num_requests: 5
clients:
  - concurrency: 3
    lifecycle: {windows: [{start_us: 0, end_us: 1000}]}
    input_distribution: {type: constant, params: {value: 128}}
    output_distribution: {type: constant, params: {value: 64}}
)");
  check_refused(kModel + " --workload-spec " + windows, "clients[0].lifecycle: a concurrency client has no lifecycle windows");
}
