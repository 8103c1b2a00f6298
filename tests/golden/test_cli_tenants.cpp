// BLIS HEAD's tenant budgets, SLO priority overrides and per-request SLO
// targets from the command line and the policy file (docs/gateway.md
// "Tenant budgets and SLO priorities"): the figures HEAD f90a1e3a prints
// for the same runs, the flags' equivalence with the file's keys, and bad
// values refused before the run with the file's line.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <sstream>
#include <string>

using blis::test::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A critical tenant and a batch tenant, 100 requests each, over 2 instances
// of 8 batch slots: a budget of 0.1 is 1.6 slots.
const char* const kSpec = R"(version: "2"
seed: 7
aggregate_rate: 300
num_requests: 200
clients:
  - id: a
    slo_class: critical
    tenant_id: gold
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: b
    slo_class: batch
    tenant_id: bulk
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
)";

const char* const kBase = "run --model qwen/qwen3-14b --num-instances 2 --max-num-seqs 8 --profile-set head";

}  // namespace

TEST_CASE("tenant budget and SLO priority flags are in --help", "[golden][gateway]") {
  const Result r = run_blis("run --help");
  CHECK(r.out.find("--tenant-budgets") != std::string::npos);
  CHECK(r.out.find("--slo-priorities") != std::string::npos);
}

TEST_CASE("a tenant budget sheds the over-budget batch tenant while the critical tenant passes",
          "[golden][gateway]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const std::string policy = dir.write("p.yaml", "tenant_budgets:\n  gold: 0.1\n  bulk: 0.1\n");
  const std::string base = std::string(kBase) + " --workload-spec " + spec;
  const Result r = run_blis(base + " --policy-config " + policy);
  INFO(r.err);
  REQUIRE(r.status == 0);
  // HEAD's figures: both tenants are over 1.6 slots most of the time; only
  // the sheddable one is held back.
  CHECK(r.out.find("\"completed_requests\": 105,") != std::string::npos);
  CHECK(r.out.find("Rejected Requests (Admission): 95\n  Shed (batch): 95\n") != std::string::npos);
  CHECK(r.out.find("  bulk: requests=5, tokens=256\n  gold: requests=100, tokens=6653\n") != std::string::npos);
  // The flag and the TOML form are the same setting.
  const Result flag = run_blis(base + " --tenant-budgets gold=0.1,bulk=0.1");
  CHECK(flag.out == r.out);
  const std::string toml = dir.write("p.toml", "[tenant_budgets]\ngold = 0.1\nbulk = 0.1\n");
  CHECK(run_blis(base + " --policy-config " + toml).out == r.out);
  // A tenant without a budget is never held back.
  const Result unbudgeted = run_blis(base + " --tenant-budgets gold=0.1");
  CHECK(unbudgeted.out.find("\"completed_requests\": 200,") != std::string::npos);
  CHECK(unbudgeted.out.find("Shed (") == std::string::npos);
  // The decision trace names the reason.
  const Result trace = run_blis(base + " --tenant-budgets gold=0.1,bulk=0.1 --trace-level decisions --format json");
  CHECK(trace.out.find("tenant-budget-shed") != std::string::npos);
}

TEST_CASE("an SLO priority override makes batch non-sheddable: the budget and tier-shed pass it",
          "[golden][gateway]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const std::string base = std::string(kBase) + " --workload-spec " + spec;
  const std::string policy =
      dir.write("p.yaml", "admission:\n  slo_priorities:\n    batch: 0\ntenant_budgets:\n  gold: 0.1\n  bulk: 0.1\n");
  const Result r = run_blis(base + " --policy-config " + policy);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("\"completed_requests\": 200,") != std::string::npos);
  CHECK(r.out.find("Shed (batch)") == std::string::npos);
  CHECK(run_blis(base + " --tenant-budgets gold=0.1,bulk=0.1 --slo-priorities batch=0").out == r.out);
  // tier-shed with the flag alone admits what is non-negative: batch now passes.
  const Result shed = run_blis(base + " --admission-policy tier-shed");
  CHECK(shed.out.find("Rejected Requests (Admission): 100\n  Shed (batch): 100\n") != std::string::npos);
  const Result kept = run_blis(base + " --admission-policy tier-shed --slo-priorities batch=0");
  CHECK(kept.out.find("\"completed_requests\": 200,") != std::string::npos);
  CHECK(kept.out.find("Shed (batch)") == std::string::npos);
  // A file naming tier-shed protects priorities from 3 up, as HEAD: batch at 0
  // is still shed (HEAD prints the same 100).
  const std::string file = dir.write("t.yaml", "admission:\n  policy: tier-shed\n  slo_priorities:\n    batch: 0\n");
  const Result f = run_blis(base + " --policy-config " + file);
  CHECK(f.out.find("Rejected Requests (Admission): 100\n  Shed (batch): 100\n") != std::string::npos);
  // And a sheddable critical class is held back by its budget.
  const Result crit = run_blis(base + " --tenant-budgets gold=0.1 --slo-priorities critical=-1");
  CHECK(crit.out.find("  Shed (critical): ") != std::string::npos);
}

TEST_CASE("a client's slo_target_us orders the gateway's slo-deadline dispatch before its class's target",
          "[golden][gateway]") {
  const std::string both = R"(version: "2"
seed: 11
aggregate_rate: 400
num_requests: 200
clients:
  - id: urgent
    slo_class: standard
    slo_target_us: 20000
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: relaxed
    slo_class: standard
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
)";
  TempDir dir;
  const std::string with = dir.write("with.yaml", both);
  std::string text = both;
  text.erase(text.find("    slo_target_us: 20000\n"), std::string("    slo_target_us: 20000\n").size());
  const std::string without = dir.write("without.yaml", text);
  const std::string base =
      "run --model qwen/qwen3-14b --num-instances 2 --flow-control --saturation-detector concurrency "
      "--max-concurrency 2 --dispatch-order slo-deadline --slo-targets standard=500000 --profile-set head "
      "--workload-spec ";
  // HEAD's figures for both runs.
  const Result a = run_blis(base + with);
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.out.find("\"ttft_mean_ms\": 18769.883899999997,") != std::string::npos);
  const Result b = run_blis(base + without);
  CHECK(b.out.find("\"ttft_mean_ms\": 18753.047,") != std::string::npos);
  // The policy file's slo_targets stand in for the flag.
  const std::string policy = dir.write("p.yaml", "admission:\n  slo_targets:\n    standard: 500000\n");
  std::string no_flag = base + with;
  no_flag.erase(no_flag.find("--slo-targets standard=500000 "), std::string("--slo-targets standard=500000 ").size());
  CHECK(run_blis(no_flag + " --policy-config " + policy).out == a.out);
  // --trace-output writes each request's target (HEAD's slo_target_us column), for a replay to read.
  const std::string prefix = dir.str() + "/t";
  REQUIRE(run_blis(base + with + " --trace-output " + prefix).status == 0);
  const std::string csv = slurp(prefix + ".csv");
  CHECK(csv.find(",deadline_us,slo_target_us,") != std::string::npos);
  CHECK(csv.find(",urgent,") != std::string::npos);
  CHECK(csv.find(",0,20000,") != std::string::npos);
  // A Lua dispatch order gets the request's own target as order_key's second
  // argument: slo-deadline written in Lua prints the same figures, and
  // without the argument (the class's target for everyone) it does not.
  const std::string lua_base =
      "run --model qwen/qwen3-14b --num-instances 2 --flow-control --saturation-detector "
      "concurrency --max-concurrency 2 --profile-set head --workload-spec " +
      with + " --dispatch-order ";
  const std::string own = dir.write("own.lua",
                                    "kind = 'dispatch-order'\n"
                                    "function order_key(priority, slo_target_us)\n"
                                    "  local t = slo_target_us > 0 and slo_target_us or 500000\n"
                                    "  return tonumber(route.now_us) + t\nend\n");
  const std::string cls = dir.write("cls.lua",
                                    "kind = 'dispatch-order'\n"
                                    "function order_key(priority)\n"
                                    "  return tonumber(route.now_us) + 500000\nend\n");
  const Result by_own = run_blis(lua_base + own);
  INFO(by_own.err);
  CHECK(by_own.out == a.out);
  CHECK(run_blis(lua_base + cls).out != a.out);
  // A negative target is refused with its place.
  text = both;
  text.replace(text.find("20000"), 5, "-5");
  const Result bad = run_blis(base + dir.write("bad.yaml", text));
  CHECK(bad.status == 2);
  CHECK(bad.err.find("slo_target_us") != std::string::npos);
}

TEST_CASE("bad tenant budgets and SLO priorities are one error line with the file's line, exit 2",
          "[golden][gateway]") {
  TempDir dir;
  struct Case {
    const char* name;
    const char* text;
    const char* message;
  };
  const std::string base = "run --model qwen/qwen3-14b --rate 10 --num-requests 20 --policy-config ";
  const Case cases[] = {
      {"a.yaml", "admission:\n  slo_priorities:\n    batch: 101\n",
       "a.yaml:3: slo_priorities override for \"batch\": value 101 out of range [-100, 100]"},
      {"b.yaml", "tenant_budgets:\n  acme: 1.5\n", "b.yaml:2: tenant_budgets[\"acme\"] must be in [0, 1], got 1.5"},
      {"c.yaml", "admission:\n  slo_priorities:\n    gold: 1\n",
       "c.yaml:3: admission.slo_priorities: unknown SLO class \"gold\""},
      {"d.yaml", "admission:\n  slo_targets:\n    critical: 0\n",
       "d.yaml:3: admission.slo_targets[\"critical\"] must be a positive"},
      {"e.yaml", "tenant_budget:\n  acme: 0.5\n", "e.yaml:1: unknown key \"tenant_budget\""},
      {"f.toml", "[admission.slo_priorities]\nbatch = 0.5\n",
       "f.toml:2:9: admission.slo_priorities.batch must be an integer"}};
  for (const Case& c : cases) {
    const Result r = run_blis(base + dir.write(c.name, c.text));
    INFO(c.name << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(c.message) != std::string::npos);
  }
  const std::string flags = "run --model qwen/qwen3-14b --rate 10 --num-requests 20 ";
  for (const char* args : {"--tenant-budgets acme=2", "--tenant-budgets =0.5", "--tenant-budgets acme=0.1,acme=0.2",
                           "--slo-priorities batch=x", "--slo-priorities premium=1", "--slo-priorities batch=-101"}) {
    const Result r = run_blis(flags + args);
    INFO(args << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(std::string(args).substr(0, 16)) != std::string::npos);
  }
}
