// Heterogeneous pools (RunConfig::pool_specs, docs/scenarios.md "Pools").
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <string>

using blis::test::TempDir;

namespace {

const std::string kBase = "run --model qwen/qwen3-14b --rate 40 --num-requests 400";

std::string before_pools(const std::string& out) { return out.substr(0, out.find("=== Pools ===")); }

}  // namespace

TEST_CASE("identical pools simulate exactly what --num-instances does, and print GPU-hours and cost",
          "[golden][pools]") {
  const Result one = run_blis(kBase + " --num-instances 4");
  const Result two = run_blis(kBase + " --pool 'name=a count=1 cost_per_hour=2' --pool 'name=b count=3'");
  REQUIRE(two.status == 0);
  CHECK(before_pools(two.out) == one.out);
  CHECK(one.out.find("=== Pools ===") == std::string::npos);
  const std::string pools = two.out.substr(two.out.find("=== Pools ==="));
  CHECK(pools.find("\na: 1 instance(s) of qwen/qwen3-14b on H100 (TP 1), latency model roofline; ") !=
        std::string::npos);
  CHECK(pools.find("\nb: 3 instance(s) of qwen/qwen3-14b on H100 (TP 1)") != std::string::npos);
  CHECK(pools.find("\nTotal: 4 instance(s) over ") != std::string::npos);
}

TEST_CASE("pools with their own hardware and TP run differently, from flags, TOML and Lua alike",
          "[golden][pools]") {
  TempDir dir;
  const std::string csv = dir.str() + "/p.csv";
  const Result flags = run_blis(kBase + " --pool 'name=h100 count=2 hardware=H100 cost_per_hour=4.5'" +
                                " --pool 'name=a100 count=2 hardware=A100-80 tp=2 cost_per_hour=2.2'" +
                                " --timeseries " + csv + " --timeseries-interval 5s");
  REQUIRE(flags.status == 0);
  CHECK(flags.out.find("a100: 2 instance(s) of qwen/qwen3-14b on A100-80 (TP 2)") != std::string::npos);
  // The GPU-hours: 2 instances x TP 2 over the run, twice those of 2 x TP 1.
  CHECK(flags.out.find("=== Simulation Metrics ===") != std::string::npos);
  const Result same = run_blis(kBase + " --num-instances 4");
  CHECK(before_pools(flags.out) != same.out);
  std::ifstream f(csv);
  std::string header, row1, row2;
  std::getline(f, header);
  std::getline(f, row1);
  std::getline(f, row2);
  CHECK(row1.rfind("5.000000,h100,2,", 0) == 0);
  CHECK(row2.rfind("5.000000,a100,2,", 0) == 0);

  const std::string toml = dir.write("p.toml", R"(model = "qwen/qwen3-14b"
rate = 40
num-requests = 400

[[pools]]
name = "h100"
count = 2
hardware = "H100"
cost_per_hour = 4.5

[[pools]]
name = "a100"
count = 2
hardware = "A100-80"
tp = 2
cost_per_hour = 2.2
)");
  CHECK(run_blis("run " + toml).out == flags.out);
  const std::string lua = dir.write("p.lua", R"(return {
  model = "qwen/qwen3-14b", rate = 40, num_requests = 400,
  pools = {
    { name = "h100", count = 2, hardware = "H100", cost_per_hour = 4.5 },
    "name=a100 count=2 hardware=A100-80 tp=2 cost_per_hour=2.2",
  },
})");
  CHECK(run_blis("run " + lua).out == flags.out);
}

TEST_CASE("bad pools are refused, naming the pool", "[golden][pools]") {
  check_refused(kBase + " --pool 'count=2'", "needs name=NAME");
  check_refused(kBase + " --pool 'name=a'", "needs count=N");
  check_refused(kBase + " --pool 'name=a count=0'", "count=0 is not an instance count");
  check_refused(kBase + " --pool 'name=a count=1' --pool 'name=a count=2'", "taken by another pool");
  check_refused(kBase + " --pool 'name=a count=1 rate=4'", "'rate' is not a pool key");
  check_refused(kBase + " --pool 'name=a count=1 cost_per_hour=-1'", "cost_per_hour=-1");
  check_refused(kBase + " --pool 'name=a count=1 hardware=Z80'", "Z80");
  check_refused(kBase + " --pool 'name=a count=1 block_size=32'", "pools share one block size");
}

TEST_CASE("a scorer reads each instance's pool and TP from the snapshot (ABI 1.3)", "[golden][pools][lua]") {
  TempDir dir;
  const std::string script = dir.write("prefer_tp2.lua", R"(function score(n)
  for i = 0, n - 1 do
    scores[i] = (instances[i].pool == 1 and instances[i].tp == 2) and 1 or 0
  end
end
)");
  const Result r = run_blis(kBase + " --pool 'name=small count=2' --pool 'name=big count=2 hardware=A100-80 tp=2'" +
                            " --routing-policy weighted --routing-scorers " + script + ":1" +
                            " --trace-level decisions --summarize-trace");
  INFO(r.err);
  REQUIRE(r.status == 0);
  // Every request goes to the TP-2 pool: instances 2 and 3 (ties broken at random).
  CHECK(r.out.find("Target Distribution:\n  instance_2: ") != std::string::npos);
  CHECK(r.out.find("instance_0: ") == std::string::npos);
  CHECK(r.out.find("instance_1: ") == std::string::npos);
  CHECK(r.out.find("small: 2 instance(s) of qwen/qwen3-14b on H100 (TP 1), latency model roofline; 0 completed;") !=
        std::string::npos);
}

TEST_CASE("the table and JSON formats count the instances of every pool", "[golden][pools]") {
  const std::string pools = " --pool 'name=a count=1' --pool 'name=b count=2 tp=2 hardware=A100-80'";
  const Result t = run_blis(kBase + pools + " --format table");
  CHECK(t.out.rfind("cluster      3 instance(s) in 2 pools (below)\n", 0) == 0);
  CHECK(t.out.find("\n=== Pools ===\na: 1 instance(s)") != std::string::npos);
  const Result j = run_blis(kBase + pools + " --format json");
  CHECK(j.out.find("\"num_instances\": 3,") != std::string::npos);
}

TEST_CASE("pools from the policy file run as --pool does; pools given elsewhere replace them", "[golden][pools]") {
  TempDir dir;
  const std::string flags = " --pool 'name=h100 count=2 hardware=H100 cost_per_hour=4.5'"
                            " --pool 'name=a100 count=2 hardware=A100-80 tp=2 cost_per_hour=2.2'";
  const Result want = run_blis(kBase + flags);
  REQUIRE(want.status == 0);
  const std::string toml = dir.write("policy.toml", R"([routing]
policy = "least-loaded"

[[pools]]
name = "h100"
count = 2
hardware = "H100"
cost_per_hour = 4.5

[[pools]]
name = "a100"
count = 2
hardware = "A100-80"
tp = 2
cost_per_hour = 2.2
)");
  const std::string yaml = dir.write("policy.yaml", R"(pools:
  - {name: h100, count: 2, hardware: H100, cost_per_hour: 4.5}
  - name: a100
    count: 2
    hardware: A100-80
    tp: 2
    cost_per_hour: 2.2
)");
  const Result from_yaml = run_blis(kBase + " --policy-config " + yaml);
  REQUIRE(from_yaml.status == 0);
  CHECK(from_yaml.out == want.out);
  const Result from_toml = run_blis(kBase + " --routing-policy least-loaded --policy-config " + toml);
  CHECK(from_toml.out == run_blis(kBase + flags + " --routing-policy least-loaded").out);
  // A --pool replaces the file's pools, all of them (as --routing-scorers replaces its scorers).
  const Result over = run_blis(kBase + " --policy-config " + yaml + " --pool 'name=x count=3'");
  REQUIRE(over.status == 0);
  CHECK(over.out.find("\nx: 3 instance(s) of qwen/qwen3-14b") != std::string::npos);
  CHECK(over.out.find("a100:") == std::string::npos);
  // --dump-config reproduces the run.
  const Result dumped = run_blis(kBase + " --policy-config " + yaml + " --dump-config");
  REQUIRE(dumped.status == 0);
  CHECK(dumped.out.find("\n[[pools]]\nname = \"a100\"\n") != std::string::npos);
  CHECK(run_blis("run " + dir.write("dumped.toml", dumped.out)).out == want.out);
  // Bad values name the file and the pool's line, also those checked at resolution.
  check_refused(kBase + " --policy-config " +
                    dir.write("bad.yaml", "pools:\n  - {name: a, count: 1}\n  - {name: b, count: 1, max: lots}\n"),
                dir.str() + "/bad.yaml:3: pool b: max=lots must be a number");
  check_refused(kBase + " --policy-config " +
                    dir.write("mr.yaml", "pools:\n  - {name: a, count: 1}\n  - {name: b, count: 1, max-num-running-reqs: 0}\n"),
                dir.str() + "/mr.yaml:3");
}
