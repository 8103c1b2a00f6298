// The decision trace (--trace-level decisions, spec cluster §5): admission
// and routing decisions, kept as the aggregates its summary prints.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/observer.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blis {

// Aggregates of the decision trace (spec cluster §5.4): all the summary needs,
// without keeping a record per request.
struct TraceSummary {
  int64_t admitted = 0, rejected = 0, routings = 0;
  std::vector<int64_t> targets;  // routings per instance index
  double regret_sum = 0, regret_max = 0;
  std::map<std::string, int64_t> rejection_reasons;  // the admission policy's reasons, counted
};

class DecisionTrace : public LifecycleSubscriber {
 public:
  // Off unless `enabled`; regret only when `counterfactual_k` > 0.
  DecisionTrace(bool enabled, int64_t counterfactual_k, size_t instances);

  void on_admitted(Request&) {
    if (enabled_) ++summary_.admitted;
  }
  void on_rejected(Request&, std::string_view reason) {
    if (!enabled_) return;
    ++summary_.rejected;
    ++summary_.rejection_reasons[reason.empty() ? std::string("(no reason given)") : std::string(reason)];
  }
  void on_routed(Request&, const RoutingChoice& c) {
    if (enabled_) trace_routing(c);
  }

  const TraceSummary& summary() const { return summary_; }

 private:
  void trace_routing(const RoutingChoice& c);

  bool enabled_;
  int64_t counterfactual_k_;
  TraceSummary summary_;
};

// The trace's part of the report: "=== Trace Summary ===" (with
// --summarize-trace) and "trace_summary" in --format json. The scenario
// events applied are decisions too. Both outlive it.
class TraceReport : public ReportPart {
 public:
  TraceReport(const TraceSummary& t, const std::vector<std::string>& events, bool summarize)
      : t_(&t), events_(&events), summarize_(summarize) {}
  void text_blocks(const ReportScope&, std::string& out) const override;
  void json_members(const ReportScope&, JsonPlace place, std::string& out) const override;

 private:
  const TraceSummary* t_;
  const std::vector<std::string>* events_;
  bool summarize_;
};

}  // namespace blis
