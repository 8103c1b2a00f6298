// One simulation of a RunConfig, as a value: the report `blis run` prints and
// the cluster's metrics for the rows of sweeps. Safe to call from several
// threads at once: each call opens its own RunContext (registries, Lua VM,
// data), plugins and simulation.
#pragma once

#include "metrics/report.hpp"
#include "metrics/saturation.hpp"
#include "metrics/steady_state.hpp"
#include "metrics/steady_window.hpp"
#include "report/report.hpp"
#include "workload/trace_v2.hpp"

#include <blis/run_config.hpp>

#include <optional>
#include <string>
#include <vector>

namespace blis {

struct RunOutcome {
  std::string report;                // what `blis run` prints on stdout
  std::string results_json;          // the --results-path file, "" without one
  std::string timeseries_csv;        // the --timeseries file, "" without one
  std::string saturation_report;     // the --saturation-report file, "" without one
  std::string trace_yaml, trace_csv; // --trace-output's files (run/trace_output.hpp), "" without it
  std::string sim_results_json;      // blis replay --results-path (HEAD's SimResults), "" without it
  std::vector<workload::SimResult> sim_results;  // a replay's SimResults, by request id (blis calibrate --fit)
  std::vector<MetricField> metrics;  // the cluster's metrics, then rejected_requests
                                     // (and fitness_score with --fitness-weights)
  std::string profile;               // the --profile line, "" without --profile
  SteadyState steady;                // the steady-state verdict
  SaturationVerdict saturation;      // the saturation detectors' labels (spec head §3)
  TimedSamples timed;                // with outputs.keep_timed_samples (metrics/steady_window.hpp)
  LatencyCdf cdf;                    // with outputs.keep_distributions or --report
  std::optional<RunReport> run_report;  // with --report
  // With --flow-control, the requests the gateway lost: refused by a full
  // queue, shed, expired past --request-ttl, evicted in flight (blis plan
  // counts them as misses).
  struct GatewayLost {
    int64_t rejected = 0, shed = 0, expired = 0, evicted = 0;
  } gateway_lost;
};

// Resolves `config` (blis/resolve.hpp), then simulates. Throws blis::Error on
// bad configuration or a failing plugin or script.
RunOutcome simulate(const RunConfig& config);

// The fully resolved configuration as a TOML scenario that reproduces the run.
std::string dump_config(const RunConfig& config);

}  // namespace blis
