// BLIS HEAD's last run flags: the saturation detectors' settings and report
// (--saturation-config, --saturation-final-window, --saturation-report),
// --lazy-generation and --model-autoscaler-interval-us. The expected files
// under tests/golden/expected/head/ are HEAD's (f90a1e3a) for the command
// line below.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

std::string head_file(const std::string& name) {
  return read_file(std::string(BLIS_TEST_SOURCE_DIR) + "/tests/golden/expected/head/" + name);
}

Result ok(const std::string& args) {
  Result r = run_blis(args);
  INFO("blis " << args << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  return r;
}

// The cluster's "saturation" member, "" without one.
std::string labels(const std::string& out) {
  const size_t at = out.find("  \"saturation\": {");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find("  }", at) + 3 - at);
}

// The cluster's metrics block.
std::string cluster_block(const std::string& out) {
  const size_t at = out.find("\"instance_id\": \"cluster\"");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find("\n}", at) - at);
}

const std::string kRun =
    "run --model qwen/qwen3-14b --seed 7 --rate 20 --num-requests 20 --num-instances 2 "
    "--detectors threshold,composite";

}  // namespace

TEST_CASE("CLI: --saturation-report writes HEAD's file byte for byte under --profile-set head",
          "[cli][head][saturation]") {
  blis::test::TempDir dir;
  const std::string path = dir.str() + "/sat.json";
  const Result r = ok(kRun + " --profile-set head --saturation-report " + path);
  // Every request completes, so the detectors see what HEAD's see: the same
  // record per event and detector, and the same final labels, which stdout
  // prints by name as HEAD does.
  CHECK(read_file(path) == head_file("saturation_report.json"));
  CHECK(r.out == head_file("saturation_report.txt"));
  // Without the report the labels are the same and nothing is written.
  const Result plain = ok(kRun + " --profile-set head");
  CHECK(plain.out == r.out);
  // blis's own form keeps the roster order on stdout; the file has the same
  // final labels and records (its times are the simulation's µs, its sums
  // prefix sums: the last digits may differ).
  const std::string seed_path = dir.str() + "/seed.json";
  const Result seed = ok(kRun + " --saturation-report " + seed_path);
  const std::string ours = read_file(seed_path), head = read_file(path);
  CHECK(ours.substr(0, ours.find("\"trace\"")) == head.substr(0, head.find("\"trace\"")));
  auto records = [](const std::string& text) {
    size_t n = 0;
    for (size_t at = 0; (at = text.find("\"timestamp\"", at)) != std::string::npos; ++at) ++n;
    return n;
  };
  CHECK(records(ours) == 80);  // 20 arrivals and 20 completions, two detectors
  CHECK(records(head) == 80);
  CHECK(labels(seed.out) == "  \"saturation\": {\n    \"composite\": \"BACKLOGGED\",\n    \"threshold\": \"STABLE\"\n  }");
}

TEST_CASE("CLI: --saturation-config and --saturation-final-window change the labels as in HEAD",
          "[cli][head][saturation]") {
  blis::test::TempDir dir;
  const std::string cfg = dir.str() + "/sat.yaml";
  write_file(cfg, "threshold:\n  threshold_ms: 100\n");
  // HEAD's labels for these three command lines.
  CHECK(labels(ok(kRun + " --profile-set head").out) ==
        "  \"saturation\": {\n    \"composite\": \"BACKLOGGED\",\n    \"threshold\": \"STABLE\"\n  }");
  CHECK(labels(ok(kRun + " --profile-set head --saturation-config " + cfg).out) ==
        "  \"saturation\": {\n    \"composite\": \"BACKLOGGED\",\n    \"threshold\": \"STABLE\"\n  }");
  CHECK(labels(ok(kRun + " --profile-set head --saturation-config " + cfg + " --saturation-final-window 200ms").out) ==
        "  \"saturation\": {\n    \"composite\": \"OVERLOADED\",\n    \"threshold\": \"OVERLOADED\"\n  }");
  // An empty file is the defaults.
  write_file(cfg, "# nothing\n");
  CHECK(labels(ok(kRun + " --saturation-config " + cfg).out) == labels(ok(kRun).out));
}

TEST_CASE("CLI: the saturation flags refuse bad input before the run, naming where", "[cli][saturation]") {
  blis::test::TempDir dir;
  const std::string cfg = dir.str() + "/sat.yaml";
  const std::string base = "run --model qwen/qwen3-14b --num-requests 10";
  for (const char* flag : {"--saturation-config x.yaml", "--saturation-report r.json", "--saturation-final-window 30s"})
    check_refused(base + " " + flag, "needs --detectors");
  write_file(cfg, "backlog_drift:\n  window_size_sec: 5\n");
  check_refused(base + " --detectors threshold --saturation-config " + cfg,
                cfg + ":2:3: saturation config: backlog_drift block is not valid for --detectors \"threshold\"");
  write_file(cfg, "threshold:\n  threshold_ms: -1\n");
  check_refused(base + " --detectors threshold --saturation-config " + cfg,
                cfg + ":2:17: saturation config: threshold.threshold_ms must be a finite value > 0, got -1");
  write_file(cfg, "backlog_drift:\n  saturated_drain_ratio: 0.99\n");
  check_refused(base + " --detectors all --saturation-config " + cfg, "must be <= transient_drain_ratio (0.98)");
  write_file(cfg, "threshold:\n  threshold: 5\n");
  check_refused(base + " --detectors all --saturation-config " + cfg, "unknown key \"threshold.threshold\"");
  check_refused(base + " --detectors all --saturation-config " + dir.str() + "/missing.yaml", "missing.yaml");
  check_refused(base + " --detectors all --saturation-final-window 0s", "--saturation-final-window");
  check_refused(base + " --detectors all --saturation-final-window soon", "--saturation-final-window");
  check_refused(base + " --detectors all --saturation-report " + dir.str() + "/no/such/dir/r.json", "--saturation-report");
}

TEST_CASE("CLI: backlog_drift.window_size_sec sets the drift's windows and the final vote's window",
          "[cli][saturation]") {
  blis::test::TempDir dir;
  const std::string cfg = dir.str() + "/sat.yaml";
  write_file(cfg, "backlog_drift:\n  window_size_sec: 1\n");
  const std::string run = "run --model qwen/qwen3-14b --rate 200 --num-requests 12000 --num-instances 11 "
                          "--detectors backlog-drift";
  // 20 req/s more than the instances serve: the drift is over the arrivals'
  // span in 1 s windows, overloaded either way; a 1 s final window is the
  // same as --saturation-final-window 1s.
  const std::string a = ok(run + " --saturation-config " + cfg).out;
  CHECK(labels(a).find("OVERLOADED") != std::string::npos);
  write_file(cfg, "backlog_drift:\n  window_size_sec: 1\n");
  CHECK(a == ok(run + " --saturation-config " + cfg + " --saturation-final-window 1s").out);
}

TEST_CASE("CLI: --lazy-generation changes nothing (blis always draws requests as they come due)",
          "[cli][head][workload]") {
  const std::string run = "run --model qwen/qwen3-14b --seed 3 --rate 30 --num-requests 200 --num-instances 2";
  CHECK(ok(run + " --lazy-generation").out == ok(run).out);
  CHECK(ok(run + " --lazy-generation --profile-set head").out == ok(run + " --profile-set head").out);
  // And it is part of the configuration a dump writes.
  CHECK(ok(run + " --lazy-generation --dump-config").out.find("lazy_generation = true") != std::string::npos);
}

TEST_CASE("CLI: --model-autoscaler-interval-us runs the autoscaler as HEAD's policy-file interval does",
          "[cli][head][autoscaling]") {
  blis::test::TempDir dir;
  const std::string policy = dir.str() + "/p.yaml";
  write_file(policy, "autoscaler:\n  interval_us: 5000000\n");
  const std::string run = "run --model qwen/qwen3-14b --rate 1 --num-requests 50 --num-instances 3 --profile-set head";
  // HEAD: the tick at 5 s finds demand for one instance and drains two; its
  // metrics blocks are HEAD's (checked against f90a1e3a: same cluster block).
  const Result flag = ok(run + " --model-autoscaler-interval-us 5e6");
  CHECK(flag.out == ok(run + " --policy-config " + policy).out);
  CHECK(flag.out.find("5 s: default -2") != std::string::npos);
  CHECK(cluster_block(flag.out).find("\"e2e_mean_ms\": 7392.7168,") != std::string::npos);
  // HEAD's first tick, at t = 0, reads snapshots never refreshed and warns
  // of zero KV capacity per instance (docs/differences.md row 49): not blis.
  CHECK(flag.err.find("TotalKvCapacityTokens") == std::string::npos);
  CHECK(flag.err.find("KV capacity") == std::string::npos);
  // It replaces the policy file's interval; 0 turns the autoscaler off.
  write_file(policy, "autoscaler:\n  interval_us: 60000000\n  analyzer:\n    scale_down_boundary: 0.3\n");
  CHECK(ok(run + " --policy-config " + policy + " --model-autoscaler-interval-us 5000000").out.find("5 s: default") !=
        std::string::npos);
  CHECK(ok(run + " --policy-config " + policy + " --model-autoscaler-interval-us 0").out == ok(run).out);
  // One instance: HEAD never removes it and cannot add one without node
  // pools; blis's pool max is its initial count. The requests' metrics are
  // those of a run without the autoscaler.
  const std::string one = "run --model qwen/qwen3-14b --rate 10 --num-requests 50 --profile-set head";
  CHECK(cluster_block(ok(one + " --model-autoscaler-interval-us 1000000").out) == cluster_block(ok(one).out));
  check_refused(one + " --model-autoscaler-interval-us -1", "--model-autoscaler-interval-us");
  check_refused(one + " --model-autoscaler-interval-us 0.5", "must be 0 or at least 1");
}
