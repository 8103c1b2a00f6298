#include "metrics/collector.hpp"

#include "metrics/report.hpp"

namespace blis {

// E2E runs from arrival to the last token plus α_o per token and α_p once
// (spec engine §1.4, with quirk Q3 fixed); only tokens of completed requests
// count as inter-token latencies.
void MetricsCollector::on_completed(Request& r, SimTime) {
  const Slot& i = of(r);
  InstanceMetrics& m = *i.metrics;
  const StepState& s = r.step();
  if (r.length_capped) ++m.length_capped;
  ++m.completed;
  m.output_tokens += output_tokens(r);
  if (!r.spec.adapter.empty()) {
    AdapterTally& a = m.adapters[r.spec.adapter.str()];
    a.served = true;
    a.output_tokens += output_tokens(r);
    a.ttft.push_back(r.timing.ttft() >= 0 ? r.timing.ttft() : 0);
  }
  if (s.emitted == 0) return;
  RequestTiming::Detail& t = r.timing.set();
  t.e2e = s.last_token_end - r.spec.arrival_us + s.emitted * i.alpha_output +
          (r.spec.output_tokens > 0 ? i.alpha_post_decode : 0);
  t.last_token = t.e2e - (r.spec.output_tokens > 0 ? i.alpha_post_decode : 0);
  m.e2e.push_back(t.e2e);
  m.e2e_slo.push_back(static_cast<int8_t>(r.spec.slo_class));
  for (const auto& [b, e] : t.runs) {
    // Room up to the step after this one (the difference array's last
    // entries are zeros until a run ends there).
    m.run_delta.grow_to(std::max(m.step_itl.size(), static_cast<size_t>(e)) + 1);
    m.run_delta.add(b, 1);
    m.run_delta.add(e, -1);
  }
  m.extra_itls.insert(m.extra_itls.end(), t.gaps.begin(), t.gaps.end());
  if (keep_completions_) m.completions.push_back({r.spec.arrival_us, r.spec.id, t.e2e, r.spec.slo_class});
  if (r.spec.output_tokens > 0) {
    // The decode time over the decode tokens; a capped request over the
    // tokens it had room for.
    const int64_t itl_sum = (s.last_token_end - t.first_token_end) + (s.emitted - 1) * i.alpha_output;
    const int64_t divisor =
        r.length_capped ? std::max(s.emitted - 2, 1) : std::max(r.spec.output_tokens - 1, 1);
    t.itl_avg = static_cast<double>(itl_sum) / static_cast<double>(divisor);
  }
  if (m.head_form) {
    m.request_itl.push_back(t.itl_avg);
    m.request_itl_slo.push_back(static_cast<int8_t>(r.spec.slo_class));
  }
}

// Requests on their way to their instance's queue count as still queued there:
// they are injected and waiting (spec cluster §9.6 leaves them uncounted).
void MetricsCollector::on_stopped(Request& r) {
  if (r.state == RequestState::Pipeline) {
    ++in_pipeline_;
    return;
  }
  InstanceMetrics& m = *of(r).metrics;
  ++(r.state == RequestState::Running ? m.still_running : m.still_queued);
  if (r.state == RequestState::Running) partial_last_token(r);
  m.output_tokens += output_tokens(r);
}

void MetricsCollector::on_instance_stopped(const InstanceEnd& x) {
  InstanceMetrics& m = *instances_[static_cast<size_t>(x.instance)].metrics;
  m.end_time = x.end_time;
  m.cache_hit_rate = x.cache_hit_rate;
  m.kv_thrashing_rate = x.kv_thrashing_rate;
  m.final_kv_blocks = x.used_kv_blocks;
  m.kv_allocation_failures = x.kv_allocation_failures;
  if (x.adapter_events != nullptr)
    for (const auto& [id, ev] : *x.adapter_events) {
      AdapterTally& a = m.adapters[id];
      a.loads += ev.loads;
      a.evictions += ev.evictions;
    }
  // The samples are complete. The inter-token latencies become (value,
  // count) pairs, one per distinct value, instead of a value and a counter
  // per step (itl_values() makes the same multiset of either).
  m.itl_weighted = itl_values(m);
  m.itl_weighted.shrink_to_fit();
  if (keep_timed_itl_) {
    // The steps go as they are: the standard inter-token latency of each, at
    // its end, counted once per completed request that decoded in it (what
    // itl_values() counts, with the times). itl_weighted, sorted, bounds
    // their latencies.
    TimedSteps& t = timed_steps_.emplace_back();
    t.steps = std::min(m.step_itl.size(), m.step_end.size());
    if (!m.itl_weighted.empty()) t.lo = m.itl_weighted.front().first, t.hi = m.itl_weighted.back().first;
    t.itl = std::move(m.step_itl);
    t.end = std::move(m.step_end);
    t.delta = std::move(m.run_delta);
  }
  m.step_end = {};
  m.step_itl = {};
  m.run_delta = {};
  m.extra_itls = {};
  m.member_steps = x.member_steps;
  m.member_updates = x.member_updates;
}

}  // namespace blis
