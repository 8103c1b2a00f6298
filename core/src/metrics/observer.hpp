// Observers own their output (DESIGN §11): a part of a run's report writes
// its own members of the cluster's metrics object, of the --format json
// document, its text block, its --format table lines and its figures for
// rows and searches. The writers (run/report_writer.cpp) loop over the parts
// in their order for every format; a part writes nothing where it has nothing.
//
// A metric is an observer: a lifecycle subscriber that is also a ReportPart,
// built from the run's ObserverSetup and listed once in
// cluster/request_signals.hpp (Observers<...>). The cluster never names it:
// it feeds it the signals, and hands it over as a part when the run ends.
// An observer that is also SeriesColumns (metrics/time_series.hpp) adds its
// own columns to the --timeseries file.
#pragma once

#include "engine/lifecycle.hpp"
#include "metrics/collector.hpp"
#include "metrics/report.hpp"
#include "metrics/time_series.hpp"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace blis {

// What every part may read when the report is written.
struct ReportScope {
  const InstanceMetrics& cluster;                 // the instances merged (cluster_metrics)
  const std::vector<InstanceMetrics>& instances;  // every instance slot, by index
  double runtime_s = 0;                           // the run's simulated duration (its end time)
  bool head = false;                              // HEAD's output form (--output-form head)
};

// The places of the cluster's metrics object after the reference's keys:
// Labels, then (--format json) the medians, then Figures.
enum class ClusterPlace { Labels, Figures };
// The places of the --format json document (its members in this order:
// "config", Lead, "cluster", "rejected_requests", "instances", "fitness",
// Body, Tail, End) and of --format table.
enum class JsonPlace { Lead, Body, Tail, End };
enum class TablePlace {
  Verdict,  // after the throughput line
  Latency,  // after the scheduling-delay line, before the fitness line
  Events,   // after the fitness line
  Blocks,   // blocks after the summary, each after a blank line
};

class ReportPart {
 public:
  ReportPart() = default;
  ReportPart(const ReportPart&) = default;
  ReportPart(ReportPart&&) = default;
  ReportPart& operator=(const ReportPart&) = default;
  ReportPart& operator=(ReportPart&&) = default;
  virtual ~ReportPart() = default;

  // Members of the cluster's metrics object at `place` (every format that
  // prints it), each ",\n  \"key\": value" as in an object printed at column 0.
  virtual void cluster_members(const ReportScope&, ClusterPlace, std::string&) const {}
  // Members of the --format json document at `place`, each ",\n  \"key\": value".
  virtual void json_members(const ReportScope&, JsonPlace, std::string&) const {}
  // Blocks of the reference's text forms, after the per-SLO block.
  virtual void text_blocks(const ReportScope&, std::string&) const {}
  // Lines of --format table at `place` (TablePlace::Blocks: "\n" then a block).
  virtual void table_lines(const ReportScope&, TablePlace, std::string&) const {}
  // Figures for sweep rows and searches (RunOutcome::metrics), after fitness_score.
  virtual void figures(const ReportScope&, std::vector<MetricField>&) const {}
  // What this part changes in the shared text blocks (metrics/report.hpp).
  virtual void shape(ReportContext&) const {}
};

// One class's SLO targets in ms; 0 = not set (goodput, spec head §2).
struct SloTargets {
  double ttft_ms = 0, itl_ms = 0, e2e_ms = 0;
};
// By blis_slo_class (the default class is 0).
using SloTargetMap = std::map<int32_t, SloTargets>;

// The run's settings that observers read, resolved (run/simulate.cpp fills it).
struct ObserverSetup {
  SloTargetMap slo_targets;  // --slo-ttft, --slo-itl, --slo-e2e; empty = no goodput
  bool trace_requests = false;  // --trace-output: TraceRecorder keeps every request
};

// The observers of cluster/request_signals.hpp: each built from the setup,
// fed every signal in list order (inlined, as the other subscribers are), and
// released as report parts when the run ends.
template <class... Ts>
class Observers : public LifecycleSubscriber {
 public:
  explicit Observers(const ObserverSetup& setup) : subs_(Ts(setup)...) {}

  void on_admitted(Request& r) { each([&](auto& s) { s.on_admitted(r); }); }
  void on_rejected(Request& r, std::string_view reason) { each([&](auto& s) { s.on_rejected(r, reason); }); }
  void on_routed(Request& r, const RoutingChoice& c) { each([&](auto& s) { s.on_routed(r, c); }); }
  void on_queued(Request& r, SimTime t) { each([&](auto& s) { s.on_queued(r, t); }); }
  void on_scheduled(Request& r, SimTime t) { each([&](auto& s) { s.on_scheduled(r, t); }); }
  void on_first_token(Request& r, SimTime t) { each([&](auto& s) { s.on_first_token(r, t); }); }
  void on_token_run(Request& r, uint64_t first, uint64_t end) {
    each([&](auto& s) { s.on_token_run(r, first, end); });
  }
  void on_token_gap(Request& r, int64_t itl) { each([&](auto& s) { s.on_token_gap(r, itl); }); }
  void on_preempted(Request& r, SimTime t) { each([&](auto& s) { s.on_preempted(r, t); }); }
  void on_restarted(Request& r) { each([&](auto& s) { s.on_restarted(r); }); }
  void on_completed(Request& r, SimTime t) { each([&](auto& s) { s.on_completed(r, t); }); }
  void on_dropped(Request& r, SimTime t) { each([&](auto& s) { s.on_dropped(r, t); }); }
  void on_timed_out(Request& r, SimTime t) { each([&](auto& s) { s.on_timed_out(r, t); }); }
  void on_failed(Request& r, SimTime t) { each([&](auto& s) { s.on_failed(r, t); }); }
  void on_departed(Request& r, SimTime t) { each([&](auto& s) { s.on_departed(r, t); }); }
  void on_stopped(Request& r) { each([&](auto& s) { s.on_stopped(r); }); }
  void on_step(const StepSample& x) { each([&](auto& s) { s.on_step(x); }); }
  void on_instance_stopped(const InstanceEnd& x) { each([&](auto& s) { s.on_instance_stopped(x); }); }

  // Hands `series` the observers that add columns to the time series
  // (SeriesColumns), in list order.
  void add_series_columns(TimeSeries& series) {
    each([&](auto& s) {
      if constexpr (std::is_base_of_v<SeriesColumns, std::decay_t<decltype(s)>>) series.add_columns(s);
    });
  }

  // The observer of type T.
  template <class T>
  T& get() {
    return std::get<T>(subs_);
  }

  // The observers, moved out once the run has ended, in list order.
  std::vector<std::unique_ptr<ReportPart>> release() {
    std::vector<std::unique_ptr<ReportPart>> out;
    std::apply([&](auto&... s) { (out.push_back(std::make_unique<std::decay_t<decltype(s)>>(std::move(s))), ...); },
               subs_);
    return out;
  }

 private:
  template <class F>
  void each(F&& f) {
    std::apply([&](auto&... s) { (f(s), ...); }, subs_);
  }
  std::tuple<Ts...> subs_;
};

}  // namespace blis
