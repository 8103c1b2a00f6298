// Engine invariants (spec engine.md §9) over many random configurations drawn
// from a fixed-seed generator: request conservation (INV-1), KV conservation
// (INV-4), per-request causality (INV-5), termination, token accounting with
// the reference's quirks fixed (Q3, Q6), and determinism (INV-6), both in the
// library and through the CLI binary.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include "engine_harness.hpp"

#include <blis/go_rand.hpp>
#include <blis/model_data.hpp>


#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

using namespace blis;
using namespace blis::test;

namespace {

// ---- a watchdog: a run that does not terminate aborts with its description --

class Watchdog {
 public:
  Watchdog(std::string what, std::chrono::seconds limit) : what_(std::move(what)) {
    thread_ = std::thread([this, limit] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
        std::cerr << "invariant test: run did not terminate within " << limit.count()
                  << " s (non-termination): " << what_ << std::endl;
        std::abort();
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// ---- random configurations ---------------------------------------------------

struct RandomRun {
  int index = 0;
  ClusterConfig cluster;
  std::string model;  // "blackbox" or "roofline"
  ConfigTable latency;
  std::vector<double> alpha, beta;
  int64_t tp = 1;
  std::vector<WorkloadRequest> requests;
  std::string description;
};

const DataCatalog& catalog() {
  static const DataCatalog c = DataCatalog::load(std::string(BLIS_TEST_STAGE) + "/share/blis/data");
  return c;
}

const char* order_name(QueueOrder o) {
  switch (o) {
    case QueueOrder::Fcfs: return "fcfs";
    case QueueOrder::ArrivalAsc: return "arrival-asc";
    case QueueOrder::ArrivalDesc: return "arrival-desc";
    case QueueOrder::ShortestFirst: return "shortest-first";
    case QueueOrder::RankAsc: return "rank-asc";
    case QueueOrder::RankDesc: return "rank-desc";
  }
  return "?";
}

WorkloadRequest build_request(uint64_t id, int64_t arrival, const std::vector<uint32_t>& input,
                              int32_t output, int32_t max_output, int32_t block_size) {
  WorkloadRequest r;
  r.id = id;
  r.arrival_us = arrival;
  r.input_tokens = static_cast<int32_t>(input.size());
  r.output_tokens = output;
  r.max_output_tokens = max_output;
  std::vector<uint32_t> seq = input;
  for (int32_t k = 0; k < output; ++k)
    seq.push_back(500000000u + static_cast<uint32_t>(id) * 8192u + static_cast<uint32_t>(k));
  r.block_hashes = block_hashes_of(seq, block_size);
  return r;
}

// `extreme` goes beyond the usual ranges: tiny blocks, token budgets and
// batch sizes, and a KV cache exactly as large as the largest prompt.
RandomRun draw_run(GoRand& rng, int index, bool extreme = false) {
  RandomRun run;
  run.index = index;
  ClusterConfig& c = run.cluster;
  EngineConfig& e = c.engine;
  c.keep_records = true;
  c.num_instances = 1 + static_cast<int32_t>(rng.intn(4));
  static const int32_t kBlockSizes[] = {16, 16, 16, 8, 32};
  static const int32_t kTinyBlockSizes[] = {1, 2, 3, 4, 16};
  e.block_size = extreme ? kTinyBlockSizes[rng.intn(5)] : kBlockSizes[rng.intn(5)];
  const int32_t B = e.block_size;
  if (rng.intn(4) == 0) {
    c.admission_latency = rng.intn(2000);
    c.routing_latency = rng.intn(2000);
  }

  // Workload.
  const int64_t n = 20 + rng.intn(281);
  static const int64_t kInputMax[] = {24, 256, 1024, 3000};
  static const int64_t kOutputMax[] = {1, 16, 256, 1024};
  const int64_t in_max = kInputMax[rng.intn(4)];
  const int64_t out_max = kOutputMax[rng.intn(4)];
  const int arrival_mode = static_cast<int>(rng.intn(4));  // 0 all at once, 1 constant, 2 random, 3 bursts
  const int64_t gap = 1 + rng.intn(rng.intn(2) == 0 ? 2000 : 60000);
  const int budget_mode = static_cast<int>(rng.intn(4));  // 0 unset, 1 = O, 2 random, 3 rare negative
  // Prefix groups: some requests start with one of a few shared token runs
  // (lengths include exact multiples of the block size).
  const int64_t num_groups = rng.intn(4);
  std::vector<std::vector<uint32_t>> groups;
  for (int64_t g = 0; g < num_groups; ++g) {
    int64_t len = rng.intn(2) == 0 ? B * (1 + rng.intn(16)) : 1 + rng.intn(300);
    std::vector<uint32_t> toks;
    for (int64_t k = 0; k < len; ++k) toks.push_back(200000u + static_cast<uint32_t>(g * 10000 + k));
    groups.push_back(std::move(toks));
  }
  const int64_t prefix_share_pct = num_groups == 0 ? 0 : 20 + rng.intn(70);
  const int64_t duplicate_pct = rng.intn(3) == 0 ? 10 + rng.intn(20) : 0;

  int64_t t = 0;
  std::vector<std::vector<uint32_t>> inputs;
  for (int64_t i = 0; i < n; ++i) {
    switch (arrival_mode) {
      case 0: break;
      case 1: if (i > 0) t += gap; break;
      case 2: if (i > 0 && rng.intn(10) >= 3) t += rng.intn(gap + 1); break;
      default: if (i > 0 && rng.intn(8) == 0) t += gap; break;
    }
    std::vector<uint32_t> input;
    if (!inputs.empty() && rng.intn(100) < duplicate_pct) {
      input = inputs[static_cast<size_t>(rng.intn(static_cast<int64_t>(inputs.size())))];
    } else {
      if (rng.intn(100) < prefix_share_pct) input = groups[static_cast<size_t>(rng.intn(num_groups))];
      const int64_t own = (input.empty() ? 1 : 0) + rng.intn(in_max);
      for (int64_t k = 0; k < own; ++k)
        input.push_back(10000000u + static_cast<uint32_t>(i) * 8192u + static_cast<uint32_t>(k));
    }
    const auto o = static_cast<int32_t>(rng.intn(20) == 0 ? 0 : 1 + rng.intn(out_max));
    int32_t budget = 0;
    if (budget_mode == 1) budget = o;
    else if (budget_mode == 2) budget = static_cast<int32_t>(rng.intn(2 * int64_t{o} + 2));
    else if (budget_mode == 3 && rng.intn(20) == 0) budget = -1;
    run.requests.push_back(build_request(static_cast<uint64_t>(i), t, input, o, budget, B));
    inputs.push_back(std::move(input));
  }

  // KV cache: from just enough for the largest request to ample; sometimes
  // smaller than the largest prompt (those requests are dropped).
  int64_t largest = 1, largest_prompt = 1, longest = 1;
  for (const auto& r : run.requests) {
    largest = std::max<int64_t>(largest, (r.input_tokens + r.output_tokens + B - 1) / B);
    largest_prompt = std::max<int64_t>(largest_prompt, (r.input_tokens + B - 1) / B);
    longest = std::max<int64_t>(longest, r.input_tokens + r.output_tokens);
  }
  switch (extreme ? 5 + rng.intn(2) : rng.intn(5)) {
    case 5: e.total_kv_blocks = largest_prompt; break;
    case 6: e.total_kv_blocks = largest_prompt + 1; break;
    case 0: e.total_kv_blocks = largest + rng.intn(3); break;  // tight
    case 1: e.total_kv_blocks = largest * (2 + rng.intn(3)); break;
    case 2: e.total_kv_blocks = std::max<int64_t>(1, largest_prompt * (6 + rng.intn(4)) / 10); break;
    case 3: e.total_kv_blocks = largest * (5 + rng.intn(20)); break;
    default: e.total_kv_blocks = 1000000; break;
  }
  e.max_running = 1 + rng.intn(extreme ? 3 : 64);
  e.max_scheduled_tokens = extreme ? 1 + rng.intn(32) : 32 + rng.intn(4096 - 32 + 1);
  e.long_prefill_threshold =
      rng.intn(2) == 0 ? 0 : (extreme ? 1 + rng.intn(16) : 16 + rng.intn(512 - 16 + 1));
  if (rng.intn(2) == 0) {
    e.max_model_len = 8 + rng.intn(longest + 64);
    e.max_model_len = std::min<int64_t>(e.max_model_len, e.total_kv_blocks * B);
  }
  static const QueueOrder kOrders[] = {QueueOrder::Fcfs, QueueOrder::ArrivalAsc,
                                       QueueOrder::ArrivalDesc, QueueOrder::ShortestFirst};
  e.order = kOrders[rng.intn(4)];

  // Latency model.
  if (rng.intn(3) == 0) {
    run.model = "roofline";
    run.tp = 1 + rng.intn(2);
    run.alpha = {static_cast<double>(rng.intn(300)), rng.float64(), static_cast<double>(rng.intn(50))};
    run.beta = {0, 0, 0};
    static const ModelArch arch = *catalog().bundled_model("qwen/qwen3-14b");
    static const HardwareSpec hw = catalog().hardware("H100");
    put_latency_config(run.latency, &arch, &hw, run.tp, run.alpha, run.beta, B);
  } else {
    run.model = "blackbox";
    run.alpha = {static_cast<double>(rng.intn(500)), rng.float64() * 3, static_cast<double>(rng.intn(200))};
    run.beta = {100 + rng.float64() * 8000, rng.float64() * 30, rng.float64() * 20};
    run.latency = blackbox_config(run.alpha, run.beta);
  }

  std::ostringstream d;
  d << "run " << index << ": " << run.model << (run.model == "roofline" ? " tp=" + std::to_string(run.tp) : "")
    << " alpha=[" << run.alpha[0] << "," << run.alpha[1] << "," << run.alpha[2] << "]"
    << " beta=[" << run.beta[0] << "," << run.beta[1] << "," << run.beta[2] << "]"
    << " instances=" << c.num_instances << " adm/route latency=" << c.admission_latency << "/"
    << c.routing_latency << " B=" << B << " N=" << e.total_kv_blocks << " S=" << e.max_running
    << " T=" << e.max_scheduled_tokens << " C=" << e.long_prefill_threshold
    << " M=" << e.max_model_len << " order=" << order_name(e.order) << " requests=" << n
    << " input_max=" << in_max << " output_max=" << out_max << " arrival_mode=" << arrival_mode
    << " gap=" << gap << " budget_mode=" << budget_mode << " prefix_groups=" << num_groups
    << " prefix_share%=" << prefix_share_pct << " duplicate%=" << duplicate_pct
    << " largest_request_blocks=" << largest;
  run.description = d.str();
  return run;
}

RunOutcome execute(const RandomRun& run) {
  Watchdog dog(run.description, std::chrono::seconds(120));
  VectorSource src(run.requests);
  return run_cluster(run.cluster, src, run.model, run.latency);
}

// ---- checks -------------------------------------------------------------------

struct Alphas {
  int64_t output = 0, post_decode = 0;
};

Alphas alphas_of(const RandomRun& run) {
  auto m = builtin_registries().latency.create(run.model, CreateArgs{&run.latency, 42});
  return {m->output_token_time(), m->post_decode_overhead()};
}

void check_invariants(const RandomRun& run, const RunOutcome& out, SimTime horizon) {
  INFO(run.description);
  const auto& cm = out.cluster;
  const auto& reqs = run.requests;
  const Alphas a = alphas_of(run);
  const SimTime lat = run.cluster.admission_latency + run.cluster.routing_latency;

  std::map<uint64_t, const WorkloadRequest*> by_id;
  int64_t arrived = 0, routed = 0;
  for (const auto& r : reqs) {
    by_id[r.id] = &r;
    if (r.arrival_us <= horizon) ++arrived;
    // Reaches an instance if its arrival and its routing happen by the horizon.
    if (r.arrival_us <= horizon && r.arrival_us + lat <= horizon) ++routed;
  }
  const bool infinite = horizon == kForever;

  // INV-1: request conservation.
  int64_t completed = 0, queued = 0, running = 0, dropped = 0, timed_out = 0;
  for (const auto& m : out.result.instances) {
    completed += m.completed;
    queued += m.still_queued;
    running += m.still_running;
    dropped += m.dropped_unservable;
    timed_out += m.timed_out;
  }
  CHECK(cm.completed == completed);
  CHECK(out.result.rejected == 0);
  // Every arrival is somewhere; those not yet routed count as still queued.
  CHECK(out.result.in_pipeline == arrived - routed);
  const int64_t injected = completed + queued + running + dropped + timed_out + out.result.in_pipeline;
  CHECK(injected == arrived);
  CHECK(cm.timed_out == timed_out);
  if (run.cluster.deadlines)
    CHECK(out.json.find("\"timed_out_requests\": " + std::to_string(timed_out) + ",") != std::string::npos);
  else
    CHECK(out.json.find("timed_out_requests") == std::string::npos);
  CHECK(out.json.find("\"injected_requests\": " + std::to_string(injected) + ",") != std::string::npos);
  // Every routed request has exactly one record, dropped ones included.
  CHECK(static_cast<int64_t>(cm.records.size()) == routed);
  CHECK(std::count_if(cm.records.begin(), cm.records.end(), [](const auto& r) { return r.dropped; }) == dropped);
  CHECK(std::count_if(cm.records.begin(), cm.records.end(), [](const auto& r) { return r.timed_out; }) ==
        timed_out);
  if (infinite) {
    CHECK(queued == 0);
    CHECK(running == 0);
    CHECK(completed + dropped + timed_out == static_cast<int64_t>(reqs.size()));
  }

  // INV-4: KV conservation: nothing is held by an instance with nothing running.
  for (size_t i = 0; i < out.result.instances.size(); ++i) {
    const auto& m = out.result.instances[i];
    INFO("instance " << i);
    CHECK(m.peak_kv_blocks <= run.cluster.engine.total_kv_blocks);
    CHECK(m.final_kv_blocks >= 0);
    if (m.still_running == 0) CHECK(m.final_kv_blocks == 0);
    if (infinite) CHECK(m.final_kv_blocks == 0);
    CHECK(m.end_time <= horizon);
  }

  // Records: one per request, causality (INV-5).
  std::set<uint64_t> seen;
  int64_t with_ttft = 0, with_e2e = 0, with_sched = 0, capped = 0;
  int64_t input_sum = 0, output_all = 0, output_uncapped_completed = 0;
  int64_t itl_count_expected = 0, itl_sum_expected = 0;
  bool itl_count_exact = true;
  for (const auto& rec : cm.records) {
    INFO("request_" << rec.id << " arrival " << rec.arrival_us << " I=" << rec.input_tokens
                    << " O=" << rec.output_tokens << " sched " << rec.scheduling_delay << " ttft "
                    << rec.ttft << " e2e " << rec.e2e << " capped " << rec.length_capped
                    << " instance " << rec.instance);
    CHECK(seen.insert(rec.id).second);
    auto it = by_id.find(rec.id);
    REQUIRE(it != by_id.end());
    const WorkloadRequest& w = *it->second;
    CHECK(rec.arrival_us == w.arrival_us);
    CHECK(rec.input_tokens == w.input_tokens);
    CHECK(rec.output_tokens == w.output_tokens);
    CHECK(rec.instance >= 0);
    CHECK(rec.instance < run.cluster.num_instances);
    if (!rec.dropped) {  // a dropped request never enters the queue
      input_sum += w.input_tokens;
      output_all += w.output_tokens;
    }
    if (rec.length_capped) ++capped;
    if (rec.timed_out) {
      // Abandoned at its deadline, which a request without one never meets.
      CHECK(w.deadline_us > 0);
      CHECK(!rec.dropped);
      CHECK(!rec.length_capped);
      CHECK(rec.e2e < 0);
    }
    if (rec.scheduling_delay >= 0) {
      ++with_sched;
      CHECK(rec.scheduling_delay >= lat);
    }
    if (rec.ttft >= 0) {
      ++with_ttft;
      REQUIRE(rec.scheduling_delay >= 0);  // a first token implies an admission
      CHECK(rec.ttft > rec.scheduling_delay);
    }
    if (rec.e2e >= 0) {
      ++with_e2e;
      REQUIRE(rec.ttft >= 0);
      CHECK(rec.e2e >= rec.ttft);
      const SimTime end = out.result.instances[static_cast<size_t>(rec.instance)].end_time;
      const int64_t tokens = rec.length_capped ? rec.output_tokens : std::max(rec.output_tokens, 1);
      // Not longer than its real lifetime (the reference inflated it: Q3).
      // With a finite horizon the last step may end after the printed end time.
      if (infinite) CHECK(rec.e2e <= end - rec.arrival_us + tokens * a.output + a.post_decode);
      if (!rec.length_capped) {
        output_uncapped_completed += rec.output_tokens;
        // Every decode step takes at least one tick.
        if (rec.output_tokens > 0) {
          CHECK(rec.e2e >= rec.ttft + (rec.output_tokens - 1) * (1 + a.output) + a.post_decode);
          itl_count_expected += rec.output_tokens - 1;
          // Per-request average ITL: the request's decode time over O - 1.
          const int64_t itl_total = rec.e2e - rec.ttft - a.post_decode;
          CHECK(rec.itl_avg == static_cast<double>(itl_total) /
                                   static_cast<double>(std::max(rec.output_tokens - 1, 1)));
        }
      } else {
        itl_count_exact = false;
      }
      if (rec.output_tokens > 0) itl_sum_expected += rec.e2e - rec.ttft - a.post_decode;
      CHECK(rec.itl_avg >= 0);
    } else if (rec.dropped) {
      CHECK(rec.scheduling_delay < 0);
      CHECK(!rec.length_capped);
    } else if (infinite && !rec.timed_out) {
      // Completed without a token: only by being stopped before its first one.
      CHECK(rec.length_capped);
    }
  }
  CHECK(cm.length_capped == capped);
  // TTFT recorded once per request (Q4), E2E and scheduling delay likewise.
  CHECK(static_cast<int64_t>(cm.ttft.size()) == with_ttft);
  CHECK(static_cast<int64_t>(cm.e2e.size()) == with_e2e);
  CHECK(static_cast<int64_t>(cm.scheduling_delay.size()) == with_sched);
  // Tokens: inputs of every enqueued request; every output token exactly once
  // (the reference skipped first tokens, Q6, and recounted after preemption, Q3).
  CHECK(cm.input_tokens <= input_sum);
  if (infinite) CHECK(cm.input_tokens == input_sum);
  CHECK(cm.output_tokens <= output_all);
  if (infinite) CHECK(cm.output_tokens >= output_uncapped_completed);
  if (infinite && capped == 0 && timed_out == 0) CHECK(cm.output_tokens == output_all);
  // Global inter-token latencies: one per decode token of completed requests,
  // summing to each request's E2E − TTFT − α_p.
  const WeightedValues itl = itl_values(cm);
  int64_t itl_count = 0, itl_sum = 0;
  for (const auto& [v, k] : itl) {
    CHECK(v >= 1 + a.output);
    itl_count += k;
    itl_sum += v * k;
  }
  if (itl_count_exact) CHECK(itl_count == itl_count_expected);
  CHECK(itl_sum == itl_sum_expected);

  // With room for every request at once nothing is ever preempted.
  int64_t all_blocks = 0;
  for (const auto& r : reqs) {
    const int64_t B = run.cluster.engine.block_size;
    all_blocks += (r.input_tokens + r.output_tokens + 1 + B - 1) / B;
  }
  if (all_blocks <= run.cluster.engine.total_kv_blocks) {
    CHECK(cm.preemptions == 0);
    CHECK(cm.kv_allocation_failures == 0);
  }
  for (const auto& m : out.result.instances) {
    CHECK(m.cache_hit_rate >= 0);
    CHECK(m.cache_hit_rate <= 1);
  }

  // Termination: each step advances the head of some batch by >= 1 token or
  // ends a request, so the steps are bounded by the work.
  int64_t work = 0, longest = 0;
  for (const auto& r : reqs) {
    work += r.input_tokens + r.output_tokens + 1;
    longest = std::max<int64_t>(longest, r.input_tokens + r.output_tokens + 1);
  }
  // (Not with secondary offload tiers: a request waiting for a read is
  // re-examined at every step, however long the read takes.)
  const auto& offload = run.cluster.engine.offload;
  if (!offload || offload->tiers.empty())
    CHECK(static_cast<int64_t>(out.result.steps) <= work + cm.preemptions * longest + 16);
}

}  // namespace

TEST_CASE("invariants hold over random configurations", "[invariant]") {
  // BLIS_INVARIANT_RUNS / BLIS_INVARIANT_SEED widen the search by hand.
  const char* runs_env = std::getenv("BLIS_INVARIANT_RUNS");
  const char* seed_env = std::getenv("BLIS_INVARIANT_SEED");
  const int runs = runs_env != nullptr ? std::atoi(runs_env) : 40;
  GoRand rng(seed_env != nullptr ? std::atoll(seed_env) : 20240611);
  int64_t total_preemptions = 0, total_dropped = 0, total_capped = 0, roofline_runs = 0;
  for (int i = 0; i < runs; ++i) {
    RandomRun run = draw_run(rng, i);
    INFO(run.description);
    RunOutcome first = execute(run);
    check_invariants(run, first, kForever);
    // INV-6: the same configuration gives the same output, byte for byte.
    RunOutcome second = execute(run);
    CHECK(first.json == second.json);
    CHECK(first.result.steps == second.result.steps);
    CHECK(first.result.events == second.result.events);
    total_preemptions += first.cluster.preemptions;
    total_dropped += first.cluster.dropped_unservable;
    total_capped += first.cluster.length_capped;
    if (run.model == "roofline") ++roofline_runs;
    if (std::getenv("BLIS_INVARIANT_VERBOSE"))
      std::cerr << run.description << "\n  -> completed " << first.cluster.completed << " dropped "
                << first.cluster.dropped_unservable << " capped " << first.cluster.length_capped
                << " preemptions " << first.cluster.preemptions << " steps " << first.result.steps
                << " kv_alloc_failures " << first.cluster.kv_allocation_failures << "\n";
  }
  // The configurations do exercise the interesting paths.
  CHECK(total_preemptions > 0);
  CHECK(total_dropped > 0);
  CHECK(total_capped > 0);
  CHECK(roofline_runs > 0);
}

TEST_CASE("invariants hold in extreme corners with tiny blocks budgets and caches", "[invariant]") {
  const char* runs_env = std::getenv("BLIS_INVARIANT_RUNS");
  const char* seed_env = std::getenv("BLIS_INVARIANT_SEED");
  const int runs = runs_env != nullptr ? std::atoi(runs_env) : 20;
  GoRand rng(seed_env != nullptr ? std::atoll(seed_env) : 99);
  for (int i = 0; i < runs; ++i) {
    RandomRun run = draw_run(rng, i, /*extreme=*/true);
    INFO(run.description);
    RunOutcome first = execute(run);
    check_invariants(run, first, kForever);
    RunOutcome second = execute(run);
    CHECK(first.json == second.json);
  }
}

TEST_CASE("invariants hold with the KV offload tiers (--kv-offload-config)", "[invariant][offload]") {
  // The same invariants (KV conservation on the GPU among them) with a CPU
  // tier of a few to many blocks and zero to three secondary tiers, prompt
  // only or not: deferred admissions must all end admitted.
  const char* runs_env = std::getenv("BLIS_INVARIANT_RUNS");
  const int runs = runs_env != nullptr ? std::atoi(runs_env) : 30;
  GoRand rng(4242);
  for (int i = 0; i < runs; ++i) {
    RandomRun run = draw_run(rng, i, /*extreme=*/i % 3 == 0);
    auto chain = std::make_shared<OffloadChainConfig>();
    static const int64_t kCpu[] = {1, 4, 40, 1000};
    chain->cpu_blocks = kCpu[rng.intn(4)];
    chain->per_block_bytes = 1 + rng.intn(3000000);
    chain->prompt_only = rng.intn(2) == 0;
    for (int64_t t = rng.intn(4); t > 0; --t) {
      OffloadTierParams p;
      p.n_read = 1 + rng.intn(4);
      p.n_write = 1 + rng.intn(4);
      p.base_us = rng.intn(2) == 0 ? 0 : rng.intn(30000);
      p.read_bytes_per_us = static_cast<double>(1 + rng.intn(20000));
      p.write_bytes_per_us = static_cast<double>(1 + rng.intn(20000));
      if (rng.intn(3) == 0) {
        p.saturation_queue_depth = 2 + rng.intn(8);
        p.single_transfer_fraction = 0.25;
      }
      chain->tiers.push_back(p);
    }
    run.cluster.engine.offload = chain;
    run.cluster.engine.cpu_tier = CpuTierConfig{};
    INFO(run.description << " offload cpu " << chain->cpu_blocks << " tiers " << chain->tiers.size()
                         << " prompt_only " << chain->prompt_only);
    RunOutcome first = execute(run);
    check_invariants(run, first, kForever);
    RunOutcome second = execute(run);
    CHECK(first.json == second.json);
  }
}

TEST_CASE("invariants hold with a finite horizon (requests still in flight)", "[invariant]") {
  const char* runs_env = std::getenv("BLIS_INVARIANT_RUNS");
  const char* seed_env = std::getenv("BLIS_INVARIANT_SEED");
  const int runs = runs_env != nullptr ? std::atoi(runs_env) : 20;
  GoRand rng(seed_env != nullptr ? std::atoll(seed_env) : 777);
  int with_in_flight = 0;
  for (int i = 0; i < runs; ++i) {
    RandomRun run = draw_run(rng, i, /*extreme=*/i % 4 == 3);
    // A horizon in the middle of the arrivals, or soon after the last.
    const auto& reqs = run.requests;
    const SimTime last = reqs.back().arrival_us;
    SimTime horizon = rng.intn(2) == 0 ? std::max<SimTime>(1, last / 2) : last + 1 + rng.intn(50000);
    if (i % 5 == 0) horizon = std::max<SimTime>(1, reqs[reqs.size() / 2].arrival_us);  // exactly at an arrival
    run.cluster.engine.horizon = horizon;
    run.description += " horizon=" + std::to_string(horizon);
    INFO(run.description);
    RunOutcome first = execute(run);
    check_invariants(run, first, horizon);
    if (first.cluster.still_queued + first.cluster.still_running > 0) ++with_in_flight;
    RunOutcome second = execute(run);
    CHECK(first.json == second.json);
  }
  CHECK(with_in_flight > 0);
}

TEST_CASE("invariants hold with request deadlines (spec head 4.1)", "[invariant]") {
  const char* runs_env = std::getenv("BLIS_INVARIANT_RUNS");
  const char* seed_env = std::getenv("BLIS_INVARIANT_SEED");
  const int runs = runs_env != nullptr ? std::atoi(runs_env) : 30;
  GoRand rng(seed_env != nullptr ? std::atoll(seed_env) : 4141);
  int64_t total_timed_out = 0, total_completed = 0, total_preemptions = 0;
  for (int i = 0; i < runs; ++i) {
    RandomRun run = draw_run(rng, i, /*extreme=*/i % 3 == 2);
    run.cluster.deadlines = true;
    // Most requests get a deadline, short or long; some none. Some runs also
    // end at a horizon with deadlines beyond it.
    for (auto& r : run.requests) {
      const int64_t pick = rng.intn(4);
      if (pick > 0) r.deadline_us = r.arrival_us + 1 + rng.intn(pick == 1 ? 2000 : 200000);
    }
    SimTime horizon = kForever;
    if (i % 4 == 1) horizon = std::max<SimTime>(1, run.requests.back().arrival_us / 2 + 1000);
    run.cluster.engine.horizon = horizon;
    run.description += " deadlines, horizon=" + std::to_string(horizon);
    INFO(run.description);
    RunOutcome first = execute(run);
    check_invariants(run, first, horizon);
    RunOutcome second = execute(run);
    CHECK(first.json == second.json);
    CHECK(first.result.events == second.result.events);
    total_timed_out += first.cluster.timed_out;
    total_completed += first.cluster.completed;
    total_preemptions += first.cluster.preemptions;
  }
  CHECK(total_timed_out > 0);
  CHECK(total_completed > 0);
  CHECK(total_preemptions > 0);
}

// The model of a run with its aggregate entry (ABI 1.5) hidden: every step
// is priced member by member and every batch member handled at every step.
class HiddenSums final : public LatencyModel {
 public:
  explicit HiddenSums(std::unique_ptr<LatencyModel> inner) : inner_(std::move(inner)) {}
  int64_t step_time(const blis_step_batch& b) override { return inner_->step_time(b); }
  int64_t queueing_time(const blis_request_view& r) override { return inner_->queueing_time(r); }
  int64_t output_token_time() override { return inner_->output_token_time(); }
  int64_t post_decode_overhead() override { return inner_->post_decode_overhead(); }

 private:
  std::unique_ptr<LatencyModel> inner_;
};

// BLIS_INVARIANT_RUNS / BLIS_INVARIANT_SEED, else the test's own.
int invariant_runs(int given) {
  const char* env = std::getenv("BLIS_INVARIANT_RUNS");
  return env != nullptr ? std::atoi(env) : given;
}
int64_t invariant_seed(int64_t given) {
  const char* env = std::getenv("BLIS_INVARIANT_SEED");
  return env != nullptr ? std::atoll(env) : given;
}

// Two ways of running the same run print the same and count the same
// events, steps and batch-member steps.
void check_same_run(const RunOutcome& fast, const RunOutcome& reference) {
  CHECK(fast.json == reference.json);
  CHECK(fast.result.steps == reference.result.steps);
  CHECK(fast.result.events == reference.result.events);
  CHECK(fast.result.member_steps == reference.result.member_steps);
}

// A third of the requests get a deadline up to 0.3 s after their arrival.
std::string with_deadlines(GoRand& rng, RandomRun& run) {
  run.cluster.deadlines = true;
  for (auto& r : run.requests)
    if (rng.intn(3) == 0) r.deadline_us = r.arrival_us + 1 + rng.intn(300000);
  return " deadlines";
}

// Content past the first few (shareable) blocks is each request's own:
// unique to it, as the workload generator guarantees.
std::string with_own_content(GoRand& rng, RandomRun& run) {
  for (auto& r : run.requests) {
    r.shareable_blocks = static_cast<int32_t>(rng.intn(6));
    for (size_t k = static_cast<size_t>(r.shareable_blocks); k < r.block_hashes.size(); ++k)
      r.block_hashes[k] = mix64(r.block_hashes[k] ^ (r.id * 0x9e3779b97f4a7c15ULL + k));
  }
  return " own content past <=5 shareable blocks";
}

TEST_CASE("token-implicit decode gives what member-by-member handling gives", "[invariant][engine]") {
  // Random runs, some with deadlines, a horizon, shared content only in part
  // shareable, priority preemption or a CPU tier: the run whose decoding
  // members are advanced implicitly prints exactly what the run that handles
  // every member at every step prints.
  const int runs = invariant_runs(60);
  GoRand rng(invariant_seed(160316));
  uint64_t implicit_updates = 0, implicit_members = 0;
  int64_t preemptions = 0, timed_out = 0, capped = 0;
  for (int i = 0; i < runs; ++i) {
    RandomRun run = draw_run(rng, i, /*extreme=*/i % 5 == 4);
    run.cluster.keep_records = true;
    EngineConfig& e = run.cluster.engine;
    std::string extra;
    if (rng.intn(3) == 0) extra += with_deadlines(rng, run);
    if (rng.intn(4) == 0) {
      e.horizon = std::max<SimTime>(1, run.requests.back().arrival_us / 2 + 1);
      extra += " horizon=" + std::to_string(e.horizon);
    }
    if (rng.intn(3) == 0) extra += with_own_content(rng, run);
    if (rng.intn(4) == 0) {
      e.priority_preemption = true;
      for (auto& r : run.requests) r.slo_class = static_cast<int32_t>(rng.intn(6));
      extra += " priority-preemption";
    }
    if (rng.intn(5) == 0) {
      e.cpu_tier.blocks = 1 + rng.intn(200);
      e.cpu_tier.offload_threshold = 0.5;
      e.cpu_tier.base_latency = 10;
      extra += " cpu-tier=" + std::to_string(e.cpu_tier.blocks);
    }
    INFO(run.description << extra);
    auto simulate = [&](bool hidden) {
      Watchdog dog(run.description, std::chrono::seconds(120));
      VectorSource src(run.requests);
      ClusterSimulation sim(run.cluster, src, [&](int32_t) -> std::unique_ptr<LatencyModel> {
        auto m = builtin_registries().latency.create(run.model, CreateArgs{&run.latency, 42});
        if (hidden) return std::make_unique<HiddenSums>(std::move(m));
        return m;
      });
      RunOutcome out;
      out.result = sim.run();
      out.cluster = cluster_metrics(out.result);
      out.json = metrics_json(out.cluster, "cluster", true);
      return out;
    };
    const RunOutcome exact = simulate(true);
    const RunOutcome fast = simulate(false);
    check_same_run(fast, exact);
    CHECK(exact.result.member_updates == exact.result.member_steps);
    implicit_updates += fast.result.member_updates;
    implicit_members += fast.result.member_steps;
    preemptions += exact.cluster.preemptions;
    timed_out += exact.cluster.timed_out;
    capped += exact.cluster.length_capped;
  }
  // The runs had what puts members back to member-by-member handling, and
  // most decode steps were implicit.
  CHECK(preemptions > 0);
  CHECK(timed_out > 0);
  CHECK(capped > 0);
  CHECK(implicit_updates * 10 < implicit_members * 9);
}

TEST_CASE("steps run without events give what steps run by their events give", "[invariant][engine]") {
  // Random runs, some with deadlines (timeouts cut a stretch of plain steps
  // short), a horizon (plain steps priced past it never run), scarce KV
  // (bulk blocks not in runs end a stretch) or many instances with long
  // outputs (long stretches): the run whose plain steps run when the
  // instance is next touched prints exactly what the run that gives every
  // step its event prints, and counts the same events and steps.
  const int runs = invariant_runs(60);
  GoRand rng(invariant_seed(290051));
  uint64_t lazy = 0, steps = 0;
  int64_t timed_out = 0, cut_by_horizon = 0;
  for (int i = 0; i < runs; ++i) {
    RandomRun run = draw_run(rng, i, /*extreme=*/i % 6 == 5);
    run.cluster.keep_records = true;
    run.cluster.keep_timed_samples = rng.intn(2) == 0;
    std::string extra;
    if (i % 4 == 0) {
      run.cluster.num_instances = 4 + static_cast<int32_t>(rng.intn(13));
      extra += " instances=" + std::to_string(run.cluster.num_instances);
    }
    if (rng.intn(3) == 0) extra += with_deadlines(rng, run);
    if (rng.intn(4) == 0) {
      run.cluster.engine.horizon =
          std::max<SimTime>(1, run.requests.back().arrival_us / 2 + 1 + rng.intn(200000));
      extra += " horizon=" + std::to_string(run.cluster.engine.horizon);
    }
    // Own blocks come in bulk, in runs at the free list's head when they can.
    if (rng.intn(2) == 0) extra += with_own_content(rng, run);
    INFO(run.description << extra);
    auto simulate = [&](bool lazy_steps) {
      RandomRun r = run;
      r.cluster.lazy_steps = lazy_steps;
      return execute(r);
    };
    const RunOutcome eager = simulate(false);
    const RunOutcome fast = simulate(true);
    check_same_run(fast, eager);
    CHECK(fast.result.member_updates == eager.result.member_updates);
    CHECK(eager.result.lazy_steps == 0);
    if (run.cluster.keep_timed_samples) {
      const std::vector<TimedSample> a = itl_samples(fast.result.timed), b = itl_samples(eager.result.timed);
      REQUIRE(a.size() == b.size());
      for (size_t k = 0; k < a.size(); ++k) {
        CHECK(a[k].at == b[k].at);
        CHECK(a[k].value == b[k].value);
        CHECK(a[k].weight == b[k].weight);
      }
    }
    lazy += fast.result.lazy_steps;
    steps += fast.result.steps;
    timed_out += eager.cluster.timed_out;
    if (eager.cluster.still_running > 0) ++cut_by_horizon;
  }
  // Many steps ran without events, and the runs had what cuts stretches short.
  CHECK(lazy * 20 > steps);
  CHECK(timed_out > 0);
  CHECK(cut_by_horizon > 0);
}

TEST_CASE(
    "an event at the start of a step run without its event comes before or after it as its priority says",
    "[engine]") {
  // One request decodes alone; a second is enqueued, or the first times out,
  // exactly when one of its plain steps starts. The enqueue comes before
  // that step (the newcomer joins it); the timeout after it (the step's
  // token counts).
  ClusterConfig c;
  c.keep_records = true;
  c.keep_timed_samples = true;
  c.deadlines = true;
  const ConfigTable& model = step_1000_10_5();
  // Its blocks are its own (not shareable): its steps are plain from its
  // first token to its last, but for those that end a stretch.
  auto first = [] {
    WorkloadRequest r = make_request(0, 0, 40, 300, 1);
    r.shareable_blocks = 0;
    return r;
  };
  std::vector<SimTime> ends;
  {
    VectorSource src({first()});
    const RunOutcome alone = run_cluster(c, src, "blackbox", model);
    for (const TimedSample& x : itl_samples(alone.result.timed)) ends.push_back(x.at);
    REQUIRE(alone.result.lazy_steps > 250);
  }
  REQUIRE(ends.size() > 200);
  for (const bool timeout : {false, true})
    for (const size_t k : {100, 123, 150, 177}) {
      const SimTime start = ends[k];  // a step ends, the next starts
      INFO((timeout ? "the first times out" : "a second is enqueued") << " at " << start);
      std::vector<WorkloadRequest> reqs{first()};
      if (timeout)
        reqs[0].deadline_us = start;
      else
        reqs.push_back(make_request(1, start, 40, 20, 5000));
      auto simulate = [&](bool lazy_steps) {
        c.lazy_steps = lazy_steps;
        VectorSource src(reqs);
        return run_cluster(c, src, "blackbox", model);
      };
      const RunOutcome eager = simulate(false);
      const RunOutcome fast = simulate(true);
      CHECK(fast.json == eager.json);
      CHECK(fast.result.steps == eager.result.steps);
      CHECK(fast.result.lazy_steps > 50);
      CHECK(eager.cluster.timed_out == (timeout ? 1 : 0));
    }
}

TEST_CASE("INV-8: simultaneous requests with one batch slot all complete", "[invariant]") {
  ClusterConfig c;
  c.engine.total_kv_blocks = 100;
  c.engine.max_running = 1;
  c.keep_records = true;
  VectorSource src({make_request(0, 0, 40, 5, 1), make_request(1, 0, 40, 5, 1000),
                    make_request(2, 0, 40, 5, 2000)});
  auto out = run_cluster(c, src, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}));
  CHECK(out.cluster.completed == 3);
  CHECK(out.result.instances[0].final_kv_blocks == 0);
}

TEST_CASE("INV-9: the budget auto-fill never reads the oracle output length", "[invariant]") {
  // O = 1000, MaxOutputLen = 0, M = 512, I = 200: accepted, then length-capped.
  ClusterConfig c;
  c.engine.total_kv_blocks = 100;
  c.engine.max_model_len = 512;
  c.keep_records = true;
  VectorSource src({make_request(0, 0, 200, 1000, 1)});
  auto out = run_cluster(c, src, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}));
  CHECK(out.cluster.dropped_unservable == 0);
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.length_capped == 1);
  CHECK(out.result.instances[0].final_kv_blocks == 0);
}

// ---- the CLI binary ------------------------------------------------------------

TEST_CASE("CLI: a preempting run is byte-identical across runs", "[invariant][cli]") {
  const std::string args = "run --model qwen/qwen3-14b --rate 50 --num-requests 200 --total-kv-blocks 3000";
  INFO(args);
  const Result a = run_blis(args);
  const Result b = run_blis(args);
  INFO(a.out);
  CHECK(a.status == 0);
  CHECK(b.status == 0);
  CHECK(!a.out.empty());
  CHECK(a.out == b.out);
  std::smatch m;
  REQUIRE(std::regex_search(a.out, m, std::regex("\"preemption_count\": ([0-9]+)")));
  CHECK(std::stoll(m[1].str()) > 0);
  CHECK(a.out.find("\"completed_requests\": 200,") != std::string::npos);
}

TEST_CASE("CLI: requests on their way to their queue at the horizon count as still queued", "[invariant][cli]") {
  // A 100 ms queueing time (α0) and 49 arrivals before the horizon: those of
  // the last 100 ms are routed but not yet queued when the run stops.
  TempDir dir;
  const std::string results = dir.str() + "/results.json";
  const std::string args =
      "run --model qwen/qwen3-14b --latency-model blackbox --alpha-coeffs 100000,0,10 "
      "--beta-coeffs 5000,1,1 --rate 50 --num-requests 100 --horizon 1000000 --results-path " + results;
  INFO(args);
  const Result r = run_blis(args);
  INFO(r.out);
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "injected_requests") == 49);
  CHECK(metric(r.out, "still_queued") >= 4);
  // One record per arrival.
  std::ifstream f(results);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t records = 0;
  for (size_t at = text.find("\"requestID\""); at != std::string::npos; at = text.find("\"requestID\"", at + 1))
    ++records;
  CHECK(records == 49);
}
