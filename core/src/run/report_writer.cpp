#include "run/report_writer.hpp"

#include "metrics/report.hpp"
#include "util/json_format.hpp"

#include <fmt/format.h>

namespace blis {
namespace {

// The cluster's metrics object: the reference's keys, with `records` the
// per-request records (the results file), the parts' labels, with `medians`
// the p50s (not in the reference's format), the parts' figures.
std::string cluster_block(const ReportInput& in, bool medians, bool records = false) {
  std::string members;
  for (const ReportPart* p : in.parts.order()) p->cluster_members(in.scope, ClusterPlace::Labels, members);
  if (medians)
    for (const MetricField& f : median_fields(in.cluster)) members += ",\n  " + go_string(f.name) + ": " + metric_text(f);
  for (const ReportPart* p : in.parts.order()) p->cluster_members(in.scope, ClusterPlace::Figures, members);
  return metrics_json(in.cluster, "cluster", records, members);
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

void json_members(const ReportInput& in, JsonPlace place, std::string& out) {
  for (const ReportPart* p : in.parts.order()) p->json_members(in.scope, place, out);
}

void table_lines(const ReportInput& in, TablePlace place, std::string& out) {
  for (const ReportPart* p : in.parts.order()) p->table_lines(in.scope, place, out);
}

// The "=== Simulation Metrics ===" blocks: one per instance when there are
// several, then the cluster's. The seed prints them only where something
// completed, HEAD always.
std::string simulation_metrics_blocks(const ReportInput& in) {
  std::string out;
  const std::vector<InstanceMetrics>& instances = in.result.instances;
  if (in.cc.num_instances > 1)
    for (size_t i = 0; i < instances.size(); ++i)
      if (instances[i].completed > 0 || in.cc.head_report)
        out += "=== Simulation Metrics ===\n" + metrics_json(instances[i], "instance_" + std::to_string(i), false) +
               "\n";
  if (in.cluster.completed > 0 || in.cc.head_report)
    out += "=== Simulation Metrics ===\n" + cluster_block(in, false) + "\n";
  return out;
}

// "config" of --format json.
std::string json_config(const ReportInput& in) {
  const ResolvedRun& r = in.r;
  const RunConfig& c = r.config;
  std::string out = "\"config\": {";
  auto field = [&](bool first, const std::string& key, const std::string& value) {
    out += fmt::format("{}\n    {}: {}", first ? "" : ",", go_string(key), value);
  };
  field(true, "model", go_string(*c.pool().model.name));
  field(false, "hardware", go_string(c.pool().model.hardware.value_or("")));
  field(false, "tp", std::to_string(*c.pool().model.tp));
  field(false, "latency_model", go_string(r.latency_model));
  field(false, "num_instances", std::to_string(in.result.initial_instances));
  field(false, "total_kv_blocks", std::to_string(*c.pool().engine.total_kv_blocks));
  field(false, "admission_policy", go_string(*c.policies.admission));
  field(false, "routing_policy", go_string(*c.policies.routing));
  if (!r.scorers.empty()) field(false, "routing_scorers", go_string(c.policies.scorers.value_or("")));
  field(false, "scheduler", go_string(*c.policies.scheduler));
  field(false, "seed", std::to_string(r.seed));
  return out + "\n  }";
}

// "instances" of --format json: with a fleet, the slots some instance used
// (cluster/fleet_types.hpp).
std::string json_instances(const ClusterResult& result) {
  std::string out = ",\n  \"instances\": [";
  std::vector<uint8_t> used(result.instances.size(), result.spans.empty() ? 1 : 0);
  for (const InstanceSpan& s : result.spans) used[static_cast<size_t>(s.instance)] = 1;
  bool any = false;
  for (size_t i = 0; i < result.instances.size(); ++i) {
    if (!used[i]) continue;
    out += (any ? ",\n    " : "\n    ") +
           nested(metrics_json(result.instances[i], "instance_" + std::to_string(i), false), 2);
    any = true;
  }
  return out + (any ? "\n  ]" : "]");
}

std::string json_fitness(const Fitness& fitness) {
  std::string out = fmt::format(",\n  \"fitness\": {{\n    \"score\": {},\n    \"components\": {{", go_float(fitness.score));
  bool first = true;
  for (const auto& [k, v] : fitness.components) {
    out += fmt::format("{}\n      {}: {}", first ? "" : ",", go_string(k), go_float(v));
    first = false;
  }
  return out + "\n    }\n  }";
}

}  // namespace

std::string text_report(const ReportInput& in) {
  std::string out = simulation_metrics_blocks(in);
  if (in.fitness) out += fitness_block(*in.fitness);
  ReportContext ctx;
  ctx.priority_policy_constant = !in.cc.keep_completions;
  ctx.rejected = in.result.rejected;
  ctx.routing_rejected = in.result.routing_rejected;
  ctx.admission_rejected_by_class = in.result.admission_rejected_by_class;
  if (const auto& g = in.result.gateway) {
    ctx.gateway_depth = g->depth;
    ctx.gateway_shed = g->shed;
    ctx.gateway_rejected = g->rejected;
    ctx.gateway_evicted = g->evicted;
    ctx.gateway_expired = g->expired;
  }
  for (const ReportPart* p : in.parts.order()) p->shape(ctx);
  out += text_blocks(in.used, in.cluster, ctx);
  for (const ReportPart* p : in.parts.order()) p->text_blocks(in.scope, out);
  return out;
}

std::string json_report(const ReportInput& in) {
  std::string out = "{\n  " + json_config(in);
  json_members(in, JsonPlace::Lead, out);
  out += ",\n  \"cluster\": " + nested(cluster_block(in, true), 1);
  out += fmt::format(",\n  \"rejected_requests\": {}", in.result.rejected);
  if (const auto& g = in.result.gateway)
    out += fmt::format(",\n  \"gateway\": {{\"still_queued\": {}, \"shed\": {}, \"rejected\": {}, \"evicted\": {}, \"expired\": {}}}",
                       g->depth, g->shed, g->rejected, g->evicted, g->expired);
  out += json_instances(in.result);
  if (in.fitness) out += json_fitness(*in.fitness);
  json_members(in, JsonPlace::Body, out);
  json_members(in, JsonPlace::Tail, out);
  json_members(in, JsonPlace::End, out);
  return out + "\n}\n";
}

std::string table_report(const ReportInput& in) {
  const ResolvedRun& r = in.r;
  const RunConfig& c = r.config;
  std::vector<MetricField> f = metrics_fields(in.cluster);
  for (const MetricField& m : median_fields(in.cluster)) f.push_back(m);
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
          : fmt::format("cluster      {} instance(s) in {} pool{} (below)\n", in.result.initial_instances,
                        c.pool_specs.size(), c.pool_specs.size() == 1 ? "" : "s");
  out += fmt::format("policies     admission {}, routing {}{}, scheduler {}\n", *c.policies.admission,
                     *c.policies.routing, r.scorers.empty() ? "" : " (" + c.policies.scorers.value_or("") + ")",
                     *c.policies.scheduler);
  out += fmt::format("requests     {:.0f} completed, {:.0f} still queued, {:.0f} still running, {:.0f} dropped, "
                     "{} rejected\n",
                     v("completed_requests"), v("still_queued"), v("still_running"), v("dropped_unservable"),
                     in.result.rejected);
  out += fmt::format("throughput   {:.2f} requests/s, {:.1f} output tokens/s over {:.1f} s\n", v("responses_per_sec"),
                     v("tokens_per_sec"), v("vllm_estimated_duration_s"));
  table_lines(in, TablePlace::Verdict, out);
  out += fmt::format("\n{:<12} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "latency (ms)", "mean", "p50", "p90", "p95",
                     "p99");
  for (const auto& [label, key] : {std::pair{"TTFT", "ttft"}, std::pair{"ITL", "itl"}, std::pair{"E2E", "e2e"}}) {
    const std::string k = key;
    out += fmt::format("{:<12} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n", label, v(k + "_mean_ms"),
                       v(k + "_p50_ms"), v(k + "_p90_ms"), v(k + "_p95_ms"), v(k + "_p99_ms"));
  }
  out += fmt::format("\nscheduling delay p99 {:.2f} ms; preemptions {:.0f}; length-capped {:.0f}\n",
                     v("scheduling_delay_p99_ms"), v("preemption_count"), v("length_capped_requests"));
  table_lines(in, TablePlace::Latency, out);
  if (in.fitness) out += fmt::format("fitness      {:.6f}\n", in.fitness->score);
  table_lines(in, TablePlace::Events, out);
  table_lines(in, TablePlace::Blocks, out);
  return out;
}

std::string results_report(const ReportInput& in) {
  // HEAD's file ends at its closing brace, byte for byte.
  return cluster_block(in, false, true) + (in.cc.head_report ? "" : "\n");
}

std::vector<MetricField> run_figures(const ReportInput& in) {
  std::vector<MetricField> out = metrics_fields(in.cluster);
  out.push_back({"rejected_requests", static_cast<double>(in.result.rejected), true});
  if (in.fitness) out.push_back({"fitness_score", in.fitness->score, false});
  for (const ReportPart* p : in.parts.order()) p->figures(in.scope, out);
  return out;
}

// "=== Scenario Events ===": printed only when the run has events.
void ScenarioEventsReport::text_blocks(const ReportScope& s, std::string& out) const {
  out += "=== Scenario Events ===\n";
  for (const std::string& line : result_->event_log) out += line + "\n";
  out += fmt::format("Events Applied: {}\nRerouted Requests: {}\nFailed Requests: {}\n", result_->event_log.size(),
                     result_->rerouted, s.cluster.failed);
}

void ScenarioEventsReport::json_members(const ReportScope& s, JsonPlace place, std::string& out) const {
  if (place != JsonPlace::Body) return;
  out += fmt::format(",\n  \"scenario_events\": {{\n    \"rerouted\": {},\n    \"failed\": {},\n    \"applied\": [",
                     result_->rerouted, s.cluster.failed);
  for (size_t i = 0; i < result_->event_log.size(); ++i)
    out += (i ? ",\n      " : "\n      ") + go_string(result_->event_log[i]);
  out += result_->event_log.empty() ? "]\n  }" : "\n    ]\n  }";
}

void ScenarioEventsReport::table_lines(const ReportScope& s, TablePlace place, std::string& out) const {
  if (place != TablePlace::Events) return;
  out += fmt::format("\nevents       {} applied; {} request(s) re-routed, {} failed\n", result_->event_log.size(),
                     result_->rerouted, s.cluster.failed);
  for (const std::string& e : result_->event_log) out += "  " + e + "\n";
}

}  // namespace blis
