#include "run/fleet_config.hpp"

#include "config/fleet_records.hpp"
#include "run/pools.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <utility>

namespace blis {

bool wants_fleet(const RunConfig& c, const ClusterConfig& cc) {
  if (c.lifecycle || c.autoscaler || !c.node_pools.empty()) return true;
  // A pool's own warm-up (its other lifecycle keys act with a fleet only).
  for (const Given<PoolSpec>& p : c.pool_specs)
    if (p.value.lifecycle.warm_up_requests || p.value.lifecycle.warm_up_ttft_factor) return true;
  for (const ScenarioEvent& e : cc.events)
    if (e.action == EventAction::Add || e.action == EventAction::Remove) return true;
  return false;
}

namespace {

// `base` with the keys `given` has.
PoolLifecycle overlay(PoolLifecycle base, const LifecycleSettings& given) {
  if (given.min) base.min = *given.min;
  if (given.max) base.max = *given.max;
  if (given.provisioning_mean_s) base.provisioning.mean_s = *given.provisioning_mean_s;
  if (given.provisioning_stddev_s) base.provisioning.stddev_s = *given.provisioning_stddev_s;
  if (given.loading_mean_s) base.loading.mean_s = *given.loading_mean_s;
  if (given.loading_stddev_s) base.loading.stddev_s = *given.loading_stddev_s;
  if (given.warm_start) base.warm_start = *given.warm_start;
  if (given.warm_up_requests) base.warm_up_requests = *given.warm_up_requests;
  if (given.warm_up_ttft_factor) base.warm_up_ttft_factor = *given.warm_up_ttft_factor;
  return base;
}

// Each pool's lifecycle: its size as the range, then --lifecycle, then the
// pool's own keys.
std::vector<PoolLifecycle> pool_lifecycles(const RunConfig& c, const std::vector<FleetPool>& pools) {
  std::vector<PoolLifecycle> out;
  for (size_t i = 0; i < pools.size(); ++i) {
    const FleetPool& p = pools[i];
    PoolLifecycle pl;
    pl.model = p.model;
    pl.tp = p.tp;
    pl.cost_per_hour = p.cost_per_hour;
    pl.min = 0;
    pl.max = static_cast<int32_t>(p.count);
    if (c.lifecycle) pl = overlay(pl, c.lifecycle->value);
    const std::string where = fmt::format(
        "{}: pool {}", i < c.pool_specs.size() ? c.item_where("pools", i) : c.where("pools"), p.name);
    pl = overlay(pl, p.lifecycle);
    if (pl.min > pl.max)
      throw InputError(p.lifecycle_text.empty() ? c.where("lifecycle") : where,
                       fmt::format("pool {}: min {} is above max {}", p.name, pl.min, pl.max));
    out.push_back(pl);
  }
  return out;
}

// The node pools (spec head §6.1, §6.2), at most one per GPU type (names
// compared without case).
std::vector<NodePoolConfig> node_pools(const RunConfig& c) {
  std::vector<NodePoolConfig> out;
  for (size_t k = 0; k < c.node_pools.size(); ++k) {
    const std::string where = c.item_where("node_pools", k);
    const NodePoolConfig& n = c.node_pools[k].value;
    for (const NodePoolConfig& o : out) {
      if (o.name == n.name) throw InputError(where, fmt::format("node pool '{}' is given twice", n.name));
      if (text::lower(o.gpu_type) == text::lower(n.gpu_type))
        throw InputError(where,
                         fmt::format("node pools '{}' and '{}' both have gpu_type {}; give each GPU type one "
                                     "node pool",
                                     o.name, n.name, n.gpu_type));
    }
    out.push_back(n);
  }
  return out;
}

// Each pool's instances go on the node pool of its GPU type, whose nodes
// must hold an instance's TP GPUs.
void place_pools_on_nodes(const RunConfig& c, const std::vector<FleetPool>& pools, FleetConfig& f) {
  std::vector<std::string> types;
  for (const NodePoolConfig& n : f.node_pools) types.push_back(n.gpu_type);
  for (size_t i = 0; i < pools.size(); ++i) {
    PoolLifecycle& pl = f.pools[i];
    for (size_t k = 0; k < f.node_pools.size(); ++k)
      if (text::lower(f.node_pools[k].gpu_type) == text::lower(pools[i].hardware))
        pl.node_pool = static_cast<int32_t>(k);
    if (pl.node_pool < 0)
      throw InputError(
          c.where("node_pools"),
          fmt::format("pool {} runs on {}, but no node pool has that gpu_type (node pools have {}); add "
                      "a node pool of gpu_type={}",
                      pools[i].name, pools[i].hardware, text::join(types, ", "), pools[i].hardware));
    const NodePoolConfig& n = f.node_pools[static_cast<size_t>(pl.node_pool)];
    if (pl.tp > n.gpus_per_node)
      throw InputError(
          c.where("node_pools"),
          fmt::format("pool {} needs {} GPUs per instance (TP), more than node pool {}'s gpus_per_node "
                      "{}",
                      pools[i].name, pl.tp, n.name, n.gpus_per_node));
  }
}

// Reserve slots per pool: every instance that add events may start, what
// scenario code may add (up to each pool's max), and for the autoscaler room
// to reach its maximum twice over (instances still draining hold their slots
// while new ones start).
std::vector<int64_t> reserve_slots(const RunConfig& c, const std::vector<FleetPool>& pools, const ClusterConfig& cc) {
  std::vector<int64_t> reserve(pools.size(), 0);
  for (const ScenarioEvent& e : cc.events) {
    if (e.action != EventAction::Add) continue;
    size_t p = 0;
    for (size_t k = 0; k < pools.size(); ++k)
      if (pools[k].name == e.pool) p = k;
    reserve[p] += e.count;
  }
  const FleetConfig& f = cc.fleet;
  for (size_t p = 0; p < pools.size(); ++p) {
    const int64_t max = f.pools[p].max;
    if (c.event_script) reserve[p] += std::max<int64_t>(0, max - pools[p].count);
    if (f.autoscaler.enabled()) reserve[p] += std::max<int64_t>(0, 2 * max - pools[p].count);
  }
  return reserve;
}

}  // namespace

void configure_fleet(const RunConfig& c, const std::vector<FleetPool>& pools, const std::vector<EngineConfig>& engines,
                     int64_t seed, ClusterConfig& cc) {
  FleetConfig& f = cc.fleet;
  f.seed = seed;
  if (c.autoscaler) static_cast<AutoscalerSettings&>(f.autoscaler) = c.autoscaler->value;
  f.pools = pool_lifecycles(c, pools);
  f.node_pools = node_pools(c);
  if (!f.node_pools.empty()) place_pools_on_nodes(c, pools, f);
  const std::vector<int64_t> reserve = reserve_slots(c, pools, cc);
  f.absent.assign(static_cast<size_t>(cc.num_instances), 0);
  for (size_t p = 0; p < pools.size(); ++p)
    for (int64_t k = 0; k < reserve[p]; ++k) {
      if (!engines.empty()) {
        cc.engines.push_back(engines[p]);
        cc.pool_of.push_back(static_cast<int32_t>(p));
      }
      f.absent.push_back(1);
      ++cc.num_instances;
    }
  if (cc.num_instances > 100000)
    throw InputError(c.where(c.autoscaler ? "autoscaler" : "events"),
                     fmt::format("{} instance slots in all (the initial ones, those add events start and twice "
                                 "the autoscaler's maxima): more than 100000",
                                 cc.num_instances));
}

}  // namespace blis
