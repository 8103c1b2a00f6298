// Invariants at scale, through the binary a user runs (issue 13, item 5):
// random `blis run` configurations over cluster sizes, pools, prefill/decode
// pools (with an encode pool) and autoscaled fleets, KV pressure
// and the CPU tier or N-tier offload, LoRA adapters, schedulers and priorities, preemption, admission and
// routing latency with and without a horizon, token-bucket admission,
// timeouts, closed-loop clients, workload specs (prefix groups, multi-turn
// sessions, SLO classes, adapters, multimodal prompts), the shipped Lua scorers and admission script, and
// scenario events (failures with re-routing or losses, drains, restores,
// stragglers, rate changes, instances added and removed, a change of
// workload mix, offload tiers slowed and restored, encoders failed, drained
// and restored).
// Every run must:
// - exit 0 with a JSON document on stdout in which every number is finite
//   and none is negative;
// - conserve requests: injected = completed + queued + running + dropped +
//   timed out + failed, per instance and for the cluster; with no horizon,
//   nothing is left queued or running and injected + rejected = the requests
//   sent;
// - write one record per routed request to --results-path, each causal
//   (scheduling delay <= TTFT <= E2E), on an instance of the run, with the
//   dropped, timed-out and failed marks matching the counters;
// - print byte-identical stdout and results when run again.
// BLIS_CLI_INVARIANT_RUNS and BLIS_CLI_INVARIANT_SEED widen the search.
#include "catch.hpp"
#include "cli.hpp"
#include "json_lite.hpp"
#include "splitmix.hpp"
#include "temp_dir.hpp"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using blis::test::Json;
using blis::test::TempDir;

namespace {

// A fixed, portable stream, so a failure replays exactly.
struct Rng : blis::test::SplitMix {
  int64_t below(int64_t n) { return static_cast<int64_t>(SplitMix::below(static_cast<uint64_t>(n))); }
  bool one_in(int64_t n) { return below(n) == 0; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(static_cast<int64_t>(v.size())))];
  }
};

struct Draw {
  std::string args;       // after `blis run`
  std::string spec;       // a workload spec's YAML, when the run uses one
  bool horizon = false;   // a finite --horizon
  bool closed_loop = false;
  bool events = false;    // scenario events (failures, drains, slowdowns, rate changes)
  bool pd = false;        // prefill/decode pools
  bool lora = false;      // LoRA adapters named by the workload spec's clients
  bool offload = false;   // an N-tier KV offload (--kv-offload-config)
  bool encode = false;    // an encode pool in front of the P/D pools
  int64_t encoders = 0;   // its instances
  int64_t tiers = -1;     // secondary tiers of the N-tier offload (-1: none)
  bool cpu_tier = false;  // the --kv-cpu-blocks tier (timed reloads)
  int64_t tier_events = 0, encoder_events = 0;
  bool gateway = false;  // --flow-control
  int64_t gateway_events = 0, tenant_events = 0;
  int64_t sent = 0;       // requests the workload sends (0: unknown)
};

std::string distribution(Rng& rng, int64_t mean, int64_t max) {
  std::ostringstream d;
  if (rng.one_in(3)) {
    d << "{type: exponential, params: {mean: " << mean << "}}";
  } else {
    d << "{type: gaussian, params: {mean: " << mean << ", std_dev: " << 1 + mean / 3 << ", min: 1, max: " << max
      << "}}";
  }
  return d.str();
}

// What a spec's clients may carry beyond text prompts.
struct SpecExtras {
  bool adapters = false;    // each client names adapter a0, a1 or a2, or none
  bool multimodal = false;  // some clients send images (and audio)
};

std::string random_spec(Rng& rng, int64_t requests, SpecExtras extras = {}) {
  static const std::vector<std::string> kClasses = {"critical", "standard", "sheddable", "batch", "background"};
  std::ostringstream y;
  y << "version: \"2\"\nseed: " << rng.below(1000) << "\ncategory: language\n"
    << "aggregate_rate: " << 20 + rng.below(2000) << "\nnum_requests: " << requests << "\nclients:\n";
  const int64_t clients = 1 + rng.below(3);
  for (int64_t c = 0; c < clients; ++c) {
    y << "  - id: client-" << c << "\n    tenant_id: tenant-" << c % 2 << "\n    slo_class: " << rng.pick(kClasses)
      << "\n    rate_fraction: " << 1 + rng.below(4) << "\n    arrival: {process: "
      << (rng.one_in(2) ? "poisson" : "constant") << "}\n"
      << "    input_distribution: " << distribution(rng, 32 + rng.below(1200), 4000) << "\n"
      << "    output_distribution: " << distribution(rng, 8 + rng.below(400), 2000) << "\n";
    if (extras.adapters && !rng.one_in(4)) y << "    adapter: a" << rng.below(3) << "\n";
    if (extras.multimodal && rng.one_in(2)) {
      y << "    multimodal:\n      text_distribution: " << distribution(rng, 16 + rng.below(400), 2000)
        << "\n      image_distribution: {type: constant, params: {value: " << 64 * (1 + rng.below(9))
        << "}}\n"
        << "      image_count_distribution: {type: gaussian, params: {mean: 1.5, std_dev: 0.5, min: 1, max: "
           "2}}\n";
      if (rng.one_in(2))
        y << "      audio_distribution: {type: constant, params: {value: " << 32 * (1 + rng.below(8))
          << "}}\n"
          << "      audio_count_distribution: {type: constant, params: {value: 1}}\n";
    }
    if (rng.one_in(2)) {
      y << "    prefix_group: group-" << rng.below(2) << "\n    prefix_length: " << 16 * (1 + rng.below(32)) << "\n";
    }
    if (rng.one_in(3)) {
      y << "    reasoning:\n      reason_ratio_distribution: {type: gaussian, params: {mean: 0, std_dev: 0, "
           "min: 0, max: 0}}\n      multi_turn:\n        max_rounds: "
        << 2 + rng.below(3) << "\n        think_time_us: " << rng.below(500000)
        << "\n        context_growth: accumulate\n";
    }
  }
  return y.str();
}

// KV pressure: a tight or roomy cache, the CPU tier or an N-tier offload.
void draw_kv(Rng& rng, Draw& d, std::ostringstream& a, const std::string& dir, int index) {
  const int64_t block = rng.pick(std::vector<int64_t>{16, 16, 32});
  a << " --block-size " << block;
  switch (rng.below(4)) {
    case 0: a << " --total-kv-blocks " << 40 + rng.below(300); break;  // tight: preemptions, drops
    case 1: a << " --total-kv-blocks " << 1000 + rng.below(4000); break;
    default: break;  // from the GPU's memory
  }
  if (rng.one_in(3)) {
    a << " --kv-cpu-blocks " << 100 + rng.below(5000) << " --kv-offload-threshold 0." << 3 + rng.below(7);
    d.cpu_tier = true;
  } else if (!d.pd && rng.one_in(4)) {  // N-tier offload: a CPU tier of 8-200 blocks, 0-2 disks behind it
    d.offload = true;
    std::ostringstream o;
    o << "kv_offload:\n  cpu_bytes_to_use: " << (8 + rng.below(192)) * 2621440 * (block / 16)
      << "\n  offload_prompt_only: " << (rng.one_in(2) ? "true" : "false") << "\n";
    const int64_t tiers = rng.below(3);
    d.tiers = tiers;
    if (tiers > 0) o << "  secondary_tiers:\n";
    for (int64_t t = 0; t < tiers; ++t)
      o << "    - type: fs\n      root_dir: /mnt/t" << t
        << "\n      device_class: " << rng.pick(std::vector<std::string>{"nvme_gen4", "sata_ssd", "s3"})
        << "\n      direct_io: " << (rng.one_in(2) ? "true" : "false") << "\n";
    const std::string path = dir + "/offload" + std::to_string(index) + ".yaml";
    std::ofstream(path) << o.str();
    a << " --kv-offload-config " << path;
  }
}

// The workload: a spec (with adapters and multimodal prompts), closed-loop
// users, or open-loop arrivals.
void draw_workload(Rng& rng, Draw& d, std::ostringstream& a, const std::string& dir, int index) {
  const int64_t requests = 40 + rng.below(300);
  switch (rng.below(5)) {
    case 0:
    case 1: {
      d.lora = rng.one_in(3);
      d.spec = random_spec(rng, requests, {d.lora, d.encode || rng.one_in(6)});
      const std::string path = dir + "/spec" + std::to_string(index) + ".yaml";
      std::ofstream(path) << d.spec;
      a << " --workload-spec " << path;
      if (d.lora) {  // three adapters of ranks 8-64, one or two slots per instance
        const std::string lora = dir + "/lora" + std::to_string(index) + ".yaml";
        std::ofstream(lora) << "lora:\n  adapter_capacity: " << 1 + rng.below(2) << "\n  adapters:\n"
                            << "    - {id: a0, rank: 8}\n    - {id: a1, rank: " << 16 * (1 + rng.below(2))
                            << "}\n    - {id: a2, rank: " << 8 * (1 + rng.below(8)) << "}\n";
        a << " --lora-config " << lora;
      }
      break;
    }
    case 2:
      d.closed_loop = true;
      a << " --concurrency " << 1 + rng.below(64) << " --think-time-ms " << rng.below(500)
        << " --num-requests " << requests;
      break;
    default:
      a << " --rate " << 5 + rng.below(1500) << " --num-requests " << requests << " --arrival-process "
        << rng.pick(std::vector<std::string>{"constant", "poisson", "gamma"});
      if (rng.one_in(3)) a << " --prefix-tokens " << 16 * rng.below(64);
      a << " --prompt-tokens " << 32 + rng.below(2000) << " --output-tokens " << 4 + rng.below(600);
      d.sent = requests;
      break;
  }
}

// Scenario events, and sometimes a change of workload mix.
void draw_events(Rng& rng, Draw& d, std::ostringstream& a, int64_t instances, bool pools,
                 const std::string& dir, int index) {
  if (rng.one_in(3)) {
    d.events = true;
    const int64_t n = 1 + rng.below(4);
    for (int64_t k = 0; k < n; ++k) {
      a << " --event 'at=" << rng.below(3000) << "ms action=";
      const int64_t target = rng.below(instances);
      switch (rng.below(8)) {
        case 6:
          a << "add count=" << 1 + rng.below(3) << (pools ? " pool=h" : d.pd ? (rng.one_in(2) ? " pool=prefill" : " pool=decode") : "");
          break;
        case 7:
          a << "remove instance=" << target << " drain="
            << rng.pick(std::vector<std::string>{"wait", "redirect", "immediate"});
          break;
        case 0: a << "drain instance=" << target; break;
        case 1: a << "restore instance=" << target; break;
        case 2: a << "slow instance=" << target << " factor=" << 1 + rng.below(4); break;
        case 3: a << "rate factor=0." << 2 + rng.below(8); break;
        default:
          a << "fail instance=" << target << " requests=" << (rng.one_in(2) ? "reroute" : "fail");
          break;
      }
      a << "'";
    }
    // A change of traffic mix: another workload from then on.
    if (!d.closed_loop && rng.one_in(3)) {
      const std::string path = dir + "/phase" + std::to_string(index) + ".yaml";
      std::ofstream(path) << random_spec(rng, 20 + rng.below(200));
      a << " --event 'at=" << rng.below(4000) << "ms action=workload spec=" << path << "'";
      d.sent = 0;  // some of the first workload's arrivals never come
    }
  }
}

// Events on the offload tiers and the encode pool, drawn from a stream of
// their own (forked from the main stream's state, which it leaves alone), so
// that the other draws stay as they were.
void draw_tier_and_encoder_events(const Rng& main, Draw& d, std::ostringstream& a) {
  Rng rng{{main.s ^ 0x5deece66dULL}};
  const int64_t tiers = d.tiers > 0 ? d.tiers : d.cpu_tier ? 1 : 0;
  if (tiers > 0 && !rng.one_in(3)) {
    for (int64_t k = 1 + rng.below(3); k > 0; --k, ++d.tier_events) {
      const std::string tier = d.tiers > 0 ? std::to_string(1 + rng.below(tiers)) : "cpu";
      a << " --event 'at=" << rng.below(3000) << "ms action=tier tier=" << tier
        << " factor=" << rng.pick(std::vector<std::string>{"0.5", "1", "3", "20", "400"});
      if (rng.one_in(2)) a << " instance=0";
      a << "'";
    }
  }
  if (d.encoders > 0) {  // (encode pools are rare: every one gets events)
    for (int64_t k = 1 + rng.below(3); k > 0; --k, ++d.encoder_events) {
      a << " --event 'at=" << rng.below(3000) << "ms action=";
      switch (rng.below(4)) {
        case 0: a << "restore"; break;
        case 1: a << "drain"; break;
        default: a << "fail requests=" << (rng.one_in(2) ? "reroute" : "fail"); break;
      }
      a << " pool=encode instance=" << rng.below(d.encoders) << "'";
    }
  }
  if (d.tier_events + d.encoder_events > 0) d.events = true;
}

// Gateway flow control and its events, and per-tenant rate events, from a
// stream of their own (as above), so that the other draws stay as they were.
void draw_gateway(const Rng& main, Draw& d, std::ostringstream& a) {
  Rng rng{{main.s ^ 0x9e3779b97f4a7c15ULL}};
  if (d.spec.find("tenant_id: tenant-0") != std::string::npos && rng.one_in(2)) {
    const int64_t tenants = d.spec.find("tenant_id: tenant-1") != std::string::npos ? 2 : 1;
    for (int64_t k = 1 + rng.below(2); k > 0; --k, ++d.tenant_events)
      a << " --event 'at=" << rng.below(3000) << "ms action=rate tenant=tenant-" << rng.below(tenants)
        << " factor=" << rng.pick(std::vector<std::string>{"0.3", "2", "5"}) << "'";
  }
  if (rng.one_in(4)) {
    d.gateway = true;
    a << " --flow-control --saturation-detector "
      << rng.pick(std::vector<std::string>{"concurrency", "utilization", "never"}) << " --max-concurrency "
      << 1 + rng.below(8) << " --dispatch-order "
      << rng.pick(std::vector<std::string>{"fifo", "priority", "slo-deadline"}) << " --fairness-policy "
      << rng.pick(std::vector<std::string>{"global-strict", "round-robin"});
    if (rng.one_in(2)) a << " --max-gateway-queue-depth " << rng.below(40);
    if (rng.one_in(3)) a << " --per-band-capacity " << rng.below(20);
    if (rng.one_in(3)) a << " --queue-shedding";
    if (rng.one_in(3)) a << " --in-flight-eviction";
    if (rng.one_in(3)) a << " --request-ttl " << 1 + rng.below(2000) << "ms";
    for (int64_t k = rng.below(3); k > 0; --k, ++d.gateway_events)
      a << " --event 'at=" << rng.below(3000) << "ms action=gateway queue_depth=" << rng.below(30)
        << " band_capacity=" << rng.below(10) << "'";
  }
  if (d.gateway_events + d.tenant_events > 0) d.events = true;
}

Draw draw(Rng& rng, const std::string& dir, int index) {
  Draw d;
  std::ostringstream a;
  static const std::vector<std::string> kModels = {"qwen/qwen3-14b", "meta-llama/llama-3.1-8b-instruct"};
  a << "--model " << rng.pick(kModels) << " --seed " << 1 + rng.below(1000);

  // Cluster: one to 24 instances, two pools of different GPUs, or a
  // prefill pool and a decode pool; sometimes an autoscaled fleet.
  int64_t instances = rng.pick(std::vector<int64_t>{1, 1, 2, 3, 4, 8, 16, 24});
  const int64_t shape = rng.below(8);
  const bool pools = shape == 0;
  if (pools) {
    const int64_t x = 1 + rng.below(3), y = 1 + rng.below(3);
    a << " --pool 'name=h count=" << x << " hardware=H100' --pool 'name=a count=" << y
      << " hardware=A100-80'";
    instances = x + y;
  } else if (shape == 1) {
    d.pd = true;
    const int64_t p = 1 + rng.below(3), q = 1 + rng.below(3);
    a << " --prefill-instances " << p << " --decode-instances " << q << " --pd-decider "
      << rng.pick(std::vector<std::string>{"always", "prefix-threshold", "never"});
    if (rng.one_in(2)) a << " --pd-transfer-contention";
    instances = p + q;
    if (rng.one_in(2)) {  // an encode pool in front (EPD)
      d.encode = true;
      d.encoders = 1 + rng.below(2);
      a << " --encode-instances " << d.encoders << " --encode-decider "
        << rng.pick(std::vector<std::string>{"multimodal", "always"});
    }
  } else {
    a << " --num-instances " << instances;
  }
  if (rng.one_in(6))
    a << " --lifecycle 'provisioning_delay=" << rng.below(3000) << "ms loading_delay=" << rng.below(2000)
      << "ms min=1 max=" << instances + 4 << "' --autoscaler 'interval=" << 1 + rng.below(5) << "s'";

  draw_kv(rng, d, a, dir, index);

  // Batching, scheduling, priorities, preemption.
  if (rng.one_in(2)) a << " --max-num-seqs " << 1 + rng.below(256);
  if (rng.one_in(2)) a << " --max-num-batched-tokens " << 256 + rng.below(8192);
  if (rng.one_in(3)) a << " --long-prefill-token-threshold " << 16 + rng.below(1024);
  a << " --scheduler "
    << rng.pick(std::vector<std::string>{"fcfs", "priority-fcfs", "sjf", "reverse-priority"});
  a << " --priority-policy " << rng.pick(std::vector<std::string>{"constant", "slo-based", "inverted-slo"});
  if (rng.one_in(3)) a << " --preemption-policy " << rng.pick(std::vector<std::string>{"fcfs", "priority"});

  // Admission and routing, native and Lua.
  switch (rng.below(5)) {
    case 0:
      a << " --admission-policy token-bucket --token-bucket-capacity " << 2000 + rng.below(50000)
        << " --token-bucket-refill-rate " << 1000 + rng.below(100000);
      break;
    case 1: a << " --admission-policy admission/slo_guard.lua"; break;
    default: break;
  }
  const bool latencies = rng.one_in(2);
  if (latencies)
    a << " --admission-latency " << rng.below(20000) << " --routing-latency " << rng.below(20000);
  switch (rng.below(5)) {
    case 0: a << " --routing-policy round-robin"; break;
    case 1: a << " --routing-policy least-loaded"; break;
    case 2:
      a << " --routing-policy weighted --routing-scorers "
        << "scripts/scorers/prefix_affinity.lua:3,scripts/scorers/queue_depth.lua:2,kv-utilization:2";
      break;
    case 3:
      a << " --routing-policy weighted --routing-scorers prefix-affinity:3,queue-depth:2,kv-utilization:2";
      break;
    default:
      a << " --routing-policy weighted --routing-scorers scripts/scorers/kv_headroom.lua:1,load-balance:1";
      break;
  }
  if (rng.one_in(4)) a << " --snapshot-refresh-interval " << rng.below(50000);

  draw_workload(rng, d, a, dir, index);
  const bool timeout = rng.one_in(3);
  if (timeout) a << " --timeout " << 1 + rng.below(4);
  draw_events(rng, d, a, instances, pools, dir, index);
  if (rng.one_in(3) || (latencies && rng.one_in(2))) {
    d.horizon = true;
    a << " --horizon " << 100 + rng.below(5000) << "ms";
  }
  draw_tier_and_encoder_events(rng, d, a);
  draw_gateway(rng, d, a);
  d.args = a.str();
  return d;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct Counts {
  double injected = 0, completed = 0, queued = 0, running = 0, dropped = 0, timed_out = 0;
};

Counts counts(const Json& m) {
  Counts c;
  c.injected = m.num("injected_requests");
  c.completed = m.num("completed_requests");
  c.queued = m.num("still_queued");
  c.running = m.num("still_running");
  c.dropped = m.num("dropped_unservable");
  // Printed only when requests can time out.
  c.timed_out = m.has("timed_out_requests") ? m.num("timed_out_requests") : 0;
  return c;
}

}  // namespace

TEST_CASE("CLI invariants hold over random configurations of the binary", "[invariant][cli]") {
  const char* runs_env = std::getenv("BLIS_CLI_INVARIANT_RUNS");
  const char* seed_env = std::getenv("BLIS_CLI_INVARIANT_SEED");
  const int runs = runs_env != nullptr ? std::atoi(runs_env) : 48;
  Rng rng{{seed_env != nullptr ? std::strtoull(seed_env, nullptr, 10) : 3ULL}};
  TempDir dir;
  const std::string share = std::string(BLIS_TEST_STAGE) + "/share/blis";
  int64_t total_dropped = 0, total_timed_out = 0, total_rejected = 0, total_preempted = 0, total_queued = 0;
  int64_t multi_instance = 0, specs = 0, total_failed = 0, with_events = 0, with_lora = 0, with_offload = 0,
          with_encode = 0, tier_events = 0, encoder_events = 0, with_gateway = 0, gateway_events = 0,
          tenant_events = 0;
  for (int i = 0; i < runs; ++i) {
    const Draw d = draw(rng, dir.str(), i);
    const std::string results = dir.str() + "/results" + std::to_string(i) + ".json";
    const std::string args =
        "run " + d.args + " --format json --results-path " + results + " --script-dir " + share;
    INFO("run " << i << ": blis " << args << (d.spec.empty() ? "" : "\nspec:\n" + d.spec));
    const Result r = run_blis(args, dir.str(), "timeout 120");
    INFO("status " << r.status << "\nstderr: " << r.err.substr(0, 2000));
    REQUIRE(r.status == 0);
    CHECK(r.err.find("internal error") == std::string::npos);

    // Finite, non-negative numbers everywhere (the parser refuses NaN and
    // infinities).
    Json doc;
    REQUIRE_NOTHROW(doc = Json::parse(r.out));
    std::vector<std::pair<std::string, double>> numbers;
    doc.numbers("", numbers);
    for (const auto& [path, value] : numbers) {
      INFO(path << " = " << value);
      // (An autoscaler's scale-down is a negative change of instances.)
      if (path.rfind(".fleet.scaling_actions[", 0) == 0 && path.size() > 6 &&
          path.compare(path.size() - 6, 6, ".delta") == 0)
        continue;
      CHECK(value >= 0);
    }

    // Conservation, per instance and for the cluster.
    const Json& cluster = doc["cluster"];
    const Counts c = counts(cluster);
    const double rejected = doc.num("rejected_requests");
    const double failed = doc.has("scenario_events") ? doc["scenario_events"].num("failed") : 0;
    CHECK(c.injected == c.completed + c.queued + c.running + c.dropped + c.timed_out + failed);
    Counts sum;
    for (const Json& m : doc["instances"].items) {
      const Counts k = counts(m);
      INFO(m["instance_id"].text);
      // (A failed instance's losses are counted for the cluster only.)
      // (A P/D request is injected where it is prefilled, and ends where it is decoded.)
      if (failed == 0 && !d.pd) CHECK(k.injected == k.completed + k.queued + k.running + k.dropped + k.timed_out);
      sum.injected += k.injected, sum.completed += k.completed, sum.queued += k.queued;
      sum.running += k.running, sum.dropped += k.dropped, sum.timed_out += k.timed_out;
    }
    CHECK(sum.completed == c.completed);
    CHECK(sum.running == c.running);
    CHECK(sum.dropped == c.dropped);
    CHECK(sum.timed_out == c.timed_out);
    // The cluster also counts the requests still in its admission/routing
    // pipeline at the horizon as queued.
    CHECK(sum.queued <= c.queued);
    const double in_pipeline = c.queued - sum.queued;
    if (failed == 0) CHECK(c.injected - sum.injected == in_pipeline);
    if (!d.horizon) {
      CHECK(c.queued == 0);
      CHECK(c.running == 0);
      CHECK(in_pipeline == 0);
      // With --flow-control, the gateway's losses and what it still holds.
      double gateway = 0;
      if (doc.has("gateway"))
        for (const char* k : {"still_queued", "shed", "rejected", "evicted", "expired"})
          gateway += doc["gateway"].num(k);
      if (d.sent > 0) CHECK(c.injected + rejected + gateway == static_cast<double>(d.sent));
    }

    // One causal record per routed request.
    Json res;
    REQUIRE_NOTHROW(res = Json::parse(slurp(results)));
    const auto& records = res["requests"].items;
    CHECK(static_cast<double>(records.size()) == c.injected - in_pipeline);
    std::set<std::string> ids, instance_ids;
    for (const Json& m : doc["instances"].items) instance_ids.insert(m["instance_id"].text);
    int64_t dropped = 0, timed_out = 0, finished = 0, lost = 0;
    for (const Json& rec : records) {
      const std::string id = rec["requestID"].text;
      INFO(id);
      CHECK(ids.insert(id).second);
      CHECK(instance_ids.count(rec["handled_by"].text) == 1);
      const double sched = rec.num("scheduling_delay_ms"), ttft = rec.num("ttft_ms"), e2e = rec.num("e2e_ms");
      CHECK(rec.num("arrived_at") >= 0);
      if (rec.has("dropped_unservable")) {
        ++dropped;
        CHECK(ttft == 0);
        CHECK(e2e == 0);
      }
      if (rec.has("timed_out")) {
        ++timed_out;
        CHECK(e2e == 0);
      }
      if (rec.has("failed")) {
        ++lost;
        CHECK(e2e == 0);
      }
      if (ttft > 0) CHECK(ttft >= sched);
      if (e2e > 0) {
        ++finished;
        CHECK(ttft > 0);
        CHECK(e2e >= ttft);
      }
    }
    CHECK(dropped == static_cast<int64_t>(c.dropped));
    CHECK(timed_out == static_cast<int64_t>(c.timed_out));
    CHECK(lost == static_cast<int64_t>(failed));
    CHECK(finished <= static_cast<int64_t>(c.completed));

    // Determinism: the same command prints the same bytes.
    const std::string first_results = slurp(results);
    const Result again = run_blis(args, dir.str(), "timeout 120");
    REQUIRE(again.status == 0);
    CHECK(again.out == r.out);
    CHECK(slurp(results) == first_results);

    total_dropped += static_cast<int64_t>(c.dropped);
    total_timed_out += static_cast<int64_t>(c.timed_out);
    total_rejected += static_cast<int64_t>(rejected);
    total_preempted += static_cast<int64_t>(cluster.num("preemption_count"));
    total_queued += static_cast<int64_t>(c.queued + c.running);
    if (doc["instances"].items.size() > 1) ++multi_instance;
    if (!d.spec.empty()) ++specs;
    if (d.events) ++with_events;
    with_lora += d.lora ? 1 : 0;
    with_offload += d.offload ? 1 : 0;
    with_encode += d.encode ? 1 : 0;
    tier_events += d.tier_events;
    encoder_events += d.encoder_events;
    with_gateway += d.gateway ? 1 : 0;
    gateway_events += d.gateway_events;
    tenant_events += d.tenant_events;
    total_failed += static_cast<int64_t>(failed);
  }
  // The draws do reach the interesting paths.
  std::cerr << "cli invariants: " << runs << " runs: dropped " << total_dropped << ", timed out "
            << total_timed_out << ", rejected " << total_rejected << ", preempted " << total_preempted
            << ", left in flight " << total_queued << ", multi-instance runs " << multi_instance
            << ", workload specs " << specs << ", with events " << with_events << ", failed " << total_failed
            << ", LoRA " << with_lora << ", N-tier offload " << with_offload << ", encode pools "
            << with_encode << ", tier events " << tier_events << ", encoder events " << encoder_events
            << ", flow control " << with_gateway << ", gateway events " << gateway_events
            << ", tenant rate events " << tenant_events << "\n";
  if (runs >= 48) {
    CHECK(total_dropped > 0);
    CHECK(total_timed_out > 0);
    CHECK(total_rejected > 0);
    CHECK(total_preempted > 0);
    CHECK(total_queued > 0);
    CHECK(multi_instance > runs / 2);
    CHECK(specs > 0);
    CHECK(total_failed > 0);
    CHECK(with_lora > 0);
    CHECK(with_offload > 0);
    CHECK(tier_events > 0);
    CHECK(encoder_events > 0);
    CHECK(with_gateway > 0);
    CHECK(gateway_events > 0);
    CHECK(tenant_events > 0);
  }
}
