// Gateway flow control from the command line (docs/gateway.md): the flags in
// --help, HEAD's anomaly lines (the figures HEAD f90a1e3a prints for this
// run), and bad settings refused before the run.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

using blis::test::TempDir;

namespace {

const char* const kSpec = R"(version: "2"
seed: 7
aggregate_rate: 200
num_requests: 200
clients:
  - id: a
    slo_class: critical
    tenant_id: t1
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: b
    slo_class: sheddable
    tenant_id: t2
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
)";

}  // namespace

TEST_CASE("gateway flags are in --help", "[golden][gateway]") {
  const Result r = run_blis("run --help");
  for (const char* flag : {"--flow-control", "--dispatch-order", "--slo-targets", "--dispatch-tick-interval",
                           "--max-gateway-queue-depth", "--per-band-capacity", "--fairness-policy",
                           "--usage-limit-threshold", "--queue-shedding", "--in-flight-eviction", "--request-ttl", "--saturation-detector",
                           "--max-concurrency", "--queue-depth-threshold", "--kv-cache-util-threshold"})
    CHECK(r.out.find(flag) != std::string::npos);
}

TEST_CASE("a gated gateway prints HEAD's counts: rejected at a full queue, expired past the TTL",
          "[golden][gateway]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const std::string cmd = "run --model qwen/qwen3-14b --workload-spec " + spec +
                          " --num-instances 2 --flow-control --saturation-detector concurrency --max-concurrency 4 "
                          "--dispatch-order priority --max-gateway-queue-depth 30 --request-ttl 500000 "
                          "--profile-set head";
  const Result r = run_blis(cmd);
  INFO(r.err);
  REQUIRE(r.status == 0);
  // 200 arrivals: 23 reached an instance, 126 were refused, 51 expired.
  CHECK(r.out.find("\"injected_requests\": 23,") != std::string::npos);
  CHECK(r.out.find("Rejected Requests (Admission): 0\n  Shed (critical): 20\n  Shed (sheddable): 31\n") !=
        std::string::npos);
  CHECK(r.out.find("Length-Capped Requests: 0\nGateway Queue Rejected: 126\nGateway Expired (TTL): 51\n") !=
        std::string::npos);
  // The same counts in JSON.
  const Result j = run_blis(cmd + " --format json");
  REQUIRE(j.status == 0);
  CHECK(j.out.find("\"gateway\": {\"still_queued\": 0, \"shed\": 0, \"rejected\": 126, \"evicted\": 0, \"expired\": 51}") !=
        std::string::npos);
  // Without --flow-control none of it.
  const Result plain = run_blis("run --model qwen/qwen3-14b --workload-spec " + spec + " --num-instances 2");
  CHECK(plain.out.find("Gateway") == std::string::npos);
}

TEST_CASE(
    "with P/D pools, in-flight eviction takes back requests that run whole on one instance, as HEAD does",
    "[golden][gateway][pd]") {
  TempDir dir;
  const std::string spec = dir.write(
      "w.yaml",
      "version: \"2\"\nseed: 751\naggregate_rate: 1000\nnum_requests: 100\nclients:\n"
      "  - id: c0\n    rate_fraction: 0.5\n    slo_class: standard\n    arrival: {process: poisson}\n"
      "    input_distribution: {type: gaussian, params: {mean: 1024, std_dev: 256, min: 8, max: 4096}}\n"
      "    output_distribution: {type: exponential, params: {mean: 64}}\n"
      "  - id: c1\n    rate_fraction: 0.5\n    slo_class: sheddable\n    arrival: {process: poisson}\n"
      "    input_distribution: {type: gaussian, params: {mean: 1024, std_dev: 256, min: 8, max: 4096}}\n"
      "    output_distribution: {type: exponential, params: {mean: 64}}\n");
  const Result r = run_blis(
      "run --model qwen/qwen3-14b --workload-spec " + spec +
      " --num-instances 2 --prefill-instances 1 --decode-instances 1 --pd-decider never --seed 87 "
      "--admission-latency 2000 --routing-latency 1000 --flow-control --saturation-detector concurrency "
      "--max-concurrency 32 --dispatch-order priority --fairness-policy round-robin "
      "--max-gateway-queue-depth 3 "
      "--queue-shedding --per-band-capacity 10 --usage-limit-threshold 0.9 --dispatch-tick-interval 5000 "
      "--in-flight-eviction --profile-set head");
  INFO(r.err);
  REQUIRE(r.status == 0);
  // HEAD's figures for this command (blis evicted none from P/D pools before).
  CHECK(r.out.find("\"completed_requests\": 65,") != std::string::npos);
  CHECK(r.out.find("  Shed (sheddable): 21\n") != std::string::npos);
  CHECK(r.out.find("Gateway Queue Shed: 10\nGateway Queue Rejected: 14\nGateway Evicted (in-flight): 11\n") !=
        std::string::npos);
}

TEST_CASE("bad gateway settings are refused before the run, naming the flag", "[golden][gateway]") {
  const std::string base = "run --model qwen/qwen3-14b --rate 10 --num-requests 20 --flow-control";
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : {Case{" --slo-targets premium=1000 --dispatch-order slo-deadline",
                             "--slo-targets: unknown SLO class 'premium'"},
                        Case{" --slo-targets critical=-5", "--slo-targets: the target of 'critical' must be a positive"},
                        Case{" --dispatch-order lifo", "unknown dispatch order 'lifo'"},
                        Case{" --request-ttl -1", "--request-ttl"},
                        Case{" --usage-limit-threshold 0", "--usage-limit-threshold"},
                        Case{" --max-concurrency 0", "--max-concurrency"},
                        Case{" --saturation-detector sometimes", "unknown saturation detector 'sometimes'"}}) {
    const Result r = run_blis(base + c.args);
    INFO(c.args << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}

TEST_CASE("tier-shed and gaie-legacy are admission plugins", "[golden][gateway]") {
  const Result list = run_blis("plugins list");
  CHECK(list.out.find("tier-shed") != std::string::npos);
  CHECK(list.out.find("gaie-legacy") != std::string::npos);
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const Result r = run_blis("run --model qwen/qwen3-14b --workload-spec " + spec +
                            " --num-instances 1 --admission-policy tier-shed --profile-set head");
  REQUIRE(r.status == 0);
  // Under load the sheddable tenant is shed, the critical one never.
  CHECK(r.out.find("  Shed (sheddable): ") != std::string::npos);
  CHECK(r.out.find("  Shed (critical): ") == std::string::npos);
}

TEST_CASE("the policy file's tier-shed and gaie-legacy keys configure those policies, as HEAD reads them",
          "[golden][gateway]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const std::string tier = dir.write("tier.yaml", "admission:\n  policy: tier-shed\n  tier_shed_threshold: 3\n"
                                                  "  tier_shed_min_priority: 4\n");
  const std::string gaie = dir.write("gaie.yaml", "admission:\n  policy: gaie-legacy\n  gaie_qd_threshold: 2\n"
                                                  "  gaie_kv_threshold: 0.5\n");
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + spec + " --profile-set head";
  // HEAD (f90a1e3a) prints the same counts for these two runs.
  const Result t = run_blis(base + " --num-instances 2 --policy-config " + tier);
  INFO(t.err);
  REQUIRE(t.status == 0);
  CHECK(t.out.find("Rejected Requests (Admission): 96\n  Shed (sheddable): 96\n") != std::string::npos);
  const Result g = run_blis(base + " --num-instances 1 --policy-config " + gaie);
  REQUIRE(g.status == 0);
  CHECK(g.out.find("Rejected Requests (Admission): 38\n  Shed (sheddable): 38\n") != std::string::npos);
  // A key of the wrong type names its place in the file.
  const std::string bad = dir.write("bad.yaml", "admission:\n  policy: tier-shed\n  tier_shed_threshold: lots\n");
  const Result b = run_blis(base + " --policy-config " + bad);
  CHECK(b.status == 2);
  CHECK(b.err.find("bad.yaml:3") != std::string::npos);
}
