// Output files as a user meets them: checked before the run, "-" for stdout,
// links and FIFOs written through, results never lost.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>

using blis::test::TempDir;

namespace {

const std::string kRun = "run --model qwen/qwen3-14b --rate 5 --num-requests 5 ";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("results path: '-' is stdout, after the report", "[cli]") {
  const Result plain = run_blis(kRun);
  const Result r = run_blis(kRun + "--results-path -");
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind(plain.out, 0) == 0);  // the report first, unchanged
  CHECK(r.out.find("\"requests\": [") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists("-"));
}

TEST_CASE("results path: a symlink is written through, not replaced", "[cli]") {
  TempDir dir;
  const std::string target = dir.write("target.json", "old");
  const std::string link = dir.str() + "/link.json";
  std::filesystem::create_symlink(target, link);
  const Result r = run_blis(kRun + "--results-path " + link);
  REQUIRE(r.status == 0);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(slurp(target).find("\"requests\": [") != std::string::npos);
}

TEST_CASE("results path: a FIFO receives the file", "[cli]") {
  TempDir dir;
  const std::string fifo = dir.str() + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string copy = dir.str() + "/copy.json";
  // A reader on the FIFO, started before blis writes to it.
  const Result r = run_blis("run --model qwen/qwen3-14b --rate 5 --num-requests 5 --results-path " + fifo +
                            " & cat " + fifo + " > " + copy + "; wait");
  REQUIRE(r.status == 0);
  CHECK(slurp(copy).find("\"requests\": [") != std::string::npos);
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("output paths are checked before anything runs", "[cli]") {
  TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {kRun + "--results-path /nonexistent-dir/out.json",
       "--results-path: cannot write /nonexistent-dir/out.json: the folder /nonexistent-dir does not exist"},
      {kRun + "--results-path " + dir.str(), "is a folder; name a file"},
      {"run " + dir.write("sweep.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\n[sweep]\nrate = [1, 2]\n") +
           " --rows-csv /nonexistent-dir/rows.csv",
       "--rows-csv: cannot write /nonexistent-dir/rows.csv"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = check_refused(args, message);
    // Refused before the first simulation: no progress line of a sweep.
    CHECK(r.err.find("ttft_p99_ms=") == std::string::npos);
  }
}

TEST_CASE("discoverability: listings, did-you-mean, case-insensitive GPUs", "[cli]") {
  const Result models = run_blis("models");
  REQUIRE(models.status == 0);
  CHECK(models.out.find("qwen/qwen3-14b") != std::string::npos);
  CHECK(models.out.find("H100/1: 17600") != std::string::npos);
  const Result gpus = run_blis("hardware");
  REQUIRE(gpus.status == 0);
  CHECK(gpus.out.find("H100") != std::string::npos);
  CHECK(gpus.out.find("A100-80") != std::string::npos);
  // `blis plugins` alone shows its help.
  const Result plugins = run_blis("plugins");
  CHECK(plugins.status == 0);
  CHECK(plugins.out.find("inspect") != std::string::npos);
  // h100 is H100.
  CHECK(run_blis("run --model qwen/qwen3-14b --hardware h100 --num-requests 5").out ==
        run_blis("run --model qwen/qwen3-14b --hardware H100 --num-requests 5").out);

  const std::pair<const char*, const char*> cases[] = {
      {"run --model qwen/qwen3-14", "did you mean qwen/qwen3-14b?"},
      {"run --model qwen/qwen3-14b --hardware H10", "did you mean H100?"},
      {"run --model qwen/qwen3-14b --num-instance 4", "unknown flag --num-instance; did you mean --num-instances?"},
      {"runn --model qwen/qwen3-14b", "unknown command 'runn'; did you mean run?"},
      {"plugins inspectt", "unknown command 'inspectt'; did you mean inspect?"},
      {"run --model microsoft/phi-4", "--latency-model blackbox (the coefficient table has microsoft/phi-4"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = check_refused(args, message);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("the steady-state verdict warns about saturated and unsteady runs", "[cli][metrics]") {
  // The tutorial's question: 5 instances cannot serve 200 req/s of qwen3-14b.
  const Result saturated = run_blis("run --model qwen/qwen3-14b --num-instances 5 --rate 200 --num-requests 20000");
  REQUIRE(saturated.status == 0);
  CHECK(saturated.err.find("warning: the run is saturated") != std::string::npos);
  // 13 instances serve it: no warning, and the JSON document says steady.
  const Result steady =
      run_blis("run --model qwen/qwen3-14b --num-instances 13 --rate 200 --num-requests 20000 --format json");
  REQUIRE(steady.status == 0);
  CHECK(steady.err.find("warning") == std::string::npos);
  CHECK(steady.out.find("\"verdict\": \"steady\"") != std::string::npos);
  // Just above one instance's capacity, queues keep growing.
  const Result unsteady = run_blis("run --model qwen/qwen3-14b --rate 18 --num-requests 5000");
  CHECK(unsteady.err.find("warning: the run is not in steady state") != std::string::npos);
}

TEST_CASE("format json: one document jq reads, with the admission policy's rejection reasons", "[cli]") {
  const Result r = run_blis("run --model qwen/qwen3-14b --admission-policy token-bucket --rate 20 --num-requests 200 "
                            "--trace-level decisions --format json");
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("{\n  \"config\": {", 0) == 0);
  CHECK(r.out.find("\"rejected_requests\": 144") != std::string::npos);
  CHECK(r.out.find("\"rejection_reasons\": {\n      \"insufficient tokens\": 144\n    }") != std::string::npos);
  // The reference format is untouched by the trace's reasons.
  const Result plain = run_blis("run --model qwen/qwen3-14b --admission-policy token-bucket --rate 20 --num-requests 200 "
                                "--trace-level decisions --summarize-trace");
  CHECK(plain.out.find("insufficient tokens") == std::string::npos);
  CHECK(plain.out.find("  Rejected: 144\n") != std::string::npos);
}

TEST_CASE("vLLM bench spellings and the reference's log levels are accepted", "[cli]") {
  CHECK(run_blis("run --model qwen/qwen3-14b --request-rate 5 --num-prompts 10 --tensor-parallel-size 1 "
                 "--block-size 16 --log fatal")
            .out == run_blis("run --model qwen/qwen3-14b --rate 5 --num-requests 10 --tp 1 --block-size-in-tokens 16").out);
  CHECK(run_blis("run --model qwen/qwen3-14b --num-requests 5 --log panic").status == 0);
}

TEST_CASE("goodput: SLO targets add attainment to the cluster block; rejections count against it",
          "[cli][metrics]") {
  const std::string base = "run --model qwen/qwen3-14b --admission-policy token-bucket --rate 20 --num-requests 200";
  const Result plain = run_blis(base);
  const Result r = run_blis(base + " --slo-ttft default=100ms --slo-e2e default=30s");
  REQUIRE(r.status == 0);
  // 56 admitted of 200: attainment is at most 56/200.
  const double attainment = metric(r.out, "slo_attainment");
  CHECK(attainment > 0);
  CHECK(attainment <= 0.28);
  CHECK(r.out.find("\"per_class\": {\n    \"default\": {\n      \"count\": 200,") != std::string::npos);
  // Without targets nothing changes.
  CHECK(plain.out.find("goodput") == std::string::npos);
  check_refused("run --model qwen/qwen3-14b --slo-ttft gold=1s", "--slo-ttft: unknown SLO class 'gold'");
}

TEST_CASE("format table: a summary for people, with units and medians", "[cli]") {
  const Result r = run_blis("run --model qwen/qwen3-14b --num-instances 2 --rate 10 --num-requests 200 --format table");
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("cluster      2 instance(s) of qwen/qwen3-14b on H100 (TP 1), latency model roofline\n", 0) == 0);
  CHECK(r.out.find("requests     200 completed, 0 still queued") != std::string::npos);
  CHECK(r.out.find("latency (ms)       mean        p50        p90        p95        p99\n") != std::string::npos);
  CHECK(r.out.find("\nTTFT  ") != std::string::npos);
  CHECK(r.out.find("verdict      steady (of the last third of the arrivals; the percentiles below cover the whole run)\n") != std::string::npos);
  // The JSON document carries the medians too.
  const Result json = run_blis("run --model qwen/qwen3-14b --rate 10 --num-requests 50 --format json");
  CHECK(json.out.find("\"ttft_p50_ms\": ") != std::string::npos);
}

TEST_CASE("documented differences: horizon duration, results of unfinished requests", "[cli][golden]") {
  // docs/differences.md row 20: the duration is the simulated time covered (the reference: 3).
  const Result h = run_blis("run --model qwen/qwen3-14b --rate 2 --num-requests 50 --horizon 3001000");
  REQUIRE(h.status == 0);
  CHECK(metric(h.out, "vllm_estimated_duration_s") == Approx(3.001));
  // Row 21: nothing completed, but the requests that got a first token have a TTFT.
  blis::test::TempDir dir;
  const std::string path = dir.str() + "/r.json";
  const Result r = run_blis("run --model qwen/qwen3-14b --rate 20 --num-requests 5 --horizon 200000 --results-path " + path);
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());  // the stdout block is left out when nothing completed, as in the reference
  std::ifstream f(path);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"completed_requests\": 0,") != std::string::npos);
  CHECK(metric(text, "ttft_mean_ms") > 0);
}
