// Hostile inputs (issue 13): each one ends blis quickly with exit 2 and one
// `blis: error:` line that says what is wrong and where, instead of a crash,
// a hang or memory exhaustion.
#include "catch.hpp"
#include "cli.hpp"
#include "json_lite.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <sys/resource.h>
#include <filesystem>
#include <string>

using blis::test::Json;

namespace {

const std::string kRun = "run --model qwen/qwen3-14b ";

// Runs blis; the run must take less than `seconds` of CPU time (user +
// system, of the command and everything it started): unlike wall time, that
// does not grow when the machine running the suite is busy. The failures it
// guards against took minutes. BLIS_TEST_SLOWDOWN scales the limit for
// instrumented builds (scripts/test-sanitizers.sh sets it).
Result run_quickly(const std::string& args, double seconds = 5) {
  if (const char* f = std::getenv("BLIS_TEST_SLOWDOWN")) seconds *= std::max(1.0, std::atof(f));
  auto cpu = [] {
    rusage u{};
    ::getrusage(RUSAGE_CHILDREN, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  const double before = cpu();
  Result r = run_blis(args, "", "timeout -s KILL 60");
  const double took = cpu() - before;
  INFO("blis " << args << ": " << took << " s of CPU");
  CHECK(took < seconds);
  return r;
}

// Exit 2 and exactly one line on stderr, holding `text`.
void check_one_error(const Result& r, const std::string& text) {
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(text) != std::string::npos);
  CHECK(r.err.rfind("blis: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("robustness: a YAML merge key that includes its own mapping is an error", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  const std::string file = dir.write("self.yaml", "&a {<<: *a}\n");
  check_one_error(run_quickly(kRun + "--policy-config " + file), "self.yaml:1: a merge key (<<) under the top level "
                                                                  "merges a mapping that contains it");
  check_one_error(run_quickly(kRun + "--workload-spec " + file), "self.yaml:1:1: a merge key (<<)");
}

TEST_CASE("robustness: chained YAML merge keys are bounded, not exponential", "[cli][workload]") {
  // Each level merges the previous one twice: 2^25 merged mappings.
  std::string chain = "&b0 {scheduler: fcfs}";
  for (int k = 1; k <= 25; ++k)
    chain = "&b" + std::to_string(k) + " {<<: [" + chain + ", *b" + std::to_string(k - 1) + "]}";
  blis::test::TempDir dir("blis-robust");
  const std::string file = dir.write("chain.yaml", "<<: " + chain + "\n");
  check_one_error(run_quickly(kRun + "--policy-config " + file), "chain.yaml:1: merge keys (<<) under the top level "
                                                                  "expand to more than 1000 merged mappings");
  // Legitimate nesting still merges: the nested value is read (and checked).
  CHECK(run_quickly(kRun + "--num-requests 2 --policy-config " + dir.write("ok.yaml", "<<: &b {<<: &a {scheduler: sjf}}\n"))
            .status == 0);
  check_one_error(run_quickly(kRun + "--policy-config " + dir.write("bad.yaml", "<<: &b {<<: &a {scheduler: nope}}\n")),
                  "nope");
}

TEST_CASE("robustness: a YAML file holding only a comma is an error", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  const std::string file = dir.write("comma.yaml", ",");
  check_one_error(run_quickly(kRun + "--workload-spec " + file), "comma.yaml:1:1: unexpected ','");
  check_one_error(run_quickly(kRun + "--policy-config " + file), "comma.yaml:1: unexpected ','");
  // An empty file is still "no document", a lone "---" an empty one.
  check_one_error(run_quickly(kRun + "--workload-spec " + dir.write("empty.yaml", "# nothing\n")),
                  "empty workload spec (no YAML document)");
  CHECK(run_quickly(kRun + "--policy-config " + dir.write("dashes.yaml", "---\n") + " --num-requests 2").status == 0);
}

TEST_CASE("robustness: a lifecycle window arrivals cannot reach in reasonable time ends the run", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  const std::string file = dir.write("late.yaml", R"(version: "2"
seed: 1
aggregate_rate: 1e9
num_requests: 5
clients:
  - id: late
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 10}}
    lifecycle:
      windows:
        - {start_us: 1000000000000000, end_us: 1000000000000100}
)");
  check_one_error(run_quickly(kRun + "--workload-spec " + file),
                  "late.yaml:13:9: clients[0].lifecycle.windows: 50000000 arrivals in a row fell outside every window");
}

TEST_CASE("robustness: token counts beyond one request's limit are refused before generation", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  const std::string trace = dir.write("big.csv", "arrival_time_us,input_tokens,output_tokens\n0,1,2147483647\n");
  check_one_error(run_quickly(kRun + "--workload-trace " + trace),
                  "big.csv:2: output_tokens: 2147483647 is out of range [1, 10000000]");
  check_one_error(run_quickly(kRun + "--prefix-tokens 1000000000"),
                  "prefix_tokens: a shared prefix of 1000000000 tokens is more than one request may hold (10000000)");
  const std::string spec = dir.write("prefix.yaml", R"(version: "2"
aggregate_rate: 10
num_requests: 5
clients:
  - id: c
    rate_fraction: 1
    prefix_group: g
    prefix_length: 1000000000
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 10}}
)");
  check_one_error(run_quickly(kRun + "--workload-spec " + spec),
                  "prefix.yaml:8:20: clients[0].prefix_length: must be at most 10000000 tokens");
}

TEST_CASE("robustness: endless input files are refused, not read until memory runs out", "[cli][workload]") {
  check_one_error(run_quickly(kRun + "--workload-spec /dev/zero"),
                  "/dev/zero: the workload spec is larger than 64 MiB; is it the right file?");
  check_one_error(run_quickly(kRun + "--workload-trace /dev/zero"),
                  "/dev/zero:1: a line longer than 1048576 bytes; is this a CSV trace?");
  blis::test::TempDir dir("blis-robust");
  check_one_error(run_quickly(kRun + "--workload-trace " + dir.str()), "is a directory, not a trace file");
}

TEST_CASE("robustness: TOML text toml++ 3.3 cannot take safely is refused before parsing", "[cli][config]") {
  blis::test::TempDir dir("blis-robust");
  // U+FEEF after '=': toml++'s whitespace table reaches TOML_UNREACHABLE.
  check_one_error(run_quickly(kRun + "--policy-config " + dir.write("bom.toml", " e=\xef\xbb\xaf")),
                  "bom.toml:1:4: unexpected character U+FEEF outside a string or comment");
  check_one_error(run_quickly(kRun + "--hardware-config " + dir.write("hw.toml", "[H100]\nx = \xc2\xa1\n")),
                  "hw.toml:2:5: unexpected character U+00A1 outside a string or comment");
  // Non-ASCII text in strings and comments is fine.
  check_one_error(run_quickly(kRun + "--policy-config " +
                              dir.write("ok.toml", "# caf\xc3\xa9\n[admission]\npolicy = \"caf\xc3\xa9\"\n")),
                  "unknown admission policy 'caf\xc3\xa9'");
}

TEST_CASE("robustness: a runaway Lua plugin stops at its instruction budget", "[cli][lua]") {
  blis::test::TempDir dir("blis-robust");
  const std::string scorer = dir.write("loop.lua", "function score(n) while true do end end\n");
  check_one_error(run_quickly(kRun + "--num-requests 5 --num-instances 2 --routing-policy weighted "
                                     "--routing-scorers " + scorer + ":1"),
                  "loop.lua:1: exceeded 100000000 instructions");
  const std::string admission = dir.write("admit.lua", "function admit()\n  repeat until false\nend\n");
  check_one_error(run_quickly(kRun + "--num-requests 5 --admission-policy " + admission),
                  "admit.lua:2: exceeded 100000000 instructions");
  const std::string model = dir.write("model.lua", "function step_time(n)\n  local t = 0\n"
                                                   "  for i = 1, math.huge do t = t + i end\n  return t\nend\n");
  check_one_error(run_quickly(kRun + "--num-requests 5 --latency-model " + model + " --alpha-coeffs 1,1,1 "
                                     "--beta-coeffs 1,1,1"),
                  "model.lua:3: exceeded 100000000 instructions");
}

TEST_CASE("robustness: a Lua scenario's setup and searches have an instruction budget", "[cli][lua]") {
  blis::test::TempDir dir("blis-robust");
  check_one_error(run_quickly("run " + dir.write("setup.lua", "while true do end\nreturn {}\n")),
                  "setup.lua:1: exceeded 1000000000 instructions");
  check_one_error(run_quickly("run " + dir.write("search.lua", "return {\n  model = \"qwen/qwen3-14b\",\n"
                                                      "  search = function(sim)\n    while true do end\n  end,\n}\n")),
                  "search.lua:4: exceeded 1000000000 instructions");
}

TEST_CASE("robustness: Lua plugins cannot index host data out of bounds", "[cli][lua]") {
  blis::test::TempDir dir("blis-robust");
  const std::string scorer =
      dir.write("far.lua", "function score(n)\n  for i = 0, n - 1 do scores[i] = 1 end\n  scores[100000000] = 1.0\nend\n");
  Result r = run_quickly(kRun + "--num-requests 5 --num-instances 2 --routing-policy weighted --routing-scorers " +
                         scorer + ":1");
  CHECK(r.status == 2);
  CHECK(r.err.find("far.lua:3: scores[100000000] is out of range: valid indices are 0 .. 1") != std::string::npos);
  const std::string model = dir.write("past.lua", "function step_time(n)\n  local t = 1\n"
                                                  "  for i = 0, n do t = t + entries[i].new_tokens end\n"
                                                  "  return t\nend\n");
  r = run_quickly(kRun + "--num-requests 5 --latency-model " + model + " --alpha-coeffs 1,1,1 --beta-coeffs 1,1,1");
  CHECK(r.status == 2);
  CHECK(r.err.find("past.lua:3: entries[1] is out of range: valid indices are 0 .. 0") != std::string::npos);
}

TEST_CASE("robustness: a Lua plugin's heap is capped", "[cli][lua]") {
  blis::test::TempDir dir("blis-robust");
  const std::string scorer = dir.write("hoard.lua", "local t = {}\nfunction score(n)\n"
                                                    "  while true do t[#t + 1] = {} end\nend\n");
  check_one_error(run_quickly(kRun + "--num-requests 5 --num-instances 2 --routing-policy weighted "
                                     "--routing-scorers " + scorer + ":1", 20),
                  "hoard.lua: the Lua heap would exceed its limit of 256 MiB");
}

TEST_CASE("robustness: session and multimodal sizes that would draw for hours are refused", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  const std::string rounds = dir.write("rounds.yaml", R"(version: "2"
aggregate_rate: 10
num_requests: 5
clients:
  - id: c
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 10}}
    reasoning:
      multi_turn: {max_rounds: 1000000000000, think_time_us: 10}
)");
  check_one_error(run_quickly(kRun + "--workload-spec " + rounds),
                  "clients[0].reasoning.multi_turn.max_rounds: must be at most 1000000, got 1000000000000");
  const std::string images = dir.write("images.yaml", R"(version: "2"
aggregate_rate: 10
num_requests: 5
clients:
  - id: c
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 10}}
    multimodal:
      image_distribution: {type: constant, params: {value: 1}}
      image_count_distribution: {type: constant, params: {value: 1e12}}
)");
  check_one_error(run_quickly(kRun + "--workload-spec " + images),
                  "clients[0].multimodal.image_count_distribution: a count of 1000000000000 items is out of range");
}

TEST_CASE("robustness: a ServeGen trace without line breaks is refused", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  std::filesystem::create_symlink("/dev/zero", dir.str() + "/chunk-1-trace.csv");
  const std::string spec = dir.write("spec.yaml", "aggregate_rate: 50\nnum_requests: 40\nservegen_data: {path: " +
                                                      dir.str() + "}\n");
  check_one_error(run_quickly(kRun + "--workload-spec " + spec),
                  "chunk-1-trace.csv:1: a line longer than 1048576 bytes; is this a ServeGen trace?");
}

TEST_CASE("robustness: deeply nested YAML is an error, not a stack overflow", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  const std::string file = dir.write("deep.yaml", "a: " + std::string(100000, '[') + "\n");
  check_one_error(run_quickly(kRun + "--workload-spec " + file), "collections nest too deeply (the YAML reader stops at");
  check_one_error(run_quickly(kRun + "--policy-config " + file), "collections nest too deeply");
}

TEST_CASE("robustness: a run that cannot fit in memory is refused before it allocates", "[cli][memory]") {
  // 100,000 instances of qwen3-14b/H100 (17,600 KV blocks each) need over
  // 100 GiB of KV bookkeeping: refused at once, naming what dominates.
  auto r = check_refused("run --model qwen/qwen3-14b --num-instances 100000 --num-requests 10 --memory-limit 2GiB",
                         "--num-instances: the run needs about 1");
  CHECK(r.err.find(" GiB of memory (100000 instances with 17600 KV blocks each: ") != std::string::npos);
  CHECK(r.err.find("more than 2.0 GiB (the --memory-limit)") != std::string::npos);
  CHECK(r.err.find("use fewer instances or fewer --total-kv-blocks") != std::string::npos);
  // Requests are counted too: 10^11 of them cannot be kept on any machine.
  check_refused("run --model qwen/qwen3-14b --num-requests 100000000000 --rate 1",
                "--num-requests: the run needs about 18.2 TiB");
  // A budget that fits lets the run go; a malformed budget is an input error.
  Result ok = run_blis("run --model qwen/qwen3-14b --num-instances 4 --num-requests 20 --memory-limit 64MiB");
  CHECK(ok.status == 0);
  check_refused("run --model qwen/qwen3-14b --num-instances 4 --memory-limit 12parsecs",
                "--memory-limit: invalid value '12parsecs'");
  check_refused("run --model qwen/qwen3-14b --memory-limit lots", "--memory-limit: invalid value 'lots'");
}

TEST_CASE("robustness: counts accept the reference's digit grouping", "[cli][config]") {
  Result grouped = run_blis("run --model qwen/qwen3-14b --num-requests 1_000 --rate 50");
  Result plain = run_blis("run --model qwen/qwen3-14b --num-requests 1000 --rate 50");
  REQUIRE(grouped.status == 0);
  CHECK(grouped.out == plain.out);
  check_refused("run --model qwen/qwen3-14b --num-requests 1__000", "--num-requests: invalid value '1__000'");
  check_refused("run --model qwen/qwen3-14b --num-requests _1000", "--num-requests: invalid value '_1000'");
  check_refused("run --model qwen/qwen3-14b --num-requests 1000_", "--num-requests: invalid value '1000_'");
}

TEST_CASE("robustness: integers read as Go's ParseInt reads the reference's flags", "[cli][config]") {
  // A leading 0 is octal, 0x hex, 0o octal, 0b binary: the same experiment as
  // the reference runs for the same command line.
  const std::string base = "run --model qwen/qwen3-14b --rate 50 ";
  Result eight = run_blis(base + "--num-requests 40 --seed 8");
  REQUIRE(eight.status == 0);
  CHECK(run_blis(base + "--num-requests 40 --seed 010").out == eight.out);
  CHECK(run_blis(base + "--num-requests 0x28 --seed 0o10").out == eight.out);
  CHECK(run_blis(base + "--num-requests 0b101000 --seed 0B1000").out == eight.out);
  CHECK(run_blis(base + "--num-requests 0x_28 --seed +0_10").out == eight.out);
  // 050 is 40, not 50: a different experiment from --num-requests 50.
  CHECK(run_blis(base + "--num-requests 050 --seed 8").out == eight.out);
  CHECK(run_blis(base + "--num-requests 50 --seed 8").out != eight.out);
  check_refused(base + "--num-requests 08", "--num-requests: invalid value '08': expected an integer (a leading 0 "
                                            "makes it octal");
  check_refused(base + "--num-requests 0x", "--num-requests: invalid value '0x'");
  check_refused(base + "--seed 0x8000000000000000", "--seed: invalid value '0x8000000000000000'");
}

TEST_CASE("robustness: failing instances under request deadlines loses nothing", "[cli][events]") {
  // Overloaded, with a 2 s deadline: requests re-routed from the failed
  // instance (some back to it once restored) time out where they are then,
  // not where they were; the pending timeouts of the lost ones are void.
  const std::string args =
      "run --model qwen/qwen3-14b --num-instances 3 --rate 150 --num-requests 1500 --timeout 2 --format json "
      "--event 'at=1s action=fail instance=1 requests=reroute' --event 'at=1500ms action=restore instance=1' "
      "--event 'at=2s action=fail instance=0 requests=fail' --event 'at=4s action=fail instance=1 requests=reroute'";
  const Result r = run_blis(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const Json doc = Json::parse(r.out);
  const Json& c = doc["cluster"];
  const double rerouted = doc["scenario_events"].num("rerouted"), lost = doc["scenario_events"].num("failed");
  CHECK(rerouted > 0);
  CHECK(lost > 0);
  CHECK(c.num("timed_out_requests") > 0);
  CHECK(c.num("injected_requests") == c.num("completed_requests") + c.num("still_queued") +
                                         c.num("still_running") + c.num("dropped_unservable") +
                                         c.num("timed_out_requests") + lost);
  CHECK(c.num("injected_requests") + doc.num("rejected_requests") == 1500);
  CHECK(run_blis(args).out == r.out);
}
