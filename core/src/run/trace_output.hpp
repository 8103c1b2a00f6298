// The files a run writes about its requests in BLIS HEAD's formats:
// --trace-output's TraceV2 (workload/trace_v2.hpp) and `blis replay
// --results-path`'s SimResults.
#pragma once

#include "cluster/cluster.hpp"
#include "metrics/collector.hpp"
#include "run/resolve.hpp"
#include "run/simulate.hpp"

namespace blis {

// Fills outcome.trace_yaml/trace_csv (with --trace-output) and
// outcome.sim_results (a replay) and sim_results_json (a replay with --results-path).
// `workload` names the run's clients (WorkloadSource::source_info), or null.
void trace_outputs(const ResolvedRun& r, const ClusterResult& result, const InstanceMetrics& cluster,
                   const WorkloadSource* workload, RunOutcome& outcome);

}  // namespace blis
