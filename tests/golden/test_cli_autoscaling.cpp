// Instance lifecycle and the autoscaler from the command line and scenario
// files (docs/autoscaling.md, docs/cli.md "Instance lifecycle and autoscaling").
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

using blis::test::TempDir;

namespace {

const std::string kBase = "run --model qwen/qwen3-14b --num-instances 2 --rate 30 --num-requests 600";

}  // namespace

TEST_CASE("add and remove events print the pools block with GPU-hours", "[golden][events][fleet]") {
  const Result r = run_blis(kBase + " --lifecycle 'provisioning_delay=5s loading_delay=2s'" +
                            " --event 'at=3s action=add count=2' --event 'at=10s action=remove count=1'" +
                            " --format table");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("cluster      2 instance(s) of qwen/qwen3-14b") != std::string::npos);
  CHECK(r.out.find("3.000000 s: at=3s action=add count=2 (2 instance(s) starting)") != std::string::npos);
  CHECK(r.out.find("10.000000 s: at=10s action=remove count=1 (1 instance(s) leaving; 0 request(s) re-routed)") !=
        std::string::npos);
  CHECK(r.out.find("=== Pools ===\ndefault: 2 instance(s) at start, 3 at end, peak 4 (2 added, 1 removed) of "
                   "qwen/qwen3-14b on H100 (TP 1)") != std::string::npos);
  CHECK(r.out.find("600 completed") != std::string::npos);
  CHECK(r.out.find("Total: 2 instance(s) at start, 3 at end, over ") != std::string::npos);
  // Deterministic.
  CHECK(run_blis(kBase + " --lifecycle 'provisioning_delay=5s loading_delay=2s'" +
                 " --event 'at=3s action=add count=2' --event 'at=10s action=remove count=1' --format table")
            .out == r.out);
}

TEST_CASE("the autoscaler scales a pool from a scenario file and reports its actions", "[golden][fleet]") {
  TempDir dir;
  const std::string toml = dir.write("as.toml", R"(model = "qwen/qwen3-14b"
autoscaler = "interval=10s"

[workload]
rate = 60
num-requests = 3000

[[pools]]
name = "h100"
count = 1
cost_per_hour = 4
max = 4
provisioning_delay = "20s"
)");
  const Result r = run_blis("run " + toml + " --format table");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("=== Autoscaler ===\n") != std::string::npos);
  CHECK(r.out.find(" s: h100 +") != std::string::npos);
  CHECK(r.out.find("h100: 1 instance(s) at start, ") != std::string::npos);
  CHECK(r.out.find("3000 completed") != std::string::npos);
}

TEST_CASE("bad lifecycle and autoscaler settings are refused before the run", "[golden][fleet]") {
  check_refused(kBase + " --autoscaler 'interval=0s'", "needs interval=DURATION > 0");
  check_refused(kBase + " --autoscaler 'interval=30s speed=2'", "unknown key 'speed'");
  check_refused(kBase + " --autoscaler 'interval=30s scale_down_boundary=0.9'",
                "scale_down_boundary 0.9 must be below scale_up_threshold 0.8");
  check_refused(kBase + " --autoscaler 'interval=30s kv_cache_threshold=1.5'", "kv_cache_threshold=1.5 must be");
  check_refused(kBase + " --lifecycle 'min=3 max=2'", "min 3 is above max 2");
  check_refused(kBase + " --lifecycle 'loading_delay=soon'", "loading_delay=soon is not a duration");
  check_refused(kBase + " --pool 'name=a count=1 max=3'", "lifecycle keys (max=3) need add events or --autoscaler");
  check_refused(kBase + " --pool 'name=a count=1' --pool 'name=b count=1' --event 'at=1s action=add'",
                "the cluster has 2 pools; name one with pool=NAME");
  check_refused(kBase + " --event 'at=1s action=add pool=gpu'", "no pool 'gpu'; pools are default");
  check_refused(kBase + " --timeout 10 --event 'at=1s action=remove drain=redirect'",
                "drain=redirect or drain=immediate together with request deadlines");
}

TEST_CASE("the lifecycle flags are in --help", "[golden][fleet]") {
  const Result help = run_blis("run --help");
  CHECK(help.out.find("--lifecycle") != std::string::npos);
  CHECK(help.out.find("--autoscaler") != std::string::npos);
}

TEST_CASE("a policy file's autoscaler section runs the autoscaler; the flag wins over it", "[golden][fleet]") {
  TempDir dir;
  const std::string yaml = dir.write("p.yaml", "autoscaler:\n  interval_us: 10000000\n");
  const std::string base = "run --model qwen/qwen3-14b --num-instances 1 --rate 60 --num-requests 3000 "
                           "--lifecycle 'max=4 provisioning_delay=20s' --format table --policy-config " + yaml;
  const Result r = run_blis(base);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("=== Autoscaler ===\n10.000000 s: default +") != std::string::npos);
  const Result flag = run_blis(base + " --autoscaler 'interval=20s'");
  REQUIRE(flag.status == 0);
  CHECK(flag.out.find("=== Autoscaler ===\n20.000000 s: default +") != std::string::npos);
}
