// `blis run --workload-spec FILE` (spec workload §1.1-§1.2, cli §3.7): the
// file wins over --workload, its seed drives generation unless --seed is
// given, its request count and horizon apply unless the flags are given.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <iterator>
#include <string>

namespace {

const std::string kExampleA = "examples/workload-spec/prefix-affinity-demo.yaml";

Result run_in_source(const std::string& args) { return run_blis(args, BLIS_TEST_SOURCE_DIR); }

// Example A with some of its top-level lines replaced.
std::string example_a_with(const std::string& from, const std::string& to) {
  std::ifstream f(std::string(BLIS_TEST_SOURCE_DIR) + "/" + kExampleA);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("workload spec: example A runs, deterministically, with the spec's seed", "[cli][workload]") {
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + kExampleA;
  Result a = run_in_source(base + " --log info");
  REQUIRE(a.status == 0);
  CHECK(metric(a.out, "injected_requests") == 200);
  CHECK(metric(a.out, "total_input_tokens") == 68467);  // spec workload §5.14
  CHECK(metric(a.out, "total_output_tokens") == 30706);
  CHECK(a.err.find("Using workload-spec seed 42 (CLI --seed not specified)") != std::string::npos);
  CHECK(run_in_source(base).out == a.out);
  // The spec's seed is 42, the default of --seed: giving it changes nothing.
  CHECK(run_in_source(base + " --seed 42").out == a.out);
  // Another seed draws another workload.
  Result b = run_in_source(base + " --seed 7 --log info");
  REQUIRE(b.status == 0);
  CHECK(b.out != a.out);
  CHECK(b.err.find("CLI --seed 7 overrides workload-spec seed 42") != std::string::npos);
}

TEST_CASE("workload spec: --seed replaces the file's seed for generation", "[cli][workload]") {
  // Round-robin routing draws nothing, so only the workload seed matters:
  // the file with seed 42 run with --seed 7 is the file with seed 7.
  blis::test::TempDir dir("blis-cli-spec");
  const std::string seven = dir.write("seven.yaml", example_a_with("seed: 42", "seed: 7"));
  Result from_file = run_blis("run --model qwen/qwen3-14b --routing-policy round-robin --num-instances 2 "
                              "--workload-spec " + seven);
  Result from_flag = run_in_source("run --model qwen/qwen3-14b --routing-policy round-robin --num-instances 2 "
                                   "--workload-spec " + kExampleA + " --seed 7");
  REQUIRE(from_file.status == 0);
  CHECK(from_file.out == from_flag.out);
  // Without a seed in the file, generation uses seed 0.
  const std::string none = dir.write("none.yaml", example_a_with("seed: 42\n", ""));
  Result zero = run_blis("run --model qwen/qwen3-14b --workload-spec " + none + " --log info");
  REQUIRE(zero.status == 0);
  CHECK(zero.err.find("Using workload-spec seed 0 (CLI --seed not specified)") != std::string::npos);
  CHECK(zero.out == run_blis("run --model qwen/qwen3-14b --workload-spec " + none + " --seed 0").out);
}

TEST_CASE("workload spec: precedence over --workload and the distribution flags", "[cli][workload]") {
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + kExampleA;
  const std::string plain = run_in_source(base).out;
  CHECK(run_in_source(base + " --workload chatbot").out == plain);
  CHECK(run_in_source(base + " --rate 3 --prefix-tokens 100 --prompt-tokens 900").out == plain);
  // An explicit --num-requests replaces the spec's count.
  Result fifty = run_in_source(base + " --num-requests 50");
  REQUIRE(fifty.status == 0);
  CHECK(metric(fifty.out, "injected_requests") == 50);
}

TEST_CASE("workload spec: its horizon bounds the run unless --horizon is given", "[cli][workload]") {
  blis::test::TempDir dir("blis-cli-spec");
  // 500 req/s for 1 s: about 500 arrivals, no request count.
  const std::string timed =
      dir.write("timed.yaml", example_a_with("num_requests: 200", "horizon: 1000000"));
  Result r = run_blis("run --model qwen/qwen3-14b --workload-spec " + timed);
  REQUIRE(r.status == 0);
  const double injected = metric(r.out, "injected_requests");
  CHECK(injected > 400);
  CHECK(injected < 600);
  Result longer = run_blis("run --model qwen/qwen3-14b --workload-spec " + timed + " --horizon 1500000");
  REQUIRE(longer.status == 0);
  CHECK(metric(longer.out, "injected_requests") > injected);
  // Neither a count nor a horizon: refused.
  const std::string unbounded = dir.write("unbounded.yaml", example_a_with("num_requests: 200", ""));
  Result bad = run_blis("run --model qwen/qwen3-14b --workload-spec " + unbounded);
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("neither num_requests nor horizon") != std::string::npos);
  CHECK(run_blis("run --model qwen/qwen3-14b --workload-spec " + unbounded + " --num-requests 20").status == 0);
}

TEST_CASE("workload spec: a bad file is one line naming file, line and column", "[cli][workload]") {
  blis::test::TempDir dir("blis-cli-spec");
  const std::string typo = dir.write("typo.yaml", example_a_with("    tenant_id: tenant-B", "    tenant: tenant-B"));
  Result r = run_blis("run --model qwen/qwen3-14b --workload-spec " + typo);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(typo + ":29:5: unknown key \"clients[1].tenant\"") != std::string::npos);
  const std::string invalid = dir.write("invalid.yaml", example_a_with("rate_fraction: 0.2", "rate_fraction: 0"));
  r = run_blis("run --model qwen/qwen3-14b --workload-spec " + invalid);
  CHECK(r.status == 2);
  CHECK(r.err.find(invalid + ":31:20: clients[1].rate_fraction: must be a finite number > 0, got 0") !=
        std::string::npos);
  r = run_in_source("run --model qwen/qwen3-14b --workload-spec " + kExampleA +
                    " --workload-trace examples/trace-replay/trace.csv");
  CHECK(r.status == 2);
  CHECK(r.err.find("give --workload-spec or --workload-trace, not both") != std::string::npos);
}

TEST_CASE("workload spec: a scenario names the file relative to itself", "[cli][workload][scenario]") {
  blis::test::TempDir dir("blis-cli-spec");
  dir.write("spec.yaml", example_a_with("seed: 42", "seed: 42"));
  const std::string scenario =
      dir.write("run.toml", "model = \"qwen/qwen3-14b\"\n[workload]\nworkload-spec = \"spec.yaml\"\n");
  Result r = run_blis("run " + scenario);
  REQUIRE(r.status == 0);
  CHECK(r.out == run_in_source("run --model qwen/qwen3-14b --workload-spec " + kExampleA).out);
}

TEST_CASE("workload: --arrival-process draws what a spec client with that arrival draws", "[cli][workload]") {
  // The distribution workload is a one-client spec (spec workload §2); with
  // --arrival-process it is that spec with another `arrival:`.
  blis::test::TempDir dir("blis-cli-arrival");
  auto spec = [&](const std::string& arrival) {
    return dir.write("a.yaml",
                     "version: \"2\"\nseed: 42\ncategory: language\naggregate_rate: 20\nnum_requests: 300\n"
                     "clients:\n  - id: distribution\n    rate_fraction: 1.0\n    arrival: " + arrival + "\n"
                     "    input_distribution:\n      type: gaussian\n"
                     "      params: {mean: 512, std_dev: 256, min: 2, max: 7000}\n"
                     "    output_distribution:\n      type: gaussian\n"
                     "      params: {mean: 512, std_dev: 256, min: 2, max: 7000}\n");
  };
  const std::string base = "run --model qwen/qwen3-14b --num-instances 2 ";
  const std::string flags = base + "--rate 20 --num-requests 300 ";
  Result constant = run_blis(flags);
  REQUIRE(constant.status == 0);
  CHECK(run_blis(flags + "--arrival-process constant").out == constant.out);
  for (const auto& [args, arrival] : std::vector<std::pair<std::string, std::string>>{
           {"--arrival-process poisson", "{process: poisson}"},
           {"--arrival-process gamma --arrival-cv 3", "{process: gamma, cv: 3}"},
           {"--arrival-process weibull --arrival-cv 0.5", "{process: weibull, cv: 0.5}"}}) {
    INFO(args);
    Result from_flags = run_blis(flags + args);
    Result from_spec = run_blis(base + "--workload-spec " + spec(arrival));
    REQUIRE(from_flags.status == 0);
    CHECK(from_flags.out == from_spec.out);
    CHECK(from_flags.out != constant.out);  // bursts queue: other latencies
  }
  // A shape for a process that has none is reported, not silently dropped.
  Result ignored = run_blis(flags + "--arrival-process poisson --arrival-cv 2");
  CHECK(ignored.status == 0);
  CHECK(ignored.err.find("--arrival-cv is ignored: poisson arrivals have no shape parameter") != std::string::npos);
  check_refused(flags + "--arrival-process weibull --arrival-cv 20",
                "--arrival-cv: must lie in [0.01, 10.4] for weibull arrivals, got 20");
  check_refused(flags + "--arrival-process bursty", "--arrival-process");
  check_refused(flags + "--arrival-cv 0", "--arrival-cv: must be a finite value > 0, got 0");
}
