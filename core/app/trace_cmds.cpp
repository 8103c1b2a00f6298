// `blis replay` and `blis calibrate`: BLIS HEAD's commands and flags; what
// they do is the core's (blis/trace.hpp).
#include "app/commands.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>
#include <blis/trace.hpp>

#include <algorithm>
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

  add_observe(app);

  calibrate_ = app.add_subcommand(
      "calibrate", "Compare a trace's observed latencies with a replay's (blis replay --results-path): per-request "
                   "TTFT, E2E and ITL errors, MAPE, Pearson r, percentiles; BLIS HEAD's report. With --fit: fit the "
                   "latency model's coefficients or the KV block count to the trace and write a scenario");
  calibrate_->add_option("--trace-header", cal_header_, "TraceV2 header YAML file (observed)")
      ->required()->type_name("FILE");
  calibrate_->add_option("--trace-data", cal_data_, "TraceV2 data CSV file (observed)")->required()->type_name("FILE");
  calibrate_->add_option("--sim-results", cal_sim_,
                         "SimResult JSON of blis replay --results-path (required without --fit)")
      ->type_name("FILE");
  calibrate_->add_option("--report", cal_report_, "Write the calibration report (JSON) to this file (required "
                                                  "without --fit)")
      ->type_name("FILE");
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
  const char* fg = "Fit";
  calibrate_->add_option("--fit", fit_kind_,
                         "Fit to the trace instead of comparing: blackbox or trained-physics (the latency model's "
                         "coefficients) or kv-blocks (the KV block count), by replaying the trace in-process; "
                         "the run settings below say what is replayed (docs/calibration.md)")
      ->type_name("KIND")->group(fg);
  calibrate_->add_option("--fit-output", fit_output_,
                         "With --fit: write the fitted model as a TOML scenario blis run takes")
      ->type_name("FILE")->group(fg);
  calibrate_->add_option("--format", fit_format_, "With --fit: table or json")->capture_default_str()->group(fg);
  calibrate_->add_option("--fit-max-evals", fit_max_evals_,
                         "With --fit: most simulations the optimiser runs (at least 10)")
      ->capture_default_str()->group(fg);
  fit_options_ = add_run_flags(*calibrate_, {"results_path", "session_mode", "workload_spec", "workload_trace",
                                             "workload_traces_filepath", "concurrency", "think_time_ms", "scenario",
                                             "jobs", "rows_csv", "rows_json", "shard", "resume", "report", "format",
                                             "trace_output", "timeseries"});
}

// BLIS HEAD's observe flags; the workload ones are `blis run`'s settings.
void TraceCommands::add_observe(CLI::App& app) {
  observe_ = app.add_subcommand(
      "observe", "Send a workload to a real OpenAI-compatible server (vLLM, blis serve, ...) at its arrival times, "
                 "time every request as the client sees it, and write a TraceV2 for blis replay and blis "
                 "calibrate (BLIS HEAD's command)");
  ObserveRequest& r = observe_req_;
  const char* g = "Observe";
  observe_->add_option("--server-url", r.server_url, "Inference server URL, http://HOST[:PORT][/PATH] (required)")
      ->group(g);
  observe_->add_option("--model", r.model, "Model name for the API requests, as the server serves it (required)")
      ->group(g);
  observe_->add_option("--trace-header", r.trace_header, "Output path for the TraceV2 header YAML (required)")
      ->type_name("FILE")->group(g);
  observe_->add_option("--trace-data", r.trace_data, "Output path for the TraceV2 data CSV (required)")
      ->type_name("FILE")->group(g);
  observe_->add_option("--api-key", r.api_key, "Bearer token for server authentication")->group(g);
  observe_->add_option("--server-type", r.server_type, "Server type recorded in the trace header (vllm, tgi, ...)")
      ->capture_default_str()->group(g);
  observe_->add_option("--api-format", r.api_format,
                       "completions (/v1/completions) or chat (/v1/chat/completions)")
      ->capture_default_str()->group(g);
  observe_->add_option("--max-concurrency", r.max_concurrency,
                       "Most requests in flight at once (default 256; with --concurrency, its user count)")
      ->group(g);
  observe_->add_option("--warmup-requests", r.warmup_requests,
                       "Leave the first N requests sent out of the trace (recorded in its header)")
      ->capture_default_str()->group(g);
  observe_->add_flag("--no-streaming", r.no_streaming, "Never stream (the first chunk is then the whole answer)")
      ->group(g);
  observe_->add_flag("--record-itl", r.record_itl,
                     "Stream every request and record each chunk's time for ITL calibration (--itl-output)")
      ->group(g);
  observe_->add_option("--itl-output", r.itl_output,
                       "Output path for the ITL CSV (default: <trace-data without .csv>.itl.csv with --record-itl)")
      ->type_name("FILE")->group(g);
  observe_->add_option("--rtt-ms", r.rtt_ms, "Measured network round trip (ms), recorded in the trace header")
      ->capture_default_str()->group(g);
  observe_->add_option("--timeout", r.timeout_s, "HTTP timeout per request, seconds (1 to 86400)")
      ->capture_default_str()->group(g);
  observe_->add_flag("--unconstrained-output", r.unconstrained_output,
                     "Let the server choose output lengths: no min_tokens, and no max_tokens (chat) or the "
                     "largest (completions)")
      ->group(g);
  observe_->add_option("--time-scale", r.time_scale,
                       "blis's: the server runs this many times faster than real time (blis serve --time-scale): "
                       "requests go out that much sooner and every recorded time is scaled back")
      ->capture_default_str()->group(g);
  observe_->add_option("--prewarm-duration", r.prewarm_duration,
                       "Before the workload, this long (a duration: 60s, 500ms; server time under --time-scale) of "
                       "small fixed requests (256 words, at most 64 tokens, 4 at a time) to warm the server; not "
                       "recorded. 0 = none")
      ->type_name("DURATION")->group(g);
  observe_->add_flag("--scrape-kv-metrics", r.scrape_kv_metrics,
                     "Read the server's Prometheus /metrics before and after the workload and record the KV-cache "
                     "hit rate over it (vllm:kv_offload_tiering_* counters, else the prefix-cache ones) in the "
                     "trace header's observed_kv_metrics; a failed scrape warns and leaves the block out")
      ->group(g);
  observe_->add_option("--kv-metrics-url", r.kv_metrics_url,
                       "The metrics page to scrape, http://HOST[:PORT]/PATH (default: <server-url>/metrics); "
                       "with --scrape-kv-metrics")
      ->type_name("URL")->group(g);
  observe_->add_option("--vllm-commit", r.vllm_commit,
                       "The vLLM commit the server runs, recorded in observed_kv_metrics; with --scrape-kv-metrics")
      ->type_name("SHA")->group(g);
  observe_->add_option("--think-time-dist", r.think_time_dist,
                       "Think time of the --concurrency users drawn per request: lognormal:mu=M,sigma=S[,min=T]"
                       "[,max=T] (mu, sigma in log-space of seconds) or constant:value=T (T: 500ms, 3s, 250us; "
                       "bare: ms); not with --think-time-ms")
      ->type_name("SPEC")->group(g);
  observe_->add_flag("--lazy-generation", r.lazy_generation,
                     "Accepted for HEAD's command lines; blis always draws the workload as it is sent")
      ->group(g);
  static const std::vector<std::string> kWorkloadKeys = {"workload_spec",
                                                         "workload",
                                                         "defaults_filepath",
                                                         "rate",
                                                         "num_requests",
                                                         "horizon",
                                                         "seed",
                                                         "concurrency",
                                                         "think_time_ms",
                                                         "prompt_tokens",
                                                         "prompt_tokens_stdev",
                                                         "prompt_tokens_min",
                                                         "prompt_tokens_max",
                                                         "output_tokens",
                                                         "output_tokens_stdev",
                                                         "output_tokens_min",
                                                         "output_tokens_max",
                                                         "prefix_tokens",
                                                         "slo_ttft",
                                                         "slo_itl",
                                                         "slo_e2e",
                                                         "detectors",
                                                         "saturation_config",
                                                         "saturation_report",
                                                         "saturation_final_window",
                                                         "log"};
  std::vector<std::string> skip;
  for (const SettingDef& def : setting_table())
    if (std::find(kWorkloadKeys.begin(), kWorkloadKeys.end(), def.key) == kWorkloadKeys.end()) skip.push_back(def.key);
  observe_options_ = add_run_flags(*observe_, skip);
  // What differs from blis run's meaning of the same settings.
  observe_options_.at("num_requests")
      ->description("Number of requests to send; no default here: give it or --horizon (a workload spec has its own)");
  observe_options_.at("detectors")
      ->description("Print the labels of these saturation detectors over the observed requests in the metrics, "
                    "\"saturation\": composite, threshold, backlog-drift (comma list) or all");
  for (const auto& [k, what] : {std::pair{"slo_ttft", "TTFT"}, {"slo_itl", "Mean-ITL"}, {"slo_e2e", "E2E"}})
    observe_options_.at(k)->description(std::string(what) +
                                        " targets per SLO class, class=duration,... (100ms, 1.5s): written into the "
                                        "trace header's goodput_slo_targets, which replay and calibrate read");
}

// blis calibrate --fit: the fit's request from its flags and the run settings.
void TraceCommands::fit() {
  FitRequest req;
  for (const auto& [key, values] : given_run_flags(fit_options_)) {
    const std::string flag = find_setting(key)->flag();
    for (const auto& v : values) req.command_line.push_back(Setting{key, v, flag});
  }
  for (const char* f : {"--sim-results", "--report", "--itl-data", "--network-bandwidth-mbps", "--ttft-mape-threshold"})
    if (calibrate_->count(f)) throw InputError(f, "compares a replay's results; --fit replays the trace itself");
  req.trace_header = cal_header_;
  req.trace_data = cal_data_;
  req.kind = fit_kind_;
  req.output = fit_output_;
  req.format = fit_format_;
  req.warmup_requests = cal_warmup_;
  req.network_rtt_us = cal_rtt_;
  req.max_evaluations = fit_max_evals_;
  blis::calibrate_fit(req, std::cout);
}

// blis calibrate: HEAD's comparison; the fit's flags are refused.
void TraceCommands::compare() {
  for (const char* f : {"--fit-output", "--format", "--fit-max-evals"})
    if (calibrate_->count(f)) throw InputError(f, "applies with --fit");
  if (!given_run_flags(fit_options_).empty())
    throw InputError(find_setting(given_run_flags(fit_options_).front().first)->flag(),
                     "a run setting applies with --fit (the comparison reads --sim-results)");
  if (cal_sim_.empty()) throw InputError("--sim-results", "is required (or --fit)");
  if (cal_report_.empty()) throw InputError("--report", "is required (or --fit)");
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
}

std::optional<int> TraceCommands::execute() {
  if (observe_->parsed()) {
    ObserveRequest req = observe_req_;
    for (const auto& [key, values] : given_run_flags(observe_options_)) {
      const std::string flag = find_setting(key)->flag();
      for (const auto& v : values) req.workload.push_back(Setting{key, v, flag});
    }
    if (const auto it = observe_options_.find("workload_spec"); it != observe_options_.end() && it->second->count())
      req.workload_label = it->second->as<std::string>();
    else if (const auto w = observe_options_.find("workload"); w != observe_options_.end() && w->second->count())
      req.workload_label = "preset:" + w->second->as<std::string>();
    blis::observe(req, std::cout);
    return 0;
  }
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
    if (calibrate_->count("--fit")) fit();
    else compare();
    return 0;
  }
  return std::nullopt;
}

}  // namespace blis::app
