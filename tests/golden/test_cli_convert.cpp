// `blis convert` and `blis compose` (spec cli.md §4-§5) and `blis run
// --workload traces` (spec cli.md §3.7 step 2), from the user's side: the YAML
// they print, and that running it gives what running the source gives.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

namespace {

const std::string kModel = "--model qwen/qwen3-14b ";
const std::string kExampleA = std::string(BLIS_TEST_SOURCE_DIR) + "/examples/workload-spec/prefix-affinity-demo.yaml";

// Runs `blis convert/compose ARGS` and saves what it printed as `name`.
std::string convert_to(const blis::test::TempDir& dir, const std::string& name, const std::string& args) {
  Result r = run_blis(args);
  INFO("blis " << args << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  return dir.write(name, r.out);
}

// stdout of a run, which must succeed.
std::string run_ok(const std::string& args) {
  Result r = run_blis(args);
  INFO("blis " << args << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  return r.out;
}

// Four requests: arrivals 0, 0.5, 1 and 2 s; prompts of 3, 4, 4 and 5 tokens,
// outputs of 1, 2, 2 and 2.
const std::string kLegacyCsv =
    "arrived_at,a,b,prefill,decode\n"
    "0,x,y,\"[1,2,3]\",\"[9]\"\n"
    "0.5,x,y,\"[1,2,3,4]\",\"[9,9]\"\n"
    "1.0,x,y,\"[5,6,7,8]\",\"[9,9]\"\n"
    "2.0,x,y,\"[1,2,3,4,5]\",\"[9,9]\"\n";

}  // namespace

TEST_CASE("convert preset prints the reference's YAML, which runs as the preset does", "[cli][golden][workload]") {
  Result r = run_blis("convert preset --name chatbot --rate 10 --num-requests 100");
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "version: \"2\"\n"
        "seed: 0\n"
        "category: language\n"
        "clients:\n"
        "    - id: preset-chatbot\n"
        "      tenant_id: \"\"\n"
        "      slo_class: \"\"\n"
        "      rate_fraction: 1\n"
        "      arrival:\n"
        "        process: constant\n"
        "      input_distribution:\n"
        "        type: gaussian\n"
        "        params:\n"
        "            max: 800\n"
        "            mean: 256\n"
        "            min: 2\n"
        "            std_dev: 100\n"
        "      output_distribution:\n"
        "        type: gaussian\n"
        "        params:\n"
        "            max: 1024\n"
        "            mean: 256\n"
        "            min: 1\n"
        "            std_dev: 100\n"
        "      streaming: false\n"
        "aggregate_rate: 10\n"
        "num_requests: 100\n");
  blis::test::TempDir dir("blis-convert");
  const std::string spec = dir.write("chatbot.yaml", r.out);
  // With --seed S the file generates what --workload NAME --seed S does.
  CHECK(run_ok("run " + kModel + "--workload-spec " + spec + " --seed 7") ==
        run_ok("run " + kModel + "--workload chatbot --rate 10 --seed 7"));
}

TEST_CASE("convert csv-trace: the documented lossy values, and run --workload traces", "[cli][golden][workload]") {
  blis::test::TempDir dir("blis-convert");
  const std::string csv = dir.write("trace.csv", kLegacyCsv);
  Result r = run_blis("convert csv-trace --file " + csv);
  REQUIRE(r.status == 0);
  // 4 rows over 2 s: 2 req/s; mean prompt 4, mean output 1.75.
  CHECK(r.out ==
        "version: \"2\"\n"
        "seed: 0\n"
        "category: \"\"\n"
        "clients:\n"
        "    - id: csv-trace\n"
        "      tenant_id: \"\"\n"
        "      slo_class: \"\"\n"
        "      rate_fraction: 1\n"
        "      arrival:\n"
        "        process: constant\n"
        "      input_distribution:\n"
        "        type: constant\n"
        "        params:\n"
        "            value: 4\n"
        "      output_distribution:\n"
        "        type: constant\n"
        "        params:\n"
        "            value: 1.75\n"
        "      streaming: false\n"
        "aggregate_rate: 2\n"
        "num_requests: 4\n");
  // --horizon keeps the rows up to 1 s: 3 rows over 1 s.
  Result cut = run_blis("convert csv-trace --file " + csv + " --horizon 1000000");
  REQUIRE(cut.status == 0);
  CHECK(cut.out.find("aggregate_rate: 3\nnum_requests: 3\n") != std::string::npos);
  CHECK(cut.out.find("value: 3.6666666666666665\n") != std::string::npos);

  // run --workload traces generates from the same conversion, with --seed;
  // the 1.75-token mean output is truncated to 1 token per request.
  Result run = run_blis("run " + kModel + "--workload traces --workload-traces-filepath " + csv);
  REQUIRE(run.status == 0);
  CHECK(metric(run.out, "injected_requests") == 4);
  CHECK(metric(run.out, "total_input_tokens") == 16);
  CHECK(metric(run.out, "total_output_tokens") == 4);
  CHECK(run.err.find("--workload traces replays the CSV only approximately") != std::string::npos);
  const std::string spec = dir.write("trace.yaml", r.out);
  CHECK(run_ok("run " + kModel + "--workload-spec " + spec + " --seed 42") == run.out);
  // The run's horizon cuts the file: 3 rows over 1 s, 3 tokens per prompt
  // (the 3.67 mean truncated); --rate is ignored, and said to be.
  Result cut_run = run_blis("run " + kModel + "--workload traces --workload-traces-filepath " + csv +
                            " --horizon 1200000 --rate 3");
  REQUIRE(cut_run.status == 0);
  CHECK(metric(cut_run.out, "injected_requests") == 3);
  CHECK(metric(cut_run.out, "total_input_tokens") == 9);
  CHECK(cut_run.err.find("--rate has no effect: the trace sets arrivals and lengths") != std::string::npos);
  // The file alone, without --workload traces, is not read.
  Result unused = run_blis("run " + kModel + "--workload-traces-filepath " + csv);
  CHECK(unused.err.find("--workload-traces-filepath has no effect: it is read only with --workload traces") !=
        std::string::npos);
  CHECK(metric(unused.out, "injected_requests") == 100);
}

TEST_CASE("compose: one spec composed runs as itself; two keep their absolute rates", "[cli][golden][workload]") {
  blis::test::TempDir dir("blis-convert");
  const std::string one = convert_to(dir, "one.yaml", "compose --from " + kExampleA);
  // Compose keeps neither the seed nor the request count (spec workload §9.2).
  CHECK(run_ok("run " + kModel + "--workload-spec " + one + " --seed 42 --num-requests 200") ==
        run_ok("run " + kModel + "--workload-spec " + kExampleA));

  const std::string a = dir.write("a.yaml",
                                  "aggregate_rate: 3\nclients:\n  - id: a\n    rate_fraction: 1\n    arrival: "
                                  "{process: poisson}\n    input_distribution: {type: constant, params: {value: 10}}\n"
                                  "    output_distribution: {type: constant, params: {value: 5}}\n");
  const std::string b = dir.write("b.yaml",
                                  "category: reasoning\naggregate_rate: 1\nclients:\n  - id: b\n    slo_class: batch\n"
                                  "    rate_fraction: 2\n    arrival: {process: gamma, cv: 2.5}\n"
                                  "    input_distribution: {type: exponential, params: {mean: 100}}\n"
                                  "    output_distribution: {type: constant, params: {value: 1}}\n"
                                  "    prefix_group: sys\n    prefix_length: 64\n");
  Result both = run_blis("compose --from " + a + " --from " + b);
  REQUIRE(both.status == 0);
  CHECK(both.out ==
        "version: \"2\"\n"
        "seed: 0\n"
        "category: \"\"\n"
        "clients:\n"
        "    - id: a\n"
        "      tenant_id: \"\"\n"
        "      slo_class: \"\"\n"
        "      rate_fraction: 0.75\n"
        "      arrival:\n"
        "        process: poisson\n"
        "      input_distribution:\n"
        "        type: constant\n"
        "        params:\n"
        "            value: 10\n"
        "      output_distribution:\n"
        "        type: constant\n"
        "        params:\n"
        "            value: 5\n"
        "      streaming: false\n"
        "    - id: b\n"
        "      tenant_id: \"\"\n"
        "      slo_class: batch\n"
        "      rate_fraction: 0.5\n"
        "      arrival:\n"
        "        process: gamma\n"
        "        cv: 2.5\n"
        "      input_distribution:\n"
        "        type: exponential\n"
        "        params:\n"
        "            mean: 100\n"
        "      output_distribution:\n"
        "        type: constant\n"
        "        params:\n"
        "            value: 1\n"
        "      prefix_group: sys\n"
        "      prefix_length: 64\n"
        "      streaming: false\n"
        "aggregate_rate: 4\n");
  // Numbers as Go's %g writes them.
  const std::string fast = dir.write("fast.yaml", "aggregate_rate: 1e6\nclients:\n  - {id: f, rate_fraction: 0.00001, "
                                                   "arrival: {process: constant}, input_distribution: {type: constant, "
                                                   "params: {value: 1234567}}, output_distribution: {type: constant, "
                                                   "params: {value: 0.0001}}}\n");
  Result f = run_blis("compose --from " + fast);
  CHECK(f.out.find("rate_fraction: 1e-05\n") != std::string::npos);
  CHECK(f.out.find("value: 1.234567e+06\n") != std::string::npos);
  CHECK(f.out.find("value: 0.0001\n") != std::string::npos);
  CHECK(f.out.find("aggregate_rate: 1e+06\n") != std::string::npos);
  // What compose prints, compose reads back unchanged.
  const std::string merged = dir.write("merged.yaml", both.out);
  CHECK(run_blis("compose --from " + merged).out == both.out);
}

TEST_CASE("convert inference-perf and servegen run as their source spec does", "[cli][golden][workload]") {
  blis::test::TempDir dir("blis-convert");
  const std::string ip = dir.write("ip.yaml",
                                   "seed: 5\nnum_requests: 60\ninference_perf:\n  stages:\n"
                                   "    - {rate: 20, duration: 2}\n    - {rate: 40, duration: 1}\n"
                                   "  shared_prefix: {num_unique_system_prompts: 2, num_users_per_system_prompt: 2,\n"
                                   "    system_prompt_len: 100, question_len: 30, output_len: 20}\n");
  const std::string ip_out = convert_to(dir, "ip-out.yaml", "convert inference-perf --spec " + ip);
  CHECK(run_ok("run " + kModel + "--workload-spec " + ip_out + " --num-requests 60") ==
        run_ok("run " + kModel + "--workload-spec " + ip));
  Result text = run_blis("convert inference-perf --spec " + ip);
  CHECK(text.out.find("seed: 5\ncategory: language\n") != std::string::npos);
  CHECK(text.out.find("    - id: stage-1-prompt-1-user-1\n") != std::string::npos);
  CHECK(text.out.find("            - start_us: 2000000\n              end_us: 3000000\n") != std::string::npos);
  CHECK(text.out.find("aggregate_rate: 60\n") != std::string::npos);

  dir.write("chunk-1-trace.csv", "0, 2.0, 1.5, Gamma\n600, 4.0, 2.0, Gamma\n");
  dir.write("chunk-1-dataset.json", R"({"0": {"input_tokens": "{100: 0.5, 300: 0.5}", "output_tokens": "{20: 1}"}})");
  dir.write("chunk-2-trace.csv", "0, 1.0, 1.0, poisson\n");
  dir.write("chunk-2-dataset.json", R"({"0": {"input_tokens": "{50: 1}", "output_tokens": "{10: 0.25, 40: 0.75}"}})");
  const std::string sg_out = convert_to(dir, "sg-out.yaml", "convert servegen --path " + dir.str());
  const std::string sg = dir.write("sg.yaml", "aggregate_rate: 1\nnum_requests: 30\nservegen_data: {path: " +
                                                  dir.str() + "}\n");
  CHECK(run_ok("run " + kModel + "--workload-spec " + sg_out + " --num-requests 30") ==
        run_ok("run " + kModel + "--workload-spec " + sg));
  Result sg_text = run_blis("convert servegen --path " + dir.str());
  CHECK(sg_text.out.find("    - id: servegen-chunk-1\n      tenant_id: chunk-1\n      slo_class: \"\"\n"
                         "      rate_fraction: 4\n      arrival:\n        process: gamma\n        cv: 2\n") !=
        std::string::npos);
  CHECK(sg_text.out.find("        type: empirical\n        params:\n            \"10\": 0.25\n") != std::string::npos);
  // Bins in numeric order, as the reference's writer sorts keys.
  dir.write("chunk-3-trace.csv", "0, 1.0, 1.0, poisson\n");
  dir.write("chunk-3-dataset.json", R"({"0": {"input_tokens": "{100: 1, 20: 3}", "output_tokens": "{5: 1}"}})");
  CHECK(run_blis("convert servegen --path " + dir.str()).out.find(
            "            \"20\": 3\n            \"100\": 1\n") != std::string::npos);
}

TEST_CASE("convert, compose and --workload traces: bad input is one line, exit 2", "[cli][golden][workload]") {
  blis::test::TempDir dir("blis-convert");
  const std::string csv = dir.write("trace.csv", kLegacyCsv);
  check_refused("run " + kModel + "--workload traces", "--workload traces needs --workload-traces-filepath FILE");
  check_refused("convert csv-trace --file " + csv + " --horizon -1", "--horizon: must be >= 0");
  check_refused("convert csv-trace --file " + dir.write("empty.csv", "a,b,c,d,e\n"), "empty CSV");
  check_refused("convert csv-trace --file " + dir.write("bad.csv", "a,b,c,d,e\n0,x,y,\"[1,2]\",oops\n"),
                "bad.csv: row 1, column 5: expected a JSON array of token ids");
  check_refused("convert csv-trace --file " + dir.write("short.csv", "a,b,c,d\n0,x,y,[1]\n"),
                "short.csv: row 1: 4 fields; a trace row needs 5");
  // Decreasing timestamps give a negative rate, which no run accepts.
  check_refused("convert csv-trace --file " + dir.write("back.csv", "a,b,c,d,e\n2,x,y,[1],[1]\n1,x,y,[1],[1]\n"),
                "the converted spec is invalid: aggregate_rate");
  check_refused("convert preset --name chatbott", "--name: unknown preset 'chatbott'; the presets are: chatbot");
  check_refused("convert preset --name chatbot --rate 0", "--rate: must be a finite value > 0, got 0");
  check_refused("convert preset --name chatbot --num-requests 0", "--num-requests: must be > 0, got 0");
  check_refused("convert inference-perf --spec " + kExampleA, "has no inference_perf section");
  check_refused("compose --from " + dir.write("zero.yaml", "aggregate_rate: 0\n"),
                "--from: the specs' aggregate rates sum to 0");
  check_refused("compose --from " + dir.str() + "/missing.yaml", "missing.yaml");
  check_refused("convert servegen --path " + dir.str(), "servegen_data.path");
  check_refused("convert", "blis convert needs a command: csv-trace, preset, servegen, inference-perf");
  check_refused("convert csv-trace", "--file");
  Result help = run_blis("--help");
  CHECK(help.out.find("convert") != std::string::npos);
  CHECK(help.out.find("compose") != std::string::npos);
  CHECK(run_blis("run --help").out.find("--workload-traces-filepath") != std::string::npos);
}

TEST_CASE("defaults-filepath: a reference defaults.yaml overrides the bundled tables key by key",
          "[cli][golden][workload]") {
  blis::test::TempDir dir("blis-convert");
  const std::string defaults = dir.write(
      "defaults.yaml",
      "defaults:\n"
      "  qwen/qwen3-14b:\n"
      "    GPU: H100\n"
      "    tensor_parallelism: 1\n"
      "    vllm_version: vllm/vllm-openai:v0.11.0\n"
      "workloads:\n"
      "  chatbot:\n"
      "    prefix_tokens: 0\n"
      "    prompt_tokens: 100\n"
      "    prompt_tokens_stdev: 10\n"
      "    prompt_tokens_min: 50\n"
      "    prompt_tokens_max: 150\n"
      "    output_tokens: 40\n"
      "    output_tokens_stdev: 5\n"
      "    output_tokens_min: 10\n"
      "    output_tokens_max: 80\n"
      "models:\n"
      "- GPU: H100\n"
      "  alpha_coeffs: [5000, 0.5, 0]\n"
      "  beta_coeffs: [9000, 20, 10]\n"
      "  best_loss: 1.5\n"
      "  id: Qwen/Qwen3-14B\n"
      "  tensor_parallelism: 1\n"
      "  total_kv_blocks: 9000\n"
      "  vllm_version: vllm/vllm-openai:v0.11.0\n"
      "version: 0.0.1\n");
  // The file's preset replaces the bundled chatbot; other presets stay.
  Result preset = run_blis("convert preset --name chatbot --defaults-filepath " + defaults);
  REQUIRE(preset.status == 0);
  CHECK(preset.out.find("            max: 150\n            mean: 100\n            min: 50\n            std_dev: 10\n") !=
        std::string::npos);
  CHECK(run_blis("convert preset --name multidoc --defaults-filepath " + defaults).out ==
        run_blis("convert preset --name multidoc").out);
  const std::string with = "run " + kModel + "--workload chatbot --rate 5 --defaults-filepath " + defaults;
  const std::string spec = dir.write(
      "chatbot.yaml", run_ok("convert preset --name chatbot --rate 5 --defaults-filepath " + defaults));
  CHECK(run_ok(with) == run_ok("run " + kModel + "--workload-spec " + spec + " --seed 42 --defaults-filepath " + defaults));
  // The file's coefficient entry is the one the run uses, as if given by flags.
  const std::string blackbox = with + " --latency-model blackbox";
  CHECK(run_ok(blackbox) == run_ok(blackbox + " --alpha-coeffs 5000,0.5,0 --beta-coeffs 9000,20,10 --total-kv-blocks 9000"));
  CHECK(run_ok(blackbox) != run_ok("run " + kModel + "--workload chatbot --rate 5 --latency-model blackbox"));

  check_refused("run " + kModel + "--defaults-filepath " +
                    dir.write("typo.yaml", "workloads:\n  chatbot:\n    prompt_token: 3\n"),
                "typo.yaml:3:5");
  check_refused("convert preset --name chatbot --defaults-filepath " + dir.str() + "/none.yaml", "none.yaml");
  Result help = run_blis("run --help");
  CHECK(help.out.find("--defaults-filepath") != std::string::npos);
}
