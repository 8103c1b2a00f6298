// The latencies of a run with the time they belong to, so that a search can
// judge a target on the run's steady state only: without the warm-up (the
// running batches filling up, which with long outputs takes minutes) and
// without the drain after the last arrival (docs/planning.md, "Measuring in
// steady state"). Kept only for `blis plan`'s trials (ClusterConfig::
// keep_timed_samples): a few dozen bytes per request and per step.
//
// The rule, per metric:
//  - the arrival window [first arrival, last arrival] (for TTFT, TPOT and
//    E2E, keyed by arrival time, minus the last mean E2E: those requests ran
//    partly while the batches drained) is cut into kBatches equal batches;
//  - each batch's statistic (the target's percentile or mean) makes a series;
//    the warm-up ends where MSER (the marginal standard error rule) truncates
//    it: the d minimising Σ_{i>=d} (S_i - mean)^2 / (n - d)^2;
//  - a truncation in the second half, when the second half still moves (its
//    least-squares slope changes it by more than 5 % and more than twice its
//    standard error), means the metric still drifts: the run is not
//    converged, whatever its value; without such a slope it is MSER's end
//    effect on a steady series, and the second half is judged;
//  - the value judged is the statistic of all samples after the truncation,
//    and the batches after it give a 95 % batch-means interval.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/packed_samples.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace blis {

// One latency (µs) at a time (µs), counted `weight` times.
struct TimedSample {
  int64_t at = 0, value = 0, weight = 1;
};

// An instance's steps as the collector kept them (metrics/collector.hpp):
// each step's inter-token latency and end, packed, and the difference array
// of the number of completed requests that decoded in it. Read in place,
// they need not be copied into a TimedSample each (24 bytes a step).
struct TimedSteps {
  SampleStore itl, end;
  CountStore delta;
  size_t steps = 0;
  // The least and greatest latency of the steps that count (or a wider range).
  int64_t lo = INT64_MAX, hi = INT64_MIN;
};

struct TimedSamples {
  // By arrival time: completed requests' TTFT, E2E and TPOT (their mean time
  // per output token after the first); by the end of the step: inter-token
  // latencies with the completed requests that decoded in the step, those
  // of `itl`, then those of `itl_steps`.
  std::vector<TimedSample> ttft, e2e, tpot, itl;
  std::vector<TimedSteps> itl_steps;
  int64_t first_arrival = -1, last_arrival = -1;
  bool empty() const { return last_arrival < 0; }
};

// f(itl, count, end) for each of the first `steps` steps whose count of
// completed requests that decoded in it (the prefix sums of `delta`, which
// may be shorter: zeros past its end) is positive, in step order; `end` is 0 without `ends`. The packed
// stores are read side by side, a chunk at a time.
template <class F>
void for_each_counted_step(const SampleStore& itls, const CountStore& delta, const SampleStore* ends,
                           size_t steps, F&& f) {
  static_assert(SampleStore::kChunk == CountStore::kChunk);
  std::vector<int64_t> itl(SampleStore::kChunk), end(ends != nullptr ? SampleStore::kChunk : 0);
  std::vector<int32_t> d(CountStore::kChunk);
  int64_t count = 0;
  for (size_t k = 0; k * SampleStore::kChunk < steps; ++k) {
    itls.chunk_values(k, itl.data());
    if (ends != nullptr) ends->chunk_values(k, end.data());
    const size_t len = std::min(SampleStore::kChunk, steps - k * SampleStore::kChunk);
    // `delta` ends after the last step a run ended in: zeros past it.
    const size_t have = k < delta.chunks() ? delta.chunk_values(k, d.data()) : 0;
    if (have < len)
      std::fill(d.begin() + static_cast<std::ptrdiff_t>(have), d.begin() + static_cast<std::ptrdiff_t>(len),
                0);
    for (size_t i = 0; i < len; ++i) {
      count += d[i];
      if (count > 0) f(itl[i], count, ends != nullptr ? end[i] : 0);
    }
  }
}

// f(end, itl, count) for each step of `s` that counts, in step order.
template <class F>
void for_each_timed_step(const TimedSteps& s, F&& f) {
  for_each_counted_step(s.itl, s.delta, &s.end, s.steps,
                        [&](int64_t itl, int64_t count, int64_t end) { f(end, itl, count); });
}

// The inter-token latencies of `s` as samples: those of `itl`, then those
// the steps of `itl_steps` stand for (for a copy across processes,
// run/mpi_farm.cpp).
std::vector<TimedSample> itl_samples(const TimedSamples& s);

// A metric measured in the steady state of a run.
struct SteadyMeasure {
  double value_ms = 0;       // the statistic over the steady window
  double half_width_ms = 0;  // 95 % batch-means half-width
  double warm_up_s = 0;      // seconds of the arrival window cut as warm-up
  double window_s = 0;       // seconds judged
  bool drifting = false;     // MSER truncated in the second half, which still moves
  bool rising = false;       // the batches' second half above their first
  bool measured = false;     // false: no samples
};

constexpr int kSteadyBatches = 20;

// Student's t at 97.5 % for `df` degrees of freedom (a two-sided 95 % interval).
double student_t975(int64_t df);

// `stat`: a percentile level (0..100: 50, 99, 99.9...) or a negative number for the mean.
// `family`: "ttft", "e2e", "tpot" or "itl" of `s`; measured false for
// another name.
SteadyMeasure measure_steady(const TimedSamples& s, const std::string& family, double stat);

// Collects the per-request part of TimedSamples (the inter-token latencies
// come from the collector, which owns the steps): a lifecycle subscriber after
// the collector, whose figures it reads.
class TimedSampleProbe : public LifecycleSubscriber {
 public:
  explicit TimedSampleProbe(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }
  void on_admitted(Request& r) {
    if (!enabled_) return;
    if (s_.first_arrival < 0 || r.spec.arrival_us < s_.first_arrival) s_.first_arrival = r.spec.arrival_us;
    s_.last_arrival = std::max(s_.last_arrival, r.spec.arrival_us);
  }
  void on_completed(Request& r, SimTime t);
  // The samples (the probe keeps none after).
  TimedSamples release() { return std::move(s_); }

 private:
  bool enabled_;
  TimedSamples s_;
};

}  // namespace blis
