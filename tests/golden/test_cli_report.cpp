// Saturation detectors on the command line, the HTML reports of `blis run`
// and `blis plan`, replicates, and progress on stderr.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// FNV-1a: a stable fingerprint of a report's bytes.
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

TEST_CASE("run --detectors prints the detectors' labels; every run is judged anyway", "[cli][metrics]") {
  // 11 instances for 200 req/s: TTFT still looks flat, but the requests in the system keep growing.
  const std::string base = "run --model qwen/qwen3-14b --rate 200 --num-requests 12000 --num-instances 11";
  const Result plain = run_blis(base);
  REQUIRE(plain.status == 0);
  CHECK(plain.out.find("\"saturation\"") == std::string::npos);  // stdout as before
  CHECK(plain.err.find("the backlog-drift saturation detector calls the run overloaded") != std::string::npos);
  const Result labelled = run_blis(base + " --detectors 'backlog-drift, composite,,composite'");
  REQUIRE(labelled.status == 0);
  CHECK(labelled.out.find("  \"saturation\": {\n    \"composite\": \"OVERLOADED\",\n    \"backlog-drift\": "
                          "\"OVERLOADED\"\n  }") != std::string::npos);
  // A steady run: backlog-drift STABLE and no warning.
  const Result steady = run_blis("run --model qwen/qwen3-14b --rate 200 --num-requests 12000 --num-instances 16 "
                                 "--detectors all --format json");
  REQUIRE(steady.status == 0);
  CHECK(steady.out.find("\"backlog-drift\": \"STABLE\"") != std::string::npos);
  CHECK(steady.err.find("saturation detector") == std::string::npos);
  check_refused("run --model qwen/qwen3-14b --detectors all,composite", "'all' cannot be mixed");
  check_refused("run --model qwen/qwen3-14b --detectors drift", "unknown saturation detector 'drift'");
}

TEST_CASE("run --report writes the CDFs and the time series, atomically, stdout unchanged", "[cli][report]") {
  blis::test::TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --rate 40 --num-requests 2000 --num-instances 2";
  const Result plain = run_blis(base);
  const Result r = run_blis(base + " --report '" + (std::filesystem::path(dir.str()) / "rep").string() + "'");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == plain.out);
  for (const char* name : {"report.html", "latency_cdf.svg", "queue.svg", "kv.svg"})
    CHECK(std::filesystem::exists(std::filesystem::path(dir.str()) / "rep" / name));
  const std::string html = slurp(std::filesystem::path(dir.str()) / "rep" / "report.html");
  CHECK(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("Requests waiting and running") != std::string::npos);
  CHECK(html.find("KV cache in use") != std::string::npos);
  // Same run, same bytes; no temporary file left beside them.
  const Result again = run_blis(base + " --report '" + (std::filesystem::path(dir.str()) / "rep2").string() + "'");
  REQUIRE(again.status == 0);
  CHECK(slurp(std::filesystem::path(dir.str()) / "rep2" / "report.html") == html);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(dir.str()) / "rep")) files += e.is_regular_file();
  CHECK(files == 4);
  // A report folder that is a file is refused before the run.
  const std::string file = dir.write("taken", "x");
  check_refused(base + " --report '" + file + "'", "is not a folder");
}

TEST_CASE("plan --report: the charts of the search, the same bytes whatever --jobs", "[cli][report][plan]") {
  blis::test::TempDir dir;
  const std::string base = "plan --model qwen/qwen3-14b --rate 40 --slo 'ttft_p99<500ms' --max-instances 8 -q";
  const Result r = run_blis(base + " --jobs 2 --report '" + (std::filesystem::path(dir.str()) / "a").string() + "'");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());  // --quiet
  CHECK(r.out == run_blis(base).out);  // stdout does not depend on --report
  for (const char* name : {"report.html", "ttft_p99.svg", "itl_p99.svg", "e2e_p99.svg", "ttft_cdf.svg", "itl_cdf.svg",
                           "e2e_cdf.svg", "ttft_tail.svg", "itl_tail.svg", "e2e_tail.svg", "throughput.svg"})
    CHECK(std::filesystem::exists(std::filesystem::path(dir.str()) / "a" / name));
  const std::string html = slurp(std::filesystem::path(dir.str()) / "a" / "report.html");
  CHECK(html.find("minimum instances: 3") != std::string::npos);
  CHECK(html.find("target: ttft_p99&lt;500ms") != std::string::npos);
  CHECK(html.find("answer: 3") != std::string::npos);
  CHECK(html.find("Served against offered load") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  // Provenance: the setup and the answer's configuration, which blis run reproduces.
  CHECK(html.find("<h2>Provenance</h2>") != std::string::npos);
  CHECK(html.find("setup: H100 TP 1, roofline latency") != std::string::npos);
  CHECK(html.find("num_instances = 3") != std::string::npos);
  // One colour per role: the target is red in the CDF as in the p99 chart,
  // the answer green, the p99 level grey.
  const std::string cdf = slurp(std::filesystem::path(dir.str()) / "a" / "ttft_cdf.svg");
  CHECK(cdf.find("fill=\"#d62728\" font-weight=\"normal\">target: ttft_p99&lt;500ms") != std::string::npos);
  CHECK(cdf.find("fill=\"#777777\" font-weight=\"normal\">p99<") != std::string::npos);
  const std::string p99 = slurp(std::filesystem::path(dir.str()) / "a" / "ttft_p99.svg");
  CHECK(p99.find("fill=\"#d62728\" font-weight=\"normal\">target: ttft_p99&lt;500ms") != std::string::npos);
  CHECK(p99.find("fill=\"#2ca02c\" font-weight=\"bold\">answer: 3") != std::string::npos);
  REQUIRE(run_blis(base + " --jobs 1 --report '" + (std::filesystem::path(dir.str()) / "b").string() + "'").status == 0);
  CHECK(slurp(std::filesystem::path(dir.str()) / "b" / "report.html") == html);
  // The bytes themselves (golden): update only for a deliberate change of the report.
  CHECK(fnv1a(html) == 1763003362073457385ull);  // issue 26: provenance lists shedding_policy
}

TEST_CASE("plan --report with --hardware: cost per candidate", "[cli][report][plan]") {
  blis::test::TempDir dir;
  const Result r = run_blis("plan --model qwen/qwen3-14b --rate 20 --slo 'ttft_p99<500ms' --hardware H100,A100-80 "
                            "--gpu-cost H100=3.0,A100-80=1.8 --jobs 2 -q --report '" + (std::filesystem::path(dir.str()) / "c").string() + "'");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string cost = slurp(std::filesystem::path(dir.str()) / "c" / "cost.svg");
  CHECK(cost.find(">H100<") != std::string::npos);
  CHECK(cost.find(">A100-80<") != std::string::npos);
  CHECK(cost.find("$ per hour") != std::string::npos);
  CHECK(slurp(std::filesystem::path(dir.str()) / "c" / "report.html").find("cheapest: ") != std::string::npos);
}

TEST_CASE("plan --replicates: every seed must meet the targets, percentiles with t-intervals", "[cli][plan]") {
  const std::string base = "plan --model qwen/qwen3-14b --rate 10 --slo 'ttft_p99<500ms' --max-instances 2 --jobs 2";
  const Result r = run_blis(base + " --replicates 3");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("3 replicates per trial (seeds 42 to 44); figures are means with 95 % t-intervals") !=
        std::string::npos);
  // Steady-window figures (warm-up and drain cut: docs/planning.md).
  CHECK(r.out.find("        1        60s  steady                   55.92 ± 3.63") != std::string::npos);
  CHECK(r.out.find("minimum instances: 1 (ttft_p99_ms = 55.9 ± 3.6 ms, steady in all 3 replicates)") !=
        std::string::npos);
  CHECK(r.out.find("replicates' own answers: seed 42: 1, seed 43: 1, seed 44: 1") != std::string::npos);
  const Result json = run_blis(base + " --replicates 3 --format json");
  REQUIRE(json.status == 0);
  CHECK(json.out.find("\"replicates\": 3, \"ci95\": {\"ttft_p99_ms\": 3.6") != std::string::npos);
  // One replicate is the plan without replicates.
  CHECK(run_blis(base + " --replicates 1").out == run_blis(base).out);
  check_refused(base + " --replicates 0", "--replicates: must be between 1 and 100");
}

TEST_CASE("plan progress: lines on stderr when it is not a terminal, nothing with --quiet", "[cli][plan]") {
  const std::string base = "plan --model qwen/qwen3-14b --rate 10 --slo 'ttft_p99<500ms' --max-instances 2";
  const Result r = run_blis(base);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("blis plan: 1 instance(s) at 10 req/s, 600 requests: meets every target\n") != std::string::npos);
  CHECK(r.err.find('\r') == std::string::npos);  // no bar drawn into a file
  const Result q = run_blis(base + " --quiet");
  CHECK(q.err.empty());
  CHECK(q.out == r.out);
}

TEST_CASE("run progress: a long run prints a line on stderr, never on stdout; --quiet silences it", "[cli]") {
  // BLIS_PROGRESS_DELAY=0 makes a short run count as long.
  const std::string args = "run --model qwen/qwen3-14b --rate 20 --num-requests 3000 --num-instances 2";
  const Result r = run_blis(args, "", "BLIS_PROGRESS_DELAY=0");
  REQUIRE(r.status == 0);
  CHECK(r.err.find("blis run: 1024/3000 (34 %), about ") != std::string::npos);
  CHECK(r.out == run_blis(args).out);
  CHECK(run_blis(args).err.empty());  // short runs print nothing
  const Result q = run_blis(args + " --quiet", "", "BLIS_PROGRESS_DELAY=0");
  CHECK(q.err.empty());
  CHECK(q.out == r.out);
}
