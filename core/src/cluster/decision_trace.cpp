#include "cluster/decision_trace.hpp"

#include "cluster/router.hpp"
#include "util/json_format.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace blis {

DecisionTrace::DecisionTrace(bool enabled, int64_t counterfactual_k, size_t instances)
    : enabled_(enabled), counterfactual_k_(counterfactual_k) {
  summary_.targets.assign(instances, 0);
}

// spec cluster §5.3: regret = best score - chosen score, where a policy
// without scores is judged by negated effective load.
void DecisionTrace::trace_routing(const RoutingChoice& c) {
  ++summary_.routings;
  ++summary_.targets[static_cast<size_t>(c.target)];
  if (counterfactual_k_ <= 0) return;
  auto score = [&](size_t i) {
    return c.scores.empty() ? -static_cast<double>(effective_load(c.input.instances[i])) : c.scores[i];
  };
  double best = score(0);
  for (size_t i = 1; i < static_cast<size_t>(c.input.count); ++i) best = std::max(best, score(i));
  const double regret = std::max(0.0, best - score(static_cast<size_t>(c.position)));
  summary_.regret_sum += regret;
  summary_.regret_max = std::max(summary_.regret_max, regret);
}

// "=== Trace Summary ===" (spec cluster §5.4); instances in string order.
void TraceReport::text_blocks(const ReportScope&, std::string& out) const {
  if (!summarize_) return;
  const TraceSummary& t = *t_;
  std::vector<std::pair<std::string, int64_t>> targets;
  for (size_t i = 0; i < t.targets.size(); ++i)
    if (t.targets[i] > 0) targets.emplace_back("instance_" + std::to_string(i), t.targets[i]);
  std::sort(targets.begin(), targets.end());
  out += "=== Trace Summary ===\n";
  out += fmt::format("Total Decisions: {}\n  Admitted: {}\n  Rejected: {}\n", t.admitted + t.rejected, t.admitted,
                     t.rejected);
  out += fmt::format("Unique Targets: {}\n", targets.size());
  if (t.routings > 0) {
    out += "Target Distribution:\n";
    for (const auto& [id, n] : targets) out += fmt::format("  {}: {}\n", id, n);
  }
  const double mean = t.routings > 0 ? t.regret_sum / static_cast<double>(t.routings) : 0;
  out += fmt::format("Mean Regret: {:.6f}\nMax Regret: {:.6f}\n", mean, t.regret_max);
  if (!events_->empty()) {  // scenario events are decisions too
    out += fmt::format("Scenario Events: {}\n", events_->size());
    for (const std::string& e : *events_) out += "  " + e + "\n";
  }
}

void TraceReport::json_members(const ReportScope&, JsonPlace place, std::string& out) const {
  if (place != JsonPlace::Tail) return;
  const TraceSummary& t = *t_;
  out += fmt::format(",\n  \"trace_summary\": {{\n    \"admitted\": {},\n    \"rejected\": {},\n"
                     "    \"routings\": {},\n    \"targets\": {{",
                     t.admitted, t.rejected, t.routings);
  bool first = true;
  for (size_t i = 0; i < t.targets.size(); ++i) {
    if (t.targets[i] == 0) continue;
    out += fmt::format("{}\n      \"instance_{}\": {}", first ? "" : ",", i, t.targets[i]);
    first = false;
  }
  const double mean = t.routings > 0 ? t.regret_sum / static_cast<double>(t.routings) : 0;
  out += fmt::format("\n    }},\n    \"mean_regret\": {},\n    \"max_regret\": {},\n    \"rejection_reasons\": {{",
                     go_float(mean), go_float(t.regret_max));
  first = true;
  for (const auto& [reason, count] : t.rejection_reasons) {
    out += fmt::format("{}\n      {}: {}", first ? "" : ",", go_string(reason), count);
    first = false;
  }
  out += t.rejection_reasons.empty() ? "}\n  }" : "\n    }\n  }";
}

}  // namespace blis
