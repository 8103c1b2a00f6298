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

struct TimedSamples {
  // By arrival time: completed requests' TTFT, E2E and TPOT (their mean time
  // per output token after the first); by the end of the step: inter-token
  // latencies with the completed requests that decoded in the step.
  std::vector<TimedSample> ttft, e2e, tpot, itl;
  int64_t first_arrival = -1, last_arrival = -1;
  bool empty() const { return last_arrival < 0; }
};

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
