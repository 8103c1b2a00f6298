// trained-physics end to end: where its alpha terms land in a run (spec
// head.md §1.4), its coefficients, and the settings only it reads.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

using blis::test::TempDir;

TEST_CASE("trained-physics run: alphas land in TTFT, ITL and E2E (head.md §1.4)", "[latency]") {
  TempDir dir("blis-physics-run");
  const std::string trace =
      dir.write("one.csv", "arrival_time_us,input_tokens,output_tokens\n0,512,2\n");
  const Result r = run_blis("run --model qwen/qwen3-14b --latency-model trained-physics --workload-trace " + trace);
  REQUIRE(r.status == 0);
  // TTFT = queueing 15563 + prefill step 14291 (§1.5 a) + per-token 45.
  CHECK(metric(r.out, "ttft_mean_ms") == 29.899);
  // The decode step (I = PI = 512) takes 12210 µs; its ITL gets the 45.
  CHECK(metric(r.out, "itl_mean_ms") == 12.255);
  // E2E = 15563 + 14291 + 12210 + two tokens' 45 + the post-decode 777 once.
  CHECK(metric(r.out, "e2e_mean_ms") == 42.931);
}

TEST_CASE("trained-physics run: given coefficients replace the bundled ones", "[latency]") {
  TempDir dir("blis-physics-coeffs");
  const std::string trace =
      dir.write("one.csv", "arrival_time_us,input_tokens,output_tokens\n0,512,1\n");
  const Result r = run_blis("run --model qwen/qwen3-14b --latency-model trained-physics --workload-trace " +
                            trace + " --alpha-coeffs 1000,0,0 --beta-coeffs 0,0,0,0,0,0,500");
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "ttft_mean_ms") == 1.5);  // 1000 queueing + a 500 µs step
}

TEST_CASE("trained-physics run: dp and the MoE comm backend, refused by models that do not read them", "[latency]") {
  const std::string mixtral = "run --model mistralai/mixtral-8x7b-v0.1 --hardware H100 --tp 2 --num-requests 3 ";
  const Result roofline = run_blis(mixtral + "--dp 2");
  CHECK(roofline.status == 2);
  CHECK_THAT(roofline.err, Catch::Contains("--dp") && Catch::Contains("roofline latency model does not read 'dp'"));
  const Result backend = run_blis(mixtral + "--moe-comm-backend pplx");
  CHECK(backend.status == 2);
  CHECK_THAT(backend.err, Catch::Contains("does not read 'moe_comm_backend'"));

  const Result a = run_blis(mixtral + "--latency-model trained-physics --dp 2");
  const Result b = run_blis(mixtral + "--latency-model trained-physics --dp 2 --moe-comm-backend pplx");
  const Result one = run_blis(mixtral + "--latency-model trained-physics");
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  REQUIRE(one.status == 0);
  // Data parallelism halves the per-rank work; all-to-all moves k = 2 routed
  // copies per token instead of one hidden state, so it is slower.
  CHECK(metric(a.out, "e2e_mean_ms") < metric(one.out, "e2e_mean_ms"));
  CHECK(metric(b.out, "e2e_mean_ms") > metric(a.out, "e2e_mean_ms"));
  CHECK(run_blis("run --model qwen/qwen3-14b --latency-model trained-physics --dp 2 --num-requests 3").status != 0);
}
