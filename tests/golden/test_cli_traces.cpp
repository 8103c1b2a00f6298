// TraceV2 (docs/cli.md "Traces"): `blis run --trace-output`, `blis replay`
// and `blis calibrate` against files BLIS HEAD (f90a1e3a) wrote for the same
// commands (tests/golden/expected/head/trace/: the spec, HEAD's trace of the
// run, its replay's stdout, SimResults and re-exported trace).
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

const std::string kDir = std::string(BLIS_TEST_SOURCE_DIR) + "/tests/golden/expected/head/trace/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("blis run --trace-output writes HEAD's TraceV2 of the same run, byte for byte", "[golden][trace]") {
  blis::test::TempDir dir("blis-trace");
  const std::string prefix = dir.str() + "/t";
  const Result r = run_blis("run --profile-set head --model qwen/qwen3-14b --workload-spec " + kDir +
                            "spec.yaml --num-instances 2 --trace-output " + prefix);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == slurp(kDir + "run.txt"));
  CHECK(slurp(prefix + ".yaml") == slurp(kDir + "trace.yaml"));
  CHECK(slurp(prefix + ".csv") == slurp(kDir + "trace.csv"));
}

TEST_CASE("trace rows name the session of multi-turn and closed-loop requests as HEAD does", "[golden][trace]") {
  // HEAD writes "sess_<id>" for a multi-turn session's rounds and "concurrency_<client>_user_<n>"
  // for a concurrency user's requests; blis left the column empty (issue 26).
  blis::test::TempDir dir("blis-trace-sessions");
  const Result sessions = run_blis("run --profile-set head --model qwen/qwen3-14b --num-requests 30 --workload-spec " +
                                   kDir + "sessions-spec.yaml --trace-output " + dir.str() + "/s");
  INFO(sessions.err);
  REQUIRE(sessions.status == 0);
  const std::string csv = slurp(dir.str() + "/s.csv");
  CHECK(csv.find(",sess_4207413178338599816,") != std::string::npos);
  CHECK(csv == slurp(kDir + "sessions-trace.csv"));
  const Result users = run_blis("run --profile-set head --model qwen/qwen3-14b --concurrency 4 --think-time-ms 100 "
                                "--num-requests 12 --trace-output " + dir.str() + "/c");
  INFO(users.err);
  REQUIRE(users.status == 0);
  CHECK(slurp(dir.str() + "/c.csv") == slurp(kDir + "concurrency-trace.csv"));
}

TEST_CASE("a replayed trace's later session rounds arrive as the rows say, every one of them", "[golden][trace]") {
  // HEAD's trace of a closed-loop multi-turn run has rows with round_index > 0. blis took a later
  // round for a closed-loop follow-up and stopped drawing the trace after the first one: of these
  // 60 rows it replayed 13. HEAD (session mode "fixed", its default) replays every row.
  blis::test::TempDir dir("blis-replay-sessions");
  const Result r = run_blis("replay --profile-set head --model qwen/qwen3-14b --trace-header " + kDir +
                            "sessions-trace.yaml --trace-data " + kDir + "sessions-trace.csv --results-path " +
                            dir.str() + "/sim.json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("\"injected_requests\": 60,") != std::string::npos);
  CHECK(slurp(dir.str() + "/sim.json") == slurp(kDir + "sessions-sim.json"));
  // HEAD's session block, its sessions the trace's session ids: all of HEAD's stdout.
  CHECK(r.out.find("=== Session Metrics ===\n  Sessions: 12\n") != std::string::npos);
  CHECK(r.out == slurp(kDir + "sessions-replay.txt"));
}

TEST_CASE("a session round's trace row keeps its client's prefix group and streaming", "[golden][trace]") {
  // docs/differences.md row 50: HEAD writes such rows with no prefix group and not streaming.
  blis::test::TempDir dir("blis-trace-session-rows");
  const std::string spec = dir.str() + "/w.yaml";
  std::ofstream(spec) << "version: \"2\"\nseed: 7\naggregate_rate: 20\nnum_requests: 12\nclients:\n"
                         "  - {id: chat, rate_fraction: 1.0, streaming: true, prefix_group: sys, prefix_length: 64,\n"
                         "     arrival: {process: poisson},\n"
                         "     input_distribution: {type: constant, params: {value: 40}},\n"
                         "     output_distribution: {type: constant, params: {value: 8}},\n"
                         "     reasoning: {multi_turn: {max_rounds: 2, think_time_us: 100000}}}\n";
  const Result r = run_blis("run --profile-set head --model qwen/qwen3-14b --workload-spec " + spec +
                            " --trace-output " + dir.str() + "/t");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string csv = slurp(dir.str() + "/t.csv");
  // Round 0 and a closed-loop follow-up (round 1) of one session.
  CHECK(csv.find("\n0,chat,,,sess_1831953395639928618,0,sys,64,true,40,8,") != std::string::npos);
  CHECK(csv.find("\n5,chat,,,sess_1831953395639928618,1,sys,64,true,40,8,") != std::string::npos);
}

TEST_CASE("a multi-turn client's follow-up rounds share its group's prefix, whatever its own prefix_length",
          "[golden][trace]") {
  // docs/differences.md row 56: the group g2 is 32 tokens long (its first
  // client's length). HEAD gives c2's follow-up rounds the first 512 tokens
  // (c2's own length) of the session's first round, or no prefix when that
  // round is shorter, as here: its total_input_tokens is 6355. In blis the
  // rounds share the group's 32 tokens, whatever c2 says: 14 follow-ups x 32
  // more, 6803, the report HEAD prints with c2's prefix_length 32.
  blis::test::TempDir dir("blis-trace-session-prefix");
  const std::string text = R"(version: "2"
seed: 24
aggregate_rate: 5
num_requests: 40
clients:
  - id: c0
    rate_fraction: 0.5
    slo_class: sheddable
    arrival: {process: constant}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: constant, params: {value: 200}}
    prefix_group: g2
    prefix_length: 32
  - id: c2
    rate_fraction: 0.5
    slo_class: standard
    arrival: {process: constant}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: constant, params: {value: 16}}
    prefix_group: g2
    prefix_length: 512
    reasoning:
      multi_turn:
        max_rounds: 2
        think_time_us: 500000
)";
  const std::string own = dir.str() + "/own.yaml", group = dir.str() + "/group.yaml";
  std::ofstream(own) << text;
  std::string same = text;
  same.replace(same.find("prefix_length: 512"), 18, "prefix_length: 32");
  std::ofstream(group) << same;
  const std::string run =
      "run --profile-set head --model qwen/qwen3-14b --num-instances 2 --seed 2 --workload-spec ";
  const Result a = run_blis(run + own), b = run_blis(run + group);
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("\"total_input_tokens\": 6803,") != std::string::npos);
}

TEST_CASE("blis replay of HEAD's trace prints and writes what HEAD's replay does", "[golden][trace]") {
  blis::test::TempDir dir("blis-replay");
  const std::string out = dir.str() + "/r";
  const Result r = run_blis("replay --profile-set head --model qwen/qwen3-14b --trace-header " + kDir +
                            "trace.yaml --trace-data " + kDir + "trace.csv --num-instances 3 --routing-policy "
                            "least-loaded --results-path " + out + ".json --trace-output " + out);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == slurp(kDir + "replay.txt"));
  CHECK(slurp(out + ".json") == slurp(kDir + "sim.json"));
  CHECK(slurp(out + ".yaml") == slurp(kDir + "replayed.yaml"));
  CHECK(slurp(out + ".csv") == slurp(kDir + "replayed.csv"));
}

TEST_CASE("a run's trace replays to the same metrics", "[golden][trace]") {
  blis::test::TempDir dir("blis-roundtrip");
  const std::string prefix = dir.str() + "/t";
  const std::string flags = " --profile-set head --model qwen/qwen3-14b --num-instances 2 --routing-policy weighted";
  const Result run = run_blis("run" + flags + " --workload-spec " + kDir + "spec.yaml --trace-output " + prefix);
  REQUIRE(run.status == 0);
  // A horizon past the last completion, as the run had none.
  const Result rep = run_blis("replay" + flags + " --trace-header " + prefix + ".yaml --trace-data " + prefix +
                              ".csv --horizon 600s");
  INFO(rep.err);
  REQUIRE(rep.status == 0);
  CHECK(rep.out == run.out);
}

TEST_CASE("blis calibrate writes HEAD's comparison report", "[golden][trace]") {
  blis::test::TempDir dir("blis-calibrate");
  const std::string report = dir.str() + "/cal.json";
  const Result r = run_blis("calibrate --trace-header " + kDir + "trace.yaml --trace-data " + kDir +
                            "trace.csv --sim-results " + kDir + "sim.json --report " + report +
                            " --warmup-requests 3 --network-rtt-us 500 --network-bandwidth-mbps 100");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());
  // HEAD's numbers (its report less the known_limitations, which blis words itself).
  CHECK(slurp(report) == slurp(kDir + "calibrate.json"));
  CHECK(r.err.find("Matched pairs: 27 (warm-up excluded: 3, unmatched real: 0, unmatched sim: 3)") != std::string::npos);
}

TEST_CASE("trace errors are one line naming the file, before anything runs", "[golden][trace]") {
  blis::test::TempDir dir("blis-trace-bad");
  const std::string header = dir.write("h.yaml", "trace_version: 3\ntime_unit: microseconds\nmode: real\nwarm_up_requests: 0\n");
  std::string csv = slurp(kDir + "trace.csv");
  const std::string good = dir.write("d.csv", csv);
  // A negative input length on the third row (line 4).
  std::string bad = csv;
  size_t line = 0;
  for (int k = 0; k < 3; ++k) line = bad.find('\n', line) + 1;
  const size_t field = [&] {
    size_t p = line;
    for (int k = 0; k < 9; ++k) p = bad.find(',', p) + 1;
    return p;
  }();
  bad.replace(field, bad.find(',', field) - field, "-5");
  const std::string broken = dir.write("bad.csv", bad);
  check_refused("replay --model qwen/qwen3-14b --trace-header " + header + " --trace-data " + broken,
                broken + ":4: parsing input_tokens: negative value -5 not allowed");
  const std::string unknown = dir.write("u.yaml", "trace_version: 3\nmode: real\ncolour: blue\n");
  check_refused("replay --model qwen/qwen3-14b --trace-header " + unknown + " --trace-data " + good, unknown + ":3");
  const std::string offload =
      dir.write("o.yaml", "trace_version: 3\nmode: generated\nkv_offload:\n  cpu_bytes_to_use: 1\n");
  check_refused("replay --model qwen/qwen3-14b --trace-header " + offload + " --trace-data " + good,
                "kv_offload: the trace's KV-cache offload tiers cannot be replayed by blis");
  check_refused("replay --model qwen/qwen3-14b --trace-data " + good, "--trace-header");
  check_refused("replay --model qwen/qwen3-14b --trace-header " + header + " --trace-data " + good +
                    " --workload-spec " + kDir + "spec.yaml",
                "--workload-spec");
  const std::string none = dir.write("none.json", "[{\"request_id\": 999, \"ttft_us\": 1, \"e2e_us\": 2}]");
  const std::string report = dir.str() + "/cal.json";
  check_refused("calibrate --trace-header " + header + " --trace-data " + good + " --sim-results " + none +
                    " --report " + report,
                "no request id of the sim results matches");
  CHECK_FALSE(fs::exists(report));
  check_refused("calibrate --trace-header " + header + " --trace-data " + good + " --sim-results " + none +
                    " --report " + report + " --network-rtt-us -5",
                "--network-rtt-us: must be >= 0");
}

TEST_CASE("calibrate: a row with corrupt timing is not a matched pair", "[golden][trace]") {
  // docs/differences.md 40: HEAD reports num_requests 5 and matched_pairs 4 for these 4 rows.
  blis::test::TempDir dir("blis-calibrate-corrupt");
  std::istringstream csv(slurp(kDir + "trace.csv"));
  std::string line, text;
  for (int k = 0; k < 5 && std::getline(csv, line); ++k) {
    if (k == 2) {  // request 1: its first chunk 10 µs before its send
      std::vector<std::string> f;
      std::stringstream fields(line);
      for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
      f[21] = std::to_string(std::stoll(f[20]) - 10);
      line.clear();
      for (size_t i = 0; i < f.size(); ++i) line += (i ? "," : "") + f[i];
      line += ",";  // the empty last field getline dropped
    }
    text += line + "\n";
  }
  const std::string data = dir.write("d.csv", text);
  const std::string report = dir.str() + "/cal.json";
  const Result r = run_blis("calibrate --trace-header " + kDir + "trace.yaml --trace-data " + data +
                            " --sim-results " + kDir + "sim.json --report " + report);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string json = slurp(report);
  CHECK(json.find("\"num_requests\": 4,") != std::string::npos);
  CHECK(json.find("\"matched_pairs\": 3,") != std::string::npos);
  CHECK(r.err.find("Matched pairs: 3 (warm-up excluded: 0, unmatched real: 1, unmatched sim: 27)") != std::string::npos);
}
