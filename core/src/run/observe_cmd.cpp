// `blis observe` (blis/trace.hpp): the workload from the same settings as
// `blis run` (resolve_workload_only), sent by observe/observe.hpp, written
// as a TraceV2 in HEAD's form.
#include "metrics/saturation.hpp"
#include "metrics/session_metrics.hpp"
#include "observe/observe.hpp"
#include "run/resolve.hpp"
#include "util/json_format.hpp"
#include "util/output_file.hpp"
#include "workload/slo_class.hpp"
#include "workload/think_time.hpp"
#include "workload/trace_v2.hpp"

#include <blis/errors.hpp>
#include <blis/run.hpp>
#include <blis/settings.hpp>
#include <blis/trace.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <ctime>
#include <iostream>
#include <map>

namespace blis {

namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void observe_on_signal(int) { g_stop.store(true); }

// The trace's header: HEAD's for an observation.
workload::TraceHeader observation_header(const ObserveRequest& req, const ResolvedRun& r) {
  workload::TraceHeader h;
  h.time_unit = "us";
  h.created_at = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  h.mode = "real";
  h.warm_up_requests = req.warmup_requests;
  h.workload_spec = req.workload_label;
  if (r.spec) h.workload_seed = r.spec->seed;
  h.network = true;
  h.measured_rtt_ms = req.rtt_ms;
  h.server_type = req.server_type;
  h.server_model = req.model;
  for (const auto& [cls, t] : r.slo_targets) {
    const std::string name = workload::slo_class_name(cls);
    h.goodput_slo_targets[name.empty() ? "default" : name] = {t.ttft_ms, t.itl_ms, t.e2e_ms};
  }
  return h;
}

void check_request(const ObserveRequest& req) {
  if (req.server_url.empty()) throw InputError("--server-url", "is required; e.g. --server-url http://localhost:8000");
  if (req.model.empty()) throw InputError("--model", "is required: the model name the server serves");
  if (req.trace_header.empty()) throw InputError("--trace-header", "is required: where to write the trace's header YAML");
  if (req.trace_data.empty()) throw InputError("--trace-data", "is required: where to write the trace's data CSV");
  if (req.record_itl && req.no_streaming)
    throw InputError("--record-itl", "needs streaming responses: not with --no-streaming");
  if (req.api_format != "completions" && req.api_format != "chat")
    throw InputError("--api-format", "must be 'completions' or 'chat', got '" + req.api_format + "'");
  if (!std::isfinite(req.rtt_ms) || req.rtt_ms < 0)
    throw InputError("--rtt-ms", fmt::format("must be a finite value >= 0, got {}", req.rtt_ms));
  if (req.timeout_s <= 0 || req.timeout_s > 86400)
    throw InputError("--timeout", fmt::format("must be between 1 and 86400 seconds (1 day), got {}", req.timeout_s));
  if (req.max_concurrency && *req.max_concurrency < 1)
    throw InputError("--max-concurrency", fmt::format("must be >= 1, got {}", *req.max_concurrency));
  if (!std::isfinite(req.time_scale) || req.time_scale <= 0)
    throw InputError("--time-scale", fmt::format("must be a finite value > 0, got {}", req.time_scale));
  if (req.warmup_requests < 0)
    throw InputError("--warmup-requests", fmt::format("must be >= 0, got {}", req.warmup_requests));
  if (!req.scrape_kv_metrics && (!req.kv_metrics_url.empty() || !req.vllm_commit.empty()))
    spdlog::warn("{} is set but --scrape-kv-metrics is not: nothing is scraped",
                 req.kv_metrics_url.empty() ? "--vllm-commit" : "--kv-metrics-url");
  if (!req.itl_output.empty() && !req.record_itl)
    spdlog::warn("--itl-output is set but --record-itl is not: no ITL data will be written");
}

// --prewarm-duration in µs: a duration with its unit, as HEAD's (Go's) reads it.
int64_t prewarm_us(const std::string& text) {
  if (text.empty()) return 0;
  const std::optional<int64_t> us = duration_text_us(text);
  const bool bare = text.find_first_not_of("0123456789+-. ") == std::string::npos;
  if (!us || (bare && *us != 0))
    throw InputError("--prewarm-duration", "must be a duration with its unit (60s, 500ms, 2m), got '" + text + "'");
  if (*us < 0) throw InputError("--prewarm-duration", "must be >= 0, got '" + text + "'");
  return *us;
}

bool given(const Settings& settings, const std::string& key) {
  return std::any_of(settings.begin(), settings.end(), [&](const Setting& s) { return s.flag == key; });
}

// HEAD's --think-time-dist: with --concurrency, not with --think-time-ms.
std::optional<ThinkTimeDist> think_time_dist(const ObserveRequest& req, const WorkloadSettings& w) {
  if (req.think_time_dist.empty()) return std::nullopt;
  if (given(req.workload, "think_time_ms"))
    throw InputError("--think-time-dist", "cannot be given with --think-time-ms: one think time or the other");
  if (!w.concurrency || *w.concurrency <= 0)
    throw InputError("--think-time-dist", "needs --concurrency (the think time of closed-loop users)");
  return workload::parse_think_time_dist(req.think_time_dist, "--think-time-dist");
}

// HEAD's detectors over an observation: each answered request arrives at its
// arrival time and completes its E2E later.
std::vector<SaturationEvent> saturation_events(const std::vector<workload::TraceRecord>& records) {
  std::vector<SaturationEvent> events;
  for (const workload::TraceRecord& rec : records) {
    const int64_t e2e = rec.last_chunk_time_us - rec.send_time_us;
    if (rec.status != "ok" || e2e <= 0) continue;
    events.push_back({rec.arrival_time_us, false, rec.request_id, 0});
    events.push_back({rec.arrival_time_us + e2e, true, rec.request_id, static_cast<double>(e2e) / 1e3});
  }
  sort_events(events);
  return events;
}

// --detectors' labels as `blis run` prints them ("saturation" of the
// metrics), empty without detectors.
std::string saturation_member(const std::vector<SaturationEvent>& events,
                              const std::vector<std::string>& detectors, const SaturationConfig& cfg) {
  if (detectors.empty()) return "";
  const auto labels = saturation_labels(events, detectors, cfg);
  std::string out;
  for (const std::string& name : detectors)
    if (const auto it = labels.find(name); it != labels.end())
      out += fmt::format("{}\n    {}: {}", out.empty() ? "" : ",", go_string(name), go_string(level_name(it->second)));
  return out.empty() ? "" : ",\n  \"saturation\": {" + out + "\n  }";
}

// HEAD's Session Metrics of an observation, after its metrics when some
// record belongs to a session: a session's rounds are its records; TTFT is
// first chunk minus send, a session lasts from its round 0's send to its last
// chunk ("" without sessions).
std::string session_metrics(const std::vector<workload::TraceRecord>& records) {
  struct Span {
    bool has_round0 = false;
    double round0_send_ms = 0, last_chunk_ms = 0;
  };
  std::map<std::string, Span> sessions;
  std::vector<double> cold, warm;
  for (const workload::TraceRecord& r : records) {
    if (r.session_id.empty()) continue;
    if (r.status == "ok" && r.first_chunk_time_us > 0 && r.send_time_us > 0)
      (r.round_index == 0 ? cold : warm)
          .push_back(static_cast<double>(r.first_chunk_time_us - r.send_time_us) / 1e3);
    Span& s = sessions[r.session_id];
    if (r.round_index == 0 && r.send_time_us > 0)
      s.has_round0 = true, s.round0_send_ms = static_cast<double>(r.send_time_us) / 1e3;
    if (r.last_chunk_time_us > 0)
      s.last_chunk_ms = std::max(s.last_chunk_ms, static_cast<double>(r.last_chunk_time_us) / 1e3);
  }
  if (sessions.empty()) return "";
  std::vector<double> durations;
  for (const auto& [id, s] : sessions)
    if (s.has_round0 && s.last_chunk_ms - s.round0_send_ms > 0)
      durations.push_back(s.last_chunk_ms - s.round0_send_ms);
  return session_block(static_cast<int64_t>(sessions.size()), std::move(cold), std::move(warm),
                       std::move(durations));
}

}  // namespace

void observe(const ObserveRequest& req, std::ostream& out) {
  check_request(req);
  const observation::ServerUrl server = observation::parse_server_url(req.server_url, "--server-url");
  const RunConfig config = build_config({&req.workload});
  set_log_level(config.outputs.log_level);
  const WorkloadSettings& w = config.workload;
  // HEAD's observe has no default request count: a rate or preset workload
  // needs --num-requests or --horizon (a spec brings its own).
  if (!w.spec && !config.workload.num_requests && !config.horizon && !w.concurrency)
    throw InputError("--num-requests", "give --num-requests or --horizon to bound the workload sent to the server");
  if (!w.spec && !w.concurrency && !config.origins.count("rate") && !config.origins.count("workload"))
    throw InputError("--rate", "give a workload: --rate (with the length flags or --workload PRESET), "
                               "--workload-spec FILE, or --concurrency N");
  const std::optional<ThinkTimeDist> think = think_time_dist(req, w);
  const int64_t prewarm = prewarm_us(req.prewarm_duration);
  if (req.scrape_kv_metrics && !req.kv_metrics_url.empty())
    (void)observation::parse_server_url(req.kv_metrics_url, "--kv-metrics-url");
  RunContext ctx = RunContext::open(config);
  ResolvedRun r = resolve_workload_only(config, ctx);
  if (think && r.spec)
    for (ClientSpec& c : r.spec->clients)
      if (c.concurrency > 0) c.think_time_dist = think;
  std::unique_ptr<WorkloadSource> source = make_workload(r);

  const std::string itl_path =
      !req.itl_output.empty() ? req.itl_output
                              : (req.trace_data.size() > 4 && req.trace_data.substr(req.trace_data.size() - 4) == ".csv"
                                     ? req.trace_data.substr(0, req.trace_data.size() - 4)
                                     : req.trace_data) + ".itl.csv";
  check_writable(req.trace_header, "--trace-header");
  check_writable(req.trace_data, "--trace-data");
  if (config.outputs.saturation_report)
    check_writable(*config.outputs.saturation_report, "--saturation-report");
  if (req.record_itl) check_writable(itl_path, "--itl-output");

  observation::Options o;
  o.server = server;
  o.model = req.model;
  o.api_key = req.api_key;
  o.api_format = req.api_format;
  o.max_concurrency = req.max_concurrency.value_or(w.concurrency.value_or(0) > 0 ? static_cast<int>(*w.concurrency) : 256);
  o.warmup_requests = req.warmup_requests;
  o.no_streaming = req.no_streaming;
  o.record_itl = req.record_itl;
  o.unconstrained = req.unconstrained_output;
  o.timeout_s = req.timeout_s;
  o.time_scale = req.time_scale;
  o.block_size = static_cast<int32_t>(r.config.pool().engine.block_size);
  o.seed = static_cast<uint64_t>(r.seed);
  o.prewarm_us = prewarm;
  o.scrape_kv_metrics = req.scrape_kv_metrics;
  o.kv_metrics_url = req.kv_metrics_url;
  o.vllm_commit = req.vllm_commit;
  g_stop.store(false);
  o.stop = &g_stop;
  auto old_int = std::signal(SIGINT, observe_on_signal);
  auto old_term = std::signal(SIGTERM, observe_on_signal);
  observation::Observation obs;
  try {
    obs = observation::run_observation(*source, o);
  } catch (...) {
    std::signal(SIGINT, old_int);
    std::signal(SIGTERM, old_term);
    throw;
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  spdlog::info("observe: {} requests timed in {:.3f} s", obs.records.size(), obs.wall_seconds);

  workload::TraceHeader h = observation_header(req, r);
  h.observed_kv_metrics = obs.kv_metrics;
  write_output(req.trace_header, workload::trace_header_yaml(h), out);
  write_output(req.trace_data, workload::trace_data_csv(h, obs.records), out);
  spdlog::info("Trace exported: {} records to {} / {}", obs.records.size(), req.trace_header, req.trace_data);
  if (req.record_itl) {
    if (obs.itl.empty()) spdlog::warn("--record-itl was set but no chunk was timed");
    write_output(itl_path, observation::itl_csv(obs.itl), out);
    spdlog::info("ITL data exported: {} ({} records)", itl_path, obs.itl.size());
  }
  const std::vector<SaturationEvent> events = saturation_events(obs.records);
  r.saturation.exact_sums =
      true;  // observe prints HEAD's form: the composite's means summed as HEAD sums them
  if (config.outputs.saturation_report) {
    write_output(*config.outputs.saturation_report, saturation_report(events, r.detectors, r.saturation),
                 out);
    spdlog::info("saturation report written to {}", *config.outputs.saturation_report);
  }
  out << observation::observation_metrics(obs, saturation_member(events, r.detectors, r.saturation))
      << session_metrics(obs.records) << std::flush;
}

}  // namespace blis
