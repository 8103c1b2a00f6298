// --kv-offload-config from the command line (docs/kv-offload.md): the flag
// in --help, HEAD's file format and checks (bad files refused before the
// run with one line at the file's position, exit 2), the same setting from
// a TOML and a Lua scenario and through --dump-config, and a run with a
// slow secondary tier printing what HEAD f90a1e3a prints
// (examples/kv-offload-tiers is checked by test_examples.cpp).
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

using blis::test::TempDir;

namespace {

const char* const kSpec = R"(version: "2"
seed: 3
aggregate_rate: 4
num_requests: 60
clients:
  - id: a
    rate_fraction: 0.5
    prefix_group: a
    prefix_length: 1024
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 200, std_dev: 50, min: 8, max: 400}}
    output_distribution: {type: exponential, params: {mean: 16}}
  - id: b
    rate_fraction: 0.5
    prefix_group: b
    prefix_length: 1024
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 200, std_dev: 50, min: 8, max: 400}}
    output_distribution: {type: exponential, params: {mean: 16}}
)";

const char* const kTiers = R"(kv_offload:
  cpu_bytes_to_use: 30000000
  secondary_tiers:
    - type: fs
      root_dir: /mnt/a
      device_class: nvme_gen4
      direct_io: true
    - type: fs
      root_dir: /mnt/b
      direct_io: false
      read_bandwidth: 200
      write_bandwidth: 100
      base_latency: 500
)";

}  // namespace

TEST_CASE("blis run --help lists --kv-offload-config", "[golden][offload]") {
  const Result r = run_blis("run --help");
  CHECK(r.out.find("--kv-offload-config") != std::string::npos);
}

TEST_CASE("bad kv_offload files are refused before the run, at the file's line", "[golden][offload]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --num-requests 20 --kv-offload-config ";
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"kv_offload:\n  cpu_bytes_to_use: -5\n", "o.yaml:2:21: kv_offload: cpu_bytes_to_use must be > 0, got -5"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 1000000000\n  colour: blue\n",
                "o.yaml:3:3: unknown key \"kv_offload.colour\""},
           Case{"kv_offload:\n  block_size: 16\n", "o.yaml:2:3: kv_offload: cpu_bytes_to_use is required"},
           Case{"- a list\n", "o.yaml:1:1: the document must be a mapping"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: fs\n      root_dir: /x\n"
                "      direct_io: true\n",
                "o.yaml:4:7: kv_offload: secondary_tiers[0] needs a device_class or all of read_bandwidth, "
                "write_bandwidth and base_latency"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: fs\n      root_dir: /x\n"
                "      direct_io: true\n      read_bandwidth: 0\n      write_bandwidth: 5\n      base_latency: 1\n",
                "o.yaml:7:23: kv_offload: secondary_tiers[0].read_bandwidth must be a finite value > 0, got 0"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: fs\n      root_dir: /x\n"
                "      device_class: s3\n",
                "o.yaml:4:7: kv_offload: secondary_tiers[0].direct_io must be set"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: fs\n      root_dir: /x\n"
                "      direct_io: true\n      device_class: tape\n",
                "o.yaml:7:21: kv_offload: secondary_tiers[0].device_class \"tape\" is unknown (known: cpu_dram, "
                "nvme_gen3, nvme_gen4, s3, sata_ssd)"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: obj\n",
                "o.yaml:4:13: kv_offload: secondary_tiers[0].type \"obj\" is not supported"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 100000000\n  block_size: 24\n",
                "o.yaml:3:15: kv_offload: block_size (24) must be a positive multiple of the GPU block size (16)"},
           // Accepted by HEAD's checks, then a panic there (docs/differences.md row 43).
           Case{"kv_offload:\n  cpu_bytes_to_use: 100000000\n  eviction_policy: arc\n",
                "o.yaml:3:20: kv_offload: eviction_policy \"arc\" is not supported"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 100000000\n  blocks_per_chunk: 2\n",
                "o.yaml:3:21: kv_offload: blocks_per_chunk 2 (block_size 32) is not supported"},
           Case{"kv_offload:\n  cpu_bytes_to_use: 1000\n",
                "o.yaml:2:21: kv_offload: cpu_bytes_to_use (1000) is smaller than one block (2621440 bytes)"},
           Case{"other: 1\n", "unknown key \"other\""},
           Case{"", "kv_offload: the file has no top-level kv_offload: block"},
       })
    check_refused(base + dir.write("o.yaml", c.text), c.message);
  const std::string ok = dir.write("ok.yaml", "kv_offload:\n  cpu_bytes_to_use: 100000000\n");
  check_refused(base + ok + " --kv-cpu-blocks 100", "--kv-offload-config and --kv-cpu-blocks are two offload models");
  check_refused(base + "/nonexistent/o.yaml", "/nonexistent/o.yaml");
}

TEST_CASE("kv offload tiers: HEAD's numbers, from the CLI, TOML, Lua and --dump-config", "[golden][offload]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec);
  const std::string tiers = dir.write("tiers.yaml", kTiers);
  const std::string cmd = "run --model qwen/qwen3-14b --workload-spec " + spec + " --total-kv-blocks 130 --profile-set head";
  const Result plain = run_blis(cmd);
  const Result cli = run_blis(cmd + " --kv-offload-config " + tiers);
  INFO(cli.err);
  REQUIRE(cli.status == 0);
  // The tiers change the run (what comes back from them, when).
  CHECK(cli.out != plain.out);
  // HEAD f90a1e3a prints the same for this run.
  CHECK(cli.out.find("\"completed_requests\": 60,") != std::string::npos);
  CHECK(cli.out.find("\"ttft_mean_ms\": 163.31213333333332,") != std::string::npos);
  CHECK(cli.out.find("\"e2e_mean_ms\": 333.07781666666665,") != std::string::npos);
  CHECK(cli.out.find("Cache Hit Rate: 0.5994\nKV Thrashing Rate: 1.0000\n") != std::string::npos);
  const std::string toml = dir.write("s.toml", "model = \"qwen/qwen3-14b\"\nworkload_spec = \"" + spec +
                                                   "\"\nprofile_set = \"head\"\n[kv-cache]\ntotal_kv_blocks = 130\n"
                                                   "kv_offload_config = \"" + tiers + "\"\n");
  const std::string lua = dir.write("s.lua", "return { model = 'qwen/qwen3-14b', workload_spec = '" + spec +
                                                 "', profile_set = 'head', total_kv_blocks = 130, kv_offload_config = '" +
                                                 tiers + "' }\n");
  CHECK(run_blis("run " + toml).out == cli.out);
  CHECK(run_blis("run " + lua).out == cli.out);
  const Result dumped = run_blis(cmd + " --kv-offload-config " + tiers + " --dump-config");
  CHECK(dumped.out.find("kv_offload_config = ") != std::string::npos);
}

namespace {

std::string fixture(const std::string& name) {
  return std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-" + name + ".so";
}

// A CPU tier of 76 blocks, less than kSpec's two prefixes (64 blocks each),
// with its eviction_policy.
std::string with_policy(const std::string& policy) {
  return "kv_offload:\n  eviction_policy: " + policy + "\n  cpu_bytes_to_use: 200000000\n";
}

double hit_rate(const std::string& out) {
  const size_t at = out.find("Cache Hit Rate: ");
  REQUIRE(at != std::string::npos);
  return std::stod(out.substr(at + 16));
}

}  // namespace

TEST_CASE("eviction_policy names an offload-eviction plugin: lru by default, a script or library choose",
          "[golden][offload][plugin]") {
  TempDir dir;
  const std::string cmd = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) +
                          " --total-kv-blocks 130 --profile-set head --kv-offload-config ";
  const Result plain = run_blis(cmd + dir.write("plain.yaml", "kv_offload:\n  cpu_bytes_to_use: 200000000\n"));
  const Result lru = run_blis(cmd + dir.write("lru.yaml", with_policy("lru")));
  INFO(plain.err);
  REQUIRE(plain.status == 0);
  CHECK(lru.out == plain.out);
  // The newest of the candidates, from a library and from a script: the same
  // choices; the two prefixes come round in turn, and keeping the older
  // blocks of the cycle hits more than lru, which evicts each block just
  // before its prefix returns.
  const std::string newest = dir.write("newest.lua", "kind = 'offload-eviction'\n"
                                                     "function evict_block(c) return #c end\n");
  const Result library = run_blis(cmd + dir.write("lib.yaml", with_policy(fixture("offload-newest"))));
  const Result script = run_blis(cmd + dir.write("script.yaml", with_policy(newest)));
  INFO(library.err << script.err);
  REQUIRE(library.status == 0);
  REQUIRE(script.status == 0);
  CHECK(library.out == script.out);
  CHECK(library.out != plain.out);
  CHECK(hit_rate(library.out) > hit_rate(plain.out));
  CHECK(library.out.find("\"completed_requests\": 60,") != std::string::npos);
  // The shipped example: seeded, the same run twice.
  const std::string sampled = dir.write("sampled.yaml", with_policy("sampled_random.lua"));
  const Result s1 = run_blis(cmd + sampled), s2 = run_blis(cmd + sampled);
  INFO(s1.err);
  REQUIRE(s1.status == 0);
  CHECK(s1.out == s2.out);
  CHECK(run_blis("plugins list").out.find("offload-eviction") != std::string::npos);
  CHECK(run_blis("plugins inspect scripts/offload/sampled_random.lua", BLIS_TEST_SOURCE_DIR).status == 0);
}

TEST_CASE("a broken offload eviction stops the run with exit 2, naming the file", "[golden][offload][plugin]") {
  TempDir dir;
  const std::string cmd = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) +
                          " --total-kv-blocks 130 --profile-set head --kv-offload-config ";
  const std::string zero = dir.write("zero.lua", "kind = 'offload-eviction'\nfunction evict_block(c) return 0 end\n");
  struct Case {
    std::string policy;
    std::string message;
  };
  for (const Case& c :
       {Case{zero, zero + ": evict_block(candidates, "},
        Case{fixture("offload-range"), fixture("offload-range") + ": plugin 'fixture-offload-range': choose() "
                                                                    "returned "},
        Case{"no-such-policy", "p.yaml:2:20: unknown offload eviction 'no-such-policy'"}}) {
    const Result r = run_blis(cmd + dir.write("p.yaml", with_policy(c.policy)));
    INFO(c.policy << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("blis: error: ") != std::string::npos);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}
