// `blis replay` and `blis calibrate`: BLIS HEAD's commands and flags; what
// they do is the core's (blis/trace.hpp).
#include "app/commands.hpp"

#include <blis/settings.hpp>
#include <blis/trace.hpp>

#include <iostream>

namespace blis::app {

TraceCommands::TraceCommands(CLI::App& app) {
  replay_ = app.add_subcommand(
      "replay", "Run a TraceV2's exact request sequence (BLIS HEAD's trace: header YAML + data CSV) through the "
                "simulator with any run settings, and print the metrics `blis run` prints");
  replay_->add_option("--trace-header", header_, "TraceV2 header YAML file")
      ->required()->type_name("FILE")->group("Replay");
  replay_->add_option("--trace-data", data_, "TraceV2 data CSV file")->required()->type_name("FILE")->group("Replay");
  replay_->add_option("--results-path", results_path_,
                      "Also write one SimResult per completed request (JSON: request_id, ttft_us, e2e_us, "
                      "input_tokens, output_tokens, slo_class, model, itl_mean_us), what blis calibrate reads")
      ->type_name("FILE")->group("Replay");
  replay_->add_option("--metrics-path", metrics_path_,
                      "Also write the metrics and one record per request to this JSON file (blis run's "
                      "--results-path)")
      ->type_name("FILE")->group("Replay");
  replay_->add_option("--session-mode", session_mode_,
                      "fixed: every request at its trace time (closed-loop session replay is not supported)")
      ->check(CLI::IsMember({"fixed"}))->capture_default_str()->group("Replay");
  replay_options_ = add_run_flags(*replay_, {"results_path", "session_mode", "workload_spec", "workload_trace",
                                             "workload_traces_filepath", "concurrency", "think_time_ms", "scenario",
                                             "jobs", "rows_csv", "rows_json", "shard", "resume"});

  calibrate_ = app.add_subcommand(
      "calibrate", "Compare a trace's observed latencies with a replay's (blis replay --results-path): per-request "
                   "TTFT, E2E and ITL errors, MAPE, Pearson r, percentiles; BLIS HEAD's report");
  calibrate_->add_option("--trace-header", cal_header_, "TraceV2 header YAML file (observed)")
      ->required()->type_name("FILE");
  calibrate_->add_option("--trace-data", cal_data_, "TraceV2 data CSV file (observed)")->required()->type_name("FILE");
  calibrate_->add_option("--sim-results", cal_sim_, "SimResult JSON of blis replay --results-path")
      ->required()->type_name("FILE");
  calibrate_->add_option("--report", cal_report_, "Write the calibration report (JSON) to this file")
      ->required()->type_name("FILE");
  calibrate_->add_option("--warmup-requests", cal_warmup_,
                         "Leave out requests with ids below this (default: the header's warm_up_requests; "
                         "0 keeps all)")
      ->type_name("N");
  calibrate_->add_option("--network-rtt-us", cal_rtt_,
                         "Network round trip (µs) added to the simulated TTFT and E2E (default: the header's "
                         "network.measured_rtt_ms)")
      ->type_name("US");
  calibrate_->add_option("--network-bandwidth-mbps", cal_bandwidth_,
                         "Network bandwidth (Mbit/s): adds the upload (4 bytes per input token) to TTFT and the "
                         "download to E2E; 0 = none")
      ->capture_default_str();
  calibrate_->add_option("--itl-data", cal_itl_,
                         "ITL CSV (request_id,chunk_index,timestamp_us, as blis observe --record-itl writes): "
                         "adds the ITL comparison")
      ->type_name("FILE");
  calibrate_->add_option("--ttft-mape-threshold", cal_ttft_threshold_,
                         "TTFT MAPE (a fraction) below which the report's ttft_tolerance says within")
      ->capture_default_str();
}

std::optional<int> TraceCommands::execute() {
  if (replay_->parsed()) {
    ReplayRequest req;
    for (const auto& [key, values] : given_run_flags(replay_options_)) {
      const std::string flag = find_setting(key)->flag();
      for (const auto& v : values) req.command_line.push_back(Setting{key, v, flag});
    }
    if (replay_->count("--metrics-path")) req.command_line.push_back(Setting{"results_path", metrics_path_, "--metrics-path"});
    req.trace_header = header_;
    req.trace_data = data_;
    if (replay_->count("--results-path")) req.results_path = results_path_;
    blis::replay(req, std::cout);
    return 0;
  }
  if (calibrate_->parsed()) {
    CalibrateRequest req;
    req.trace_header = cal_header_;
    req.trace_data = cal_data_;
    req.sim_results = cal_sim_;
    req.report = cal_report_;
    req.warmup_requests = cal_warmup_;
    req.network_rtt_us = cal_rtt_;
    req.network_bandwidth_mbps = cal_bandwidth_;
    req.itl_data = cal_itl_;
    req.ttft_mape_threshold = cal_ttft_threshold_;
    blis::calibrate(req);
    return 0;
  }
  return std::nullopt;
}

}  // namespace blis::app
