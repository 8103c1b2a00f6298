#include "run/fleet_config.hpp"

#include "run/pools.hpp"
#include "util/compact_text.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>

namespace blis {
namespace {

// "key=value key=value" into a map; InputError on a malformed or repeated pair.
std::map<std::string, std::string> pairs(const std::string& text, const std::string& where, const char* what) {
  std::map<std::string, std::string> kv;
  for (auto& p : compact::pairs(text, compact::kSpaced, where, fmt::format("{} '{}': ", what, text)))
    if (!kv.emplace(p.key, std::move(p.value)).second)
      throw InputError(where, fmt::format("{} '{}': '{}' is given twice", what, text, p.key));
  return kv;
}

double number(const std::string& key, const std::string& v, const std::string& where, double lo, bool open_lo,
              double hi) {
  double d = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), d);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(d) || d < lo || (open_lo && d == lo) ||
      d > hi)
    throw InputError(where, fmt::format("{}={} must be a number in {}{}, {}]", key, v, open_lo ? "(" : "[", lo, hi));
  return d;
}

int32_t count(const std::string& key, const std::string& v, const std::string& where) {
  const double d = number(key, v, where, 0, false, 100000);
  if (d != std::floor(d)) throw InputError(where, fmt::format("{}={} must be a whole instance count", key, v));
  return static_cast<int32_t>(d);
}

// Seconds of a duration text (30s, 500ms, 3m).
double seconds(const std::string& key, const std::string& v, const std::string& where) {
  auto us = duration_text_us(v);
  if (!us || *us < 0) throw InputError(where, fmt::format("{}={} is not a duration >= 0 (30s, 500ms, 3m)", key, v));
  return static_cast<double>(*us) / 1e6;
}

}  // namespace

PoolLifecycle parse_lifecycle(const std::string& text, const std::string& where, PoolLifecycle base) {
  for (const auto& [k, v] : pairs(text, where, "lifecycle")) {
    if (k == "min") {
      base.min = count(k, v, where);
    } else if (k == "max") {
      base.max = count(k, v, where);
    } else if (k == "provisioning_delay") {
      base.provisioning.mean_s = seconds(k, v, where);
    } else if (k == "provisioning_stddev") {
      base.provisioning.stddev_s = seconds(k, v, where);
    } else if (k == "loading_delay") {
      base.loading.mean_s = seconds(k, v, where);
    } else if (k == "loading_stddev") {
      base.loading.stddev_s = seconds(k, v, where);
    } else if (k == "warm_start") {
      if (v != "true" && v != "false")
        throw InputError(where, fmt::format("lifecycle '{}': warm_start={} must be true or false", text, v));
      base.warm_start = v == "true";
    } else if (k == "warm_up_request_count") {
      base.warm_up_requests = count(k, v, where);
    } else if (k == "warm_up_ttft_factor") {
      // spec head §6.1: 0 means no penalty (1.0); any other factor is at least 1.
      const double f = number(k, v, where, 0, false, 1e6);
      if (f != 0 && f < 1)
        throw InputError(where, fmt::format("lifecycle '{}': warm_up_ttft_factor={} must be 0 (none) or >= 1", text, v));
      base.warm_up_ttft_factor = f == 0 ? 1.0 : f;
    } else {
      throw InputError(where, fmt::format("lifecycle '{}': unknown key '{}'; keys are min, max, provisioning_delay, "
                                          "provisioning_stddev, loading_delay, loading_stddev, "
                                          "warm_start, warm_up_request_count, warm_up_ttft_factor",
                                          text, k));
    }
  }
  return base;
}

AutoscalerConfig parse_autoscaler(const std::string& text, const std::string& where) {
  AutoscalerConfig a;
  for (const auto& item : pairs(text, where, "autoscaler")) {
    // Named references: clang 14 does not let a lambda capture structured bindings.
    const auto& k = item.first;
    const auto& v = item.second;
    auto us = [&]() { return static_cast<SimTime>(std::llround(seconds(k, v, where) * 1e6)); };
    if (k == "interval")
      a.interval = us();
    else if (k == "up_window")
      a.up_window = us();
    else if (k == "down_window")
      a.down_window = us();
    else if (k == "actuation_delay")
      a.actuation.mean_s = seconds(k, v, where);
    else if (k == "actuation_stddev")
      a.actuation.stddev_s = seconds(k, v, where);
    else if (k == "kv_cache_threshold")
      a.kv_cache_threshold = number(k, v, where, 0, true, 1);
    else if (k == "scale_up_threshold")
      a.scale_up_threshold = number(k, v, where, 0, true, 1e9);
    else if (k == "scale_down_boundary")
      a.scale_down_boundary = number(k, v, where, 0, true, 1e9);
    else if (k == "avg_input_tokens")
      a.avg_input_tokens = number(k, v, where, 0, true, 1e9);
    else if (k == "policy")
      a.policy = v;
    else
      throw InputError(where, fmt::format("autoscaler '{}': unknown key '{}'; keys are interval, up_window, "
                                          "down_window, actuation_delay, actuation_stddev, kv_cache_threshold, "
                                          "scale_up_threshold, scale_down_boundary, avg_input_tokens, policy",
                                          text, k));
  }
  if (a.interval <= 0)
    throw InputError(where, fmt::format("autoscaler '{}': needs interval=DURATION > 0 (e.g. interval=30s)", text));
  // spec head §6.1: the boundary below which it scales down must lie below the one above which it scales up.
  if (a.scale_down_boundary >= a.scale_up_threshold)
    throw InputError(where, fmt::format("autoscaler '{}': scale_down_boundary {} must be below scale_up_threshold {}",
                                        text, a.scale_down_boundary, a.scale_up_threshold));
  return a;
}

NodePoolConfig parse_node_pool(const std::string& text, const std::string& where) {
  NodePoolConfig n;
  bool max_given = false;
  for (const auto& [k, v] : pairs(text, where, "node pool")) {
    if (k == "name") {
      n.name = v;
    } else if (k == "gpu_type") {
      n.gpu_type = v;
    } else if (k == "gpus_per_node") {
      n.gpus_per_node = count(k, v, where);
      if (n.gpus_per_node < 1)
        throw InputError(where, fmt::format("node pool '{}': gpus_per_node must be >= 1", text));
    } else if (k == "gpu_memory_gib") {
      n.gpu_memory_gib = number(k, v, where, 0, true, 1e9);
    } else if (k == "initial_nodes") {
      n.initial_nodes = count(k, v, where);
    } else if (k == "min_nodes") {
      n.min_nodes = count(k, v, where);
    } else if (k == "max_nodes") {
      n.max_nodes = count(k, v, where);
      max_given = true;
    } else if (k == "provisioning_delay") {
      n.provisioning.mean_s = seconds(k, v, where);
    } else if (k == "provisioning_stddev") {
      n.provisioning.stddev_s = seconds(k, v, where);
    } else if (k == "cost_per_hour") {
      n.cost_per_hour = number(k, v, where, 0, false, 1e12);
    } else {
      throw InputError(
          where, fmt::format("node pool '{}': unknown key '{}'; keys are name, gpu_type, gpus_per_node, "
                             "gpu_memory_gib, initial_nodes, min_nodes, max_nodes, provisioning_delay, "
                             "provisioning_stddev, cost_per_hour",
                             text, k));
    }
  }
  if (n.name.empty()) throw InputError(where, fmt::format("node pool '{}': needs name=NAME", text));
  if (n.gpu_type.empty())
    throw InputError(where, fmt::format("node pool '{}': needs gpu_type=GPU (e.g. H100)", text));
  if (!max_given) n.max_nodes = n.initial_nodes;
  if (n.max_nodes < n.initial_nodes)
    throw InputError(where, fmt::format("node pool '{}': max_nodes {} is below initial_nodes {}", text,
                                        n.max_nodes, n.initial_nodes));
  if (n.min_nodes > n.max_nodes)
    throw InputError(where, fmt::format("node pool '{}': min_nodes {} is above max_nodes {}", text,
                                        n.min_nodes, n.max_nodes));
  if (n.max_nodes < 1)
    throw InputError(where,
                     fmt::format("node pool '{}': needs max_nodes >= 1 (or initial_nodes >= 1)", text));
  return n;
}

bool wants_fleet(const RunConfig& c, const ClusterConfig& cc) {
  if (c.lifecycle || c.autoscaler || !c.node_pool_specs.empty()) return true;
  // A pool's own warm-up (its other lifecycle keys act with a fleet only).
  for (const std::string& text : c.pool_specs)
    if (text.find("warm_up_") != std::string::npos) return true;
  for (const ScenarioEvent& e : cc.events)
    if (e.action == EventAction::Add || e.action == EventAction::Remove) return true;
  return false;
}

namespace {

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
    if (c.lifecycle) pl = parse_lifecycle(*c.lifecycle, c.where("lifecycle"), pl);
    const std::string where = fmt::format(
        "{}: pool {}", i < c.pool_specs.size() ? c.item_where("pools", i) : c.where("pools"), p.name);
    if (!p.lifecycle.empty()) pl = parse_lifecycle(p.lifecycle, where, pl);
    if (pl.min > pl.max)
      throw InputError(p.lifecycle.empty() ? c.where("lifecycle") : where,
                       fmt::format("pool {}: min {} is above max {}", p.name, pl.min, pl.max));
    out.push_back(pl);
  }
  return out;
}

// The node pools (spec head §6.1, §6.2), at most one per GPU type (names
// compared without case).
std::vector<NodePoolConfig> node_pools(const RunConfig& c) {
  std::vector<NodePoolConfig> out;
  for (size_t k = 0; k < c.node_pool_specs.size(); ++k) {
    const std::string where = c.item_where("node_pools", k);
    NodePoolConfig n = parse_node_pool(c.node_pool_specs[k], where);
    for (const NodePoolConfig& o : out) {
      if (o.name == n.name) throw InputError(where, fmt::format("node pool '{}' is given twice", n.name));
      if (text::lower(o.gpu_type) == text::lower(n.gpu_type))
        throw InputError(where,
                         fmt::format("node pools '{}' and '{}' both have gpu_type {}; give each GPU type one "
                                     "node pool",
                                     o.name, n.name, n.gpu_type));
    }
    out.push_back(std::move(n));
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
  if (c.autoscaler) f.autoscaler = parse_autoscaler(*c.autoscaler, c.where("autoscaler"));
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
