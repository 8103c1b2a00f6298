// The blis binary against the reference's printed figures (spec engine §12),
// and its behaviour on bad input: one clear line on stderr, exit 2, nothing
// on stdout, no partial file.
#include "catch.hpp"
#include "cli.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

TEST_CASE("the default run prints the reference's block (but for Q6)", "[golden][cli]") {
  Result r = run_blis("run --model qwen/qwen3-14b");
  REQUIRE(r.status == 0);
  std::ifstream f(std::string(BLIS_TEST_SOURCE_DIR) + "/tests/golden/expected/default_run.txt");
  std::string expected((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(r.out == expected);
}

TEST_CASE("reference figures of the tutorial", "[golden][cli]") {
  SECTION("saturated single instance: 16.86 req/s") {
    Result r = run_blis("run --model qwen/qwen3-14b --rate 500 --num-requests 2000");
    REQUIRE(r.status == 0);
    CHECK(metric(r.out, "responses_per_sec") == Approx(16.859034573285825).epsilon(1e-12));
    CHECK(metric(r.out, "ttft_p99_ms") == Approx(104208.47).epsilon(1e-6));
    CHECK(metric(r.out, "preemption_count") == 0);
  }
  SECTION("2 req/s: TTFT p99 50.55 ms") {
    Result r = run_blis("run --model qwen/qwen3-14b --rate 2 --num-requests 50");
    REQUIRE(r.status == 0);
    CHECK(metric(r.out, "ttft_p99_ms") == Approx(50.54851).epsilon(1e-12));
    CHECK(metric(r.out, "responses_per_sec") == Approx(1.7006642488436419).epsilon(1e-12));
  }
  SECTION("other latency models at saturation") {
    const std::pair<const char*, double> cases[] = {
        {"blackbox", 15.042}, {"trained-roofline", 11.917}, {"crossmodel", 27.018}};
    for (const auto& [model, rps] : cases) {
      Result r = run_blis(std::string("run --model qwen/qwen3-14b --rate 500 --num-requests 2000 --latency-model ") + model);
      REQUIRE(r.status == 0);
      INFO(model);
      CHECK(metric(r.out, "responses_per_sec") == Approx(rps).epsilon(1e-4));
    }
  }
  SECTION("cluster: 4 / 8 / 12 instances at 200 req/s") {
    const std::pair<int, double> cases[] = {{4, 1496.931}, {8, 62.976}, {12, 54.248}};
    for (const auto& [n, p99] : cases) {
      Result r = run_blis("run --model qwen/qwen3-14b --num-instances " + std::to_string(n) +
                      " --rate 200 --num-requests 1000");
      REQUIRE(r.status == 0);
      INFO(n << " instances");
      CHECK(metric(r.out, "ttft_p99_ms") == Approx(p99).epsilon(0.01));
      CHECK(r.out.find("\"instance_id\": \"instance_0\"") != std::string::npos);
    }
  }
  SECTION("prefix caching: cache hit rate 0.3342") {
    Result r = run_blis("run --model qwen/qwen3-14b --rate 5 --num-requests 30 --prefix-tokens 512");
    REQUIRE(r.status == 0);
    CHECK(r.out.find("Cache Hit Rate: 0.3342\n") != std::string::npos);
  }
  SECTION("max-model-len drops unservable requests") {
    Result r = run_blis("run --model qwen/qwen3-14b --rate 5 --num-requests 30 --max-model-len 900");
    REQUIRE(r.status == 0);
    CHECK(r.out.find("Dropped Unservable: 19\n") != std::string::npos);
  }
  SECTION("KV pressure terminates, with preemptions (the reference never ends)") {
    Result r = run_blis("run --model qwen/qwen3-14b --total-kv-blocks 3000 --rate 50 --num-requests 200");
    REQUIRE(r.status == 0);
    CHECK(metric(r.out, "completed_requests") == 200);
    CHECK(metric(r.out, "preemption_count") > 0);
  }
  SECTION("a CPU tier without pressure changes nothing") {
    Result a = run_blis("run --model qwen/qwen3-14b --rate 100 --num-requests 500");
    Result b = run_blis("run --model qwen/qwen3-14b --kv-cpu-blocks 50000 --kv-offload-threshold 0.9 "
                    "--kv-transfer-bandwidth 100.0 --rate 100 --num-requests 500");
    REQUIRE(a.status == 0);
    CHECK(a.out == b.out);
  }
}

TEST_CASE("results file: the metrics plus one record per request", "[golden][cli]") {
  const auto path = std::filesystem::temp_directory_path() / "blis_results_test.json";
  std::filesystem::remove(path);
  Result r = run_blis("run --model qwen/qwen3-14b --rate 2 --num-requests 5 --results-path " + path.string());
  REQUIRE(r.status == 0);
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // The reference's example record (spec engine §6.5).
  CHECK(text.find("\"arrived_at\": 0.5,\n      \"requestID\": \"request_0\",\n"
                  "      \"num_prefill_tokens\": 185,\n      \"num_decode_tokens\": 1208,\n"
                  "      \"ttft_ms\": 8.048,\n      \"itl_ms\": 5.899350455675227,\n"
                  "      \"e2e_ms\": 7128.564,\n      \"scheduling_delay_ms\": 0,\n"
                  "      \"handled_by\": \"instance_0\"\n") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("bad input: one clear error, exit 2, nothing on stdout", "[cli]") {
  const std::pair<const char*, const char*> cases[] = {
      {"run", "--model"},
      {"run --model qwen/qwen3-14b --rate -1", "--rate: must be a finite value > 0"},
      {"run --model qwen/qwen3-14b --rate nan", "--rate"},
      {"run --model qwen/qwen3-14b --num-requests -3", "--num-requests: must be >= 0"},
      {"run --model qwen/qwen3-14b --bogus-flag 1", "bogus-flag"},
      {"run --model qwen/qwen3-14b --rate abc", "--rate"},
      {"run --model no-such/model", "--model: unknown model 'no-such/model' (`blis models` lists the bundled models"},
      {"run --model qwen/qwen3-14b --latency-model nope", "unknown latency model 'nope'"},
      {"run --model qwen/qwen3-14b --alpha-coeffs 1,2,3", "--alpha-coeffs and --beta-coeffs go together"},
      {"run --model qwen/qwen3-14b --latency-model roofline --alpha-coeffs 1,2,3 --beta-coeffs 1,2,3",
       "takes no coefficients"},
      {"run --model qwen/qwen3-14b --hardware GB300", "GB300"},
      {"run --model qwen/qwen3-14b --workload nosuch", "unknown workload 'nosuch'"},
      {"run --model qwen/qwen3-14b --workload-trace /nonexistent.csv", "/nonexistent.csv"},
      {"run --model qwen/qwen3-14b --prompt-tokens-min 600", "--prompt-tokens"},
      {"run --model qwen/qwen3-14b --scheduler lifo", "unknown scheduler 'lifo'"},
      {"run --model qwen/qwen3-14b --kv-offload-threshold 2", "--kv-offload-threshold"},
      {"run --model qwen/qwen3-14b --block-size-in-tokens 0", "--block-size-in-tokens"},
      {"plugins inspect /nonexistent/libx.so", "/nonexistent/libx.so: no such file"},
  };
  for (const auto& [args, message] : cases) {
    Result r = run_blis(args);
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("blis: error:") != std::string::npos);
    CHECK(r.err.find(message) != std::string::npos);
  }
}

TEST_CASE("an unwritable results path leaves no file and no partial output", "[cli]") {
  Result r = run_blis("run --model qwen/qwen3-14b --num-requests 5 --results-path /nonexistent-dir/out.json");
  CHECK(r.status != 0);
  CHECK(r.out.empty());
  CHECK(r.err.find("/nonexistent-dir/out.json") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists("/nonexistent-dir/out.json"));
}

TEST_CASE("plugins inspect: good libraries pass, broken ones get one line and exit 2", "[cli][plugin]") {
  const std::string fx = std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-";
  Result good = run_blis("plugins inspect " + fx + "good.so");
  CHECK(good.status == 0);
  CHECK(good.out.find("fixture-good") != std::string::npos);
  const std::pair<const char*, const char*> broken[] = {
      {"missing-symbol", "entry symbol 'blis_plugin_manifest' is missing"},
      {"abi-major", "built for plugin ABI 2.0"},
      {"short-struct", "lacks post_decode_overhead()"},
      {"create-fails", "create() failed: license file /opt/vendor/license.key not found"},
      {"throws", "step_time() failed: table index 42 out of range"},
      {"raw-throw", "threw a C++ exception across the C ABI"},
  };
  for (const auto& [name, message] : broken) {
    Result r = run_blis("plugins inspect " + fx + name + ".so");
    INFO(name << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(fx + name + ".so: ") != std::string::npos);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  Result list = run_blis("plugins list");
  CHECK(list.status == 0);
  for (const char* name : {"roofline", "blackbox", "crossmodel", "trained-roofline"})
    CHECK(list.out.find(name) != std::string::npos);
}

TEST_CASE("routing policies and fitness match the reference's tutorial figures", "[golden][cli][cluster]") {
  SECTION("8 instances at 200 req/s: weighted and least-loaded") {
    const std::tuple<const char*, double, double> cases[] = {
        {"weighted", 82.59146999999999, 66.38106435000293},
        {"least-loaded", 92.6642, 67.07304435627618},
        {"round-robin", 62.976, 67.38601234848677}};
    for (const auto& [policy, p99, rps] : cases) {
      Result r = run_blis(std::string("run --model qwen/qwen3-14b --num-instances 8 --rate 200 --num-requests 1000 "
                                  "--routing-policy ") + policy);
      REQUIRE(r.status == 0);
      INFO(policy);
      CHECK(metric(r.out, "ttft_p99_ms") == Approx(p99).epsilon(0.001));
      CHECK(metric(r.out, "responses_per_sec") == Approx(rps).epsilon(1e-9));
    }
  }
  SECTION("fitness of weighted routing on 12 instances: 0.893849") {
    Result r = run_blis("run --model qwen/qwen3-14b --num-instances 12 --rate 200 --num-requests 1000 "
                    "--routing-policy weighted --fitness-weights \"p99_ttft:3,mean_e2e:1,throughput:2\"");
    REQUIRE(r.status == 0);
    CHECK(r.out.find("=== Fitness Evaluation ===\nScore: 0.893849\n  mean_e2e: 0.000218\n"
                     "  p99_ttft: 0.013511\n  throughput: 0.426549\n") != std::string::npos);
  }
  SECTION("trace summary block") {
    Result r = run_blis("run --model qwen/qwen3-14b --num-instances 4 --rate 100 --num-requests 500 "
                    "--trace-level decisions --summarize-trace --counterfactual-k 3");
    REQUIRE(r.status == 0);
    CHECK(r.out.find("=== Trace Summary ===\nTotal Decisions: 500\n  Admitted: 500\n  Rejected: 0\n"
                     "Unique Targets: 4\nTarget Distribution:\n  instance_0: 125\n") != std::string::npos);
    CHECK(r.out.find("Mean Regret: ") != std::string::npos);
  }
  SECTION("token bucket rejects what it cannot pay for") {
    Result r = run_blis("run --model qwen/qwen3-14b --admission-policy token-bucket --rate 20 --num-requests 200");
    REQUIRE(r.status == 0);
    CHECK(r.out.find("Rejected Requests: 144\n") != std::string::npos);
  }
}

TEST_CASE("cluster flags: bad input is refused before the run", "[cli][cluster]") {
  const std::pair<const char*, const char*> cases[] = {
      {"run --model qwen/qwen3-14b --routing-policy random", "unknown routing policy 'random'"},
      {"run --model qwen/qwen3-14b --routing-policy weighted --routing-scorers bogus:x", "unknown scorer \"bogus\""},
      {"run --model qwen/qwen3-14b --routing-policy weighted --routing-scorers queue-depth:0", "weight must be a finite positive number"},
      {"run --model qwen/qwen3-14b --admission-policy token-bucket --token-bucket-capacity 0", "--token-bucket-capacity"},
      {"run --model qwen/qwen3-14b --admission-policy nope", "unknown admission policy 'nope'"},
      {"run --model qwen/qwen3-14b --trace-level verbose", "unknown trace level 'verbose'"},
      {"run --model qwen/qwen3-14b --fitness-weights p99_tft:1", "unknown fitness metric key \"p99_tft\""},
      {"run --model qwen/qwen3-14b --policy-config /nonexistent/policy.toml", "/nonexistent/policy.toml"},
      {"run --model qwen/qwen3-14b --snapshot-refresh-interval -1", "--snapshot-refresh-interval"},
  };
  for (const auto& [args, message] : cases) {
    Result r = run_blis(args);
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(message) != std::string::npos);
  }
}

TEST_CASE("a policy file sets policies unless a flag overrides it", "[cli][cluster]") {
  const std::string toml = std::string(BLIS_TEST_SOURCE_DIR) + "/examples/policy-config/weighted.toml";
  const std::string yaml = std::string(BLIS_TEST_SOURCE_DIR) + "/examples/policy-config/weighted.yaml";
  const std::string base = "run --model qwen/qwen3-14b --num-instances 4 --rate 100 --num-requests 300 ";
  Result weighted = run_blis(base + "--routing-policy weighted");
  Result from_toml = run_blis(base + "--policy-config " + toml);
  Result from_yaml = run_blis(base + "--policy-config " + yaml);
  Result overridden = run_blis(base + "--policy-config " + toml + " --routing-policy round-robin");
  Result round_robin = run_blis(base);
  REQUIRE(weighted.status == 0);
  CHECK(from_toml.out == weighted.out);
  CHECK(from_yaml.out == weighted.out);
  CHECK(overridden.out == round_robin.out);
  CHECK(weighted.out != round_robin.out);
}
