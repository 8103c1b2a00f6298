// `blis calibrate --fit` closed loop (docs/calibration.md "Fit"): a `blis
// serve` whose blackbox coefficients the fitter is not told (the table's betas
// scaled) is observed with 300 requests at --time-scale 1; the fit from the
// table's coefficients writes a scenario; `blis run` with that scenario
// predicts a different workload (another rate and length mix) that is then
// observed from the same server: within 5 % on mean E2E and 10 % on TTFT p99.
// Also: the JSON's shape, determinism, kv-blocks, and bad input.
#include "catch.hpp"
#include "cli.hpp"
#include "serve_process.hpp"
#include "temp_dir.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The number after "key": in a JSON text (the first one).
double json_number(const std::string& text, const std::string& key) {
  const std::regex re("\"" + key + "\": (-?[0-9.eE+-]+)");
  std::smatch m;
  REQUIRE(std::regex_search(text, m, re));
  return std::stod(m[1]);
}

// The table's blackbox coefficients for qwen/qwen3-14b on H100, TP 1, and
// the server's own: its betas scaled by 1.4, 0.7 and 1.3.
const std::string kAlpha = "8888.089034078324,0.18488961143592303,0";
const std::string kServerBeta = "19009.461327554294,27.611259530324023,35.51960793249843";

const std::string kWorkloadA = " --rate 12 --num-requests 300 --seed 7 --prompt-tokens 700 --prompt-tokens-stdev 400 "
                               "--prompt-tokens-min 50 --prompt-tokens-max 2000 --output-tokens 100 "
                               "--output-tokens-stdev 60 --output-tokens-min 10 --output-tokens-max 300";
const std::string kWorkloadB = " --rate 8 --num-requests 200 --seed 11 --prompt-tokens 900 --prompt-tokens-stdev 200 "
                               "--prompt-tokens-min 200 --prompt-tokens-max 1600 --output-tokens 60 "
                               "--output-tokens-stdev 20 --output-tokens-min 10 --output-tokens-max 150";

}  // namespace

TEST_CASE("calibrate --fit blackbox: fitted on one workload of a served model, predicts another",
          "[golden][calibrate-fit][serial]") {
  blis_test::ServeProcess server("--port 0 --time-scale 1 --model qwen/qwen3-14b --latency-model blackbox "
                                 "--alpha-coeffs " + kAlpha + " --beta-coeffs " + kServerBeta);
  blis::test::TempDir dir("blis-fit");
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const std::string a = dir.str() + "/a", b = dir.str() + "/b";
  const Result obs_a = run_blis("observe --server-url " + url + " --model qwen/qwen3-14b --time-scale 1 --record-itl" + kWorkloadA +
                                " --trace-header " + a + ".yaml --trace-data " + a + ".csv");
  INFO(obs_a.err);
  REQUIRE(obs_a.status == 0);

  const std::string fitted = dir.str() + "/fitted.toml";
  const std::string fit_args = "calibrate --fit blackbox --model qwen/qwen3-14b --trace-header " + a +
                               ".yaml --trace-data " + a + ".csv --format json";
  const Result fit = run_blis(fit_args + " --fit-output " + fitted);
  INFO(fit.err);
  REQUIRE(fit.status == 0);
  INFO(fit.out);
  CHECK(fit.out.find("\"coefficients\": {") != std::string::npos);
  CHECK(fit.out.find("\"heldout\": {") != std::string::npos);
  CHECK(fit.out.find("\"fitted_requests\": 210,") != std::string::npos);
  CHECK(fit.out.find("\"heldout_requests\": 90,") != std::string::npos);
  CHECK(json_number(fit.out, "e2e_mean_error_pct") <= 5.0);
  const std::string file = slurp(fitted);
  CHECK(file.find("# Fitted by blis calibrate --fit blackbox") != std::string::npos);
  CHECK(file.find("latency_model = \"blackbox\"") != std::string::npos);

  // The same inputs give the same output, byte for byte (a short fit).
  const Result once = run_blis(fit_args + " --fit-max-evals 30 --fit-output " + dir.str() + "/f.toml");
  const Result twice = run_blis(fit_args + " --fit-max-evals 30 --fit-output " + dir.str() + "/f.toml");
  REQUIRE(once.status == 0);
  CHECK(twice.out == once.out);
  const std::string short_file = slurp(dir.str() + "/f.toml");
  CHECK(run_blis(fit_args + " --fit-max-evals 30 --fit-output " + dir.str() + "/f.toml").status == 0);
  CHECK(slurp(dir.str() + "/f.toml") == short_file);
  CHECK(once.out.find("\"simulations\": 3") != std::string::npos);

  // A different workload: observed from the server, predicted with the fitted file.
  const Result obs_b = run_blis("observe --server-url " + url + " --model qwen/qwen3-14b --time-scale 1 --record-itl" + kWorkloadB +
                                " --trace-header " + b + ".yaml --trace-data " + b + ".csv");
  INFO(obs_b.err);
  REQUIRE(obs_b.status == 0);
  const Result pred = run_blis("run " + fitted + kWorkloadB);
  INFO(pred.err);
  REQUIRE(pred.status == 0);
  const double e2e_obs = metric(obs_b.out, "e2e_mean_ms", ""), e2e_pred = metric(pred.out, "e2e_mean_ms");
  const double p99_obs = metric(obs_b.out, "ttft_p99_ms", ""), p99_pred = metric(pred.out, "ttft_p99_ms");
  INFO("E2E mean observed " << e2e_obs << " ms, predicted " << e2e_pred << " ms; TTFT p99 observed " << p99_obs
                            << " ms, predicted " << p99_pred << " ms");
  CHECK(std::fabs(e2e_pred - e2e_obs) / e2e_obs <= 0.05);
  // The TTFT tail of an observation is the machine's as much as the server's:
  // with the whole suite beside it on two cores it was measured at -15.8 %, so
  // the test runs alone ([serial]); alone, beside a fuzzer and two builds, it
  // measured +5.2 % (docs/calibration.md). Instrumented (the sanitizer suite),
  // client and server spend several times longer per request outside the
  // simulation, and the tail measures that: there only the mean is held to its
  // bound.
  if (std::getenv("BLIS_TEST_SANITIZED") == nullptr) CHECK(std::fabs(p99_pred - p99_obs) / p99_obs <= 0.10);
  // The table's coefficients, unfitted, miss by more.
  const Result table = run_blis("run --model qwen/qwen3-14b --latency-model blackbox" + kWorkloadB);
  REQUIRE(table.status == 0);
  CHECK(std::fabs(metric(table.out, "e2e_mean_ms") - e2e_obs) / e2e_obs > 0.10);

  // kv-blocks: a 1-D search over the same trace, a scenario too.
  const Result kv = run_blis("calibrate --fit kv-blocks --model qwen/qwen3-14b --latency-model blackbox --alpha-coeffs " +
                             kAlpha + " --beta-coeffs " + kServerBeta + " --trace-header " + a + ".yaml --trace-data " +
                             a + ".csv --fit-output " + dir.str() + "/kv.toml");
  INFO(kv.err);
  REQUIRE(kv.status == 0);
  CHECK(kv.out.find("total_kv_blocks") != std::string::npos);
  CHECK(slurp(dir.str() + "/kv.toml").find("total_kv_blocks = ") != std::string::npos);
}

TEST_CASE("calibrate --fit refuses bad input with one line", "[golden][calibrate-fit]") {
  blis::test::TempDir dir("blis-fit-bad");
  // A trace of 5 requests, from blis run --trace-output.
  const std::string t = dir.str() + "/t";
  const Result gen = run_blis("run --model qwen/qwen3-14b --latency-model blackbox --rate 5 --num-requests 5 "
                              "--trace-output " + t);
  REQUIRE(gen.status == 0);
  const std::string files = " --trace-header " + t + ".yaml --trace-data " + t + ".csv";
  check_refused("calibrate --fit linear --model qwen/qwen3-14b" + files,
                "--fit: unknown fit 'linear'; use blackbox, trained-physics or kv-blocks");
  check_refused("calibrate --fit blackbox --model qwen/qwen3-14b" + files,
                "5 completed requests past the warm-up; --fit needs at least 10");
  check_refused("calibrate --fit blackbox --model qwen/qwen3-14b --sim-results x.json" + files,
                "--sim-results: compares a replay's results; --fit replays the trace itself");
  check_refused("calibrate --model qwen/qwen3-14b --sim-results x.json --report r.json" + files,
                "--model: a run setting applies with --fit");
  check_refused("calibrate --fit-output f.toml --sim-results x.json --report r.json" + files,
                "--fit-output: applies with --fit");
  check_refused("calibrate --report r.json" + files, "--sim-results: is required (or --fit)");
  check_refused("calibrate --fit blackbox --latency-model roofline --model qwen/qwen3-14b" + files,
                "--fit blackbox fits the blackbox latency model");
  // A trace whose requests all failed: nothing to fit.
  std::string csv = slurp(t + ".csv");
  std::string failed;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  failed = line + "\n";
  while (std::getline(in, line)) failed += std::regex_replace(line, std::regex(",ok,"), ",error,") + "\n";
  std::ofstream(dir.str() + "/failed.csv") << failed;
  check_refused("calibrate --fit blackbox --model qwen/qwen3-14b --trace-header " + t + ".yaml --trace-data " +
                    dir.str() + "/failed.csv",
                "no completed requests past the warm-up: nothing to fit");
}
