// `blis plan --search`: the cheapest deployment meeting every target, over
// GPUs, TPs, batch limits and P/D against co-located serving. Every setting
// is screened by a capacity probe (the count follows from rate / capacity),
// then the cheapest and the Pareto frontier are verified by the steady-state
// search of `blis plan` (plan/min_count.hpp). docs/planning.md, "The
// cheapest deployment".
#pragma once

#include <blis/plan.hpp>

#include <ostream>

namespace blis {

// Prints the answer to `out` (table or JSON) and writes the report; false
// when no configuration meets the targets. InputError for a bad space.
bool search_deployments(const PlanRequest& request, std::ostream& out);

}  // namespace blis
