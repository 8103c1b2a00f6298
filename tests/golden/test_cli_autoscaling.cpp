// Instance lifecycle and the autoscaler from the command line and scenario
// files (docs/autoscaling.md, docs/cli.md "Instance lifecycle and autoscaling").
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <iterator>
#include <regex>
#include <string>

using blis::test::TempDir;

namespace {

const std::string kBase = "run --model qwen/qwen3-14b --num-instances 2 --rate 30 --num-requests 600";

}  // namespace

TEST_CASE("add and remove events print the pools block with GPU-hours", "[golden][events][fleet]") {
  const Result r = run_blis(kBase + " --lifecycle 'provisioning_delay=5s loading_delay=2s'" +
                            " --event 'at=3s action=add count=2' --event 'at=10s action=remove count=1'" +
                            " --format table");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("cluster      2 instance(s) of qwen/qwen3-14b") != std::string::npos);
  CHECK(r.out.find("3 s: at=3s action=add count=2 (2 instance(s) starting)") != std::string::npos);
  CHECK(r.out.find("10 s: at=10s action=remove count=1 (1 instance(s) leaving; 0 request(s) re-routed)") !=
        std::string::npos);
  CHECK(r.out.find("=== Pools ===\ndefault: 2 instance(s) at start, 3 at end, peak 4 (2 added, 1 removed) of "
                   "qwen/qwen3-14b on H100 (TP 1)") != std::string::npos);
  CHECK(r.out.find("600 completed") != std::string::npos);
  CHECK(r.out.find("Total: 2 instance(s) at start, 3 at end, over ") != std::string::npos);
  // Deterministic.
  CHECK(run_blis(kBase + " --lifecycle 'provisioning_delay=5s loading_delay=2s'" +
                 " --event 'at=3s action=add count=2' --event 'at=10s action=remove count=1' --format table")
            .out == r.out);
}

TEST_CASE("the autoscaler scales a pool from a scenario file and reports its actions", "[golden][fleet]") {
  TempDir dir;
  const std::string toml = dir.write("as.toml", R"(model = "qwen/qwen3-14b"
autoscaler = "interval=10s"

[workload]
rate = 60
num-requests = 3000

[[pools]]
name = "h100"
count = 1
cost_per_hour = 4
max = 4
provisioning_delay = "20s"
)");
  const Result r = run_blis("run " + toml + " --format table");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("=== Autoscaler ===\n") != std::string::npos);
  CHECK(r.out.find(" s: h100 +") != std::string::npos);
  CHECK(r.out.find("h100: 1 instance(s) at start, ") != std::string::npos);
  CHECK(r.out.find("3000 completed") != std::string::npos);
}

TEST_CASE("bad lifecycle and autoscaler settings are refused before the run", "[golden][fleet]") {
  check_refused(kBase + " --autoscaler 'interval=0s'", "needs interval=DURATION > 0");
  check_refused(kBase + " --autoscaler 'interval=30s speed=2'", "unknown key 'speed'");
  check_refused(kBase + " --autoscaler 'interval=30s scale_down_boundary=0.9'",
                "scale_down_boundary 0.9 must be below scale_up_threshold 0.8");
  check_refused(kBase + " --autoscaler 'interval=30s kv_cache_threshold=1.5'", "kv_cache_threshold=1.5 must be");
  check_refused(kBase + " --lifecycle 'min=3 max=2'", "min 3 is above max 2");
  check_refused(kBase + " --lifecycle 'loading_delay=soon'", "loading_delay=soon is not a duration");
  check_refused(kBase + " --pool 'name=a count=1 max=3'", "lifecycle keys (max=3) need add events or --autoscaler");
  check_refused(kBase + " --pool 'name=a count=1' --pool 'name=b count=1' --event 'at=1s action=add'",
                "the cluster has 2 pools; name one with pool=NAME");
  check_refused(kBase + " --event 'at=1s action=add pool=gpu'", "no pool 'gpu'; pools are default");
}

TEST_CASE("removing instances under request deadlines loses nothing", "[golden][fleet]") {
  // Queued requests re-routed off the leaving instances keep their deadline.
  const std::string args = "run --model qwen/qwen3-14b --num-instances 4 --rate 200 --num-requests 2000 --timeout 3 "
                           "--event 'at=2s action=remove count=1 drain=redirect' "
                           "--event 'at=4s action=remove count=1 drain=immediate' --format json";
  const Result r = run_blis(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex("\"rerouted\": ([0-9]+),\n    \"failed\": ([0-9]+)")));
  CHECK(std::stod(m[1]) > 0);
  const double failed = std::stod(m[2]);
  CHECK(metric(r.out, "timed_out_requests") > 0);
  CHECK(metric(r.out, "injected_requests") == metric(r.out, "completed_requests") + metric(r.out, "still_queued") +
                                                  metric(r.out, "still_running") +
                                                  metric(r.out, "dropped_unservable") +
                                                  metric(r.out, "timed_out_requests") + failed);
  CHECK(run_blis(args).out == r.out);
}

TEST_CASE("the lifecycle flags are in --help", "[golden][fleet]") {
  const Result help = run_blis("run --help");
  CHECK(help.out.find("--lifecycle") != std::string::npos);
  CHECK(help.out.find("--autoscaler") != std::string::npos);
}

TEST_CASE("a policy file's autoscaler section runs the autoscaler; the flag wins over it", "[golden][fleet]") {
  TempDir dir;
  const std::string yaml = dir.write("p.yaml", "autoscaler:\n  interval_us: 10000000\n");
  const std::string base = "run --model qwen/qwen3-14b --num-instances 1 --rate 60 --num-requests 3000 "
                           "--lifecycle 'max=4 provisioning_delay=20s' --format table --policy-config " + yaml;
  const Result r = run_blis(base);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("=== Autoscaler ===\n10 s: default +") != std::string::npos);
  const Result flag = run_blis(base + " --autoscaler 'interval=20s'");
  REQUIRE(flag.status == 0);
  CHECK(flag.out.find("=== Autoscaler ===\n20 s: default +") != std::string::npos);
}

TEST_CASE("your own scaling rule: the queue-target plugin and a Lua autoscaler", "[golden][fleet][plugin][lua]") {
  const std::string base = "run --model qwen/qwen3-14b --num-instances 1 --rate 60 --num-requests 3000 "
                           "--lifecycle 'max=4 provisioning_delay=20s' --format table";
  // The shipped plugin, through the C ABI (plugins/autoscalers/queue-target).
  const Result plugin = run_blis(base + " --autoscaler 'interval=10s policy=queue-target'");
  INFO(plugin.err);
  REQUIRE(plugin.status == 0);
  CHECK(plugin.out.find(" s: default +1 (queue-target with KV demand ") != std::string::npos);
  CHECK(plugin.out.find("3000 completed") != std::string::npos);
  // Its configuration through --plugin-config changes its decisions.
  const Result strict = run_blis(base + " --autoscaler 'interval=10s policy=queue-target'" +
                                 " --plugin-config queue-target.queue_per_instance=1000000");
  REQUIRE(strict.status == 0);
  CHECK(strict.out.find("Scaling Actions: 0\n") != std::string::npos);

  TempDir dir;
  const std::string lua = dir.write("step_up.lua", R"(summary = "one more instance per tick up to the pool's max"
function decide(n, pending_supply)
  if variants[0].room > 0 then return variants[0].pool, 1 end
end
)");
  const Result script = run_blis(base + " --autoscaler 'interval=10s policy=" + lua + "'");
  INFO(script.err);
  REQUIRE(script.status == 0);
  CHECK(script.out.find("=== Autoscaler ===\n10 s: default +1 (") != std::string::npos);
  CHECK(script.out.find("20 s: default +1 (") != std::string::npos);
  CHECK(script.out.find("30 s: default +1 (") != std::string::npos);
  CHECK(script.out.find("Instances Added: 3\n") != std::string::npos);  // max 4

  const std::string bad = dir.write("bad.lua", "function decide(n) return 7, 1 end\n");
  check_refused(base + " --autoscaler 'interval=10s policy=" + bad + "'", "returned pool 7");
  const std::string frac = dir.write("frac.lua", "function decide(n) return 0, 0.5 end\n");
  check_refused(base + " --autoscaler 'interval=10s policy=" + frac + "'", "whole number of instances");
  check_refused(base + " --autoscaler 'interval=10s policy=no-such-rule'", "unknown autoscaler 'no-such-rule'");
}

TEST_CASE("blis plugins list and inspect know the autoscaler kind", "[golden][fleet][plugin]") {
  const Result list = run_blis("plugins list");
  REQUIRE(list.status == 0);
  CHECK(list.out.find("autoscaler") != std::string::npos);
  CHECK(list.out.find("queue-target") != std::string::npos);
  const Result inspect =
      run_blis(std::string("plugins inspect ") + BLIS_TEST_STAGE + "/lib/blis/plugins/libblis-autoscaler-queue-target.so");
  INFO(inspect.err);
  CHECK(inspect.status == 0);
  CHECK(inspect.out.find("queue-target") != std::string::npos);
}

TEST_CASE("the JSON format carries the fleet: pools, GPU-hours, cost and the scaling actions", "[golden][fleet]") {
  const Result r = run_blis(kBase + " --lifecycle 'max=4 provisioning_delay=5s' --autoscaler 'interval=2s'" +
                            " --format json");
  REQUIRE(r.status == 0);
  CHECK(r.out.find(",\n  \"fleet\": {\n    \"pools\": [\n      {\"name\": \"default\", \"instances_at_start\": 2, ") !=
        std::string::npos);
  CHECK(r.out.find("\"gpu_hours\": ") != std::string::npos);
  CHECK(r.out.find("\"scaling_actions\": [") != std::string::npos);
  CHECK(r.out.substr(r.out.size() - 6) == "  }\n}\n");
  // Reserve slots no instance used are not listed (2 initial, max 4: 6 slots).
  CHECK(r.out.find("\"instance_id\": \"instance_5\"") == std::string::npos);
  CHECK(r.out.find("\"instance_id\": \"instance_1\"") != std::string::npos);
  // Without a fleet, no such object.
  CHECK(run_blis(kBase + " --format json").out.find("\"fleet\"") == std::string::npos);
}

TEST_CASE("the autoscaler does not act once the run is over, and reserve slots do not dilute averages",
          "[golden][fleet]") {
  const std::string base = "run --model qwen/qwen3-14b --num-instances 2 --rate 20 --num-requests 300 --prefix-tokens 512";
  const Result plain = run_blis(base);
  // The first tick would come at 1000 s, long after the last request.
  const Result idle = run_blis(base + " --lifecycle 'max=10' --autoscaler 'interval=1000s'");
  REQUIRE(idle.status == 0);
  CHECK(idle.out.find("Scaling Actions: 0\n") != std::string::npos);
  CHECK(idle.out.find("default: 2 instance(s) at start, 2 at end, peak 2 (0 added, 0 removed)") != std::string::npos);
  // 18 reserve slots never used: the cache hit rate is that of the 2 instances.
  const auto hit = [](const std::string& out) { return out.substr(out.find("Cache Hit Rate: "), 22); };
  CHECK(hit(idle.out) == hit(plain.out));
}

TEST_CASE("after the last request the autoscaler ticks only when a stabilisation window ends", "[golden][fleet]") {
  // 20 requests end by 8 s; the down window that opened at the first tick
  // ends at 31 s, where the scale-down lands as it would tick by tick. Then
  // nothing can change before the 200 s horizon, so the loop stops instead
  // of ticking every second to it.
  const std::string run = "run --model qwen/qwen3-14b --num-instances 3 --rate 5 --num-requests 20 --horizon 200s "
                          "--autoscaler 'interval=1s down_window=30s' --lifecycle 'max=3' --format table --profile";
  const Result r = run_blis(run);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("=== Autoscaler ===\n31 s: default -2 (KV demand 0 tokens leaves 675840 spare)\n") !=
        std::string::npos);
  const auto events = [](const std::string& err) {
    const size_t at = err.find("profile: ");
    return at == std::string::npos ? -1L : std::stol(err.substr(at + 9));
  };
  // 3,818 events when it ticked on to the horizon.
  CHECK(events(r.err) == 3627);
  // A 1 µs interval to a 100 s horizon: 10^8 ticks once took 11 s; the
  // ticks left are those while requests run.
  const Result fine = run_blis("run --model qwen/qwen3-14b --num-requests 20 --horizon 100s "
                               "--model-autoscaler-interval-us 1 --profile");
  REQUIRE(fine.status == 0);
  CHECK(events(fine.err) < 30000000);
}

TEST_CASE("warm-up: --lifecycle, a pool's keys and the policy file's instance_lifecycle multiply the first TTFTs",
          "[golden][fleet]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --rate 1 --num-requests 5";
  const Result cold = run_blis(base + " --num-instances 1 --lifecycle 'warm_up_request_count=0'");
  REQUIRE(cold.status == 0);
  // Worked numbers: the first two TTFTs, 8.048 and 21.952 ms, become 12.072 and 32.928 ms;
  // the mean rises by (4.024 + 10.976) / 5 = 3 ms.
  CHECK(cold.out.find("\"ttft_mean_ms\": 17.383,") != std::string::npos);
  const std::string records = dir.str() + "/r.json";
  const Result warm = run_blis(base + " --num-instances 1 --lifecycle 'warm_up_request_count=2 warm_up_ttft_factor=1.5'"
                               " --results-path " + records);
  REQUIRE(warm.status == 0);
  CHECK(warm.out.find("\"ttft_mean_ms\": 20.383,") != std::string::npos);
  CHECK(warm.out.find("\"e2e_mean_ms\": 3947.9976,") != std::string::npos);  // only TTFT changes
  std::ifstream f(records);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"ttft_ms\": 12.072") != std::string::npos);
  CHECK(text.find("\"ttft_ms\": 32.928") != std::string::npos);
  CHECK(text.find("\"ttft_ms\": 17.777") != std::string::npos);  // the third is not penalised
  // The same from a pool's own keys and from the YAML policy file.
  const Result pool = run_blis(base + " --pool 'name=default count=1 warm_up_request_count=2 warm_up_ttft_factor=1.5'");
  REQUIRE(pool.status == 0);
  CHECK(pool.out.find("\"ttft_mean_ms\": 20.383,") != std::string::npos);
  const std::string yaml =
      dir.write("w.yaml", "instance_lifecycle:\n  warm_up_request_count: 2\n  warm_up_ttft_factor: 1.5\n");
  const Result file = run_blis(base + " --num-instances 1 --policy-config " + yaml);
  REQUIRE(file.status == 0);
  CHECK(file.out == warm.out);
  // A factor of 0 means none; below 1 is refused.
  const Result zero = run_blis(base + " --num-instances 1 --lifecycle 'warm_up_request_count=2 warm_up_ttft_factor=0'");
  CHECK(zero.out.find("\"ttft_mean_ms\": 17.383,") != std::string::npos);
  check_refused(base + " --num-instances 1 --lifecycle 'warm_up_request_count=2 warm_up_ttft_factor=0.5'",
                "warm_up_ttft_factor=0.5 must be 0 (none) or >= 1");
  check_refused(base + " --num-instances 1 --policy-config " +
                    dir.write("bad.yaml", "instance_lifecycle:\n  warm_up_ttft_factor: 0.5\n"),
                dir.str() + "/bad.yaml:2");
}

TEST_CASE("initial instances that load first: the policy file's loading_delay without warm_start_initial_instances",
          "[golden][fleet]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --num-instances 2 --rate 10 --num-requests 100";
  const Result cold = run_blis(base + " --policy-config " +
                               dir.write("cold.yaml", "instance_lifecycle:\n  loading_delay: {mean: 2}\n"));
  INFO(cold.err);
  REQUIRE(cold.status == 0);
  // The 20 requests of the first 2 s (10/s) find no instance loaded: refused by routing, as the reference.
  CHECK(cold.out.find("Rejected Requests: 20\n") != std::string::npos);
  CHECK(cold.out.find("; 80 completed; 0.0091 GPU-hours;") != std::string::npos);  // 2 x 16.368 s, from t=0
  CHECK(run_blis(base + " --lifecycle 'loading_delay=2s warm_start=false'").out == cold.out);
  // warm_start_initial_instances: true starts them loaded.
  const Result warm = run_blis(base + " --policy-config " +
                               dir.write("warm.yaml", "instance_lifecycle:\n  loading_delay: {mean: 2}\n"
                                                      "  warm_start_initial_instances: true\n"));
  REQUIRE(warm.status == 0);
  CHECK(warm.out.find("Rejected Requests: 20") == std::string::npos);
  CHECK(warm.out.find("; 100 completed;") != std::string::npos);
  check_refused(base + " --lifecycle 'warm_start=maybe'", "warm_start=maybe must be true or false");
}
