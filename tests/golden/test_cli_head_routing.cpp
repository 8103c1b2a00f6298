// The routing and engine settings of the reference's later snapshot from the
// command line (spec head §7.1-§7.4).
#include "catch.hpp"
#include "cli.hpp"

#include <string>

namespace {

const std::string kShared =
    "run --model qwen/qwen3-14b --num-instances 3 --routing-policy weighted --prefix-tokens 512 "
    "--num-requests 60 --rate 20 --trace-level decisions --summarize-trace ";

}  // namespace

TEST_CASE("cache signal delay: live caches draw a shared prefix to one instance", "[golden][routing]") {
  // Live (0): after the first request, only the instance holding the prefix
  // scores 1. A delay longer than the run: every query sees the caches as
  // they were at the start (empty), so every decision is a three-way tie.
  Result live = run_blis(kShared + "--routing-scorers precise-prefix-cache:1 --cache-signal-delay 0");
  REQUIRE(live.status == 0);
  CHECK(live.out.find("Unique Targets: 1\n") != std::string::npos);
  Result stale = run_blis(kShared + "--routing-scorers precise-prefix-cache:1 --cache-signal-delay 1h");
  REQUIRE(stale.status == 0);
  CHECK(stale.out.find("Unique Targets: 3\n") != std::string::npos);
}

TEST_CASE("no-hit-lru and the load scorers run from the command line", "[golden][routing]") {
  for (const char* scorers : {"no-hit-lru:1", "active-requests:1,running-requests:1", "load-aware:1,vllm-dp:2",
                              "precise-prefix-cache:2,queue-depth:1,kv-utilization:1"}) {
    Result r = run_blis(kShared + "--routing-scorers " + scorers);
    INFO(scorers << "\n" << r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("Total Decisions: 60") != std::string::npos);
  }
}

TEST_CASE("head settings refuse values out of range", "[golden]") {
  check_refused("run --model qwen/qwen3-14b --gpu-memory-utilization 0", "must be a finite value in (0, 1], got 0");
  check_refused("run --model qwen/qwen3-14b --gpu-memory-utilization 1.5", "must be a finite value in (0, 1]");
  check_refused("run --model qwen/qwen3-14b --preemption-policy lifo", "valid: fcfs, priority");
  check_refused("run --model qwen/qwen3-14b --cache-signal-delay -1", "--cache-signal-delay");
}

TEST_CASE("gpu memory utilization replaces the table's KV blocks", "[golden]") {
  // The defaults table says 17600 for Qwen3-14B on one H100; a given share
  // computes them: 15909 at 0.9, 12632 at 0.8.
  Result table = run_blis("run --model qwen/qwen3-14b --dump-config");
  CHECK(table.out.find("total_kv_blocks = 17600") != std::string::npos);
  Result share = run_blis("run --model qwen/qwen3-14b --gpu-memory-utilization 0.8 --dump-config");
  CHECK(share.out.find("total_kv_blocks = 12632") != std::string::npos);
  Result given = run_blis("run --model qwen/qwen3-14b --gpu-memory-utilization 0.8 --total-kv-blocks 5000 --dump-config");
  CHECK(given.out.find("total_kv_blocks = 5000") != std::string::npos);
}
