#include "run/simulate.hpp"
#include "run/trace_output.hpp"

#include "cluster/cluster.hpp"
#include "run/resolve.hpp"
#include "metrics/fitness.hpp"
#include "util/progress.hpp"
#include "run/dump.hpp"
#include "run/fleet_config.hpp"
#include "run/fleet_report.hpp"
#include "run/gateway_setup.hpp"
#include "run/live.hpp"
#include "run/pd_setup.hpp"
#include "run/pools.hpp"
#include "run/report_writer.hpp"
#include "run/workload_reuse.hpp"
#include "workload/slo_class.hpp"

#include <blis/lua.hpp>
#include <blis/script_lookup.hpp>
#include <blis/settings.hpp>
#include <blis/config_keys.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <ctime>
#include <memory>

namespace blis {
namespace {

// Admission gets the token-bucket settings only when some writer set them;
// a policy that never reads them is told about on stderr.
ConfigTable admission_config(const ResolvedRun& r) {
  ConfigTable base;
  const PolicySettings& p = r.config.policies;
  if (p.token_bucket_capacity) base.set(BLIS_KEY_TOKEN_BUCKET_CAPACITY, *p.token_bucket_capacity);
  if (p.token_bucket_refill_rate) base.set(BLIS_KEY_TOKEN_BUCKET_REFILL_RATE, *p.token_bucket_refill_rate);
  if (p.slo_priorities) {
    const workload::SloPriorities s = slo_priorities(r.config);
    auto put = [&](const char* key, int slo) { base.set(key, int64_t{s.of[static_cast<size_t>(slo)]}); };
    put(BLIS_KEY_SLO_PRIORITY_CRITICAL, BLIS_SLO_CRITICAL);
    put(BLIS_KEY_SLO_PRIORITY_STANDARD, BLIS_SLO_STANDARD);
    put(BLIS_KEY_SLO_PRIORITY_BATCH, BLIS_SLO_BATCH);
    put(BLIS_KEY_SLO_PRIORITY_SHEDDABLE, BLIS_SLO_SHEDDABLE);
    put(BLIS_KEY_SLO_PRIORITY_BACKGROUND, BLIS_SLO_BACKGROUND);
  }
  return r.overrides.config_for(*p.admission, base);
}

void warn_unread_settings(const ResolvedRun& r, const ConfigTable& cfg) {
  for (const std::string& key : cfg.unread_keys())
    if (const SettingDef* def = find_setting(key); def != nullptr && r.config.origins.count(key))
      spdlog::warn("{} has no effect with admission policy '{}'", r.config.where(key),
                   *r.config.policies.admission);
}

ClusterPolicies make_policies(const ResolvedRun& r, RunContext& ctx) {
  ClusterPolicies p;
  const ConfigTable admission_cfg = admission_config(r);
  const std::string& admission = *r.config.policies.admission;
  p.admission = ctx.env.registries->admission.create(admission, CreateArgs{&admission_cfg, r.seed});
  p.admission_reads = route_reads(ctx.env.registries->admission.find(admission)->needs);
  r.overrides.warn_unread(admission, admission_cfg);
  warn_unread_settings(r, admission_cfg);
  std::vector<WeightedScorer> weighted;
  ConfigTable scorer_base;
  scorer_base.set(BLIS_KEY_BLOCK_SIZE, r.config.pool().engine.block_size);
  for (const auto& sw : r.scorers) {
    const ConfigTable scorer_cfg = r.overrides.config_for(sw.name, scorer_base);
    weighted.push_back({sw.name, sw.weight,
                        ctx.env.registries->scorers.create(sw.name, CreateArgs{&scorer_cfg, r.seed}),
                        route_reads(ctx.env.registries->scorers.find(sw.name)->needs)});
    r.overrides.warn_unread(sw.name, scorer_cfg);
  }
  p.router = std::make_unique<Router>(r.routing, std::move(weighted), r.seed);
  return p;
}

// Creates the gateway's policy `name` of `registry` with `base` and the
// --plugin-config keys; a setting given that it never reads is told about on
// stderr (`noun` names the policy there).
template <class T>
std::shared_ptr<T> make_gateway_policy(const ResolvedRun& r, const Registry<T>& registry, const std::string& name,
                                       const ConfigTable& base, const char* noun) {
  const ConfigTable cfg = r.overrides.config_for(name, base);
  std::shared_ptr<T> policy = registry.create(name, CreateArgs{&cfg, r.seed});
  r.overrides.warn_unread(name, cfg);
  std::set<std::string> told;
  for (const std::string& key : cfg.unread_keys()) {
    const std::string setting = key.substr(0, key.find('.'));  // slo_target_us.critical: slo_targets
    const std::string origin = setting == "slo_target_us" ? "slo_targets" : setting;
    if (r.config.origins.count(origin) && told.insert(origin).second)
      spdlog::warn("{} has no effect with {} '{}'", r.config.where(origin), noun, name);
  }
  return policy;
}

// The gateway's policies with --flow-control (docs/gateway.md): its
// saturation detector, given the detectors' settings, its dispatch order,
// given --slo-targets, its fairness policy and, with --queue-shedding, its
// shedding policy.
void make_gateway_policies(const ResolvedRun& r, RunContext& ctx, GatewayConfig& g) {
  if (!g.enabled) return;
  const GatewaySettings& s = r.config.gateway;
  ConfigTable detector;
  detector.set(BLIS_KEY_MAX_CONCURRENCY, s.max_concurrency);
  detector.set(BLIS_KEY_QUEUE_DEPTH_THRESHOLD, s.queue_depth_threshold);
  detector.set(BLIS_KEY_KV_CACHE_UTIL_THRESHOLD, s.kv_cache_util_threshold);
  g.detector = make_gateway_policy(r, ctx.env.registries->saturation, r.saturation_detector, detector,
                                   "saturation detector");
  ConfigTable order;
  for (size_t c = 0; c < g.slo_target_us.size(); ++c)
    if (g.slo_target_us[c] > 0)
      order.set(std::string(BLIS_KEY_SLO_TARGET_US_PREFIX) + workload::slo_class_name(static_cast<int32_t>(c)),
                g.slo_target_us[c]);
  g.order = make_gateway_policy(r, ctx.env.registries->dispatch, r.dispatch_order, order, "dispatch order");
  g.fairness = make_gateway_policy(r, ctx.env.registries->fairness, r.fairness_policy, ConfigTable{},
                                   "fairness policy");
  if (!r.shedding_policy.empty())
    g.shedding_policy = make_gateway_policy(r, ctx.env.registries->shedding, r.shedding_policy, ConfigTable{},
                                            "shedding policy");
}

ClusterConfig cluster_config(const ResolvedRun& r) {
  const RunConfig& c = r.config;
  const EngineSettings& e = c.pool().engine;
  ClusterConfig cc;
  cc.num_instances = static_cast<int32_t>(c.pool().instances);
  cc.engine.total_kv_blocks = *e.total_kv_blocks;
  cc.engine.block_size = static_cast<int32_t>(e.block_size);
  cc.engine.max_running = e.max_running;
  cc.engine.max_scheduled_tokens = e.max_scheduled_tokens;
  cc.engine.long_prefill_threshold = e.long_prefill_threshold;
  cc.engine.max_model_len = *c.pool().model.max_model_len;
  cc.engine.order = r.order;
  cc.engine.horizon = r.horizon;
  cc.engine.lora = r.lora;
  // The seed's threshold tier; HEAD's mirror tier is the offload chain (r.offload).
  cc.engine.cpu_tier = CpuTierConfig{e.kv_cpu_model == "mirror" ? 0 : e.kv_cpu_blocks, e.kv_offload_threshold,
                                     e.kv_transfer_bandwidth, e.kv_transfer_base_latency};
  cc.engine.offload = r.offload;
  cc.keep_records = c.outputs.results_path.has_value() || (c.replay && c.replay->sim_results);
  cc.observers.trace_requests = c.outputs.trace_output.has_value();
  cc.head_report = c.outputs.output_form == "head";
  // Priority inversions: the seed counts them when its priorities (ages)
  // vary, HEAD when the scheduler orders by priority (its fix of false
  // positives, #292). HEAD's slo-class priorities are not ages: the seed's
  // form counts none under them, as under constant.
  const bool seed_ages = *c.policies.priority != "constant" && *c.policies.priority != "slo-class";
  cc.keep_completions = cc.head_report ? *c.policies.scheduler == "priority-fcfs" : seed_ages;
  cc.admission_latency = c.policies.admission_latency;
  cc.routing_latency = c.policies.routing_latency;
  cc.snapshot_refresh_interval = c.policies.snapshot_refresh_interval;
  cc.trace_decisions = c.trace.level == "decisions";
  cc.counterfactual_k = c.trace.counterfactual_k;
  cc.observers.slo_targets = r.slo_targets;
  cc.cache_query = r.cache_query;
  cc.cache_signal_delay = c.policies.cache_signal_delay;
  cc.engine.priority_preemption = e.preemption_policy == "priority";
  cc.engine.restart_preemption = e.preemption_mode == "restart";
  cc.keep_series = c.outputs.report.has_value();
  cc.keep_timed_samples = c.outputs.keep_timed_samples;
  // The detectors keep two events per request: only when their labels are
  // printed, drawn, or judge a search's trials (which do not warn).
  cc.judge_saturation = c.outputs.detectors.has_value() || c.outputs.report.has_value() || !c.outputs.warn_unsteady;
  cc.saturation = r.saturation;
  // HEAD's figures to the last bit where they are printed (O(n) per event).
  cc.saturation.exact_sums = cc.head_report && !r.detectors.empty();
  if (c.outputs.saturation_report) cc.saturation_report = r.detectors;
  cc.deadlines = r.deadlines;
  cc.gateway = gateway_config(c);
  cc.tenant_budgets = tenant_budgets(c);
  cc.slo_priorities = slo_priorities(c);
  cc.engine.slo_priorities = cc.slo_priorities;
  cc.tp = static_cast<int32_t>(*c.pool().model.tp);
  if (c.outputs.timeseries) cc.timeseries_interval = c.outputs.timeseries_interval;
  cc.events = c.events;
  return cc;
}

int64_t c_instances(const ResolvedRun& r) { return r.config.pool().instances; }

double metric_of(const std::vector<MetricField>& fields, const std::string& name) {
  for (const MetricField& f : fields)
    if (f.name == name) return f.value;
  return 0;
}

// What a resolved run gives its latency model.
ConfigTable latency_config(const ResolvedRun& r) {
  ConfigTable base;
  const ModelSettings& model = r.config.pool().model;
  // vLLM refuses expert parallelism on a dense model, whatever models its latency.
  if (model.enable_expert_parallel.value_or(false) && r.arch && r.arch->num_experts < 2)
    throw InputError(r.given.where("enable_expert_parallel"),
                     fmt::format("needs a MoE model, and '{}' has no experts (vLLM refuses "
                                 "--enable-expert-parallel on a dense model)",
                                 model.name.value_or("?")));
  put_latency_config(base, r.arch ? &*r.arch : nullptr, r.hardware ? &*r.hardware : nullptr, *model.tp, r.alpha,
                     r.beta, r.config.pool().engine.block_size, model.dp.value_or(1),
                     model.moe_comm_backend.value_or(""), model.enable_expert_parallel.value_or(false));
  return r.overrides.config_for(r.latency_model, base);
}

// Deployment settings only some latency models read: ignoring them silently
// would print numbers for a deployment that was not simulated.
void check_latency_read(const ResolvedRun& r, const ConfigTable& cfg) {
  r.overrides.warn_unread(r.latency_model, cfg);
  const std::vector<std::string> unread = cfg.unread_keys();
  for (const char* key : {BLIS_KEY_DP, BLIS_KEY_MOE_COMM_BACKEND, BLIS_KEY_ENABLE_EXPERT_PARALLEL})
    if (std::find(unread.begin(), unread.end(), key) != unread.end())
      throw InputError(r.given.where(key), fmt::format("the {} latency model does not read '{}'; "
                                                       "leave the setting out, or use a latency model "
                                                       "that models it (blis plugins list)",
                                                       r.latency_model, key));
}

// One latency configuration per pool (the run's own without pools), and
// each instance's pool and engine.
std::vector<const ResolvedRun*> assemble_pools(const RunConfig& config, const ResolvedRun& r,
                                               const std::vector<ResolvedPool>& pools, ClusterConfig& cc) {
  if (pools.empty()) return {&r};
  std::vector<const ResolvedRun*> pool_runs;
  cc.num_instances = 0;
  for (size_t p = 0; p < pools.size(); ++p) {
    const ResolvedRun& pr = pools[p].run;
    EngineConfig e = cluster_config(pr).engine;
    e.slo_priorities = cc.slo_priorities;
    if (e.block_size != cc.engine.block_size)
      throw InputError(config.where("pools"), fmt::format("pool '{}': block size {} differs from the run's {}; "
                                                          "pools share one block size",
                                                          pools[p].name, e.block_size, cc.engine.block_size));
    for (int64_t k = 0; k < pools[p].count; ++k) {
      cc.engines.push_back(e);
      cc.pool_of.push_back(static_cast<int32_t>(p));
    }
    cc.num_instances += static_cast<int32_t>(pools[p].count);
    cc.pool_names.push_back(pools[p].name);
    cc.pool_tp.push_back(static_cast<int32_t>(*pr.config.pool().model.tp));
    pool_runs.push_back(&pr);
  }
  if (cc.num_instances > 100000) throw InputError(config.where("pools"), "more than 100000 instances in all");
  return pool_runs;
}

// A scaling rule of the user's: an autoscaler plugin or Lua script, given
// `cfg` (which outlives it).
void make_autoscaler(const RunConfig& config, RunContext& ctx, const ResolvedRun& r, ClusterConfig& cc,
                     ConfigTable& cfg) {
  const std::string& name = cc.fleet.autoscaler.policy;
  if (name.empty()) return;
  const auto dirs = script_search_dirs(config.script_dirs, ctx.env.script_dir);
  const auto found = resolve_plugin_name(*ctx.env.registries, *ctx.vm, PluginKind::Autoscaler, name, dirs);
  if (!found)
    throw InputError(config.where("autoscaler"),
                     fmt::format("unknown autoscaler '{}'; valid: {}", name,
                                 available_plugin_names(*ctx.env.registries, *ctx.vm, PluginKind::Autoscaler, dirs)));
  cfg = r.overrides.config_for(*found, ConfigTable{});
  cc.fleet.autoscaler.rule = ctx.env.registries->autoscalers.create(*found, CreateArgs{&cfg, r.seed});
}

// Instances added and removed at run time: the fleet, its reserve slots and
// its autoscaler (configured with `autoscaler_cfg`); returns what the pools
// block says of each pool.
std::vector<PoolLine> setup_fleet(const RunConfig& config, RunContext& ctx, const ResolvedRun& r,
                                  const std::vector<ResolvedPool>& pools, ClusterConfig& cc,
                                  ConfigTable& autoscaler_cfg) {
  std::vector<PoolLine> pool_lines;
  std::vector<FleetPool> fp;
  std::vector<EngineConfig> engines;
  if (pools.empty()) {
    const ModelSettings& m = r.config.pool().model;
    fp.push_back(FleetPool{cc.pool_name, m.name.value_or("?"), static_cast<int32_t>(*m.tp), cc.num_instances, 0, {}, "",
                           m.hardware.value_or("")});
    pool_lines.push_back(PoolLine{cc.pool_name, m.name.value_or("?"), m.hardware.value_or("?"), r.latency_model,
                                  cc.num_instances, static_cast<int32_t>(*m.tp), 0});
  }
  for (const ResolvedPool& p : pools) {
    const ModelSettings& m = p.run.config.pool().model;
    fp.push_back(FleetPool{p.name, m.name.value_or("?"), static_cast<int32_t>(*m.tp), p.count, p.cost_per_hour,
                           p.lifecycle, p.lifecycle_text, m.hardware.value_or("")});
    engines.push_back(cluster_config(p.run).engine);
    pool_lines.push_back(PoolLine{p.name, m.name.value_or("?"), m.hardware.value_or("?"), p.run.latency_model, p.count,
                                  static_cast<int32_t>(*m.tp), p.cost_per_hour});
  }
  configure_fleet(config, fp, engines, r.seed, cc);
  make_autoscaler(config, ctx, r, cc, autoscaler_cfg);
  return pool_lines;
}

// Without a fleet, a pool's lifecycle keys would be ignored.
void check_no_lifecycle(const RunConfig& config, const std::vector<ResolvedPool>& pools) {
  for (const ResolvedPool& p : pools)
    if (!p.lifecycle_text.empty())
      throw InputError(config.where("pools"), fmt::format("pool '{}': lifecycle keys ({}) need add events or "
                                                          "--autoscaler",
                                                          p.name, p.lifecycle_text));
}

// Progress of a long run on stderr, into `progress` (which outlives the
// run); searches and sweeps report their own.
void start_progress(const ResolvedRun& r, ClusterConfig& cc, std::optional<Progress>& progress) {
  if (r.config.outputs.quiet || !r.config.outputs.warn_unsteady || r.request_cap <= 0) return;
  progress.emplace(false, "blis run");
  const auto total = static_cast<size_t>(r.request_cap);
  cc.on_progress = [&progress, total](int64_t arrived, SimTime now) {
    progress->update(static_cast<size_t>(arrived), total,
                     fmt::format("{:.1f} s simulated", static_cast<double>(now) / 1e6));
  };
}

// A Lua scenario's at()/every() callbacks: its own copy of the code per run;
// null without an event script.
std::unique_ptr<ScenarioCode> scenario_code(const RunConfig& config, RunContext& ctx, ClusterConfig& cc) {
  if (cc.pd.enabled() && !cc.fleet.node_pools.empty())
    throw InputError(config.where("node_pools"),
                     "node pools cannot be combined with P/D pools (--prefill-instances, "
                     "...) yet; drop the node pools or the P/D settings");
  if (!config.event_script) return nullptr;
  if (config.pd.configured())
    throw InputError(*config.event_script, "at()/every() callbacks together with P/D pools are not supported yet");
  std::unique_ptr<ScenarioCode> code = make_lua_scenario_code(*ctx.vm, *config.event_script);
  cc.code = code.get();
  return code;
}

// What the cluster simulation needs besides its configuration.
struct SimulationInputs {
  WorkloadSource& workload;
  const std::vector<WorkloadPhase>& phases;
  const std::vector<const ResolvedRun*>& pool_runs;  // each pool's latency model
  const std::vector<ConfigTable>& latency_cfgs;      // and its configuration
};

// The run, and the wall and CPU time it took.
struct TimedResult {
  ClusterResult result;
  double wall = 0, cpu = 0;
};

TimedResult run_cluster(const ClusterConfig& cc, RunContext& ctx, const SimulationInputs& in,
                        ClusterPolicies policies, std::optional<Progress>& progress) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  // The simulation (its request pool, KV caches, batches) goes once it has
  // run: the report's merges and sorts then reuse its memory, and the peak
  // is not the sum of both.
  auto sim = std::make_unique<ClusterSimulation>(cc, in.workload, [&](int32_t i) {
    const size_t p = cc.pool_of.empty() ? 0 : static_cast<size_t>(cc.pool_of[static_cast<size_t>(i)]);
    return ctx.env.registries->latency.create(in.pool_runs[p]->latency_model,
                                              CreateArgs{&in.latency_cfgs[p], in.pool_runs[p]->seed});
  }, std::move(policies));
  for (size_t p = 0; p < in.pool_runs.size(); ++p) check_latency_read(*in.pool_runs[p], in.latency_cfgs[p]);
  for (const WorkloadPhase& phase : in.phases) sim->add_workload_phase(phase.at, *phase.source);
  TimedResult out{sim->run()};
  if (progress) progress->finish();
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  out.cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  return out;
}

// The verdicts and heavy rejection, on stderr.
void warn_outcome(const ResolvedRun& r, const ClusterResult& result, const InstanceMetrics& cluster) {
  const bool unsteady = result.steady.verdict == Verdict::Saturated || result.steady.verdict == Verdict::NotSteady;
  if (unsteady && r.config.outputs.warn_unsteady)
    spdlog::warn("{}", result.steady.advice());
  else if (result.saturation.saturated() && r.config.outputs.warn_unsteady)
    spdlog::warn("the backlog-drift saturation detector calls the run overloaded: the requests in the system "
                 "kept growing while traffic lasted (by more than 5 % of the arrivals), so its percentiles "
                 "describe a queue that builds up. Give more instances (or a lower rate), or run longer to see "
                 "whether it settles");
  else if (result.steady.verdict == Verdict::TooShort && r.config.outputs.warn_unsteady)
    spdlog::warn("{}", result.steady.advice());
  // Admission that turns away much of the traffic is easy to miss in the
  // report (issue 32): say so on stderr. All-rejected runs got their warning.
  const int64_t arrived = injected_requests(cluster) + result.rejected + result.in_pipeline;
  if (r.config.outputs.warn_unsteady && cluster.completed > 0 && result.rejected * 10 >= arrived)
    spdlog::warn("the admission policy {} rejected {} of the {} requests that arrived ({:.0f} %); they are "
                 "counted in rejected_requests, not in the latencies",
                 r.config.policies.admission.value_or("?"), result.rejected, arrived,
                 100.0 * static_cast<double>(result.rejected) / static_cast<double>(arrived));
}

// The instances of the run: with a fleet, the slots some instance used
// (reserve slots never filled would dilute the per-instance averages).
std::vector<const InstanceMetrics*> used_instances(const ClusterResult& result, bool fleet) {
  std::vector<uint8_t> used(result.instances.size(), fleet ? 0 : 1);
  for (const InstanceSpan& s : result.spans) used[static_cast<size_t>(s.instance)] = 1;
  std::vector<const InstanceMetrics*> parts;
  for (size_t i = 0; i < result.instances.size(); ++i)
    if (used[i]) parts.push_back(&result.instances[i]);
  return parts;
}

// The parts of the report (metrics/observer.hpp), in their order in every
// format: the verdict, the detectors' labels, the observers of
// cluster/request_signals.hpp, the decision trace, the scenario events, the
// fleet or the pools, P/D.
ReportParts report_parts(const ResolvedRun& r, const ClusterConfig& cc, const ClusterResult& result,
                         const std::vector<ResolvedPool>& pools, std::vector<PoolLine> pool_lines, bool fleet) {
  ReportParts parts;
  parts.add(std::make_unique<SteadyStateReport>(result.steady));
  parts.add(std::make_unique<SaturationLabels>(result.saturation, r.detectors, cc.head_report));
  for (const auto& observer : result.observers) parts.add(*observer);
  if (cc.trace_decisions) parts.add(std::make_unique<TraceReport>(result.trace, result.event_log, r.config.trace.summarize));
  if (!cc.events.empty() || cc.code) parts.add(std::make_unique<ScenarioEventsReport>(result));
  if (fleet)
    parts.add(std::make_unique<FleetReport>(std::move(pool_lines), cc, result));
  else if (!pools.empty())
    parts.add(std::make_unique<PoolsReport>(pools, result));
  if (result.pd) parts.add(*result.pd);
  return parts;
}

// --report: the pages' title, summary, distributions and series.
RunReport run_report(const ResolvedRun& r, const ClusterConfig& cc, const ClusterResult& result,
                     const InstanceMetrics& cluster, const RunOutcome& outcome) {
  RunReport rr;
  rr.title = fmt::format("blis run: {} instance(s) of {} on {} (TP {})", c_instances(r), *r.config.pool().model.name,
                         r.config.pool().model.hardware.value_or("?"), *r.config.pool().model.tp);
  rr.summary = fmt::format(
      "{} requests completed at {:.2f} req/s; TTFT p99 {:.2f} ms, ITL p99 {:.2f} ms, E2E p99 {:.2f} ms; "
      "verdict: {}; saturation detectors: {}",
      cluster.completed, metric_of(outcome.metrics, "responses_per_sec"), metric_of(outcome.metrics, "ttft_p99_ms"),
      metric_of(outcome.metrics, "itl_p99_ms"), metric_of(outcome.metrics, "e2e_p99_ms"),
      verdict_name(result.steady.verdict), result.saturation.summary().empty() ? "-" : result.saturation.summary());
  rr.cdf = outcome.cdf;
  rr.series = result.series;
  rr.kv_capacity = static_cast<double>(cc.engine.total_kv_blocks) * static_cast<double>(result.initial_instances);
  return rr;
}

// What the run leaves besides its report: the figures, the verdicts, the
// distributions, the files and the --profile line.
void fill_outcome(const ReportInput& in, TimedResult& run, RunOutcome& outcome) {
  const ResolvedRun& r = in.r;
  const ClusterResult& result = run.result;
  const InstanceMetrics& cluster = in.cluster;
  outcome.steady = result.steady;
  outcome.saturation = result.saturation;
  outcome.timed = std::move(run.result.timed);
  outcome.metrics = run_figures(in);
  if (const auto& g = result.gateway) outcome.gateway_lost = {g->rejected, g->shed, g->expired, g->evicted};
  if (r.config.outputs.keep_distributions || r.config.outputs.report) outcome.cdf = latency_cdf(cluster);
  if (r.config.outputs.report) outcome.run_report = run_report(r, in.cc, result, cluster, outcome);
  if (in.cc.keep_records) outcome.results_json = results_report(in);
  outcome.timeseries_csv = std::move(run.result.timeseries);
  outcome.saturation_report = std::move(run.result.saturation_report);
  if (r.config.outputs.profile)
    outcome.profile = fmt::format("profile: {} events, {} steps, {} requests, wall {:.3f} s, cpu {:.3f} s, "
                                  "{:.0f} events/s; {} of {} batch-member steps handled member by member\n",
                                  result.events, result.steps, injected_requests(cluster), run.wall, run.cpu,
                                  run.wall > 0 ? static_cast<double>(result.events) / run.wall : 0,
                                  result.member_updates, result.member_steps);
}

// The report in the format asked for.
std::string write_report(const ReportInput& in) {
  const std::string& format = in.r.config.outputs.format;
  if (format == "json") return json_report(in);
  if (format == "table") return table_report(in);
  return text_report(in);
}

}  // namespace

namespace {

RunOutcome simulate_run(const RunConfig& given) {
  // P/D pools (spec head §5.1) are pools by role.
  const RunConfig config = with_pd_pools(given);
  RunContext ctx = RunContext::open(config);
  const ResolvedRun r = resolve(config, ctx);
  ClusterConfig cc = cluster_config(r);
  auto workload = reusable_workload(r, cc.events, config.event_script.has_value());
  const std::vector<WorkloadPhase> phases = make_workload_phases(r, cc.events, cc.deadlines);
  const std::vector<ResolvedPool> pools = resolve_pools(config, ctx);
  const std::vector<const ResolvedRun*> pool_runs = assemble_pools(config, r, pools, cc);
  std::vector<PoolLine> pool_lines;
  ConfigTable autoscaler_cfg;
  const bool fleet = wants_fleet(config, cc);
  if (fleet)
    pool_lines = setup_fleet(config, ctx, r, pools, cc, autoscaler_cfg);
  else
    check_no_lifecycle(config, pools);
  std::vector<ConfigTable> latency_cfgs;
  latency_cfgs.reserve(pool_runs.size());
  for (const ResolvedRun* pr : pool_runs) latency_cfgs.push_back(latency_config(*pr));
  spdlog::info("starting: {} instance(s), {} KV blocks, latency model {}, horizon {}", cc.num_instances,
               cc.engine.total_kv_blocks, r.latency_model, r.horizon);
  std::optional<Progress> progress;
  start_progress(r, cc, progress);
  ClusterPolicies policies = make_policies(r, ctx);
  make_gateway_policies(r, ctx, cc.gateway);
  setup_pd(config, pools, r, ctx, cc, policies);
  const std::unique_ptr<ScenarioCode> code = scenario_code(config, ctx, cc);
  TimedResult run = run_cluster(cc, ctx, SimulationInputs{*workload, phases, pool_runs, latency_cfgs},
                                std::move(policies), progress);

  const ClusterResult& result = run.result;
  const std::vector<const InstanceMetrics*> used = used_instances(result, fleet);
  // Requests still before their admission or routing decision at the horizon
  // count as queued at the cluster (conservation).
  const InstanceMetrics cluster = cluster_metrics(result);
  warn_outcome(r, result, cluster);
  std::optional<Fitness> fitness;
  if (!r.fitness_weights.empty()) fitness = evaluate_fitness(cluster, r.fitness_weights);
  const ReportParts parts = report_parts(r, cc, result, pools, std::move(pool_lines), fleet);
  const ReportInput in{r, cc, result, cluster, used, fitness, parts,
                       ReportScope{cluster, result.instances, static_cast<double>(cluster.end_time) / 1e6,
                                   cc.head_report}};
  RunOutcome outcome;
  fill_outcome(in, run, outcome);
  trace_outputs(r, result, cluster, phases.empty() ? workload.get() : nullptr, outcome);
  if (config.outputs.report_text) outcome.report = write_report(in);
  return outcome;
}

}  // namespace

RunOutcome simulate(const RunConfig& given) {
  try {
    return simulate_run(given);
  } catch (const InputError& e) {
    // A check far from the configuration names the flag; the value may have
    // come from a scenario file or a profile set: say so.
    if (auto placed = at_origin(e, given)) throw *placed;
    throw;
  }
}

namespace {

// A latency model with its decode aggregates hidden: every step priced
// member by member, every member handled at every step, every token
// announced (engine/lifecycle.hpp on_token).
class EveryToken final : public LatencyModel {
 public:
  explicit EveryToken(std::unique_ptr<LatencyModel> inner) : inner_(std::move(inner)) {}
  int64_t step_time(const blis_step_batch& b) override { return inner_->step_time(b); }
  int64_t queueing_time(const blis_request_view& r) override { return inner_->queueing_time(r); }
  int64_t output_token_time() override { return inner_->output_token_time(); }
  int64_t post_decode_overhead() override { return inner_->post_decode_overhead(); }

 private:
  std::unique_ptr<LatencyModel> inner_;
};

class NoRequests final : public WorkloadSource {
 public:
  bool next(WorkloadRequest&) override { return false; }
};

}  // namespace

std::unique_ptr<LiveRun> open_live_run(const RunConfig& given, LiveSink& sink) {
  try {
    const RunConfig config = with_pd_pools(given);
    RunContext ctx = RunContext::open(config);
    ResolvedRun resolved = resolve(config, ctx);
    auto live = std::make_unique<LiveRun>(std::move(ctx), std::move(resolved));
    LiveRun& l = *live;
    l.cc = cluster_config(l.r);
    l.cc.engine.horizon = kForever;
    l.cc.deadlines = true;  // a client that leaves cancels its request as a timeout
    l.cc.live = &sink;
    l.pools = resolve_pools(config, l.ctx);
    const std::vector<const ResolvedRun*> pool_runs = assemble_pools(config, l.r, l.pools, l.cc);
    for (EngineConfig& e : l.cc.engines) e.horizon = kForever;
    if (wants_fleet(config, l.cc))
      setup_fleet(config, l.ctx, l.r, l.pools, l.cc, l.autoscaler_cfg);
    else
      check_no_lifecycle(config, l.pools);
    for (const ResolvedRun* pr : pool_runs) l.latency_cfgs.push_back(latency_config(*pr));
    ClusterPolicies policies = make_policies(l.r, l.ctx);
    make_gateway_policies(l.r, l.ctx, l.cc.gateway);
    setup_pd(config, l.pools, l.r, l.ctx, l.cc, policies);
    l.none = std::make_unique<NoRequests>();
    l.sim = std::make_unique<ClusterSimulation>(l.cc, *l.none, [&](int32_t i) -> std::unique_ptr<LatencyModel> {
      const size_t p = l.cc.pool_of.empty() ? 0 : static_cast<size_t>(l.cc.pool_of[static_cast<size_t>(i)]);
      return std::make_unique<EveryToken>(l.ctx.env.registries->latency.create(
          pool_runs[p]->latency_model, CreateArgs{&l.latency_cfgs[p], pool_runs[p]->seed}));
    }, std::move(policies));
    for (size_t p = 0; p < pool_runs.size(); ++p) check_latency_read(*pool_runs[p], l.latency_cfgs[p]);
    return live;
  } catch (const InputError& e) {
    if (auto placed = at_origin(e, given)) throw *placed;
    throw;
  }
}

std::string dump_config(const RunConfig& given) {
  // A record the run would refuse was refused when it was given, so none
  // is written out. The P/D pools' instances are the run's (a dump runs again as it is).
  RunConfig config = given;
  if (config.pd.configured())
    config.pool().instances = config.pd.prefill_instances.value_or(0) + config.pd.decode_instances.value_or(0) +
                              config.pd.prefill_decode_instances.value_or(0) + config.pd.encode_instances.value_or(0);
  RunContext ctx = RunContext::open(config);
  const ResolvedRun r = resolve(config, ctx);
  return dump_toml(r);
}

}  // namespace blis
