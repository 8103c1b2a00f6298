// --dump-config: the resolved configuration as a TOML scenario that
// reproduces the run, and the table of settings seen from every writer.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <blis/settings.hpp>

#include <string>

using blis::test::TempDir;

namespace {

const std::string kSrc = BLIS_TEST_SOURCE_DIR;

// Configurations of every kind the report covers: single instance, cluster,
// every latency model, KV pressure, CPU tier, token bucket, workload spec,
// trace replay, decision trace, fitness, policy file, Lua policies.
const char* const kConfigs[] = {
    "--model qwen/qwen3-14b --rate 2 --num-requests 50",
    "--model qwen/qwen3-14b --num-instances 8 --rate 200 --num-requests 600 --routing-policy weighted "
    "--routing-scorers prefix-affinity:5,queue-depth:1 --prefix-tokens 512",
    "--model qwen/qwen3-14b --num-instances 4 --rate 100 --num-requests 300 --trace-level decisions "
    "--summarize-trace --counterfactual-k 3 --fitness-weights p99_ttft:3,mean_e2e:1,throughput:2",
    "--model qwen/qwen3-14b --admission-policy token-bucket --token-bucket-capacity 5000 --rate 20 "
    "--num-requests 200",
    "--model qwen/qwen3-14b --latency-model blackbox --rate 10 --num-requests 50",
    "--model qwen/qwen3-14b --latency-model crossmodel --rate 10 --num-requests 50",
    "--model qwen/qwen3-14b --latency-model trained-roofline --rate 10 --num-requests 50",
    "--model qwen/qwen3-14b --alpha-coeffs 100,1,1 --beta-coeffs 5000,10,2 --rate 10 --num-requests 50",
    "--model qwen/qwen3-14b --total-kv-blocks 3000 --kv-cpu-blocks 2000 --kv-offload-threshold 0.5 "
    "--rate 50 --num-requests 200",
    "--model qwen/qwen3-14b --workload chatbot --rate 20 --num-requests 100",
    "--model qwen/qwen3-14b --workload-trace examples/trace-replay/trace.csv",
    "--model qwen/qwen3-14b --workload-spec examples/workload-spec/prefix-affinity-demo.yaml "
    "--num-instances 4 --routing-policy weighted",
    "--model qwen/qwen3-14b --num-instances 4 --rate 100 --num-requests 300 "
    "--policy-config examples/policy-config/weighted.yaml --scheduler sjf",
    "--model qwen/qwen3-14b --num-instances 4 --rate 100 --num-requests 300 --routing-policy weighted "
    "--routing-scorers scripts/scorers/kv_headroom.lua:2,queue-depth:1",
    "--model meta-llama/llama-3.1-8b-instruct --hardware A100-80 --tp 2 --rate 10 --num-requests 50",
    "--model qwen/qwen3-14b --priority-policy slo-based --scheduler priority-fcfs --rate 50 "
    "--num-requests 200 --max-num-seqs 16 --horizon 3000000",
};

}  // namespace

TEST_CASE("dump-config reproduces the run from anywhere", "[cli][golden]") {
  TempDir dir;
  for (const char* args : kConfigs) {
    INFO(args);
    const Result direct = run_blis(std::string("run ") + args, kSrc);
    REQUIRE(direct.status == 0);
    const Result dumped = run_blis(std::string("run ") + args + " --dump-config", kSrc);
    REQUIRE(dumped.status == 0);
    INFO(dumped.out);
    // What the old --log info showed is in the file.
    for (const char* key : {"hardware = ", "tp = ", "total_kv_blocks = ", "latency_model = ",
                            "routing_policy = ", "admission_policy = "})
      CHECK(dumped.out.find(key) != std::string::npos);
    const std::string path = dir.write("run.toml", dumped.out);
    const Result replay = run_blis("run " + path, dir.str());
    INFO(replay.err);
    REQUIRE(replay.status == 0);
    CHECK(replay.out == direct.out);
  }
}

TEST_CASE("dump-config names what was resolved from the data tables", "[cli]") {
  const Result r = run_blis("run --model qwen/qwen3-14b --dump-config");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("hardware = \"H100\"\n") != std::string::npos);
  CHECK(r.out.find("tp = 1\n") != std::string::npos);
  CHECK(r.out.find("total_kv_blocks = 17600\n") != std::string::npos);
  CHECK(r.out.find("latency_model = \"roofline\"\n") != std::string::npos);
  CHECK(r.out.find("max_model_len = 40960\n") != std::string::npos);
  // Nothing ran: no metrics.
  CHECK(r.out.find("completed_requests") == std::string::npos);
}

// A setting is one row of the table: the command line, a TOML scenario, a Lua
// scenario and --dump-config all know it, with the same meaning.
TEST_CASE("every setting reaches the run from the CLI, TOML, Lua and --dump-config", "[cli][scenario]") {
  TempDir dir;
  const std::string base = "--model qwen/qwen3-14b --rate 50 --num-requests 200 ";
  const Result cli = run_blis("run " + base + "--kv-cpu-blocks 2000 --total-kv-blocks 3000 --num-instances 2");
  REQUIRE(cli.status == 0);
  const std::string toml = dir.write("s.toml", "model = \"qwen/qwen3-14b\"\nrate = 50\nnum_requests = 200\n"
                                               "[kv-cache]\nkv-cpu-blocks = 2000\ntotal_kv_blocks = 3000\n"
                                               "[cluster]\nnum_instances = 2\n");
  const std::string lua = dir.write("s.lua", "return { model = 'qwen/qwen3-14b', rate = 50, num_requests = 200,\n"
                                             "  kv_cpu_blocks = 2000, total_kv_blocks = 3000,\n"
                                             "  cluster = { num_instances = 2 } }\n");
  CHECK(run_blis("run " + toml).out == cli.out);
  CHECK(run_blis("run " + lua).out == cli.out);
  const Result dumped = run_blis("run " + lua + " --dump-config");
  CHECK(dumped.out.find("kv_cpu_blocks = 2000\n") != std::string::npos);
  CHECK(run_blis("run " + dir.write("d.toml", dumped.out)).out == cli.out);
  // And every row of the table is a flag of `blis run --help`.
  const Result help = run_blis("run --help");
  for (const blis::SettingDef& def : blis::setting_table()) {
    INFO(def.key);
    CHECK(help.out.find(def.flag()) != std::string::npos);
  }
}

TEST_CASE("settings: bad values name the flag, or the file and line", "[cli]") {
  TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {"run --model qwen/qwen3-14b --num-requests 99999999999999999999",
       "--num-requests: invalid value '99999999999999999999': expected an integer in range"},
      {"run --model qwen/qwen3-14b --num-instances 2.5", "--num-instances: invalid value '2.5': expected an integer"},
      {"run --model qwen/qwen3-14b --kv-cpu-blocks 100 --kv-transfer-bandwidth 1e-300",
       "--kv-transfer-bandwidth: must lie in"},
      {"run --model qwen/qwen3-14b --kv-cpu-blocks 100 --kv-transfer-bandwidth 0",
       "--kv-transfer-bandwidth: must be a finite value > 0 when --kv-cpu-blocks > 0, got 0"},
      {"run --model qwen/qwen3-14b --admission-policy token-bucket --token-bucket-refill-rate -3",
       "--token-bucket-refill-rate: must be a finite value > 0, got -3"},
      {"run --model qwen/qwen3-14b --routing-latency 9223372036854775807", "--routing-latency: must be at most"},
      {"run " + dir.write("bad.toml", "model = \"qwen/qwen3-14b\"\n[cluster]\nnum-instances = 0\n"),
       "bad.toml:3:17: num-instances: must be between 1 and 100000, got 0"},
      {"run " + dir.write("bad.lua", "return { model = 'qwen/qwen3-14b', scheduler = 'lifo' }\n"),
       "bad.lua: scheduler: unknown scheduler 'lifo'"},
  };
  for (const auto& [args, message] : cases) check_refused(args, message);
  // A value is checked only where it is used, as the reference does: these
  // run, each the same experiment as without the unused flag.
  const Result plain = run_blis("run --model qwen/qwen3-14b --num-requests 20");
  REQUIRE(plain.status == 0);
  for (const char* unused : {"--kv-transfer-bandwidth 0", "--token-bucket-capacity 0",
                             "--token-bucket-refill-rate -3"})
    CHECK(run_blis(std::string("run --model qwen/qwen3-14b --num-requests 20 ") + unused).out == plain.out);
  // A repeated flag keeps its last value, as the reference does.
  CHECK(run_blis("run --model qwen/qwen3-14b --rate 1 --rate 2 --num-requests 20").out ==
        run_blis("run --model qwen/qwen3-14b --rate 2 --num-requests 20").out);
}

// Records (pools, events, lifecycle, autoscaler, node pools) are dumped as
// tables, values with spaces and quotes as written; the dump runs the same
// experiment, and a dump of the dump is the same file.
TEST_CASE("dump-config writes records as tables and round-trips them", "[cli][scenario]") {
  TempDir dir;
  const std::string args =
      "run --model qwen/qwen3-14b --rate 20 --num-requests 200 --pool 'name=\"big pool\" count=2' "
      "--pool \"name='it''s small' count=1 max=3\" --lifecycle 'loading_delay=2s' "
      "--autoscaler 'interval=5s' --event 'at=1s action=drain instance=0' --format json";
  const Result direct = run_blis(args);
  INFO(direct.err);
  REQUIRE(direct.status == 0);
  const Result dumped = run_blis(args + " --dump-config");
  REQUIRE(dumped.status == 0);
  INFO(dumped.out);
  for (const char* table : {"\n[[pools]]\nname = \"big pool\"\ncount = 2\n", "\n[[pools]]\nname = \"its small\"\n",
                            "\n[lifecycle]\nloading_delay = \"2s\"\n", "\n[autoscaler]\ninterval = \"5s\"\n",
                            "\n[[events]]\nat = \"1s\"\naction = \"drain\"\ninstance = 0\n"})
    CHECK(dumped.out.find(table) != std::string::npos);
  const std::string path = dir.write("run.toml", dumped.out);
  const Result replay = run_blis("run " + path, dir.str());
  INFO(replay.err);
  CHECK(replay.out == direct.out);
  // Dumped from the file, it names the file's folder for scripts; from then on
  // a dump of the dump is the same file.
  const Result again = run_blis("run " + path + " --dump-config", dir.str());
  std::string without = again.out;
  const size_t folder = without.find("\n[plugins]\nscript_dir = [");
  REQUIRE(folder != std::string::npos);
  without.erase(folder, without.find('\n', without.find("script_dir", folder)) + 1 - folder);
  CHECK(without == dumped.out);
  CHECK(run_blis("run " + dir.write("again.toml", again.out) + " --dump-config", dir.str()).out == again.out);
}

// A value that came from a file is reported at its place in the file.
TEST_CASE("sub-configuration errors name the file position", "[cli][scenario]") {
  TempDir dir;
  check_refused("run " + dir.write("g.toml", "model = \"qwen/qwen3-14b\"\nfitness-weights = \"bogus\"\n"),
                "g.toml:2:19: fitness-weights: invalid fitness weight \"bogus\": expected key:value");
  check_refused("run " + dir.write("p.toml", "model = \"qwen/qwen3-14b\"\n[[pools]]\nname = \"big pool\"\n"),
                "p.toml:2:1: pools: pool 'name=\"big pool\"': needs count=N");
  check_refused("run --model qwen/qwen3-14b --pool 'name=\"big pool count=2'",
                "--pool: pool 'name=\"big pool count=2': unterminated double quote");
  // A value checked deep in the run (the GPU tables) is still placed in the file.
  check_refused("run " + dir.write("h.toml", "model = \"qwen/qwen3-14b\"\nhardware = \"B300X\"\n"),
                "h.toml:2:12: hardware: GPU \"B300X\" not found");
  check_refused("run --model qwen/qwen3-14b --hardware B300X", "--hardware: GPU \"B300X\" not found");
  // Named once: the file's place, not the flag after it.
  const Result scorers = check_refused(
      "run " + dir.write("w.toml", "model = \"qwen/qwen3-14b\"\nrouting-policy = \"weighted\"\n"
                                   "routing-scorers = \"queue-depth:x\"\n"),
      "w.toml:3:19: routing-scorers: invalid weight for scorer \"queue-depth\": \"x\" is not a number");
  CHECK(scorers.err.find("--routing-scorers") == std::string::npos);
  // Each table of a list names its own position, not the last one's.
  const std::string two = dir.write("two.toml",
                                    "model = \"qwen/qwen3-14b\"\nnum-requests = 20\n"
                                    "[[events]]\nat = \"1s\"\naction = \"drain\"\ninstance = 7\n"
                                    "[[events]]\nat = \"2s\"\naction = \"restore\"\ninstance = 0\n"
                                    "[[pools]]\nname = \"a\"\ncount = 1\n"
                                    "[[pools]]\nname = \"b\"\ncount = 1\n");
  check_refused("run " + two, "two.toml:3:1: events: event 'at=1s action=drain instance=7': instance 7 does not exist");
  check_refused("run " + two + " --pool 'name=c count=1 bogus=3'",
                "--pool: pool 'name=c count=1 bogus=3': 'bogus' is not a pool key");
}

// A record a run would refuse is refused by --dump-config too, at the field's
// place, rather than written into a file that cannot run.
TEST_CASE("dump-config refuses the records a run refuses", "[cli][scenario]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --dump-config ";
  check_refused(base + "--lifecycle 'max=x'", "--lifecycle: max=x must be a number");
  check_refused(base + "--event 'at=1s action=explode'", "--event: event 'at=1s action=explode': unknown action 'explode'");
  check_refused(base + "--autoscaler 'interval=0s'", "--autoscaler: autoscaler 'interval=0s': needs interval=DURATION > 0");
  check_refused(base + "--node-pool 'name=a gpu_type=H100 gpus_per_node=0'", "--node-pool: gpus_per_node=0 must be >= 1");
  check_refused(base + "--pool 'name=a count=1 min=x'", "--pool: pool a: min=x must be a number");
  check_refused("run " + dir.write("l.toml", "model = \"qwen/qwen3-14b\"\n[lifecycle]\nmin = 1\nwarm_start = \"maybe\"\n") +
                    " --dump-config",
                "l.toml:4:14: lifecycle: warm_start=maybe must be true or false");
  // Valid records still dump.
  CHECK(run_blis(base + "--lifecycle 'max=2'").status == 0);
}
