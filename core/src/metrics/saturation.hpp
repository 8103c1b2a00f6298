// The post-hoc saturation detectors of spec head §3 (threshold, composite,
// backlog-drift): after a run, a stream of arrival and completion events is
// fed, in time order, to each detector, and each detector's label is the vote
// of its results over the last window of the stream (§3.4).
//
// Where blis departs from the reference (docs/differences.md, "saturation
// detectors"):
//  - every request that arrived at the cluster is an arrival event, not only
//    the completed ones: a run that rejects, drops or leaves requests
//    unfinished has arrivals that never complete, so it cannot look balanced;
//  - backlog-drift judges the in-flight count while traffic is offered (the
//    drain after the last arrival always falls), skips its warm-up and last
//    windows (warmup_windows, tail_windows), needs min_windows judged windows
//    (the reference validates these three and ignores them), and measures the
//    drift as a share of the arrivals per window (the reference compares
//    requests per window with 1/sqrt(arrivals), which no steady run passes
//    once it is long), against the noise floor and the drain ratios: a drift
//    above 1 - transient_drain_ratio is a backlog, above
//    1 - saturated_drain_ratio an overload; without a configured window it
//    takes a tenth of the arrival span (the reference's 60 s leave a 60 s run
//    a single window);
//  - the events' times are the integer microseconds of the simulation (no
//    round trip through seconds), except in HEAD's output form.
// Each detector updates in O(1) per event (the reference re-sorts every
// completion after every event).
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/observer.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace blis {

enum class SaturationLevel { Stable, Backlogged, Overloaded };

const char* level_name(SaturationLevel l);  // "STABLE", "BACKLOGGED", "OVERLOADED"

struct SaturationEvent {
  int64_t time = 0;  // µs
  bool completion = false;
  int64_t id = 0;           // breaks ties: (time, arrival before completion, id)
  double latency_ms = 0;    // completions: E2E
};

struct DetectorResult {
  SaturationLevel level = SaturationLevel::Stable;
  double score = 0, confidence = 0;
  std::vector<std::pair<std::string, double>> signals;  // in a fixed order
};

struct BacklogDriftConfig {
  int64_t window_size_sec = 0;  // 0: a tenth of the arrival span, at least 1 s
  int64_t min_windows = 5;
  int64_t warmup_windows = 2;
  int64_t tail_windows = 1;
  double saturated_drain_ratio = 0.95;  // judged windows' completions/arrivals below it: OVERLOADED
  double transient_drain_ratio = 0.98;  // below it: BACKLOGGED
};

struct SaturationConfig {
  double threshold_ms = 5000;
  BacklogDriftConfig drift;
  int64_t final_window_us = 30'000'000;  // the vote window (spec §3.4)
  bool exact_sums = false;  // composite sums as HEAD does (HEAD's output form with --detectors)
};

// spec head §3.3 threshold: mean E2E against a fixed latency.
class ThresholdDetector {
 public:
  explicit ThresholdDetector(double threshold_ms) : threshold_ms_(threshold_ms) {}
  void observe(const SaturationEvent& e) {
    if (e.completion) sum_ += e.latency_ms, ++n_;
  }
  // Without `signals`, the result has none (the labels need only the level).
  DetectorResult detect(bool signals = true) const;

 private:
  double threshold_ms_;
  double sum_ = 0;
  int64_t n_ = 0;
};

// spec head §3.3 composite: completion deficit and a monotone latency trend.
class CompositeDetector {
 public:
  // `exact`: each mean summed afresh from its first latency, as HEAD sums
  // it (the same figures to the last bit), O(n) per result; else from
  // prefix sums, O(1), which may differ in the last bits.
  explicit CompositeDetector(bool exact = false) : exact_(exact) {}
  void observe(const SaturationEvent& e) {
    if (!e.completion) {
      ++arrivals_;
      return;
    }
    prefix_.push_back(prefix_.back() + e.latency_ms);  // completions come in time order
    if (exact_) latencies_.push_back(e.latency_ms);
  }
  // Without `signals`, the result has none (the labels need only the level).
  DetectorResult detect(bool signals = true) const;

 private:
  double mean(size_t from, size_t to) const {
    if (to <= from) return 0;
    if (!exact_) return (prefix_[to] - prefix_[from]) / static_cast<double>(to - from);
    double sum = 0;
    for (size_t i = from; i < to; ++i) sum += latencies_[i];
    return sum / static_cast<double>(to - from);
  }
  bool exact_;
  int64_t arrivals_ = 0;
  std::vector<double> prefix_{0.0};  // prefix_[i]: Σ latency of the first i completions
  std::vector<double> latencies_;    // with exact_
};

// spec head §3.3 backlog-drift, judged while traffic is offered (see above).
class BacklogDriftDetector {
 public:
  // `last_arrival_us`: events after it are the drain and move no window.
  BacklogDriftDetector(const BacklogDriftConfig& cfg, int64_t window_us, int64_t last_arrival_us)
      : cfg_(cfg), window_us_(window_us), last_arrival_(last_arrival_us) {}
  void observe(const SaturationEvent& e);
  // Without `signals`, the result has none (the labels need only the level).
  DetectorResult detect(bool signals = true) const;

 private:
  BacklogDriftConfig cfg_;
  int64_t window_us_, last_arrival_;
  int64_t arrivals_ = 0, completions_ = 0;
  std::vector<int64_t> in_flight_;     // by window: the in-flight count after its last event
  std::vector<int64_t> window_arrivals_;  // by window: arrivals in it
};

// The final label of each named detector ("composite", "threshold",
// "backlog-drift", in that roster order) over `events` sorted by
// (time, arrival first, id). No events: an empty map.
std::map<std::string, SaturationLevel> saturation_labels(const std::vector<SaturationEvent>& events,
                                                         const std::vector<std::string>& detectors,
                                                         const SaturationConfig& cfg = {});

// The --saturation-report file (spec head §3.1, §3.4): HEAD's JSON,
// {"final": {detector: level}, "trace": [...]}, a record per event and
// selected detector (roster order) with the detector's result after that
// event: timestamp (µs), detector, result {level, score, confidence, signals
// (by name)}; written as Go's encoding/json indents it, with a final newline.
std::string saturation_report(const std::vector<SaturationEvent>& events, const std::vector<std::string>& detectors,
                              const SaturationConfig& cfg);

// "--detectors" (spec head §3.1): a comma list of detector names (blanks
// trimmed, empty items ignored, duplicates removed) or "all"; the names in
// roster order. InputError naming `where` otherwise.
std::vector<std::string> parse_detector_list(const std::string& text, const std::string& where);

// Sorts events into the detectors' order.
void sort_events(std::vector<SaturationEvent>& events);

// Collects the events of one run, a lifecycle subscriber: the arrival of
// every request that reached the cluster (admitted or rejected), the
// completion of each completed one with its E2E: two events of 32 bytes per
// request, so it is on only when the detectors are asked for (--detectors,
// blis plan's trials, --report) and costs nothing otherwise.
class SaturationProbe : public LifecycleSubscriber {
 public:
  // `head_times`: the events' times as HEAD derives them from its
  // per-request metrics, through seconds and milliseconds
  // (trunc(arrival_s·1e6), + trunc(e2e_ms·1e3)), which can be 1 µs below
  // the simulation's; --output-form head, so that its report is HEAD's.
  explicit SaturationProbe(bool enabled, bool head_times = false) : enabled_(enabled), head_times_(head_times) {}
  bool enabled() const { return enabled_; }
  void on_admitted(Request& r) { arrival(r); }
  void on_rejected(Request& r, std::string_view) { arrival(r); }
  // The completion at arrival + the request's E2E as reported (the
  // collector, an earlier subscriber, has set it: the step's end plus the
  // output and post-decode overheads), with that E2E.
  void on_completed(Request& r, SimTime t) {
    if (!enabled_) return;
    const int64_t e2e = r.timing.e2e() >= 0 ? r.timing.e2e() : t - r.spec.arrival_us;
    const double ms = static_cast<double>(e2e) / 1e3;
    const int64_t at = head_times_ ? arrival_time(r) + static_cast<int64_t>(ms * 1e3) : r.spec.arrival_us + e2e;
    events_.push_back({at, true, static_cast<int64_t>(r.spec.id), ms});
  }
  // The events sorted for the detectors (the run's are nearly sorted already).
  std::vector<SaturationEvent> sorted() const {
    std::vector<SaturationEvent> e = events_;
    sort_events(e);
    return e;
  }

 private:
  int64_t arrival_time(const Request& r) const {
    const int64_t us = r.spec.arrival_us;
    return head_times_ ? static_cast<int64_t>(static_cast<double>(us) / 1e6 * 1e6) : us;
  }
  void arrival(const Request& r) {
    if (enabled_) events_.push_back({arrival_time(r), false, static_cast<int64_t>(r.spec.id), 0});
  }
  bool enabled_, head_times_;
  std::vector<SaturationEvent> events_;
};

// What the run's verdict and `blis plan` read: backlog-drift's label. Not
// threshold: it compares with a fixed latency, which is a target (--slo says
// that), not saturation. Not composite: its latency trend orders completions
// by completion time, which rises in every finite run (the first completions
// are short requests only, the last ones long), so it calls steady runs
// overloaded (docs/differences.md).
struct SaturationVerdict {
  std::map<std::string, SaturationLevel> labels;  // all three detectors
  bool saturated() const;                          // backlog-drift OVERLOADED
  std::string summary() const;                     // "composite OVERLOADED, backlog-drift BACKLOGGED"
};

SaturationVerdict judge_saturation(const std::vector<SaturationEvent>& sorted_events, const SaturationConfig& cfg = {});

// The labels of the detectors selected with --detectors, in their order (by
// name in HEAD's output form, as Go writes a map), as the "saturation" member
// of the cluster's metrics (spec head §3.4). Both arguments outlive it.
class SaturationLabels : public ReportPart {
 public:
  SaturationLabels(const SaturationVerdict& v, const std::vector<std::string>& detectors, bool by_name = false)
      : v_(&v), detectors_(&detectors), by_name_(by_name) {}
  void cluster_members(const ReportScope&, ClusterPlace place, std::string& out) const override;

 private:
  const SaturationVerdict* v_;
  const std::vector<std::string>* detectors_;
  bool by_name_;
};

}  // namespace blis
