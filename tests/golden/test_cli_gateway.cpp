// Gateway flow control from the command line (docs/gateway.md): the flags in
// --help, HEAD's anomaly lines (the figures HEAD f90a1e3a prints for this
// run), and bad settings refused before the run.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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
  for (const char* flag :
       {"--flow-control", "--dispatch-order", "--slo-targets", "--dispatch-tick-interval",
        "--max-gateway-queue-depth", "--per-band-capacity", "--fairness-policy", "--usage-limit-threshold",
        "--queue-shedding", "--shedding-policy", "--in-flight-eviction", "--request-ttl",
        "--saturation-detector", "--max-concurrency", "--queue-depth-threshold", "--kv-cache-util-threshold"})
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

namespace {

std::string fixture(const std::string& name) {
  return std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-" + name + ".so";
}

// The gated run of the saturation-detector tests: requests wait at most
// 200 ms at the gateway.
std::string detector_run(const std::string& spec, const std::string& detector) {
  return "run --model qwen/qwen3-14b --workload-spec " + spec +
         " --num-instances 2 --flow-control --request-ttl 200000 --profile-set head --saturation-detector " + detector;
}

}  // namespace

TEST_CASE("the saturation detectors are plugins: the built-ins are listed, a Lua script gates dispatch",
          "[golden][gateway][lua]") {
  const Result list = run_blis("plugins list");
  for (const char* name : {"saturation-detector never", "saturation-detector concurrency",
                           "saturation-detector utilization", "saturation-detector kv-only"})
    CHECK(list.out.find(name) != std::string::npos);
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const Result never = run_blis(detector_run(spec, "never"));
  REQUIRE(never.status == 0);
  CHECK(never.out.find("Gateway") == std::string::npos);  // nothing held, nothing expired
  // scripts/saturation/kv_only.lua: mean KV utilization / --kv-cache-util-threshold.
  // A low threshold holds requests until some expire; a threshold never
  // reached gives never's figures to the byte.
  const Result held = run_blis(detector_run(spec, "kv_only.lua") + " --kv-cache-util-threshold 0.02");
  INFO(held.err);
  REQUIRE(held.status == 0);
  CHECK(held.out.find("\"injected_requests\": 200,") == std::string::npos);
  CHECK(held.out.find("Gateway Expired (TTL): ") != std::string::npos);
  const Result open = run_blis(detector_run(spec, "kv_only.lua") + " --kv-cache-util-threshold 1000");
  REQUIRE(open.status == 0);
  CHECK(open.out == never.out);
}

TEST_CASE("a saturation detector may be a library given by path, configured with --plugin-config",
          "[golden][gateway][plugin]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const std::string lib = fixture("saturation-queue");  // the busiest instance's requests / limit
  const Result never = run_blis(detector_run(spec, "never"));
  const Result held = run_blis(detector_run(spec, lib));
  INFO(held.err);
  REQUIRE(held.status == 0);
  CHECK(held.out.find("Gateway Expired (TTL): ") != std::string::npos);
  const Result open = run_blis(detector_run(spec, lib) + " --plugin-config fixture-busiest-queue.limit=100000");
  REQUIRE(open.status == 0);
  CHECK(open.out == never.out);
  // plugins inspect makes one call of it.
  const Result inspect = run_blis("plugins inspect " + lib);
  CHECK(inspect.status == 0);
  CHECK(inspect.out.find("saturation-detector fixture-busiest-queue") != std::string::npos);
}

TEST_CASE("a broken saturation detector stops the run with exit 2, naming the file", "[golden][gateway][plugin]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --rate 50 --num-requests 50 --num-instances 2 --flow-control "
                           "--saturation-detector ";
  struct Case {
    std::string detector;
    std::string message;
  };
  const std::string oob = dir.write("oob.lua", "kind = 'saturation-detector'\nfunction saturation(n)\n"
                                               "  return instances[n].kv_utilization\nend\n");
  const std::string text = dir.write("text.lua", "function saturation(n)\n  return 'full'\nend\n");
  const std::string syntax = dir.write("syntax.lua", "function saturation(n\n");
  const std::string scorer = dir.write("scorer.lua", "function score(n) end\n");
  for (const Case& c :
       {Case{oob, oob + ":3: instances[2] is out of range: valid indices are 0 .. 1"},
        Case{text, text + ": saturation(2) must return a finite number >= 0, got a string at t=20000 µs"},
        Case{syntax, syntax + ":2: ')' expected near '<eof>'"},
        Case{scorer, scorer + ": is a routing-scorer script (it defines score(n)), not a saturation-detector script"},
        Case{fixture("saturation-nan"), fixture("saturation-nan") + ": plugin 'fixture-saturation-nan': saturation() "
                                                                     "returned nan over 2 instances at t=20000 µs"},
        Case{fixture("saturation-queue") + " --plugin-config fixture-busiest-queue.limit=0",
             fixture("saturation-queue") + ": plugin 'fixture-busiest-queue': create() failed: config key 'limit' "
                                           "must be an integer >= 1"},
        Case{fixture("good"), fixture("good") + ": contains no saturation-detector plugin"}}) {
    const Result r = run_blis(base + c.detector);
    INFO(c.detector << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("blis: error: " + c.message) != std::string::npos);
  }
}

namespace {

// Two tenants in one band (standard and the default class share priority 3),
// a critical and a batch one; prompts from 8 to 2048 tokens.
const char* const kMixed = R"(version: "2"
seed: 11
aggregate_rate: 300
num_requests: 400
clients:
  - id: a
    slo_class: standard
    tenant_id: t1
    rate_fraction: 0.3
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 512, std_dev: 300, min: 8, max: 2048}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: b
    tenant_id: t1
    rate_fraction: 0.3
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: c
    slo_class: critical
    tenant_id: t2
    rate_fraction: 0.2
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: d
    slo_class: batch
    tenant_id: t3
    rate_fraction: 0.2
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
)";

// The cluster's mean TTFT of a --format json run.
double cluster_ttft_mean(const std::string& out) {
  const size_t cluster = out.find("\"instance_id\": \"cluster\"");
  REQUIRE(cluster != std::string::npos);
  const std::string key = "\"ttft_mean_ms\": ";
  const size_t at = out.find(key, cluster);
  REQUIRE(at != std::string::npos);
  return std::stod(out.substr(at + key.size()));
}

}  // namespace

TEST_CASE("the dispatch orders are plugins: a Lua script serves the shortest prompt first",
          "[golden][gateway][lua]") {
  const Result list = run_blis("plugins list");
  for (const char* name : {"dispatch-order    fifo", "dispatch-order    priority", "dispatch-order    slo-deadline",
                           "dispatch-order    shortest-prompt"})
    CHECK(list.out.find(name) != std::string::npos);
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kMixed);
  // Held by 4 requests in flight per instance, the queue grows: the order
  // decides who waits.
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + spec +
                           " --num-instances 2 --flow-control --saturation-detector concurrency --max-concurrency 4 "
                           "--dispatch-order ";
  const Result priority = run_blis(base + "priority");
  const Result shortest = run_blis(base + "shortest_prompt.lua");
  const Result longest = run_blis(base + fixture("dispatch-longest"));
  INFO(shortest.err << longest.err);
  REQUIRE(priority.status == 0);
  REQUIRE(shortest.status == 0);
  REQUIRE(longest.status == 0);
  // Shortest prompt first lowers the mean TTFT, longest first raises it.
  CHECK(cluster_ttft_mean(shortest.out) < cluster_ttft_mean(priority.out));
  CHECK(cluster_ttft_mean(longest.out) > cluster_ttft_mean(priority.out));
  // plugins inspect makes one call of each.
  for (const std::string& p : {fixture("dispatch-longest"), std::string("scripts/dispatch/shortest_prompt.lua")})
    CHECK(run_blis("plugins inspect " + p, BLIS_TEST_SOURCE_DIR).status == 0);
}

TEST_CASE("a broken dispatch order stops the run with exit 2, naming the file", "[golden][gateway][plugin]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --rate 50 --num-requests 50 --num-instances 2 --flow-control "
                           "--dispatch-order ";
  const std::string field = dir.write("field.lua", "kind = 'dispatch-order'\nfunction order_key(priority)\n"
                                                   "  return no_such_global + 1\nend\n");
  const std::string text = dir.write("text.lua", "function order_key(priority)\n  return 'soon'\nend\n");
  const std::string scope = dir.write("scope.lua", "scope = 'everywhere'\nfunction order_key(priority) return 0 end\n");
  struct Case {
    std::string order;
    std::string message;
  };
  for (const Case& c :
       {Case{field, field + ":3: attempt to perform arithmetic on global 'no_such_global' (a nil value)"},
        Case{text, text + ": order_key(3) must return a number (not NaN), got a string for request_0"},
        Case{scope, scope + ": scope must be \"band\" or \"across-bands\", got \"everywhere\""},
        Case{fixture("dispatch-nan"), fixture("dispatch-nan") + ": plugin 'fixture-dispatch-nan': key() returned NaN "
                                                                 "for request_0 at t=20000 µs"},
        Case{fixture("dispatch-scope"), fixture("dispatch-scope") + ": plugin 'fixture-dispatch-scope': its vtable's "
                                                                     "scope is 7"},
        Case{fixture("saturation-queue"), fixture("saturation-queue") + ": contains no dispatch-order plugin"}}) {
    const Result r = run_blis(base + c.order);
    INFO(c.order << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("blis: error: " + c.message) != std::string::npos);
  }
}

namespace {

// Two tenants of one band (standard) at an equal rate, 2.5 times what two
// instances held to 4 requests each serve.
const char* const kTwoTenants = R"(version: "2"
seed: 5
aggregate_rate: 25
num_requests: 400
clients:
  - id: a
    slo_class: standard
    tenant_id: t1
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: b
    slo_class: standard
    tenant_id: t2
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
)";

// Tenant `t`'s completed requests in HEAD's "Per-Tenant Metrics".
int64_t tenant_completed(const std::string& out, const std::string& t) {
  const std::string key = "  " + t + ": requests=";
  const size_t at = out.find(key);
  REQUIRE(at != std::string::npos);
  return std::stoll(out.substr(at + key.size()));
}

}  // namespace

TEST_CASE("the fairness policies are plugins: a Lua script and a library favour a tenant",
          "[golden][gateway][lua]") {
  const Result list = run_blis("plugins list");
  for (const char* name : {"fairness-policy   global-strict", "fairness-policy   round-robin",
                           "fairness-policy   weighted-tenants"})
    CHECK(list.out.find(name) != std::string::npos);
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kTwoTenants);
  // Held by 4 requests in flight per instance, the band grows and its
  // requests expire after 2 s: the tenant picked more often completes more
  // (round-robin: t1 98, t2 95; weighted 52, 136; the fixture 8, 167).
  const std::string base =
      "run --model qwen/qwen3-14b --workload-spec " + spec +
      " --num-instances 2 --flow-control --saturation-detector concurrency --max-concurrency 4 "
      "--dispatch-order priority --request-ttl 2s --profile-set head --fairness-policy ";
  const Result rr = run_blis(base + "round-robin");
  const Result weighted =
      run_blis(base + "weighted_tenants.lua --plugin-config weighted_tenants.lua.weight.t2=3");
  const Result even = run_blis(base + "weighted_tenants.lua");
  const Result last = run_blis(base + fixture("fairness-last"));
  INFO(rr.err << weighted.err << last.err);
  REQUIRE(rr.status == 0);
  REQUIRE(weighted.status == 0);
  REQUIRE(even.status == 0);
  REQUIRE(last.status == 0);
  // Without weights the script is round-robin, to the byte.
  CHECK(even.out == rr.out);
  // Three turns for t2 to one for t1: t2 completes more than under round-robin, t1 less.
  CHECK(tenant_completed(weighted.out, "t2") > tenant_completed(rr.out, "t2"));
  CHECK(tenant_completed(weighted.out, "t1") < tenant_completed(rr.out, "t1"));
  // The fixture always serves the last tenant (t2): t1 gets only what t2 leaves.
  CHECK(tenant_completed(last.out, "t2") > tenant_completed(weighted.out, "t2"));
  CHECK(tenant_completed(last.out, "t1") < tenant_completed(weighted.out, "t1"));
  for (const std::string& p :
       {fixture("fairness-last"), std::string("scripts/fairness/weighted_tenants.lua")})
    CHECK(run_blis("plugins inspect " + p, BLIS_TEST_SOURCE_DIR).status == 0);
}

TEST_CASE("a broken fairness policy stops the run with exit 2, naming the file",
          "[golden][gateway][plugin]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kTwoTenants);
  const std::string base =
      "run --model qwen/qwen3-14b --workload-spec " + spec +
      " --num-instances 1 --flow-control --saturation-detector concurrency --max-concurrency 2 "
      "--dispatch-order priority --fairness-policy ";
  const std::string field = dir.write("field.lua",
                                      "kind = 'fairness-policy'\nfunction pick_flow(flows)\n"
                                      "  return flows[1].no_such_field + 1\nend\n");
  const std::string text = dir.write("text.lua", "function pick_flow(flows)\n  return 'first'\nend\n");
  const std::string range = dir.write("range.lua", "function pick_flow(flows)\n  return #flows + 1\nend\n");
  struct Case {
    std::string policy;
    std::string message;
  };
  for (const Case& c :
       {Case{field, field + ":3: attempt to perform arithmetic on field 'no_such_field' (a nil value)"},
        Case{text, text + ": pick_flow(flows, 3, "}, Case{range, range + ": pick_flow(flows, 3, "},
        Case{fixture("fairness-range"), fixture("fairness-range") +
                                            ": plugin 'fixture-fairness-range': pick() "
                                            "returned 2 over 2 flows of band 3"},
        Case{fixture("dispatch-nan"), fixture("dispatch-nan") + ": contains no fairness-policy plugin"}}) {
    const Result r = run_blis(base + c.policy);
    INFO(c.policy << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("blis: error: " + c.message) != std::string::npos);
  }
  // The messages say what was returned.
  CHECK(run_blis(base + text).err.find("must return a flow index in 1 .. 2, got a string") !=
        std::string::npos);
  CHECK(run_blis(base + range).err.find("must return a flow index in 1 .. 2, got 3") != std::string::npos);
}

namespace {

// The number after `label` in `out`, 0 when the line is absent (HEAD prints
// its anomaly lines only when nonzero).
int64_t count_after(const std::string& out, const std::string& label) {
  const size_t at = out.find(label);
  return at == std::string::npos ? 0 : std::stoll(out.substr(at + label.size()));
}

}  // namespace

TEST_CASE("the shedding victim is a plugin: a Lua script and a library choose other victims",
          "[golden][gateway][lua]") {
  const Result list = run_blis("plugins list");
  for (const char* name : {"shedding-policy   lowest-priority", "shedding-policy   tenant-over-share"})
    CHECK(list.out.find(name) != std::string::npos);
  TempDir dir;
  const std::string mixed = dir.write("mixed.yaml", kSpec);
  const std::string two = dir.write("two.yaml", kTwoTenants);
  const std::string flags =
      " --num-instances 2 --flow-control --saturation-detector concurrency "
      "--max-concurrency 4 --dispatch-order priority --max-gateway-queue-depth 20 "
      "--queue-shedding --profile-set head";
  const std::string on_mixed = "run --model qwen/qwen3-14b --workload-spec " + mixed + flags;
  // The default is HEAD's choice: only sheddable requests are shed.
  const Result head = run_blis(on_mixed);
  INFO(head.err);
  REQUIRE(head.status == 0);
  CHECK(run_blis(on_mixed + " --shedding-policy lowest-priority").out == head.out);
  CHECK(count_after(head.out, "Gateway Queue Shed: ") > 0);
  CHECK(count_after(head.out, "  Shed (critical): ") == 0);
  // The fixture sheds the oldest queued request, whatever its band: critical ones too.
  const Result oldest = run_blis(on_mixed + " --shedding-policy " + fixture("shed-oldest"));
  INFO(oldest.err);
  REQUIRE(oldest.status == 0);
  CHECK(count_after(oldest.out, "  Shed (critical): ") > 0);
  // Two tenants of one band: nothing is sheddable, lowest-priority only
  // refuses; the script sheds from the tenant holding most of the queue.
  const std::string on_two = "run --model qwen/qwen3-14b --workload-spec " + two + flags;
  const Result refused = run_blis(on_two);
  const Result share = run_blis(on_two + " --shedding-policy tenant_over_share.lua");
  INFO(share.err);
  REQUIRE(refused.status == 0);
  REQUIRE(share.status == 0);
  CHECK(count_after(refused.out, "Gateway Queue Shed: ") == 0);
  CHECK(count_after(share.out, "Gateway Queue Shed: ") > 0);
  CHECK(count_after(share.out, "Gateway Queue Rejected: ") <
        count_after(refused.out, "Gateway Queue Rejected: "));
  for (const std::string& p : {fixture("shed-oldest"), std::string("scripts/shedding/tenant_over_share.lua")})
    CHECK(run_blis("plugins inspect " + p, BLIS_TEST_SOURCE_DIR).status == 0);
}

TEST_CASE("a broken shedding policy stops the run with exit 2, naming the file",
          "[golden][gateway][plugin]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kTwoTenants);
  const std::string base =
      "run --model qwen/qwen3-14b --workload-spec " + spec +
      " --num-instances 1 --flow-control --saturation-detector concurrency --max-concurrency 2 "
      "--max-gateway-queue-depth 3 --queue-shedding --shedding-policy ";
  const std::string field = dir.write("field.lua",
                                      "kind = 'shedding-policy'\nfunction shed_victim(queued)\n"
                                      "  return queued[1].no_such_field + 1\nend\n");
  const std::string text = dir.write("text.lua", "function shed_victim(queued)\n  return 'first'\nend\n");
  struct Case {
    std::string policy;
    std::string message;
  };
  for (const Case& c :
       {Case{field, field + ":3: attempt to perform arithmetic on field 'no_such_field' (a nil value)"},
        Case{text, text + ": shed_victim(queued, arriving, "},
        Case{fixture("shedding-range"), fixture("shedding-range") +
                                            ": plugin 'fixture-shedding-range': victim() "
                                            "returned 3 over 3 queued requests"},
        Case{fixture("dispatch-nan"), fixture("dispatch-nan") + ": contains no shedding-policy plugin"}}) {
    const Result r = run_blis(base + c.policy);
    INFO(c.policy << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("blis: error: " + c.message) != std::string::npos);
  }
  // Without --queue-shedding the policy is not asked, and said so.
  const std::string plain = "run --model qwen/qwen3-14b --workload-spec " + spec +
                            " --num-instances 1 --flow-control --shedding-policy lowest-priority";
  const Result unused = run_blis(plain);
  CHECK(unused.status == 0);
  CHECK(unused.err.find("has no effect without --queue-shedding") != std::string::npos);
}

namespace {

// The arrival times of tenant `t`'s rows of a TraceV2 file, in row order.
std::vector<int64_t> tenant_arrivals(const std::string& csv, const std::string& t) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::istringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  const auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t tenant = col("tenant_id"), arrival = col("arrival_time_us");
  REQUIRE(arrival < header.size());
  std::vector<int64_t> out;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    for (std::istringstream row(line); std::getline(row, line, ',');) f.push_back(line);
    if (f.size() > arrival && f[tenant] == t) out.push_back(std::stoll(f[arrival]));
  }
  return out;
}

std::string slurp_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a rate event for one tenant changes its arrivals alone", "[golden][gateway][events]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", R"(version: "2"
seed: 3
aggregate_rate: 4
num_requests: 100000
clients:
  - id: a
    tenant_id: t1
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: exponential, params: {mean: 16}}
  - id: b
    tenant_id: t2
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: exponential, params: {mean: 16}}
)");
  const std::string run =
      "run --model qwen/qwen3-14b --num-instances 2 --horizon 20000000 --workload-spec " + spec;
  const Result plain = run_blis(run + " --trace-output " + dir.str() + "/a");
  const Result three =
      run_blis(run + " --event 'at=5s action=rate tenant=t1 factor=3' --trace-output " + dir.str() + "/b");
  INFO(three.err);
  REQUIRE(plain.status == 0);
  REQUIRE(three.status == 0);
  const std::string a = slurp_file(dir.str() + "/a.csv"), b = slurp_file(dir.str() + "/b.csv");
  // t2's requests arrive when they did; t1's are the same up to 5 s, then
  // three times as many (about 2 per second for 15 s become about 6).
  CHECK(tenant_arrivals(a, "t2") == tenant_arrivals(b, "t2"));
  const auto before = [](const std::vector<int64_t>& v) {
    return std::count_if(v.begin(), v.end(), [](int64_t t) { return t < 5000000; });
  };
  const std::vector<int64_t> t1a = tenant_arrivals(a, "t1"), t1b = tenant_arrivals(b, "t1");
  CHECK(before(t1a) == before(t1b));
  const auto after_a = static_cast<double>(static_cast<int64_t>(t1a.size()) - before(t1a));
  const auto after_b = static_cast<double>(static_cast<int64_t>(t1b.size()) - before(t1b));
  CHECK(after_a > 15);
  CHECK(after_b > 2.4 * after_a);
  CHECK(after_b < 3.6 * after_a);
  CHECK(three.out.find("at=5s action=rate tenant=t1 factor=3 (arrival rate x3 of tenant t1's clients)") !=
        std::string::npos);
  // A tenant no client has is refused before the run.
  const Result none = run_blis(run + " --event 'at=5s action=rate tenant=t9 factor=3'");
  CHECK(none.status == 2);
  CHECK(none.err.find("no client of the workload has tenant_id 't9'") != std::string::npos);
}

TEST_CASE("a gateway event changes the queue's limits mid-run", "[golden][gateway][events]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const std::string run =
      "run --model qwen/qwen3-14b --workload-spec " + spec +
      " --num-instances 2 --flow-control --saturation-detector concurrency --max-concurrency 4 "
      "--dispatch-order priority --profile-set head";
  const Result open = run_blis(run);
  REQUIRE(open.status == 0);
  CHECK(open.out.find("Gateway Queue Rejected") == std::string::npos);
  // From 300 ms on, at most 10 queued: later arrivals find it full.
  const Result cut = run_blis(run + " --event 'at=300ms action=gateway queue_depth=10'");
  INFO(cut.err);
  REQUIRE(cut.status == 0);
  CHECK(cut.out.find("Gateway Queue Rejected: ") != std::string::npos);
  const Result band = run_blis(run + " --event 'at=300ms action=gateway band_capacity=5'");
  REQUIRE(band.status == 0);
  CHECK(band.out.find("Gateway Queue Rejected: ") != std::string::npos);
  // Unlimited again at once: nothing refused.
  const Result back = run_blis(run +
                               " --event 'at=300ms action=gateway queue_depth=10' "
                               "--event 'at=300ms action=gateway queue_depth=0'");
  REQUIRE(back.status == 0);
  CHECK(back.out.find("Gateway Queue Rejected") == std::string::npos);
  // Refused before the run: without --flow-control, a negative or missing limit.
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"run --model qwen/qwen3-14b --event 'at=1s action=gateway queue_depth=5'",
            "the gateway's limits change only with --flow-control"},
           {run + " --event 'at=1s action=gateway queue_depth=-1'",
            "queue_depth=-1 is not a request count >= 0"},
           {run + " --event 'at=1s action=gateway'", "needs band_capacity=N"}}) {
    const Result r = run_blis(flags);
    INFO(flags << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.out.empty());
  }
}
