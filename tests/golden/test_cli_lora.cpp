// LoRA adapters from the command line (docs/lora.md): HEAD's flags in
// --help, HEAD's figures for a run with adapters (what HEAD prints for the
// same command), the lora-affinity scorer, the HBM reservation, scenarios
// and --dump-config, and bad input refused in one line before the run.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

using blis::test::TempDir;

namespace {

const char* const kSpec = R"(version: "2"
seed: 7
aggregate_rate: 100
num_requests: 60
clients:
  - id: c0
    rate_fraction: 0.5
    adapter: a1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
  - id: c1
    rate_fraction: 0.5
    adapter: a2
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 8, max: 1024}}
    output_distribution: {type: exponential, params: {mean: 64}}
)";

const char* const kLora = R"(lora:
  adapter_capacity: 1
  adapters:
    - {id: a1, rank: 8}
    - {id: a2, rank: 32}
)";

// The cluster block's adapters, as HEAD prints them.
std::string cluster_adapters(const std::string& out) {
  const size_t at = out.find("\"instance_id\": \"cluster\"");
  REQUIRE(at != std::string::npos);
  const size_t a = out.find("\"adapters\": {", at);
  return a == std::string::npos ? "" : out.substr(a);
}

void check_refused(const Result& r, const std::string& where, const std::string& message) {
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("blis: error: " + where) == 0);
  CHECK(r.err.find(message) != std::string::npos);
}

}  // namespace

TEST_CASE("LoRA flags are in --help", "[golden][lora]") {
  const Result r = run_blis("run --help");
  for (const char* flag : {"--lora-config", "--lora-adapter-capacity", "--lora-load-base-latency-us",
                           "--lora-load-bandwidth-bytes-us", "--lora-footprint-bytes-per-rank", "--lora-scorer-weight"})
    CHECK(r.out.find(flag) != std::string::npos);
}

TEST_CASE("adapters loaded and evicted as HEAD counts them, with its per-adapter figures", "[golden][lora]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) +
                           " --lora-config " + dir.write("l.yaml", kLora) + " --profile-set head ";
  // HEAD (this command) prints these figures for the cluster.
  Result r = run_blis(base + "--num-instances 2");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(cluster_adapters(r.out) ==
        "\"adapters\": {\n"
        "    \"a1\": {\n      \"load_count\": 15,\n      \"eviction_count\": 15,\n"
        "      \"ttft_p50_us\": 6000776,\n      \"ttft_p99_us\": 17322746.379999995,\n"
        "      \"throughput_tok_per_s\": 67.44882809716074\n    },\n"
        "    \"a2\": {\n      \"load_count\": 16,\n      \"eviction_count\": 14,\n"
        "      \"ttft_p50_us\": 6999147,\n      \"ttft_p99_us\": 17938110.959999997,\n"
        "      \"throughput_tok_per_s\": 130.11096516807137\n    }\n  }\n}\n");
  CHECK(r.out.find("\"ttft_p99_ms\": 18068.806599999996,") != std::string::npos);

  // The lora-affinity scorer keeps each adapter's requests where it is resident (HEAD: 7 loads of a1, not 17).
  r = run_blis(base + "--num-instances 3 --routing-policy weighted --lora-scorer-weight 5");
  REQUIRE(r.status == 0);
  CHECK(cluster_adapters(r.out).find("\"a1\": {\n      \"load_count\": 7,\n      \"eviction_count\": 5,\n"
                                     "      \"ttft_p50_us\": 535617,") != std::string::npos);
  r = run_blis(base + "--num-instances 3 --routing-policy weighted");
  REQUIRE(r.status == 0);
  CHECK(cluster_adapters(r.out).find("\"a1\": {\n      \"load_count\": 17,") != std::string::npos);
}

TEST_CASE("without adapters in the workload, --lora-config changes nothing", "[golden][lora]") {
  TempDir dir;
  std::string spec = kSpec;
  for (size_t at; (at = spec.find("    adapter: ")) != std::string::npos;) spec.erase(at, spec.find('\n', at) + 1 - at);
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", spec) +
                           " --num-instances 2 --profile-set head";
  const Result plain = run_blis(base);
  const Result with = run_blis(base + " --lora-config " + dir.write("l.yaml", kLora));
  REQUIRE(plain.status == 0);
  CHECK(with.out == plain.out);
  CHECK(with.out.find("adapters") == std::string::npos);
}

TEST_CASE("the adapters' HBM comes out of the auto-sized KV cache only", "[golden][lora]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) +
                           " --lora-config " + dir.write("l.yaml", kLora) + " --format json ";
  auto blocks = [](const Result& r) {
    const size_t at = r.out.find("\"total_kv_blocks\": ");
    REQUIRE(at != std::string::npos);
    return std::stoll(r.out.substr(at + 19));
  };
  // capacity 1 x 2e6 bytes per rank x rank 32 = 64 MB less for the KV cache.
  const int64_t one = blocks(run_blis(base + "--gpu-memory-utilization 0.9"));
  const int64_t four = blocks(run_blis(base + "--gpu-memory-utilization 0.9 --lora-adapter-capacity 4"));
  CHECK(four < one);
  CHECK(blocks(run_blis(base + "--total-kv-blocks 5000 --lora-adapter-capacity 4")) == 5000);
}

TEST_CASE("a TOML scenario and --dump-config carry the LoRA settings", "[golden][lora]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec), lora = dir.write("l.yaml", kLora);
  const std::string flags = "--model qwen/qwen3-14b --workload-spec " + spec + " --lora-config " + lora +
                            " --num-instances 3 --routing-policy weighted --lora-scorer-weight 5 "
                            "--lora-adapter-capacity 2 --lora-load-base-latency-us 800 --profile-set head";
  const Result direct = run_blis("run " + flags);
  const Result dumped = run_blis("run " + flags + " --dump-config");
  REQUIRE(dumped.status == 0);
  for (const char* line : {"[lora]\n", "lora_adapter_capacity = 2\n", "lora_load_base_latency_us = 800\n",
                           "lora_scorer_weight = 5\n"})
    CHECK(dumped.out.find(line) != std::string::npos);
  const Result replay = run_blis("run " + dir.write("run.toml", dumped.out), dir.str());
  INFO(replay.err);
  CHECK(replay.out == direct.out);
}

TEST_CASE("bad LoRA input is refused in one line naming where, before the run", "[golden][lora]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const std::string run = "run --model qwen/qwen3-14b --workload-spec " + spec + " --lora-config ";
  const std::string rank0 = dir.write("r.yaml", "lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: a1, rank: 0}\n");
  check_refused(run_blis(run + rank0), rank0 + ":4", "adapter \"a1\": rank must be > 0, got 0");
  const std::string cap0 = dir.write("c.yaml", "lora:\n  adapter_capacity: 0\n  adapters:\n    - {id: a1, rank: 8}\n");
  check_refused(run_blis(run + cap0), cap0 + ":2", "adapter_capacity must be > 0 when adapters are declared");
  check_refused(run_blis(run + dir.write("l.yaml", kLora) + " --lora-adapter-capacity 0"), "--lora-adapter-capacity",
                "adapter_capacity must be > 0");
  const std::string typo = dir.write("t.yaml", "lora:\n  adapter_capacity: 1\n  adaptors: []\n");
  check_refused(run_blis(run + typo), typo + ":3", "unknown key \"lora.adaptors\"");
  const std::string other = dir.write("o.yaml", "lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: zz, rank: 8}\n");
  check_refused(run_blis(run + other), "--workload-spec", "client \"c0\" references unknown adapter \"a1\"");
  check_refused(run_blis("run --model qwen/qwen3-14b --workload-spec " + spec), "--workload-spec",
                "references adapter \"a1\" but no adapters are declared");
  check_refused(run_blis(run + dir.write("l2.yaml", kLora) + " --lora-load-bandwidth-bytes-us 0"),
                "--lora-load-bandwidth-bytes-us", "must be finite and > 0");
  check_refused(run_blis(run + dir.write("l3.yaml", kLora) + " --routing-policy weighted --lora-scorer-weight 0"),
                "--lora-scorer-weight", "must be a finite value > 0");
}

TEST_CASE("a LoRA run's trace names each request's adapter, and a replay refuses one not declared",
          "[golden][lora][trace]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec), lora = dir.write("l.yaml", kLora);
  const std::string prefix = dir.str() + "/t";
  const Result run = run_blis("run --model qwen/qwen3-14b --profile-set head --workload-spec " + spec +
                              " --lora-config " + lora + " --trace-output " + prefix);
  REQUIRE(run.status == 0);
  // HEAD writes the adapter column last, and each row's adapter (as HEAD does for the same command).
  std::ifstream in(prefix + ".csv");
  const std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK(header.size() > 8);
  CHECK(header.substr(header.size() - 8) == ",adapter");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 61);
  const std::string row =
      csv.substr(csv.find('\n') + 1, csv.find('\n', csv.find('\n') + 1) - csv.find('\n') - 1);
  CHECK((row.ends_with(",a1") || row.ends_with(",a2")));
  // The trace replays with the same adapters.
  const std::string replay = "replay --model qwen/qwen3-14b --trace-header " + prefix + ".yaml --trace-data ";
  CHECK(run_blis(replay + prefix + ".csv --lora-config " + lora).status == 0);
  // An adapter the configuration does not declare is refused at its row (HEAD loads it in 0 µs: difference
  // row 52).
  std::string bad = csv;
  const size_t at = bad.find(",a2\n");
  REQUIRE(at != std::string::npos);
  bad.replace(at, 4, ",a9\n");
  const std::string bad_csv = dir.write("bad.csv", bad);
  const int64_t line = 1 + std::count(bad.begin(), bad.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  check_refused(run_blis(replay + bad_csv + " --lora-config " + lora), bad_csv + ":" + std::to_string(line),
                "names adapter \"a9\", which --lora-config does not declare");
  // Without adapters declared, the trace's adapters are not simulated: it replays on the base model.
  CHECK(run_blis(replay + bad_csv).status == 0);
}

TEST_CASE("with P/D disaggregation, adapters are loaded and cost time", "[golden][lora][pd]") {
  TempDir dir;
  std::string plain = kSpec;
  for (const char* line : {"    adapter: a1\n", "    adapter: a2\n"})
    plain.erase(plain.find(line), std::string(line).size());
  const std::string pd = " --lora-config " + dir.write("l.yaml", kLora) +
                         " --profile-set head --num-instances 4 --prefill-instances 2 --decode-instances 2 "
                         "--pd-decider always";
  const Result with =
      run_blis("run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) + pd);
  const Result without =
      run_blis("run --model qwen/qwen3-14b --workload-spec " + dir.write("p.yaml", plain) + pd);
  INFO(with.err);
  REQUIRE(with.status == 0);
  REQUIRE(without.status == 0);
  // HEAD's P/D sub-requests drop the adapter (difference row 53): it loads none and prints the run without
  // them.
  const std::string adapters = cluster_adapters(with.out);
  CHECK(adapters.find("\"a1\": {\n      \"load_count\": 0,") == std::string::npos);
  CHECK(adapters.find("\"a2\": {\n      \"load_count\": 0,") == std::string::npos);
  auto ttft_mean = [](const std::string& out) {
    const size_t at = out.find("\"ttft_mean_ms\": ", out.find("\"instance_id\": \"cluster\""));
    return std::stod(out.substr(at + 16));
  };
  CHECK(ttft_mean(with.out) > ttft_mean(without.out));
  // One request: its adapter is loaded on its prefill instance, then on its decode instance.
  const std::string one =
      "version: \"2\"\nseed: 7\naggregate_rate: 1\nnum_requests: 1\nclients:\n  - id: c0\n"
      "    rate_fraction: 1\n    adapter: a1\n    arrival: {process: poisson}\n"
      "    input_distribution: {type: constant, params: {value: 256}}\n"
      "    output_distribution: {type: constant, params: {value: 16}}\n";
  const Result single =
      run_blis("run --model qwen/qwen3-14b --workload-spec " + dir.write("one.yaml", one) +
               " --lora-config " + dir.write("l1.yaml", kLora) +
               " --profile-set head --num-instances 2 --prefill-instances 1 --decode-instances 1 "
               "--pd-decider always");
  INFO(single.err);
  REQUIRE(single.status == 0);
  CHECK(cluster_adapters(single.out).find("\"a1\": {\n      \"load_count\": 2,") != std::string::npos);
}

TEST_CASE("scenario events load and unload an adapter mid-run", "[golden][lora][events]") {
  TempDir dir;
  const std::string run = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) +
                          " --lora-config " + dir.write("l.yaml", kLora) + " --num-instances 2";
  const Result plain = run_blis(run);
  const Result pre = run_blis(run +
                              " --event 'at=0s action=adapter load=a2' --event 'at=1s action=adapter "
                              "instance=1 unload=a2'");
  INFO(pre.err);
  REQUIRE(pre.status == 0);
  CHECK(pre.out != plain.out);
  CHECK(pre.out.find("0 s: at=0s action=adapter load=a2 (instance 0: loading, instance 1: loading)") !=
        std::string::npos);
  check_refused(run_blis(run + " --event 'at=0s action=adapter load=zz'"), "--event",
                "adapter 'zz' is not declared in --lora-config");
  check_refused(
      run_blis("run --model qwen/qwen3-14b --num-requests 5 --event 'at=0s action=adapter load=a1'"),
      "--event", "no instance has adapter slots");
  check_refused(run_blis(run + " --event 'at=0s action=adapter instance=0'"), "--event",
                "needs exactly one of load=ADAPTER and unload=ADAPTER");
}

namespace {

std::string fixture(const std::string& name) {
  return std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-" + name + ".so";
}

// One hot adapter and two cold ones through two slots of one instance.
const char* const kSkewed = R"(version: "2"
seed: 11
aggregate_rate: 5
num_requests: 300
clients:
  - id: hot
    rate_fraction: 0.8
    adapter: a1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: exponential, params: {mean: 16}}
  - id: cold2
    rate_fraction: 0.1
    adapter: a2
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: exponential, params: {mean: 16}}
  - id: cold3
    rate_fraction: 0.1
    adapter: a3
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: exponential, params: {mean: 16}}
)";

const char* const kThree = R"(lora:
  adapter_capacity: 2
  adapters:
    - {id: a1, rank: 8}
    - {id: a2, rank: 8}
    - {id: a3, rank: 8}
)";

// The cluster's cold loads, summed over its adapters.
int64_t cluster_loads(const std::string& out) {
  const std::string block = cluster_adapters(out);
  int64_t n = 0;
  const std::string key = "\"load_count\": ";
  for (size_t at = block.find(key); at != std::string::npos; at = block.find(key, at + 1))
    n += std::stoll(block.substr(at + key.size()));
  return n;
}

}  // namespace

TEST_CASE("adapter eviction (--lora-eviction): lru is the default, a script or library changes which leaves",
          "[golden][lora][plugin]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSkewed) +
                           " --lora-config " + dir.write("l.yaml", kThree) + " --num-instances 1";
  const Result plain = run_blis(base);
  const Result lru = run_blis(base + " --lora-eviction lru");
  INFO(plain.err);
  REQUIRE(plain.status == 0);
  CHECK(lru.out == plain.out);
  // The most recently used leaves: the hot adapter, over and over.
  const Result mru = run_blis(base + " --lora-eviction mru.lua");
  const Result library = run_blis(base + " --lora-eviction " + fixture("evict-mru"));
  INFO(mru.err << library.err);
  REQUIRE(mru.status == 0);
  REQUIRE(library.status == 0);
  CHECK(library.out == mru.out);
  CHECK(cluster_loads(plain.out) > 2);
  CHECK(cluster_loads(mru.out) > cluster_loads(plain.out) + 10);
  // --help lists it; a scenario and --dump-config carry it.
  CHECK(run_blis("run --help").out.find("--lora-eviction") != std::string::npos);
  const Result dumped = run_blis(base + " --lora-eviction mru.lua --dump-config");
  REQUIRE(dumped.status == 0);
  CHECK(dumped.out.find("lora_eviction = \"mru.lua\"\n") != std::string::npos);
  CHECK(run_blis("run " + dir.write("run.toml", dumped.out), dir.str()).out == mru.out);
  // The built-in and the shipped script are in the plugin list.
  const Result list = run_blis("plugins list");
  CHECK(list.out.find("adapter-eviction") != std::string::npos);
  CHECK(run_blis("plugins inspect scripts/eviction/mru.lua", BLIS_TEST_SOURCE_DIR).status == 0);
  CHECK(run_blis("plugins inspect " + fixture("evict-mru")).status == 0);
}

TEST_CASE("a broken adapter eviction stops the run with exit 2, naming the file", "[golden][lora][plugin]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSkewed) +
                           " --lora-config " + dir.write("l.yaml", kThree) + " --num-instances 1 --lora-eviction ";
  const std::string zero = dir.write("zero.lua", "kind = 'adapter-eviction'\nfunction evict_adapter(loading, c)\n"
                                                 "  return 0\nend\n");
  const std::string text = dir.write("text.lua", "function evict_adapter(loading, c)\n  return c[1]\nend\n");
  const std::string field = dir.write("field.lua", "function evict_adapter(loading, c)\n"
                                                   "  return c.no_such_field + 1\nend\n");
  struct Case {
    std::string policy;
    std::string message;
  };
  for (const Case& c :
       {Case{zero, zero + ": evict_adapter(\""},
        Case{text, text + ": evict_adapter(\""},
        Case{field, field + ":2: attempt to perform arithmetic on field 'no_such_field' (a nil value)"},
        Case{fixture("evict-range"),
             fixture("evict-range") + ": plugin 'fixture-evict-range': choose() returned 2 over 2 evictable adapters"},
        Case{fixture("dispatch-nan"), fixture("dispatch-nan") + ": contains no adapter-eviction plugin"},
        Case{"no-such-policy", "unknown adapter eviction 'no-such-policy'"}}) {
    const Result r = run_blis(base + c.policy);
    INFO(c.policy << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("blis: error: ") != std::string::npos);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
  // Without adapter slots the flag does nothing, and says so.
  const Result inert = run_blis("run --model qwen/qwen3-14b --rate 10 --num-requests 20 --lora-eviction mru.lua");
  CHECK(inert.status == 0);
  CHECK(inert.err.find("--lora-eviction has no effect without adapter slots") != std::string::npos);
}
