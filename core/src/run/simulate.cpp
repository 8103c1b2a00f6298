#include "run/simulate.hpp"

#include "cluster/cluster.hpp"
#include "run/resolve.hpp"
#include "metrics/fitness.hpp"
#include "util/json_format.hpp"
#include "util/text.hpp"
#include "util/progress.hpp"
#include "run/dump.hpp"
#include "run/fleet_config.hpp"
#include "run/pd_setup.hpp"
#include "run/pools.hpp"

#include <blis/lua.hpp>
#include <blis/script_lookup.hpp>
#include <blis/settings.hpp>
#include <blis/config_keys.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
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
  r.overrides.warn_unread(admission, admission_cfg);
  warn_unread_settings(r, admission_cfg);
  std::vector<WeightedScorer> weighted;
  ConfigTable scorer_base;
  scorer_base.set(BLIS_KEY_BLOCK_SIZE, r.config.pool().engine.block_size);
  for (const auto& sw : r.scorers) {
    const ConfigTable scorer_cfg = r.overrides.config_for(sw.name, scorer_base);
    weighted.push_back({sw.name, sw.weight, ctx.env.registries->scorers.create(sw.name, CreateArgs{&scorer_cfg, r.seed})});
    r.overrides.warn_unread(sw.name, scorer_cfg);
  }
  p.router = std::make_unique<Router>(r.routing, std::move(weighted), r.seed);
  return p;
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
  cc.engine.cpu_tier =
      CpuTierConfig{e.kv_cpu_blocks, e.kv_offload_threshold, e.kv_transfer_bandwidth, e.kv_transfer_base_latency};
  cc.keep_records = c.outputs.results_path.has_value();
  cc.head_report = c.outputs.output_form == "head";
  // Priority inversions: the seed counts them when priorities vary, HEAD when
  // the scheduler orders by priority (its fix of false positives, #292).
  cc.keep_completions = cc.head_report ? *c.policies.scheduler == "priority-fcfs" : *c.policies.priority != "constant";
  cc.admission_latency = c.policies.admission_latency;
  cc.routing_latency = c.policies.routing_latency;
  cc.snapshot_refresh_interval = c.policies.snapshot_refresh_interval;
  cc.trace_decisions = c.trace.level == "decisions";
  cc.counterfactual_k = c.trace.counterfactual_k;
  cc.slo_targets = r.slo_targets;
  cc.cache_query = r.cache_query;
  cc.cache_signal_delay = c.policies.cache_signal_delay;
  cc.engine.priority_preemption = e.preemption_policy == "priority";
  cc.engine.restart_preemption = e.preemption_mode == "restart";
  cc.keep_series = c.outputs.report.has_value();
  // The detectors keep two events per request: only when their labels are
  // printed, drawn, or judge a search's trials (which do not warn).
  cc.judge_saturation = c.outputs.detectors.has_value() || c.outputs.report.has_value() || !c.outputs.warn_unsteady;
  cc.deadlines = r.deadlines;
  cc.tp = static_cast<int32_t>(*c.pool().model.tp);
  if (c.outputs.timeseries) cc.timeseries_interval = c.outputs.timeseries_interval;
  for (size_t k = 0; k < c.events.size(); ++k) cc.events.push_back(parse_scenario_event(c.events[k], c.item_where("events", k)));
  if (!c.events.empty()) cc.events_where = c.where("events");
  return cc;
}

// "=== Trace Summary ===" (spec cluster §5.4); instances in string order.
std::string trace_block(const TraceSummary& t, const std::vector<std::string>& events) {
  std::vector<std::pair<std::string, int64_t>> targets;
  for (size_t i = 0; i < t.targets.size(); ++i)
    if (t.targets[i] > 0) targets.emplace_back("instance_" + std::to_string(i), t.targets[i]);
  std::sort(targets.begin(), targets.end());
  std::string out = "=== Trace Summary ===\n";
  out += fmt::format("Total Decisions: {}\n  Admitted: {}\n  Rejected: {}\n", t.admitted + t.rejected, t.admitted,
                     t.rejected);
  out += fmt::format("Unique Targets: {}\n", targets.size());
  if (t.routings > 0) {
    out += "Target Distribution:\n";
    for (const auto& [id, n] : targets) out += fmt::format("  {}: {}\n", id, n);
  }
  const double mean = t.routings > 0 ? t.regret_sum / static_cast<double>(t.routings) : 0;
  out += fmt::format("Mean Regret: {:.6f}\nMax Regret: {:.6f}\n", mean, t.regret_max);
  if (!events.empty()) {  // scenario events are decisions too
    out += fmt::format("Scenario Events: {}\n", events.size());
    for (const std::string& e : events) out += "  " + e + "\n";
  }
  return out;
}

// "=== Scenario Events ===": printed only when the run has events.
std::string events_block(const ClusterResult& result, const InstanceMetrics& cluster) {
  std::string out = "=== Scenario Events ===\n";
  for (const std::string& line : result.event_log) out += line + "\n";
  out += fmt::format("Events Applied: {}\nRerouted Requests: {}\nFailed Requests: {}\n", result.event_log.size(),
                     result.rerouted, cluster.failed);
  return out;
}

int64_t c_instances(const ResolvedRun& r) { return r.config.pool().instances; }

double metric_of(const std::vector<MetricField>& fields, const std::string& name) {
  for (const MetricField& f : fields)
    if (f.name == name) return f.value;
  return 0;
}

double runtime_seconds(const InstanceMetrics& cluster) {
  for (const MetricField& f : metrics_fields(cluster))
    if (f.name == "vllm_estimated_duration_s") return f.value;
  return 0;
}

// The cluster's metrics block, with the goodput keys when targets are set.
// With `medians`, the p50s too (not in the reference's format).
std::string cluster_block(const InstanceMetrics& cluster, const ClusterResult& result,
                          const std::vector<std::string>& detectors, bool medians = false) {
  std::string block = metrics_json(cluster, "cluster", false);
  std::string extra;
  // spec head §3.4: the selected detectors' labels, before the goodput keys.
  std::string labels;
  for (const std::string& name : detectors)
    if (auto it = result.saturation.labels.find(name); it != result.saturation.labels.end())
      labels += fmt::format("{}\n    {}: {}", labels.empty() ? "" : ",", go_string(name), go_string(level_name(it->second)));
  if (!labels.empty()) extra += ",\n  \"saturation\": {" + labels + "\n  }";
  if (medians)
    for (const MetricField& f : median_fields(cluster)) extra += ",\n  " + go_string(f.name) + ": " + metric_text(f);
  if (result.goodput.enabled()) extra += goodput_json(result.goodput, runtime_seconds(cluster));
  if (extra.empty()) return block;
  const auto close = block.rfind("\n}");
  return block.substr(0, close) + extra + block.substr(close);
}

// A JSON object printed at column 0, nested `depth` levels deep.
std::string nested(const std::string& object, int depth) {
  std::string out;
  const std::string pad(static_cast<size_t>(2 * depth), ' ');
  for (size_t i = 0; i < object.size(); ++i) {
    out += object[i];
    if (object[i] == '\n' && i + 1 < object.size()) out += pad;
  }
  return out;
}

// --format json: one document that jq reads (`jq .cluster.ttft_p99_ms`).
std::string json_document(const ResolvedRun& r, const ClusterResult& result, const InstanceMetrics& cluster,
                          const std::optional<Fitness>& fitness) {
  const RunConfig& c = r.config;
  std::string out = "{\n  \"config\": {";
  auto field = [&](bool first, const std::string& key, const std::string& value) {
    out += fmt::format("{}\n    {}: {}", first ? "" : ",", go_string(key), value);
  };
  field(true, "model", go_string(*c.pool().model.name));
  field(false, "hardware", go_string(c.pool().model.hardware.value_or("")));
  field(false, "tp", std::to_string(*c.pool().model.tp));
  field(false, "latency_model", go_string(r.latency_model));
  field(false, "num_instances", std::to_string(result.initial_instances));
  field(false, "total_kv_blocks", std::to_string(*c.pool().engine.total_kv_blocks));
  field(false, "admission_policy", go_string(*c.policies.admission));
  field(false, "routing_policy", go_string(*c.policies.routing));
  if (!r.scorers.empty()) field(false, "routing_scorers", go_string(c.policies.scorers.value_or("")));
  field(false, "scheduler", go_string(*c.policies.scheduler));
  field(false, "seed", std::to_string(r.seed));
  const SteadyState& st = result.steady;
  out += fmt::format("\n  }},\n  \"steady_state\": {{\n    \"verdict\": {},\n    \"offered_rps\": {},\n"
                     "    \"started_rps\": {},\n    \"ttft_middle_third_ms\": {},\n"
                     "    \"ttft_last_third_ms\": {}\n  }}",
                     go_string(verdict_name(st.verdict)), go_float(st.offered_rps), go_float(st.started_rps),
                     go_float(st.ttft_middle_ms), go_float(st.ttft_last_ms));
  out += ",\n  \"cluster\": " + nested(cluster_block(cluster, result, r.detectors, true), 1);
  out += fmt::format(",\n  \"rejected_requests\": {}", result.rejected);
  out += ",\n  \"instances\": [";
  // With a fleet, the slots some instance used (cluster/fleet.hpp).
  std::vector<uint8_t> used(result.instances.size(), result.spans.empty() ? 1 : 0);
  for (const InstanceSpan& s : result.spans) used[static_cast<size_t>(s.instance)] = 1;
  bool any = false;
  for (size_t i = 0; i < result.instances.size(); ++i) {
    if (!used[i]) continue;
    out += (any ? ",\n    " : "\n    ") +
           nested(metrics_json(result.instances[i], "instance_" + std::to_string(i), false), 2);
    any = true;
  }
  out += any ? "\n  ]" : "]";
  if (fitness) {
    out += fmt::format(",\n  \"fitness\": {{\n    \"score\": {},\n    \"components\": {{", go_float(fitness->score));
    bool first = true;
    for (const auto& [k, v] : fitness->components) {
      out += fmt::format("{}\n      {}: {}", first ? "" : ",", go_string(k), go_float(v));
      first = false;
    }
    out += "\n    }\n  }";
  }
  if (!c.events.empty() || c.event_script) {
    out += fmt::format(",\n  \"scenario_events\": {{\n    \"rerouted\": {},\n    \"failed\": {},\n    \"applied\": [",
                       result.rerouted, cluster.failed);
    for (size_t i = 0; i < result.event_log.size(); ++i)
      out += (i ? ",\n      " : "\n      ") + go_string(result.event_log[i]);
    out += result.event_log.empty() ? "]\n  }" : "\n    ]\n  }";
  }
  if (c.trace.level == "decisions") {
    const TraceSummary& t = result.trace;
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
  if (result.pd) out += ",\n  \"pd\": " + result.pd->json(result.instances, runtime_seconds(cluster));
  return out + "\n}\n";
}

// --format table: the figures a person reads first, every label with its unit.
std::string table_report(const ResolvedRun& r, const ClusterResult& result, const InstanceMetrics& cluster,
                         const std::optional<Fitness>& fitness) {
  const RunConfig& c = r.config;
  std::vector<MetricField> f = metrics_fields(cluster);
  for (const MetricField& m : median_fields(cluster)) f.push_back(m);
  auto v = [&](const std::string& name) {
    for (const MetricField& m : f)
      if (m.name == name) return m.value;
    return 0.0;
  };
  std::string out =
      c.pool_specs.empty()
          ? fmt::format("cluster      {} instance(s) of {} on {} (TP {}), latency model {}\n", c.pool().instances,
                        *c.pool().model.name, c.pool().model.hardware.value_or("?"), *c.pool().model.tp,
                        r.latency_model)
          : fmt::format("cluster      {} instance(s) in {} pool{} (below)\n", result.initial_instances,
                        c.pool_specs.size(), c.pool_specs.size() == 1 ? "" : "s");
  out += fmt::format("policies     admission {}, routing {}{}, scheduler {}\n", *c.policies.admission,
                     *c.policies.routing, r.scorers.empty() ? "" : " (" + c.policies.scorers.value_or("") + ")",
                     *c.policies.scheduler);
  out += fmt::format("requests     {:.0f} completed, {:.0f} still queued, {:.0f} still running, {:.0f} dropped, "
                     "{} rejected\n",
                     v("completed_requests"), v("still_queued"), v("still_running"), v("dropped_unservable"),
                     result.rejected);
  out += fmt::format("throughput   {:.2f} requests/s, {:.1f} output tokens/s over {:.1f} s\n", v("responses_per_sec"),
                     v("tokens_per_sec"), v("vllm_estimated_duration_s"));
  // The verdict judges the last third of the arrival window only (metrics/
  // steady_state.hpp): say so, or a steady end reads as a steady run (issue 32).
  out += fmt::format("verdict      {}{}\n\n", verdict_name(result.steady.verdict),
                     result.steady.verdict == Verdict::TooShort ? ""
                                                                : " (of the last third of the arrivals; the percentiles "
                                                                  "below cover the whole run)");
  out += fmt::format("{:<12} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "latency (ms)", "mean", "p50", "p90", "p95", "p99");
  for (const auto& [label, key] : {std::pair{"TTFT", "ttft"}, std::pair{"ITL", "itl"}, std::pair{"E2E", "e2e"}}) {
    const std::string k = key;
    out += fmt::format("{:<12} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n", label, v(k + "_mean_ms"),
                       v(k + "_p50_ms"), v(k + "_p90_ms"), v(k + "_p95_ms"), v(k + "_p99_ms"));
  }
  out += fmt::format("\nscheduling delay p99 {:.2f} ms; preemptions {:.0f}; length-capped {:.0f}\n",
                     v("scheduling_delay_p99_ms"), v("preemption_count"), v("length_capped_requests"));
  if (result.goodput.enabled()) {
    const auto [rps, attainment] = goodput_totals(result.goodput, runtime_seconds(cluster));
    out += fmt::format("goodput      {:.2f} requests/s within the SLO targets; attainment {:.1f} %\n", rps,
                       100 * attainment);
  }
  if (fitness) out += fmt::format("fitness      {:.6f}\n", fitness->score);
  if (!c.events.empty() || c.event_script) {
    out += fmt::format("\nevents       {} applied; {} request(s) re-routed, {} failed\n", result.event_log.size(),
                       result.rerouted, cluster.failed);
    for (const std::string& e : result.event_log) out += "  " + e + "\n";
  }
  return out;
}


// A cost in the pools blocks: "$0.1521", or "no price" when nothing billed
// had a cost_per_hour (issue 32: "$0.0000" read as a free run).
std::string cost_text(double cost, bool priced) { return priced ? fmt::format("${:.4f}", cost) : "no price"; }

// "=== Pools ===": each pool's instances, completions, GPU-hours and cost
// over the run's duration (every instance provisioned for all of it).
std::string pools_block(const std::vector<ResolvedPool>& pools, const ClusterResult& result, double seconds) {
  std::string out = "=== Pools ===\n";
  double gpu_hours = 0, cost = 0;
  bool priced = false;
  int64_t instances = 0;
  size_t i = 0;
  for (const ResolvedPool& p : pools) {
    int64_t completed = 0;
    for (int64_t k = 0; k < p.count; ++k) completed += result.instances[i++].completed;
    const ModelSettings& m = p.run.config.pool().model;
    const double hours = static_cast<double>(p.count) * seconds / 3600;
    const double g = hours * static_cast<double>(*m.tp);
    out += fmt::format("{}: {} instance(s) of {} on {} (TP {}), latency model {}; {} completed; {:.4f} GPU-hours; "
                       "{}\n",
                       p.name, p.count, m.name.value_or("?"), m.hardware.value_or("?"), *m.tp, p.run.latency_model,
                       completed, g, cost_text(hours * p.cost_per_hour, p.cost_per_hour > 0));
    priced = priced || p.cost_per_hour > 0;
    gpu_hours += g;
    cost += hours * p.cost_per_hour;
    instances += p.count;
  }
  out += fmt::format("Total: {} instance(s) over {:.3f} s; {:.4f} GPU-hours; {}\n", instances, seconds, gpu_hours,
                     cost_text(cost, priced));
  return out;
}

// The "=== Simulation Metrics ===" blocks: one per instance when there are
// several, then the cluster's. The seed prints them only where something
// completed, HEAD always.
std::string simulation_metrics_blocks(const ClusterConfig& cc, const ClusterResult& result,
                                      const InstanceMetrics& cluster, const std::vector<std::string>& detectors) {
  std::string out;
  if (cc.num_instances > 1)
    for (size_t i = 0; i < result.instances.size(); ++i)
      if (result.instances[i].completed > 0 || cc.head_report)
        out += "=== Simulation Metrics ===\n" +
               metrics_json(result.instances[i], "instance_" + std::to_string(i), false) + "\n";
  if (cluster.completed > 0 || cc.head_report)
    out += "=== Simulation Metrics ===\n" + cluster_block(cluster, result, detectors) + "\n";
  return out;
}

// The pools block (a fleet prints its own; HEAD has none for P/D) and the
// P/D block. The run's duration only when one is printed: it takes the
// cluster's metrics, a summary of every sample.
std::string pools_and_pd_blocks(const ClusterConfig& cc, const std::vector<ResolvedPool>& pools, bool fleet,
                                const ClusterResult& result, const InstanceMetrics& cluster) {
  std::string out;
  if (!fleet && !pools.empty() && !(cc.head_report && result.pd))
    out += pools_block(pools, result, runtime_seconds(cluster));
  if (result.pd) out += result.pd->block(result.instances, runtime_seconds(cluster), cc.head_report);
  return out;
}

// What the pools block says of each pool.
struct PoolLine {
  std::string name, model, hardware, latency_model;
  int64_t count = 0;
  int32_t tp = 1;
  double cost_per_hour = 0;
};

// What each pool of a run whose instances came and went (run/fleet_config.hpp)
// used: its instances at the start, the end and its peak, and GPU-hours and
// cost over the time each instance was provisioned (from the decision to add
// it until it drained, or the end of the run).
struct PoolUse {
  int64_t completed = 0, added = 0, removed = 0, at_end = 0, peak = 0;
  double gpu_hours = 0, cost = 0;
};

std::vector<PoolUse> pool_use(const std::vector<PoolLine>& pools, const ClusterConfig& cc, const ClusterResult& result,
                              double seconds) {
  const SimTime end = static_cast<SimTime>(std::llround(seconds * 1e6));
  std::vector<PoolUse> out(pools.size());
  for (size_t p = 0; p < pools.size(); ++p) {
    PoolUse& u = out[p];
    for (size_t i = 0; i < result.instances.size(); ++i)
      if ((cc.pool_of.empty() ? 0 : static_cast<size_t>(cc.pool_of[i])) == p) u.completed += result.instances[i].completed;
    double instance_us = 0;
    std::vector<std::pair<SimTime, int>> steps;  // +1 at each start, -1 at each end
    for (const InstanceSpan& s : result.spans) {
      if (static_cast<size_t>(s.pool) != p) continue;
      const SimTime from = std::min(s.start, end), to = s.end < 0 ? end : std::min(s.end, end);
      instance_us += static_cast<double>(std::max<SimTime>(0, to - from));
      u.added += s.start > 0;
      u.removed += s.end >= 0;
      u.at_end += s.end < 0;
      steps.emplace_back(s.start, 1);
      if (s.end >= 0) steps.emplace_back(s.end, -1);
    }
    std::sort(steps.begin(), steps.end());  // at equal times the leaving instance first
    int64_t live = 0;
    for (const auto& [t, d] : steps) u.peak = std::max(u.peak, live += d);
    const double hours = instance_us / 3.6e9;
    u.gpu_hours = hours * pools[p].tp;
    u.cost = hours * pools[p].cost_per_hour;
  }
  return out;
}

// What each node pool (spec head §6.1) held: nodes at the start, the end and
// their peak, how many were provisioned and released, and node-hours, GPU-hours
// and cost over the time each node was held (from the request to provision
// it until its release, or the end of the run).
struct NodeUse {
  int64_t at_start = 0, at_end = 0, peak = 0, provisioned = 0, released = 0;
  double node_hours = 0, gpu_hours = 0, cost = 0;
};

std::vector<NodeUse> node_use(const ClusterConfig& cc, const ClusterResult& result, double seconds) {
  const SimTime end = static_cast<SimTime>(std::llround(seconds * 1e6));
  std::vector<NodeUse> out(cc.fleet.node_pools.size());
  for (size_t np = 0; np < out.size(); ++np) {
    NodeUse& u = out[np];
    std::vector<std::pair<SimTime, int>> steps;
    double node_us = 0;
    for (const NodeSpan& n : result.nodes) {
      if (static_cast<size_t>(n.node_pool) != np) continue;
      const SimTime from = std::min(n.start, end), to = n.end < 0 ? end : std::min(n.end, end);
      node_us += static_cast<double>(std::max<SimTime>(0, to - from));
      u.at_start += n.start == 0 && n.ready == 0;
      u.provisioned += !(n.start == 0 && n.ready == 0);
      u.released += n.end >= 0;
      u.at_end += n.end < 0;
      steps.emplace_back(n.start, 1);
      if (n.end >= 0) steps.emplace_back(n.end, -1);
    }
    std::sort(steps.begin(), steps.end());
    int64_t live = 0;
    for (const auto& [t, d] : steps) u.peak = std::max(u.peak, live += d);
    const NodePoolConfig& c = cc.fleet.node_pools[np];
    u.node_hours = node_us / 3.6e9;
    u.gpu_hours = u.node_hours * c.gpus_per_node;
    u.cost = u.node_hours * c.cost_per_hour;
  }
  return out;
}

// "=== Autoscaler ===" (with an autoscaler) and "=== Pools ===" of such a run.
std::string fleet_block(const std::vector<PoolLine>& pools, const ClusterConfig& cc, const ClusterResult& result,
                        double seconds) {
  std::string out;
  if (cc.fleet.autoscaler.enabled()) {
    out += "=== Autoscaler ===\n";
    int64_t up = 0, down = 0;
    for (const ScalingAction& a : result.scaling) {
      out += fmt::format("{}: {} {:+d} ({})\n", text::seconds_text(a.time),
                         pools[static_cast<size_t>(a.pool)].name, a.delta, a.why);
      (a.delta > 0 ? up : down) += std::abs(a.delta);
    }
    out += fmt::format("Scaling Actions: {}\nInstances Added: {}\nInstances Removed: {}\n", result.scaling.size(), up,
                       down);
  }
  out += "=== Pools ===\n";
  double gpu_hours = 0, cost = 0;
  bool priced = false;
  int64_t at_start = 0, at_end = 0;
  const std::vector<PoolUse> use = pool_use(pools, cc, result, seconds);
  for (size_t p = 0; p < pools.size(); ++p) {
    const PoolLine& pl = pools[p];
    const PoolUse& u = use[p];
    out += fmt::format("{}: {} instance(s) at start, {} at end, peak {} ({} added, {} removed) of {} on {} (TP {}), "
                       "latency model {}; {} completed; {:.4f} GPU-hours; {}\n",
                       pl.name, pl.count, u.at_end, u.peak, u.added, u.removed, pl.model, pl.hardware, pl.tp,
                       pl.latency_model, u.completed, u.gpu_hours, cost_text(u.cost, pl.cost_per_hour > 0));
    priced = priced || pl.cost_per_hour > 0;
    gpu_hours += u.gpu_hours;
    cost += u.cost;
    at_start += pl.count;
    at_end += u.at_end;
  }
  // With node pools the nodes are what is paid for: the total is theirs.
  if (!cc.fleet.node_pools.empty()) {
    gpu_hours = cost = 0;
    priced = false;
    const std::vector<NodeUse> nodes = node_use(cc, result, seconds);
    for (size_t np = 0; np < nodes.size(); ++np) {
      const NodePoolConfig& c = cc.fleet.node_pools[np];
      const NodeUse& u = nodes[np];
      out += fmt::format(
          "node pool {}: {} node(s) of {} x {} at start, {} at end, peak {} ({} provisioned, {} "
          "released); {:.4f} node-hours; {:.4f} GPU-hours; {}\n",
          c.name, u.at_start, c.gpus_per_node, c.gpu_type, u.at_end, u.peak, u.provisioned, u.released,
          u.node_hours, u.gpu_hours, cost_text(u.cost, c.cost_per_hour > 0));
      priced = priced || c.cost_per_hour > 0;
      gpu_hours += u.gpu_hours;
      cost += u.cost;
    }
    if (result.unplaced_waits > 0)
      out += fmt::format(
          "Instances that waited for GPUs (node pools at their maximum): {}, {} still waiting at the "
          "end\n",
          result.unplaced_waits, result.unplaced_at_end);
  }
  out += fmt::format("Total: {} instance(s) at start, {} at end, over {:.3f} s; {:.4f} GPU-hours; {}\n", at_start,
                     at_end, seconds, gpu_hours, cost_text(cost, priced));
  return out;
}

// --format json: the same as a "fleet" object, appended to the document.
std::string fleet_json(const std::vector<PoolLine>& pools, const ClusterConfig& cc, const ClusterResult& result,
                       double seconds) {
  std::string out = ",\n  \"fleet\": {\n    \"pools\": [";
  double gpu_hours = 0, cost = 0;
  const std::vector<PoolUse> use = pool_use(pools, cc, result, seconds);
  for (size_t p = 0; p < pools.size(); ++p) {
    const PoolUse& u = use[p];
    out += fmt::format("{}\n      {{\"name\": {}, \"instances_at_start\": {}, \"instances_at_end\": {}, "
                       "\"peak_instances\": {}, \"added\": {}, \"removed\": {}, \"completed\": {}, "
                       "\"gpu_hours\": {}, \"cost\": {}}}",
                       p ? "," : "", go_string(pools[p].name), pools[p].count, u.at_end, u.peak, u.added, u.removed,
                       u.completed, go_float(u.gpu_hours), go_float(u.cost));
    gpu_hours += u.gpu_hours;
    cost += u.cost;
  }
  std::string waits;
  if (!cc.fleet.node_pools.empty()) {
    gpu_hours = cost = 0;
    out += "\n    ],\n    \"node_pools\": [";
    const std::vector<NodeUse> nodes = node_use(cc, result, seconds);
    for (size_t np = 0; np < nodes.size(); ++np) {
      const NodePoolConfig& c = cc.fleet.node_pools[np];
      const NodeUse& u = nodes[np];
      out += fmt::format(
          "{}\n      {{\"name\": {}, \"gpu_type\": {}, \"gpus_per_node\": {}, \"nodes_at_start\": {}, "
          "\"nodes_at_end\": {}, \"peak_nodes\": {}, \"provisioned\": {}, \"released\": {}, "
          "\"node_hours\": {}, \"gpu_hours\": {}, \"cost\": {}}}",
          np ? "," : "", go_string(c.name), go_string(c.gpu_type), c.gpus_per_node, u.at_start, u.at_end,
          u.peak, u.provisioned, u.released, go_float(u.node_hours), go_float(u.gpu_hours), go_float(u.cost));
      gpu_hours += u.gpu_hours;
      cost += u.cost;
    }
    waits = fmt::format(",\n    \"instances_waited_for_gpus\": {},\n    \"instances_waiting_at_end\": {}",
                        result.unplaced_waits, result.unplaced_at_end);
  }
  out += fmt::format("\n    ],\n    \"gpu_hours\": {},\n    \"cost\": {}{},\n    \"scaling_actions\": [",
                     go_float(gpu_hours), go_float(cost), waits);
  for (size_t k = 0; k < result.scaling.size(); ++k) {
    const ScalingAction& a = result.scaling[k];
    out += fmt::format("{}\n      {{\"time_us\": {}, \"pool\": {}, \"delta\": {}, \"why\": {}}}", k ? "," : "",
                       a.time, go_string(pools[static_cast<size_t>(a.pool)].name), a.delta, go_string(a.why));
  }
  out += result.scaling.empty() ? "]\n  }" : "\n    ]\n  }";
  return out;
}

// What a resolved run gives its latency model.
ConfigTable latency_config(const ResolvedRun& r) {
  ConfigTable base;
  const ModelSettings& model = r.config.pool().model;
  put_latency_config(base, r.arch ? &*r.arch : nullptr, r.hardware ? &*r.hardware : nullptr, *model.tp, r.alpha,
                     r.beta, r.config.pool().engine.block_size, model.dp.value_or(1),
                     model.moe_comm_backend.value_or(""));
  return r.overrides.config_for(r.latency_model, base);
}

// Deployment settings only some latency models read: ignoring them silently
// would print numbers for a deployment that was not simulated.
void check_latency_read(const ResolvedRun& r, const ConfigTable& cfg) {
  r.overrides.warn_unread(r.latency_model, cfg);
  const std::vector<std::string> unread = cfg.unread_keys();
  for (const char* key : {BLIS_KEY_DP, BLIS_KEY_MOE_COMM_BACKEND})
    if (std::find(unread.begin(), unread.end(), key) != unread.end())
      throw InputError(r.given.where(key), fmt::format("the {} latency model does not read '{}'; "
                                                       "leave the setting out, or use a latency model "
                                                       "that models it (blis plugins list)",
                                                       r.latency_model, key));
}

}  // namespace

RunOutcome simulate(const RunConfig& given) {
  // P/D pools (spec head §5.1) are pools by role.
  const RunConfig config = with_pd_pools(given);
  RunContext ctx = RunContext::open(config);
  const ResolvedRun r = resolve(config, ctx);
  auto workload = make_workload(r);
  ClusterConfig cc = cluster_config(r);
  const std::vector<WorkloadPhase> phases = make_workload_phases(r, cc.events, cc.events_where, cc.deadlines);
  const std::vector<ResolvedPool> pools = resolve_pools(config, ctx);

  // One latency configuration per pool (the run's own without pools), and
  // each instance's pool.
  std::vector<const ResolvedRun*> pool_runs;
  if (pools.empty()) {
    pool_runs.push_back(&r);
  } else {
    cc.num_instances = 0;
    for (size_t p = 0; p < pools.size(); ++p) {
      const ResolvedRun& pr = pools[p].run;
      const EngineConfig e = cluster_config(pr).engine;
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
  }
  // Instances added and removed at run time: the fleet, its reserve slots,
  // and what the pools block says of each pool.
  std::vector<PoolLine> pool_lines;
  ConfigTable autoscaler_cfg;
  const bool fleet = wants_fleet(config, cc);
  if (fleet) {
    std::vector<FleetPool> fp;
    std::vector<EngineConfig> engines;
    if (pools.empty()) {
      const ModelSettings& m = r.config.pool().model;
      fp.push_back(FleetPool{cc.pool_name, m.name.value_or("?"), static_cast<int32_t>(*m.tp),
                             cc.num_instances, 0, "", m.hardware.value_or("")});
      pool_lines.push_back(PoolLine{cc.pool_name, m.name.value_or("?"), m.hardware.value_or("?"), r.latency_model,
                                    cc.num_instances, static_cast<int32_t>(*m.tp), 0});
    }
    for (const ResolvedPool& p : pools) {
      const ModelSettings& m = p.run.config.pool().model;
      fp.push_back(FleetPool{p.name, m.name.value_or("?"), static_cast<int32_t>(*m.tp), p.count,
                             p.cost_per_hour, p.lifecycle, m.hardware.value_or("")});
      engines.push_back(cluster_config(p.run).engine);
      pool_lines.push_back(PoolLine{p.name, m.name.value_or("?"), m.hardware.value_or("?"), p.run.latency_model,
                                    p.count, static_cast<int32_t>(*m.tp), p.cost_per_hour});
    }
    configure_fleet(config, fp, engines, r.seed, cc);
    // A scaling rule of the user's: an autoscaler plugin or Lua script.
    if (const std::string& name = cc.fleet.autoscaler.policy; !name.empty()) {
      const auto dirs = script_search_dirs(config.script_dirs, ctx.env.script_dir);
      const auto found = resolve_plugin_name(*ctx.env.registries, *ctx.vm, PluginKind::Autoscaler, name, dirs);
      if (!found)
        throw InputError(config.where("autoscaler"),
                         fmt::format("unknown autoscaler '{}'; valid: {}", name,
                                     available_plugin_names(*ctx.env.registries, *ctx.vm, PluginKind::Autoscaler,
                                                            dirs)));
      autoscaler_cfg = r.overrides.config_for(*found, ConfigTable{});
      cc.fleet.autoscaler.rule = ctx.env.registries->autoscalers.create(*found, CreateArgs{&autoscaler_cfg, r.seed});
    }
  } else {
    for (const ResolvedPool& p : pools)
      if (!p.lifecycle.empty())
        throw InputError(config.where("pools"), fmt::format("pool '{}': lifecycle keys ({}) need add events or "
                                                            "--autoscaler",
                                                            p.name, p.lifecycle));
  }
  std::vector<ConfigTable> latency_cfgs;
  latency_cfgs.reserve(pool_runs.size());
  for (const ResolvedRun* pr : pool_runs) latency_cfgs.push_back(latency_config(*pr));
  spdlog::info("starting: {} instance(s), {} KV blocks, latency model {}, horizon {}", cc.num_instances,
               cc.engine.total_kv_blocks, r.latency_model, r.horizon);

  // Progress of a long run on stderr; searches and sweeps report their own.
  std::optional<Progress> progress;
  if (!r.config.outputs.quiet && r.config.outputs.warn_unsteady && r.request_cap > 0) {
    progress.emplace(false, "blis run");
    const auto total = static_cast<size_t>(r.request_cap);
    cc.on_progress = [&progress, total](int64_t arrived, SimTime now) {
      progress->update(static_cast<size_t>(arrived), total,
                       fmt::format("{:.1f} s simulated", static_cast<double>(now) / 1e6));
    };
  }
  ClusterPolicies policies = make_policies(r, ctx);
  setup_pd(config, pools, r, ctx, cc, policies);
  if (cc.pd.enabled() && !cc.fleet.node_pools.empty())
    throw InputError(config.where("node_pools"),
                     "node pools cannot be combined with P/D pools (--prefill-instances, "
                     "...) yet; drop the node pools or the P/D settings");
  // A Lua scenario's at()/every() callbacks: its own copy of the code per run.
  std::unique_ptr<ScenarioCode> code;
  if (config.event_script) {
    if (config.pd.configured())
      throw InputError(*config.event_script, "at()/every() callbacks together with P/D pools are not supported yet");
    code = make_lua_scenario_code(*ctx.vm, *config.event_script);
    cc.code = code.get();
  }
  const auto wall_start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  // The simulation (its request pool, KV caches, batches) goes once it has
  // run: the report's merges and sorts then reuse its memory, and the peak
  // is not the sum of both.
  auto sim = std::make_unique<ClusterSimulation>(cc, *workload, [&](int32_t i) {
    const size_t p = cc.pool_of.empty() ? 0 : static_cast<size_t>(cc.pool_of[static_cast<size_t>(i)]);
    return ctx.env.registries->latency.create(pool_runs[p]->latency_model,
                                              CreateArgs{&latency_cfgs[p], pool_runs[p]->seed});
  }, std::move(policies));
  for (size_t p = 0; p < pool_runs.size(); ++p) check_latency_read(*pool_runs[p], latency_cfgs[p]);
  for (const WorkloadPhase& phase : phases) sim->add_workload_phase(phase.at, *phase.source);
  ClusterResult result = sim->run();
  if (progress) progress->finish();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  sim.reset();

  // The instances of the run: with a fleet, the slots some instance used
  // (reserve slots never filled would dilute the per-instance averages).
  std::vector<uint8_t> used(result.instances.size(), fleet ? 0 : 1);
  for (const InstanceSpan& s : result.spans) used[static_cast<size_t>(s.instance)] = 1;
  std::vector<const InstanceMetrics*> parts;
  for (size_t i = 0; i < result.instances.size(); ++i)
    if (used[i]) parts.push_back(&result.instances[i]);
  // Requests still before their admission or routing decision at the horizon
  // count as queued at the cluster (conservation).
  InstanceMetrics cluster = cluster_metrics(result);

  RunOutcome outcome;
  outcome.steady = result.steady;
  outcome.saturation = result.saturation;
  const bool unsteady = result.steady.verdict == Verdict::Saturated || result.steady.verdict == Verdict::NotSteady;
  if (unsteady && r.config.outputs.warn_unsteady)
    spdlog::warn("{}", result.steady.advice());
  else if (result.saturation.saturated() && r.config.outputs.warn_unsteady)
    spdlog::warn("the backlog-drift saturation detector calls the run overloaded: the requests in the system "
                 "kept growing while traffic lasted (by more than 5 % of the arrivals), so its percentiles "
                 "describe a queue that builds up. Give more instances (or a lower rate), or run longer to see "
                 "whether it settles");
  else if (result.steady.verdict == Verdict::TooShort)
    spdlog::info("{}", result.steady.advice());
  // Admission that turns away much of the traffic is easy to miss in the
  // report (issue 32): say so on stderr. All-rejected runs got their warning.
  const int64_t arrived = injected_requests(cluster) + result.rejected + result.in_pipeline;
  if (r.config.outputs.warn_unsteady && cluster.completed > 0 && result.rejected * 10 >= arrived)
    spdlog::warn("the admission policy {} rejected {} of the {} requests that arrived ({:.0f} %); they are "
                 "counted in rejected_requests, not in the latencies",
                 r.config.policies.admission.value_or("?"), result.rejected, arrived,
                 100.0 * static_cast<double>(result.rejected) / static_cast<double>(arrived));
  std::optional<Fitness> fitness;
  if (!r.fitness_weights.empty()) fitness = evaluate_fitness(cluster, r.fitness_weights);
  outcome.metrics = metrics_fields(cluster);
  outcome.metrics.push_back({"rejected_requests", static_cast<double>(result.rejected), true});
  if (fitness) outcome.metrics.push_back({"fitness_score", fitness->score, false});
  if (result.goodput.enabled()) {
    const auto [rps, attainment] = goodput_totals(result.goodput, runtime_seconds(cluster));
    outcome.metrics.push_back({"goodput_rps", rps, false});
    outcome.metrics.push_back({"slo_attainment", attainment, false});
  }
  if (r.config.outputs.keep_distributions || r.config.outputs.report) outcome.cdf = latency_cdf(cluster);
  if (r.config.outputs.report) {
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
    outcome.run_report = std::move(rr);
  }
  // HEAD's --metrics-path file ends at its closing brace, byte for byte.
  if (cc.keep_records) outcome.results_json = metrics_json(cluster, "cluster", true) + (cc.head_report ? "" : "\n");
  outcome.timeseries_csv = std::move(result.timeseries);
  if (r.config.outputs.profile)
    outcome.profile = fmt::format("profile: {} events, {} steps, {} requests, wall {:.3f} s, cpu {:.3f} s, "
                                  "{:.0f} events/s; {} of {} batch-member steps handled member by member\n",
                                  result.events, result.steps,
                                  injected_requests(cluster),
                                  wall, cpu, wall > 0 ? static_cast<double>(result.events) / wall : 0,
                                  result.member_updates, result.member_steps);
  if (r.config.outputs.format == "json") {
    outcome.report = json_document(r, result, cluster, fitness);
    if (fleet)  // before the document's closing brace
      outcome.report.insert(outcome.report.size() - 3, fleet_json(pool_lines, cc, result, runtime_seconds(cluster)));
    return outcome;
  }
  if (r.config.outputs.format == "table") {
    outcome.report = table_report(r, result, cluster, fitness);
    if (fleet)
      outcome.report += "\n" + fleet_block(pool_lines, cc, result, runtime_seconds(cluster));
    else if (!pools.empty())
      outcome.report += "\n" + pools_block(pools, result, runtime_seconds(cluster));
    if (result.pd) outcome.report += "\n" + result.pd->block(result.instances, runtime_seconds(cluster));
    return outcome;
  }

  std::string& out = outcome.report;
  out += simulation_metrics_blocks(cc, result, cluster, r.detectors);
  if (fitness) out += fitness_block(*fitness);
  ReportContext report_ctx;
  report_ctx.priority_policy_constant = !cc.keep_completions;
  report_ctx.rejected = result.rejected;
  report_ctx.routing_rejected = result.routing_rejected;
  report_ctx.admission_rejected_by_class = result.admission_rejected_by_class;
  report_ctx.per_slo_always = result.goodput.enabled();
  out += text_blocks(parts, cluster, report_ctx);
  if (cc.trace_decisions && r.config.trace.summarize) out += trace_block(result.trace, result.event_log);
  if (!cc.events.empty() || cc.code) out += events_block(result, cluster);
  if (fleet) out += fleet_block(pool_lines, cc, result, runtime_seconds(cluster));
  out += pools_and_pd_blocks(cc, pools, fleet, result, cluster);
  return outcome;
}

std::string dump_config(const RunConfig& given) {
  // The P/D pools' instances are the run's (a dump runs again as it is).
  RunConfig config = given;
  if (config.pd.configured())
    config.pool().instances = config.pd.prefill_instances.value_or(0) + config.pd.decode_instances.value_or(0) +
                              config.pd.prefill_decode_instances.value_or(0);
  RunContext ctx = RunContext::open(config);
  const ResolvedRun r = resolve(config, ctx);
  return dump_toml(r);
}

}  // namespace blis
