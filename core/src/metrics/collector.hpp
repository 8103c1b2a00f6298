// Raw metrics of one instance, and the subscriber that collects them from
// the lifecycle signals as the simulation runs. Nothing is stored per token:
// inter-token latencies are step-level values with multiplicities, so
// percentiles stay exact in memory proportional to steps.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/packed_samples.hpp"
#include "metrics/steady_window.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace blis {

// One line of the per-request results file.
struct RequestRecord {
  uint64_t id = 0;
  int64_t arrival_us = 0;
  int32_t input_tokens = 0, output_tokens = 0;
  int64_t ttft = -1, e2e = -1, scheduling_delay = -1;
  int64_t gateway_wait = 0;  // µs in the gateway's queue (--flow-control), as HEAD counts it
  double itl_avg = 0;
  int32_t slo_class = 0;
  int32_t instance = -1;
  int32_t round = 0;  // of its session or closed-loop user: 0 first, then 1, 2, ...
  bool length_capped = false;
  bool dropped = false;  // unservable (spec engine §2.7): it never ran
  bool timed_out = false;  // its deadline passed before it completed (spec head §4.1)
  bool failed = false;     // lost with its instance (a scenario's `fail` event)
  bool evicted = false;    // taken back by the gateway (--in-flight-eviction)
  Label tenant_id, model, adapter;
  // The multi-turn session or closed-loop user it belongs to (the
  // workload's ids: WorkloadRequest::session, ::user), -1 for none.
  int64_t session = -1;
  int32_t user = -1;
  // In HEAD's results file (--output-form head): a session's follow-up
  // round's id, "session_<session>_round_<round>_<n>" ("" = "request_<id>"),
  // and the session's name ("sess_<id>", "concurrency_<client>_user_<u>").
  std::string name, session_id;
};

// One LoRA adapter's figures on an instance (HEAD's "adapters" block): its
// loads and evictions, and its completed requests' TTFTs and output tokens.
struct AdapterTally {
  int64_t loads = 0, evictions = 0;
  std::vector<int64_t> ttft;  // µs
  int64_t output_tokens = 0;
  bool served = false;  // some request of it completed
};

// What priority-inversion counting needs of a completed request.
struct CompletionSample {
  int64_t arrival_us;
  uint64_t id;
  int64_t e2e;
  int32_t slo_class;
};

struct InstanceMetrics {
  int64_t completed = 0, still_queued = 0, still_running = 0;
  int64_t dropped_unservable = 0, length_capped = 0;
  int64_t timed_out = 0;  // spec head §4.1
  // Requests of the run may have deadlines: the report shows timed_out_requests.
  bool reports_timeouts = false;
  bool head_form = false;  // --output-form head: the results file as HEAD's --metrics-path writes it
  int64_t failed = 0;  // lost with a failed instance (scenario events)
  int64_t preemptions = 0, kv_allocation_failures = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t end_time = 0;
  int64_t peak_kv_blocks = 0;
  int64_t final_kv_blocks = 0;  // still held when the run ended
  double cache_hit_rate = 0, kv_thrashing_rate = 0;

  // Latency samples in µs, with the SLO class of each.
  // Chunked (one entry per request of a long run): no doubling slack, and
  // 4 bytes a sample where exact (metrics/packed_samples.hpp).
  SampleStore ttft, e2e, scheduling_delay;
  std::deque<int8_t> ttft_slo, e2e_slo;
  // Under head_form: each completed request's mean ITL (µs) and class, for
  // the ITL line of HEAD's per-SLO block.
  std::deque<double> request_itl;
  std::deque<int8_t> request_itl_slo;

  // Inter-token latencies: per step its standard value (Δ + α_o) and a
  // difference array counting completed requests' runs over steps; gaps that
  // are not one step (after a stall or a preemption) are kept individually.
  // Chunked (one entry per step of a long run), packed where exact.
  SampleStore step_itl;
  CountStore run_delta;
  std::vector<int64_t> extra_itls;
  // Already weighted (value, count) pairs, e.g. merged from instances.
  std::vector<std::pair<int64_t, int64_t>> itl_weighted;
  // With MetricsCollector::keep_timed_itl: the end of each step (when the
  // instance stops, its steps go to the collector's take_timed_steps(),
  // metrics/steady_window.hpp).
  SampleStore step_end;

  // Wait-queue depth summed over steps (for HOL blocking detection).
  int64_t wait_depth_sum = 0;
  int64_t steps = 0;
  int64_t member_steps = 0, member_updates = 0;  // InstanceEnd's, for --profile

  std::map<std::string, AdapterTally> adapters;  // LoRA adapters with a load, eviction or completion
  std::vector<RequestRecord> records;      // with --results-path (RequestRecords)
  std::vector<CompletionSample> completions;  // when priority inversions are counted
};

// The standard inter-token latency of each of m's first `steps` steps whose
// count of completed requests that decoded in it is positive, in step order:
// f(itl, count).
template <class F>
void for_each_step_itl(const InstanceMetrics& m, size_t steps, F&& f) {
  for_each_counted_step(m.step_itl, m.run_delta, nullptr, steps,
                        [&](int64_t itl, int64_t count, int64_t) { f(itl, count); });
}

// Fills each instance's InstanceMetrics, and counts what belongs to no
// instance (rejections, requests still in the admission/routing pipeline).
// Per request it keeps only what a completion turns into metrics, in the
// request's slot (r.timing).
class MetricsCollector : public LifecycleSubscriber {
 public:
  // With `keep_completions`, a CompletionSample per completed request.
  explicit MetricsCollector(bool keep_completions) : keep_completions_(keep_completions) {}
  // Keep each step's time, for inter-token latencies by time (take_timed_steps).
  void keep_timed_itl(bool on) { keep_timed_itl_ = on; }
  // The stopped instances' steps (their inter-token latencies with their
  // ends), in the order the instances stopped.
  std::vector<TimedSteps> take_timed_steps() { return std::move(timed_steps_); }

  // The next instance's metrics (by reference: they outlive the collector),
  // and its latency model's α_o (µs added to every token) and α_p (µs added
  // once after the last token), spec engine §5.1.
  void add_instance(InstanceMetrics& metrics, int64_t alpha_output, int64_t alpha_post_decode) {
    instances_.push_back({&metrics, alpha_output, alpha_post_decode});
  }
  // spec head §6.2: the TTFT of a request routed while its instance warmed
  // up is multiplied by this factor (rounded to the µs).
  void set_warm_up_factor(size_t instance, double factor) { instances_[instance].warm_up_factor = factor; }
  int64_t rejected() const { return rejected_; }
  // Rejections by SLO class (admission and routing together).
  const std::map<int32_t, int64_t>& rejected_by_class() const { return rejected_by_class_; }
  int64_t in_pipeline() const { return in_pipeline_; }

  void on_rejected(Request& r, std::string_view) {
    ++rejected_;
    ++rejected_by_class_[r.spec.slo_class];
  }
  // A request re-routed off a failed instance is queued again: its input counts once.
  void on_queued(Request& r, SimTime) {
    if (r.marks.input_counted) return;
    r.marks.input_counted = true;
    of(r).metrics->input_tokens += r.spec.input_tokens;
  }
  // The scheduling delay is that of the first admission (docs/differences.md row 3).
  // Under --preemption-mode restart, that of the last (HEAD's).
  void on_scheduled(Request& r, SimTime now) {
    RequestTiming::Detail& t = r.timing.set();
    if (t.scheduling_delay >= 0 && !t.restarted) return;  // readmitted after a preemption
    auto& delays = of(r).metrics->scheduling_delay;
    if (t.scheduling_delay >= 0) {
      t.restarted = false;
      t.scheduling_delay = now - r.spec.arrival_us;
      if (t.delay_instance == r.instance) {  // the same instance: the sample is replaced
        delays.set(static_cast<size_t>(t.delay_sample), t.scheduling_delay);
        return;
      }
    }
    t.scheduling_delay = now - r.spec.arrival_us;
    t.delay_sample = static_cast<int64_t>(delays.size());
    t.delay_instance = r.instance;
    delays.push_back(t.scheduling_delay);
  }
  void on_first_token(Request& r, SimTime end) {
    const Slot& i = of(r);
    RequestTiming::Detail& t = r.timing.set();
    t.ttft = end + i.alpha_output - r.spec.arrival_us;
    if (r.marks.warm_up) t.ttft = std::llround(static_cast<double>(t.ttft) * i.warm_up_factor);
    t.first_token_end = end;
    if (t.ttft_sample >= 0 && t.ttft_instance == r.instance) {  // again after a restart: the last counts
      i.metrics->ttft.set(static_cast<size_t>(t.ttft_sample), t.ttft);
      return;
    }
    t.ttft_sample = static_cast<int64_t>(i.metrics->ttft.size());
    t.ttft_instance = r.instance;
    i.metrics->ttft.push_back(t.ttft);
    i.metrics->ttft_slo.push_back(static_cast<int8_t>(r.spec.slo_class));
  }
  void on_token_run(Request& r, uint64_t first, uint64_t end) { r.timing.set().runs.emplace_back(first, end); }
  void on_token_gap(Request& r, int64_t gap) { r.timing.set().gaps.push_back(gap + of(r).alpha_output); }
  void on_preempted(Request& r, SimTime) { ++of(r).metrics->preemptions; }
  void on_restarted(Request& r) {
    RequestTiming::Detail& t = r.timing.set();
    t.runs.clear();
    t.gaps.clear();
    t.restarted = true;
  }
  void on_completed(Request& r, SimTime end);
  void on_dropped(Request& r, SimTime) { ++of(r).metrics->dropped_unservable; }
  // Its tokens so far count as output; a request timed out at the enqueue
  // was never queued, and its input counts all the same (spec head §4.1).
  void on_timed_out(Request& r, SimTime) {
    InstanceMetrics& m = *of(r).metrics;
    ++m.timed_out;
    partial_last_token(r);
    if (r.state == RequestState::Routed) m.input_tokens += r.spec.input_tokens;
    else m.output_tokens += output_tokens(r);
  }
  void on_failed(Request& r, SimTime) { ++of(r).metrics->failed; }
  void on_stopped(Request& r);
  // Per step its standard inter-token latency Δ + α_o (the difference array
  // of runs grows as completions write it).
  void on_step(const StepSample& x) {
    const Slot& i = instances_[static_cast<size_t>(x.instance)];
    InstanceMetrics& m = *i.metrics;
    m.step_itl.push_back(x.duration + i.alpha_output);
    if (keep_timed_itl_) m.step_end.push_back(x.start + x.duration);
    m.wait_depth_sum += x.waiting;
    ++m.steps;
    m.peak_kv_blocks = std::max(m.peak_kv_blocks, x.used_kv_blocks);
  }
  void on_instance_stopped(const InstanceEnd& x);

 private:
  struct Slot {
    InstanceMetrics* metrics;
    int64_t alpha_output, alpha_post_decode;
    double warm_up_factor = 1.0;
  };
  const Slot& of(const Request& r) const { return instances_[static_cast<size_t>(r.instance)]; }
  // Output tokens of `r` so far: every token but that of a request without
  // output tokens (spec cluster §7.3, quirk Q6 fixed).
  // A request that stops streaming before it completes: its last token so far
  // as the client saw it (--trace-output).
  void partial_last_token(Request& r) {
    if (!r.timing.detail || r.timing.detail->ttft < 0 || r.step().emitted <= 0) return;
    r.timing.detail->last_token = r.step().last_token_end - r.spec.arrival_us + r.step().emitted * of(r).alpha_output;
  }
  static int64_t output_tokens(const Request& r) { return r.spec.output_tokens > 0 ? r.step().emitted : 0; }

  bool keep_completions_;
  bool keep_timed_itl_ = false;
  std::vector<TimedSteps> timed_steps_;
  std::vector<Slot> instances_;
  int64_t rejected_ = 0, in_pipeline_ = 0;
  std::map<int32_t, int64_t> rejected_by_class_;
};

}  // namespace blis
