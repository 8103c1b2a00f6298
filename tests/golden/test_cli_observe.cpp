// `blis observe` end to end (docs/calibration.md) against `blis serve` at
// --time-scale 50: the trace it writes (HEAD's TraceV2, mode real) holds one
// row per request with the lengths asked for and the server's token counts,
// ITL chunks per token, closed-loop users that keep --concurrency requests in
// flight, and a trace that `blis replay` and `blis calibrate` read; bad
// flags are refused before anything is sent, and a server that is down gives
// error rows, not a crash. HEAD's later flags: --scrape-kv-metrics (the
// header's observed_kv_metrics from blis serve's prefix-cache counters),
// --prewarm-duration, --think-time-dist, --detectors, --lazy-generation.
#include "catch.hpp"
#include "cli.hpp"
#include "serve_process.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The CSV's rows as column name -> value.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> names;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::string cur;
    for (char c : l) {
      if (c == ',') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    f.push_back(cur);
    return f;
  };
  if (!std::getline(in, line)) return rows;
  names = split(line);
  while (std::getline(in, line)) {
    const auto f = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < names.size() && i < f.size(); ++i) row[names[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

int64_t num(const std::map<std::string, std::string>& row, const std::string& key) {
  return std::stoll(row.at(key));
}

const std::string kServe = "--port 0 --time-scale 50 --model qwen/qwen3-14b";

}  // namespace

TEST_CASE("blis observe records HEAD's TraceV2 of a served workload, and replay and calibrate read it",
          "[golden][observe]") {
  blis_test::ServeProcess server(kServe);
  blis::test::TempDir dir("blis-observe");
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const std::string h = dir.str() + "/t.yaml", d = dir.str() + "/t.csv";
  const Result r = run_blis("observe --server-url " + url + " --model qwen/qwen3-14b --rate 20 --num-requests 24 "
                            "--prompt-tokens 100 --prompt-tokens-stdev 0 --prompt-tokens-min 100 "
                            "--prompt-tokens-max 100 --output-tokens 12 --output-tokens-stdev 0 "
                            "--output-tokens-min 12 --output-tokens-max 12 --record-itl --warmup-requests 4 --time-scale 50 "
                            "--trace-header " + h + " --trace-data " + d);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("=== Simulation Metrics ===\n{\n  \"instance_id\": \"\",\n  \"completed_requests\": 20,", 0) == 0);
  CHECK(r.out.find("\"itl_mean_ms\": 0,") == std::string::npos);  // ITL measured from the chunks

  const std::string header = slurp(h);
  CHECK(header.find("mode: real\n") != std::string::npos);
  CHECK(header.find("warm_up_requests: 4\n") != std::string::npos);
  CHECK(header.find("server:\n    type: vllm\n    model: qwen/qwen3-14b\n") != std::string::npos);
  const auto rows = csv_rows(slurp(d));
  REQUIRE(rows.size() == 20);  // the 4 warm-up requests are left out
  int64_t id = 4;
  for (const auto& row : rows) {
    INFO(row.at("request_id"));
    CHECK(num(row, "request_id") == id++);
    CHECK(row.at("status") == "ok");
    CHECK(row.at("streaming") == "true");  // --record-itl streams every request
    CHECK(num(row, "input_tokens") == 100);
    CHECK(num(row, "server_input_tokens") == 100);  // one blis serve token per word sent
    CHECK(num(row, "output_tokens") == 12);
    CHECK(num(row, "num_chunks") == 13);            // a chunk per token, then the usage chunk
    CHECK(num(row, "first_chunk_time_us") > num(row, "send_time_us"));
    CHECK(num(row, "last_chunk_time_us") >= num(row, "first_chunk_time_us"));
    CHECK(row.at("x_request_id").size() == 36);
  }
  const auto itl = csv_rows(slurp(dir.str() + "/t.itl.csv"));
  CHECK(itl.size() == 20 * 13);

  // The trace replays in the simulator, and calibrates against the replay.
  const Result rep = run_blis("replay --model qwen/qwen3-14b --trace-header " + h + " --trace-data " + d +
                              " --results-path " + dir.str() + "/sim.json");
  INFO(rep.err);
  REQUIRE(rep.status == 0);
  CHECK(rep.out.find("\"completed_requests\": 20,") != std::string::npos);
  const Result cal = run_blis("calibrate --trace-header " + h + " --trace-data " + d + " --sim-results " + dir.str() +
                              "/sim.json --report " + dir.str() + "/report.json --itl-data " + dir.str() +
                              "/t.itl.csv");
  INFO(cal.err);
  REQUIRE(cal.status == 0);
  CHECK(slurp(dir.str() + "/report.json").find("\"matched_pairs\": 20") != std::string::npos);
}

TEST_CASE("blis observe's closed-loop users keep --concurrency requests in flight", "[golden][observe]") {
  blis_test::ServeProcess server(kServe);
  blis::test::TempDir dir("blis-observe");
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const Result r = run_blis("observe --server-url " + url + " --model qwen/qwen3-14b --api-format chat "
                            "--time-scale 50 --concurrency 3 --num-requests 15 --prompt-tokens 64 --output-tokens 8 "
                            "--trace-header " + dir.str() + "/t.yaml --trace-data " + dir.str() + "/t.csv");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = csv_rows(slurp(dir.str() + "/t.csv"));
  REQUIRE(rows.size() == 15);
  // At every send, fewer than 3 other requests were under way.
  for (const auto& a : rows) {
    int under_way = 0;
    for (const auto& b : rows)
      if (&a != &b && num(b, "send_time_us") <= num(a, "send_time_us") &&
          num(b, "last_chunk_time_us") > num(a, "send_time_us"))
        ++under_way;
    CHECK(under_way < 3);
    CHECK(a.at("status") == "ok");
  }
  // HEAD's Session Metrics after the metrics: each user a session, its first request round 0.
  INFO(r.out);
  CHECK(r.out.find("}\n=== Session Metrics ===\n  Sessions: 3\n  TTFT cold (round 0): mean=") !=
        std::string::npos);
  CHECK(r.out.find(" ms (n=3)\n  TTFT warm (round≥1): mean=") != std::string::npos);
  CHECK(r.out.find(" ms (n=12)\n  Session duration:    mean=") != std::string::npos);
  // Without sessions (an open-loop rate) there is no block.
  const Result open = run_blis("observe --server-url " + url +
                               " --model qwen/qwen3-14b --time-scale 50 --rate 20 "
                               "--num-requests 4 --prompt-tokens 16 --output-tokens 2 --trace-header " +
                               dir.str() + "/o.yaml --trace-data " + dir.str() + "/o.csv");
  REQUIRE(open.status == 0);
  CHECK(open.out.find("Session Metrics") == std::string::npos);
}

TEST_CASE("blis observe refuses bad flags before sending, and a server that is down gives error rows",
          "[golden][observe]") {
  blis::test::TempDir dir("blis-observe");
  const std::string files = " --trace-header " + dir.str() + "/t.yaml --trace-data " + dir.str() + "/t.csv";
  check_refused("observe --model m --rate 5 --num-requests 3" + files, "--server-url: is required");
  check_refused("observe --server-url https://example.com --model m --rate 5 --num-requests 3" + files,
                "https is not supported");
  check_refused("observe --server-url http://127.0.0.1:1 --model m --rate 5" + files,
                "give --num-requests or --horizon");
  check_refused("observe --server-url http://127.0.0.1:1 --model m --rate 5 --num-requests 3 --record-itl "
                "--no-streaming" + files,
                "--record-itl: needs streaming responses");
  check_refused("observe --server-url http://127.0.0.1:1 --model m --rate 5 --num-requests 3 --timeout 0" + files,
                "--timeout: must be between 1 and 86400");
  CHECK_FALSE(std::filesystem::exists(dir.str() + "/t.csv"));

  // Port 1 refuses connections: every request is an error row, and the run ends.
  const Result r = run_blis("observe --server-url http://127.0.0.1:1 --model m --rate 50 --num-requests 5" + files);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = csv_rows(slurp(dir.str() + "/t.csv"));
  REQUIRE(rows.size() == 5);
  for (const auto& row : rows) {
    CHECK(row.at("status") == "error");
    CHECK(row.at("error_message").find("HTTP error: connecting") == 0);
  }
  CHECK(r.out.find("\"completed_requests\": 0,") != std::string::npos);
}

TEST_CASE("blis observe --scrape-kv-metrics writes HEAD's observed_kv_metrics from blis serve's prefix-cache "
          "counters, after a prewarm that is not recorded",
          "[golden][observe]") {
  blis_test::ServeProcess server(kServe);
  blis::test::TempDir dir("blis-observe");
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const std::string h = dir.str() + "/t.yaml", d = dir.str() + "/t.csv";
  // Every request starts with the same 64-token prefix: the server's cache finds it.
  const Result r = run_blis(
      "observe --server-url " + url +
      " --model qwen/qwen3-14b --rate 20 --num-requests 10 "
      "--prefix-tokens 64 --prompt-tokens 64 --output-tokens 4 --time-scale 50 "
      "--scrape-kv-metrics --vllm-commit 0a1b2c3 --prewarm-duration 10s --lazy-generation --log info "
      "--detectors all --saturation-report " +
      dir.str() + "/sat.json --trace-header " + h + " --trace-data " + d);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("observe: prewarm complete: ") != std::string::npos);
  const auto rows = csv_rows(slurp(d));
  REQUIRE(rows.size() == 10);  // the prewarm's requests are not in the trace
  CHECK(num(rows.front(), "request_id") == 0);
  const std::string header = slurp(h);
  INFO(header);
  const std::string block = "observed_kv_metrics:\n    source: gpu-prefix-cache-fallback\n    hit_rate: ";
  const auto at = header.find(block);
  REQUIRE(at != std::string::npos);
  CHECK(header.find("\n    vllm_commit: 0a1b2c3\n") != std::string::npos);
  // Queries and hits are prompt tokens: 10 prompts of at least 64, whose prefix is found after the first.
  // (HEAD writes the commit plain, as here: yaml.v3 quotes only what would read as a number.)
  const auto q = header.find("block_queries: ");
  REQUIRE(q != std::string::npos);
  CHECK(std::stoll(header.substr(q + 15)) >= 640);
  const auto hits = header.find("block_hits: ");
  REQUIRE(hits != std::string::npos);
  CHECK(std::stoll(header.substr(hits + 12)) >= 9 * 48);
  CHECK(std::stod(header.substr(at + block.size())) > 0.1);
  // --detectors: the labels over the observed requests.
  CHECK(r.out.find(",\n  \"saturation\": {\n    \"composite\": \"") != std::string::npos);
  CHECK(r.out.find("\"backlog-drift\": \"") != std::string::npos);
  // --saturation-report: HEAD's per-event verdicts of each detector, and their final labels.
  const std::string sat = slurp(dir.str() + "/sat.json");
  CHECK(sat.rfind("{\n  \"final\": {\n    \"backlog-drift\": \"", 0) == 0);
  CHECK(sat.find("\n  \"trace\": [\n    {\n      \"timestamp\": ") != std::string::npos);
  CHECK(sat.find("\"detector\": \"threshold\"") != std::string::npos);

  // The block is read back (strictly) and kept by a replay's re-export.
  const Result rep = run_blis("replay --model qwen/qwen3-14b --trace-header " + h + " --trace-data " + d +
                              " --trace-output " + dir.str() + "/re");
  INFO(rep.err);
  REQUIRE(rep.status == 0);
  const std::string re = slurp(dir.str() + "/re.yaml");
  CHECK(re.find(header.substr(at, header.find("vllm_commit", at) - at)) != std::string::npos);
}

TEST_CASE("blis observe --scrape-kv-metrics: a metrics page that cannot be read warns and leaves the block out",
          "[golden][observe]") {
  blis_test::ServeProcess server(kServe);
  blis::test::TempDir dir("blis-observe");
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const std::string h = dir.str() + "/t.yaml", d = dir.str() + "/t.csv";
  Result r = run_blis("observe --server-url " + url + " --model qwen/qwen3-14b --rate 20 --num-requests 3 "
                      "--output-tokens 4 --time-scale 50 --scrape-kv-metrics --kv-metrics-url http://127.0.0.1:1/metrics "
                      "--trace-header " + h + " --trace-data " + d);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("--scrape-kv-metrics: the /metrics scrape before the workload failed (GET "
                   "http://127.0.0.1:1/metrics: ") != std::string::npos);
  CHECK(slurp(h).find("observed_kv_metrics") == std::string::npos);
  CHECK(csv_rows(slurp(d)).size() == 3);

  // A page without any KV counter (the server's /health): the same.
  r = run_blis("observe --server-url " + url + " --model qwen/qwen3-14b --rate 20 --num-requests 3 "
               "--output-tokens 4 --time-scale 50 --scrape-kv-metrics --kv-metrics-url " + url + "/health "
               "--trace-header " + h + " --trace-data " + d);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("no recognized KV cache counters found in /metrics") != std::string::npos);
  CHECK(slurp(h).find("observed_kv_metrics") == std::string::npos);
}

TEST_CASE("blis observe --think-time-dist: closed-loop users wait the drawn think time; a bad spec is refused",
          "[golden][observe]") {
  blis_test::ServeProcess server(kServe);
  blis::test::TempDir dir("blis-observe");
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const std::string files = " --trace-header " + dir.str() + "/t.yaml --trace-data " + dir.str() + "/t.csv";
  const Result r = run_blis("observe --server-url " + url + " --model qwen/qwen3-14b --time-scale 50 "
                            "--concurrency 2 --num-requests 8 --prompt-tokens 32 --output-tokens 4 "
                            "--think-time-dist constant:value=2s" + files);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = csv_rows(slurp(dir.str() + "/t.csv"));
  REQUIRE(rows.size() == 8);
  // Two users, four requests each: three think times of 2 s (trace time) between a user's requests.
  int64_t first = INT64_MAX, last = 0;
  std::set<std::string> sessions;
  for (const auto& row : rows) {
    CHECK(row.at("status") == "ok");
    sessions.insert(row.at("session_id"));  // as HEAD names a concurrency user's requests
    first = std::min(first, num(row, "send_time_us"));
    last = std::max(last, num(row, "send_time_us"));
  }
  CHECK(last - first >= 3 * 2'000'000);
  CHECK(sessions == std::set<std::string>{"concurrency_distribution_user_0", "concurrency_distribution_user_1"});

  const std::string base = "observe --server-url http://127.0.0.1:1 --model m --num-requests 4";
  check_refused(base + " --concurrency 2 --think-time-dist lognormal:mu=2" + files,
                "--think-time-dist: lognormal needs the parameter sigma");
  check_refused(base + " --concurrency 2 --think-time-dist lognormal:mu=2,sigma=0" + files,
                "--think-time-dist: lognormal: sigma must be > 0");
  check_refused(base + " --concurrency 2 --think-time-dist lognormal:mu=2,sigma=0.5,min=30s,max=3s" + files,
                "--think-time-dist: lognormal: min (30000000 µs) must be <= max (3000000 µs)");
  check_refused(base + " --concurrency 2 --think-time-dist weibull:k=1" + files,
                "--think-time-dist: unknown type 'weibull': lognormal or constant");
  check_refused(base + " --concurrency 2 --think-time-dist constant:value=fast" + files,
                "--think-time-dist: invalid value 'fast'");
  check_refused(base + " --concurrency 2 --think-time-dist 500ms" + files, "--think-time-dist: must be TYPE:KEY=VALUE");
  check_refused(base + " --concurrency 2 --think-time-dist constant:value=1s,mu=2" + files,
                "--think-time-dist: constant: unknown parameter 'mu'");
  check_refused(base + " --rate 5 --think-time-dist constant:value=1s" + files, "--think-time-dist: needs --concurrency");
  check_refused(base + " --concurrency 2 --think-time-ms 100 --think-time-dist constant:value=1s" + files,
                "--think-time-dist: cannot be given with --think-time-ms");
  check_refused(base + " --rate 5 --prewarm-duration 60" + files, "--prewarm-duration: must be a duration with its unit");
  check_refused(base + " --rate 5 --prewarm-duration -1s" + files, "--prewarm-duration: must be >= 0");
  check_refused(base + " --rate 5 --detectors nope" + files, "--detectors");
  check_refused(base + " --rate 5 --num-requests 4 --saturation-report s.json" + files,
                "--saturation-report: needs --detectors (the detectors it is about)");
  CHECK_FALSE(std::filesystem::exists(dir.str() + "/t.yaml.tmp"));
}

TEST_CASE("blis observe --help lists HEAD's flags", "[golden][observe]") {
  const Result r = run_blis("observe --help");
  REQUIRE(r.status == 0);
  for (const char* flag : {"--server-url",
                           "--model",
                           "--trace-header",
                           "--trace-data",
                           "--api-key",
                           "--server-type",
                           "--api-format",
                           "--max-concurrency",
                           "--warmup-requests",
                           "--no-streaming",
                           "--record-itl",
                           "--itl-output",
                           "--rtt-ms",
                           "--timeout",
                           "--unconstrained-output",
                           "--prewarm-duration",
                           "--scrape-kv-metrics",
                           "--kv-metrics-url",
                           "--vllm-commit",
                           "--think-time-dist",
                           "--think-time-ms",
                           "--lazy-generation",
                           "--detectors",
                           "--concurrency",
                           "--rate",
                           "--workload-spec",
                           "--workload",
                           "--slo-ttft",
                           "--time-scale",
                           "--saturation-config",
                           "--saturation-report",
                           "--saturation-final-window"})
    CHECK(r.out.find(std::string(flag) + " ") != std::string::npos);
}
