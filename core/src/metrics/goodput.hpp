// Goodput and SLO attainment (spec head §2): per SLO class, the requests that
// met every configured target (TTFT, mean ITL, E2E) among those that arrived
// at the cluster — so rejected, dropped and unfinished requests count against
// attainment. An observer (metrics/observer.hpp): a lifecycle subscriber that
// keeps nothing unless targets are set, and writes its own part of the report.
#pragma once

#include "metrics/request_names.hpp"

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/observer.hpp"
#include "metrics/time_series.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blis {

struct GoodputClass {
  int64_t arrived = 0, good = 0;
  std::array<int64_t, 3> counted{}, met{};  // ttft, itl, e2e
  std::array<bool, 3> targeted{};           // the dimensions the class has a target for
  std::vector<int64_t> ttft, e2e;           // µs, completed requests
  std::vector<double> itl;                  // µs, each request's mean ITL
  std::vector<uint64_t> itl_ids;            // the request of each: HEAD sums them in the order of their names
};

struct Goodput {
  std::map<std::string, GoodputClass> classes;  // by class name ("default" for the default class)
  SloTargetMap targets;
  // HEAD's names of the requests: the per-class ITL sums follow their order.
  RequestNames names;
  bool enabled() const { return !targets.empty(); }
};

class GoodputTracker : public LifecycleSubscriber, public ReportPart, public SeriesColumns {
 public:
  // Every class with a target has an entry, requests or not (as HEAD prints).
  explicit GoodputTracker(SloTargetMap targets);
  explicit GoodputTracker(const ObserverSetup& setup) : GoodputTracker(setup.slo_targets) {}

  void on_admitted(Request& r) {
    if (!on(r)) return;
    r.marks.admitted = true;
    ++cls(r).arrived;
  }
  void on_rejected(Request& r, std::string_view) {
    if (on(r)) ++cls(r).arrived;
  }
  // Stopped before its admission decision: it arrived all the same.
  void on_stopped(Request& r) {
    if (on(r) && r.state == RequestState::Pipeline && !r.marks.admitted) ++cls(r).arrived;
  }
  void on_completed(Request& r, SimTime);

  const Goodput& result() const { return result_; }
  // HEAD's names of the requests (cluster.cpp), when they are not request_<id>.
  void name_requests(RequestNames names) { result_.names = std::move(names); }

  // Its part of the report, when targets are set: the goodput keys of the
  // cluster's metrics, a --format table line, goodput_rps and slo_attainment
  // for rows, and the per-SLO block even for one class.
  void cluster_members(const ReportScope& s, ClusterPlace place, std::string& out) const override;
  void table_lines(const ReportScope& s, TablePlace place, std::string& out) const override;
  void figures(const ReportScope& s, std::vector<MetricField>& out) const override;
  void shape(ReportContext& ctx) const override;

  // Its column of the time series, when targets are set: good_completions,
  // the requests completed in the interval that met every target of their
  // class, by the pool that completed them.
  std::string series_header() const override { return result_.enabled() ? ",good_completions" : ""; }
  void series_start(const std::vector<int32_t>& pool_of, size_t pools) override;
  void series_cells(size_t pool, std::string& out) const override;
  void series_next() override;

 private:
  bool on(const Request& r) const { return result_.targets.count(r.spec.slo_class) != 0; }
  GoodputClass& cls(const Request& r);

  Goodput result_;
  std::vector<int32_t> pool_of_;        // with the time series: each instance's pool
  std::vector<int64_t> interval_good_;  // with the time series: good completions per pool in the interval
};

// The keys goodput adds to the cluster's metrics JSON block (after its last
// key, each line starting with ",\n  "), per spec head §2.3; "" when off.
// `runtime_s` is the run's simulated duration.
std::string goodput_json(const Goodput& g, double runtime_s);
// The overall figures, for rows and searches: goodput_rps, slo_attainment.
std::pair<double, double> goodput_totals(const Goodput& g, double runtime_s);

// Parses --slo-ttft / --slo-itl / --slo-e2e ("class=duration,..."; Go
// durations such as 100ms, 1.5s, 250us) into `targets` (the field of each
// class chosen by `dim`: 0 ttft, 1 itl, 2 e2e). InputError naming `where`.
void parse_slo_flag(const std::string& text, int dim, const std::string& where, SloTargetMap& targets);

}  // namespace blis
