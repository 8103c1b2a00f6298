// `blis observe`, `blis replay` and `blis calibrate` as the core offers them to a front end
// (docs/cli.md "Traces"): BLIS HEAD's commands over its TraceV2 format.
#pragma once

#include <blis/scenario.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace blis {

// A TraceV2's exact request sequence through the simulator, with any run
// settings; prints what `blis run` prints for them.
struct ReplayRequest {
  Settings command_line;            // run settings, as `blis run` takes them
  std::string trace_header;         // --trace-header
  std::string trace_data;           // --trace-data
  std::optional<std::string> results_path;  // --results-path: HEAD's per-request SimResult JSON
};
void replay(const ReplayRequest& request, std::ostream& out);

// HEAD's comparison report of observed (the trace) against simulated (a
// replay's SimResults) latencies, written to `report`; its summary on stderr.
struct CalibrateRequest {
  std::string trace_header, trace_data;
  std::string sim_results;
  std::string report;
  int64_t warmup_requests = -1;   // -1: the header's warm_up_requests
  int64_t network_rtt_us = -1;    // -1: the header's network.measured_rtt_ms
  double network_bandwidth_mbps = 0;
  std::string itl_data;
  double ttft_mape_threshold = 0.15;
};
void calibrate(const CalibrateRequest& request);

// `blis calibrate --fit`: fits the latency model's coefficients (blackbox,
// trained-physics) or the KV block count to the observed trace by replaying
// it in-process with candidate values (docs/calibration.md "Fit"); prints the
// fit (a table, or JSON with --format json) on `out`, and writes the fitted
// model as a scenario `blis run` takes to `output` when given.
struct FitRequest {
  Settings command_line;            // run settings of the replay, as `blis replay` takes them
  std::string trace_header, trace_data;
  std::string kind;                 // blackbox, trained-physics, kv-blocks
  std::string output;               // --fit-output, "" = none
  std::string format = "table";     // table or json
  int64_t warmup_requests = -1;     // -1: the header's warm_up_requests
  int64_t network_rtt_us = -1;      // -1: the header's network.measured_rtt_ms
  int64_t max_evaluations = 1000;    // --fit-max-evals: simulations the optimiser may run
};
void calibrate_fit(const FitRequest& request, std::ostream& out);

// BLIS HEAD's `blis observe`: the workload sent to a real OpenAI-compatible
// server, timed per request, written as a TraceV2 (mode real); HEAD's
// metrics summary on `out`.
struct ObserveRequest {
  Settings workload;  // workload settings as `blis run` takes them (rate, workload, spec, lengths, seed, slo_*)
  std::string server_url, model;
  std::string trace_header, trace_data;
  std::string api_key;
  std::string server_type = "vllm";
  std::string api_format = "completions";
  std::optional<int> max_concurrency;  // 256, or --concurrency's users
  int64_t warmup_requests = 0;
  bool no_streaming = false;
  bool record_itl = false;
  std::string itl_output;  // default: <trace-data without .csv>.itl.csv
  double rtt_ms = 0;
  int timeout_s = 300;
  bool unconstrained_output = false;
  double time_scale = 1;  // blis's: the server runs this many times faster than real (blis serve --time-scale)
  std::string workload_label;  // the header's workload_spec: the spec's path or "preset:NAME"
  std::string prewarm_duration;  // HEAD's --prewarm-duration, a duration ("60s"); empty or 0: none
  std::string think_time_dist;   // HEAD's --think-time-dist (with --concurrency); empty: none
  bool scrape_kv_metrics = false;
  std::string kv_metrics_url;    // default: the server's /metrics
  std::string vllm_commit;       // recorded in observed_kv_metrics
  bool lazy_generation = false;  // HEAD's --lazy-generation: accepted; blis always generates lazily
};
void observe(const ObserveRequest& request, std::ostream& out);

}  // namespace blis
