#include "cluster/decision_trace.hpp"

#include "cluster/router.hpp"

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

}  // namespace blis
