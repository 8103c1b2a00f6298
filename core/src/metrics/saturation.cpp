#include "metrics/saturation.hpp"

#include <blis/errors.hpp>

#include "util/compact_text.hpp"
#include "util/json_format.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace blis {

const char* level_name(SaturationLevel l) {
  switch (l) {
    case SaturationLevel::Stable: return "STABLE";
    case SaturationLevel::Backlogged: return "BACKLOGGED";
    case SaturationLevel::Overloaded: return "OVERLOADED";
  }
  return "";
}

std::vector<std::string> parse_detector_list(const std::string& text, const std::string& where) {
  static const std::vector<std::string> roster{"composite", "threshold", "backlog-drift"};
  std::vector<std::string> given;
  for (const std::string& raw : compact::items(text, ',', where)) {
    const std::string name = text::trim(raw);
    if (name.empty()) continue;
    if (name != "all" && std::find(roster.begin(), roster.end(), name) == roster.end())
      throw InputError(where, fmt::format("unknown saturation detector '{}'; valid: all, composite, threshold, "
                                          "backlog-drift",
                                          name));
    given.push_back(name);
  }
  const bool all = std::find(given.begin(), given.end(), "all") != given.end();
  if (all && given.size() > 1)
    throw InputError(where, "'all' cannot be mixed with detector names; give 'all' or a list of names");
  if (given.empty()) throw InputError(where, "names no detector; give all, or some of composite, threshold, backlog-drift");
  std::vector<std::string> out;
  for (const std::string& name : roster)
    if (all || std::find(given.begin(), given.end(), name) != given.end()) out.push_back(name);
  return out;
}

void sort_events(std::vector<SaturationEvent>& events) {
  std::sort(events.begin(), events.end(), [](const SaturationEvent& a, const SaturationEvent& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.completion != b.completion) return !a.completion;
    return a.id < b.id;
  });
}

namespace {

// HEAD's figures (SaturationConfig::exact_sums, HEAD's output form): equal
// events in the order of HEAD's request ids, the strings "request_<id>"
// (10 before 9).
std::vector<SaturationEvent> head_order(const std::vector<SaturationEvent>& events) {
  std::vector<SaturationEvent> out = events;
  std::stable_sort(out.begin(), out.end(), [](const SaturationEvent& a, const SaturationEvent& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.completion != b.completion) return !a.completion;
    return std::to_string(a.id) < std::to_string(b.id);
  });
  return out;
}

}  // namespace

DetectorResult ThresholdDetector::detect(bool signals) const {
  DetectorResult r;
  if (n_ == 0) return r;
  const double m = sum_ / static_cast<double>(n_), t = threshold_ms_;
  if (m < t) {
    r.score = 0.5 * m / t;
  } else {
    r.level = SaturationLevel::Overloaded;
    r.score = 0.75 + std::min(0.25, (m - t) / t / 4);
  }
  r.confidence = 1 - 1 / std::sqrt(static_cast<double>(n_) + 1);
  if (signals) r.signals = {{"mean_e2e", m}, {"threshold", t}};
  return r;
}

DetectorResult CompositeDetector::detect(bool signals) const {
  DetectorResult r;
  if (arrivals_ == 0) return r;
  const size_t n = prefix_.size() - 1;
  const double a = static_cast<double>(arrivals_);
  const double deficit = std::max(0.0, 1 - static_cast<double>(n) / a);
  double lt_raw = 0, lt = 0;
  bool monotone = false;
  if (n >= 2) {
    const double first = mean(0, n / 2), second = mean(n / 2, n);
    if (first > 0) lt_raw = std::max(0.0, (second - first) / first);
  }
  if (n >= 20) {
    const size_t q = n / 4;
    const double q1 = mean(0, q), q2 = mean(q, 2 * q), q3 = mean(2 * q, 3 * q), q4 = mean(3 * q, n);
    monotone = q1 < q2 && q2 < q3 && q3 < q4;
    if (monotone) lt = lt_raw;
  }
  const double noise = 1 / std::sqrt(a);
  if (signals)
    r.signals = {{"rate_deficit", deficit},
                 {"latency_trend_raw", std::min(lt_raw, 1.0)},
                 {"latency_trend", std::min(lt, 1.0)},
                 {"quartile_monotone", monotone ? 1.0 : 0.0},
                 {"noise_floor", noise}};
  r.score = std::max(deficit, std::min(lt, 1.0));
  r.level = r.score < noise ? SaturationLevel::Stable
            : lt > noise    ? SaturationLevel::Overloaded
                            : SaturationLevel::Backlogged;
  r.confidence = std::min(1.0, a / 20);
  return r;
}

void BacklogDriftDetector::observe(const SaturationEvent& e) {
  (e.completion ? completions_ : arrivals_) += 1;
  if (e.time > last_arrival_) return;  // the drain
  const size_t i = static_cast<size_t>(std::max<int64_t>(e.time, 0) / window_us_);
  if (in_flight_.empty()) {
    in_flight_.resize(i + 1, 0);
    window_arrivals_.resize(i + 1, 0);
  } else if (i >= in_flight_.size()) {
    // Windows without events keep the previous count.
    in_flight_.resize(i + 1, in_flight_.back());
    window_arrivals_.resize(i + 1, 0);
  }
  const size_t at = std::min(i, in_flight_.size() - 1);
  in_flight_[at] = arrivals_ - completions_;
  if (!e.completion) ++window_arrivals_[at];
}

DetectorResult BacklogDriftDetector::detect(bool signals) const {
  DetectorResult r;
  if (arrivals_ == 0) return r;
  const double noise = 1 / std::sqrt(static_cast<double>(arrivals_));
  // The judged windows: after the warm-up, before the (partial) last ones.
  const int64_t k = static_cast<int64_t>(in_flight_.size());
  const int64_t from = std::min(cfg_.warmup_windows, k), to = std::max(from, k - cfg_.tail_windows);
  const int64_t m = to - from;
  double slope = 0, drift = 0;
  if (m >= std::max<int64_t>(2, cfg_.min_windows)) {
    double sx = 0, sy = 0, offered = 0;
    for (int64_t i = from; i < to; ++i) {
      sx += static_cast<double>(i - from);
      sy += static_cast<double>(in_flight_[static_cast<size_t>(i)]);
      offered += static_cast<double>(window_arrivals_[static_cast<size_t>(i)]);
    }
    const double mx = sx / static_cast<double>(m), my = sy / static_cast<double>(m);
    double sxy = 0, sxx = 0;
    for (int64_t i = from; i < to; ++i) {
      const double dx = static_cast<double>(i - from) - mx;
      sxy += dx * (static_cast<double>(in_flight_[static_cast<size_t>(i)]) - my);
      sxx += dx * dx;
    }
    if (sxx > 0) slope = sxy / sxx;
    const double per_window = offered / static_cast<double>(m);
    if (per_window > 0) drift = slope / per_window;
  }
  // The drift must exceed the noise and a material share of the arrivals:
  // completions below transient_drain_ratio of arrivals is a backlog (batches
  // still filling up, say), below saturated_drain_ratio an overload.
  const double backlog = std::max(noise, 1 - cfg_.transient_drain_ratio);
  const double overload = std::max(3 * noise, 1 - cfg_.saturated_drain_ratio);
  r.level = drift <= backlog    ? SaturationLevel::Stable
            : drift <= overload ? SaturationLevel::Backlogged
                                : SaturationLevel::Overloaded;
  r.score = std::min(1.0, std::max(0.0, drift) / overload);
  r.confidence = std::min(1.0, static_cast<double>(arrivals_) / 20);
  if (signals)
    r.signals = {{"in_flight", static_cast<double>(arrivals_ - completions_)},
                 {"arrivals", static_cast<double>(arrivals_)},
                 {"completions", static_cast<double>(completions_)},
                 {"running_slope", slope},
                 {"drift", drift},
                 {"noise_floor", noise}};
  return r;
}

namespace {

// Feeds `events` to each selected detector (roster order) and calls
// record(event, detector name, its result after the event) for each event and
// detector, detector by detector when `interleaved` is false, event by event
// (HEAD's report order) when it is true; `wanted(e)` says whether a result
// is needed at all (its detect() is skipped otherwise), `signals` whether a
// result needs its signals.
template <class Wanted, class Record>
void walk_detectors(const std::vector<SaturationEvent>& events, const std::vector<std::string>& detectors,
                    const SaturationConfig& cfg, bool interleaved, bool signals, Wanted wanted,
                    Record record) {
  int64_t first_arrival = -1, last_arrival = 0;
  for (const SaturationEvent& e : events)
    if (!e.completion) {
      if (first_arrival < 0) first_arrival = e.time;
      last_arrival = e.time;
    }
  int64_t window = cfg.drift.window_size_sec * 1'000'000;
  if (window <= 0) window = std::max<int64_t>(1'000'000, (last_arrival - std::max<int64_t>(first_arrival, 0)) / 10);
  auto want = [&](const char* name) { return std::find(detectors.begin(), detectors.end(), name) != detectors.end(); };
  CompositeDetector composite{cfg.exact_sums};
  ThresholdDetector threshold{cfg.threshold_ms};
  BacklogDriftDetector drift{cfg.drift, window, last_arrival};
  const bool c = want("composite"), t = want("threshold"), d = want("backlog-drift");
  auto step = [&](auto& detector, const char* name, const SaturationEvent& e) {
    detector.observe(e);
    if (wanted(e)) record(e, name, detector.detect(signals));
  };
  if (interleaved) {
    for (const SaturationEvent& e : events) {
      if (c) step(composite, "composite", e);
      if (t) step(threshold, "threshold", e);
      if (d) step(drift, "backlog-drift", e);
    }
    return;
  }
  for (const SaturationEvent& e : events)
    if (c) step(composite, "composite", e);
  for (const SaturationEvent& e : events)
    if (t) step(threshold, "threshold", e);
  for (const SaturationEvent& e : events)
    if (d) step(drift, "backlog-drift", e);
}

// The vote of spec head §3.4 over the results at or after `cutoff`, by
// detector (a few: a list, no string made per result).
struct Votes {
  std::vector<std::pair<const char*, std::array<int64_t, 3>>> counts;
  void add(const char* name, SaturationLevel l) {
    auto at = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return std::strcmp(c.first, name) == 0; });
    if (at == counts.end()) at = counts.insert(at, {name, {0, 0, 0}});
    ++at->second[static_cast<size_t>(l)];
  }
  std::map<std::string, SaturationLevel> labels() const {
    std::map<std::string, SaturationLevel> out;
    for (const auto& [name, n] : counts) {
      // The most frequent level; ties go to the more severe.
      size_t best = 2;
      for (size_t l = 2; l-- > 0;)
        if (n[l] > n[best]) best = l;
      out[name] = static_cast<SaturationLevel>(best);
    }
    return out;
  }
};

}  // namespace

std::map<std::string, SaturationLevel> saturation_labels(const std::vector<SaturationEvent>& sorted,
                                                         const std::vector<std::string>& detectors,
                                                         const SaturationConfig& cfg) {
  if (sorted.empty()) return {};
  const std::vector<SaturationEvent> reordered = cfg.exact_sums ? head_order(sorted) : std::vector<SaturationEvent>{};
  const std::vector<SaturationEvent>& events = cfg.exact_sums ? reordered : sorted;
  const int64_t cutoff = events.back().time - cfg.final_window_us;
  Votes votes;
  walk_detectors(
      events, detectors, cfg, false, false, [&](const SaturationEvent& e) { return e.time >= cutoff; },
      [&](const SaturationEvent&, const char* name, const DetectorResult& r) { votes.add(name, r.level); });
  return votes.labels();
}

std::string saturation_report(const std::vector<SaturationEvent>& sorted, const std::vector<std::string>& detectors,
                              const SaturationConfig& cfg) {
  const std::vector<SaturationEvent> reordered = cfg.exact_sums ? head_order(sorted) : std::vector<SaturationEvent>{};
  const std::vector<SaturationEvent>& events = cfg.exact_sums ? reordered : sorted;
  std::string trace;
  walk_detectors(
      events, detectors, cfg, true, true, [](const SaturationEvent&) { return true; },
      [&](const SaturationEvent& e, const char* name, const DetectorResult& r) {
        // The signals by name, as Go writes a map.
        std::vector<std::pair<std::string, double>> signals = r.signals;
        std::sort(signals.begin(), signals.end());
        std::string s;
        for (const auto& [k, v] : signals)
          s += fmt::format("{}\n          {}: {}", s.empty() ? "" : ",", go_string(k), go_float(v));
        trace += fmt::format(
            "{}\n    {{\n      \"timestamp\": {},\n      \"detector\": {},\n      \"result\": {{\n"
            "        \"level\": \"{}\",\n        \"score\": {},\n        \"confidence\": {},\n"
            "        \"signals\": {}\n      }}\n    }}",
            trace.empty() ? "" : ",", e.time, go_string(name), level_name(r.level), go_float(r.score),
            go_float(r.confidence), s.empty() ? "{}" : "{" + s + "\n        }");
      });
  std::string final_labels;
  for (const auto& [name, level] : saturation_labels(events, detectors, cfg))  // by name, as Go writes a map
    final_labels += fmt::format("{}\n    {}: \"{}\"", final_labels.empty() ? "" : ",", go_string(name), level_name(level));
  // No events: no "final" member (HEAD omits an empty one).
  return fmt::format("{{{}\n  \"trace\": {}\n}}\n",
                     final_labels.empty() ? "" : "\n  \"final\": {" + final_labels + "\n  },",
                     trace.empty() ? "[]" : "[" + trace + "\n  ]");
}

bool SaturationVerdict::saturated() const {
  const auto it = labels.find("backlog-drift");
  return it != labels.end() && it->second == SaturationLevel::Overloaded;
}

std::string SaturationVerdict::summary() const {
  std::string out;
  for (const char* name : {"composite", "backlog-drift", "threshold"})
    if (auto it = labels.find(name); it != labels.end())
      text::append(out, ", ", std::string(name) + " " + level_name(it->second));
  return out;
}

SaturationVerdict judge_saturation(const std::vector<SaturationEvent>& sorted_events, const SaturationConfig& cfg) {
  SaturationVerdict v;
  v.labels = saturation_labels(sorted_events, {"composite", "threshold", "backlog-drift"}, cfg);
  return v;
}

void SaturationLabels::cluster_members(const ReportScope&, ClusterPlace place, std::string& out) const {
  if (place != ClusterPlace::Labels) return;
  std::string labels;
  std::vector<std::string> names = *detectors_;
  if (by_name_) std::sort(names.begin(), names.end());
  for (const std::string& name : names)
    if (auto it = v_->labels.find(name); it != v_->labels.end())
      labels += fmt::format("{}\n    {}: {}", labels.empty() ? "" : ",", go_string(name), go_string(level_name(it->second)));
  if (!labels.empty()) out += ",\n  \"saturation\": {" + labels + "\n  }";
}

}  // namespace blis
