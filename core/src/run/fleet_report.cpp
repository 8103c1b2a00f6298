#include "run/fleet_report.hpp"

#include "util/json_format.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace blis {
namespace {

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

}  // namespace

void FleetReport::text_blocks(const ReportScope& s, std::string& out) const {
  out += fleet_block(pools_, *cc_, *result_, s.runtime_s);
}

void FleetReport::table_lines(const ReportScope& s, TablePlace place, std::string& out) const {
  if (place != TablePlace::Blocks) return;
  out += '\n';
  out += fleet_block(pools_, *cc_, *result_, s.runtime_s);
}

void FleetReport::json_members(const ReportScope& s, JsonPlace place, std::string& out) const {
  if (place == JsonPlace::End) out += fleet_json(pools_, *cc_, *result_, s.runtime_s);
}

// HEAD prints no pools block for a P/D run.
void PoolsReport::text_blocks(const ReportScope& s, std::string& out) const {
  if (!(s.head && result_->pd)) out += pools_block(*pools_, *result_, s.runtime_s);
}

void PoolsReport::table_lines(const ReportScope& s, TablePlace place, std::string& out) const {
  if (place != TablePlace::Blocks) return;
  out += '\n';
  out += pools_block(*pools_, *result_, s.runtime_s);
}

}  // namespace blis
