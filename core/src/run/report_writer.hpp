// The writers of a run's report, one per format (the reference's text blocks,
// --format json, --format table) and the figures of rows and searches. Each
// writes the run's own figures and loops over the parts of the report
// (metrics/observer.hpp) for the rest: no part is named here.
#pragma once

#include "cluster/cluster.hpp"
#include "metrics/fitness.hpp"
#include "metrics/observer.hpp"
#include "run/resolve.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blis {

// The parts of a run's report in their order (run/simulate.cpp lists them);
// owns those given by value.
class ReportParts {
 public:
  void add(const ReportPart& p) { order_.push_back(&p); }
  void add(std::unique_ptr<ReportPart> p) {
    order_.push_back(p.get());
    owned_.push_back(std::move(p));
  }
  const std::vector<const ReportPart*>& order() const { return order_; }

 private:
  std::vector<std::unique_ptr<ReportPart>> owned_;
  std::vector<const ReportPart*> order_;
};

// What the writers read; every reference outlives the writing.
struct ReportInput {
  const ResolvedRun& r;
  const ClusterConfig& cc;
  const ClusterResult& result;
  const InstanceMetrics& cluster;  // the instances merged
  const std::vector<const InstanceMetrics*>& used;  // the instances of the run (reserve slots never filled left out)
  const std::optional<Fitness>& fitness;
  const ReportParts& parts;
  ReportScope scope;
};

// The reference's "=== ... ===" blocks (--output-form seed or head).
std::string text_report(const ReportInput& in);
// --format json: one document that jq reads (`jq .cluster.ttft_p99_ms`).
std::string json_report(const ReportInput& in);
// --format table: the figures a person reads first, every label with its unit.
std::string table_report(const ReportInput& in);
// The --results-path (HEAD's --metrics-path) file: the cluster's metrics
// object with the per-request records after the reference's keys, then the
// parts' members, as HEAD writes the object it prints with its requests.
std::string results_report(const ReportInput& in);
// RunOutcome::metrics: the cluster's metrics, rejected_requests, fitness_score
// (with --fitness-weights), then the parts' figures.
std::vector<MetricField> run_figures(const ReportInput& in);

// The scenario events' part: "=== Scenario Events ===", "scenario_events" in
// --format json, the events lines of --format table. `result` outlives it.
class ScenarioEventsReport : public ReportPart {
 public:
  explicit ScenarioEventsReport(const ClusterResult& result) : result_(&result) {}
  void text_blocks(const ReportScope& s, std::string& out) const override;
  void json_members(const ReportScope& s, JsonPlace place, std::string& out) const override;
  void table_lines(const ReportScope& s, TablePlace place, std::string& out) const override;

 private:
  const ClusterResult* result_;
};

}  // namespace blis
