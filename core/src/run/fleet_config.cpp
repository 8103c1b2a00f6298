#include "run/fleet_config.hpp"

#include "config/pool_text.hpp"
#include "config/record_fields.hpp"
#include "run/pools.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <utility>

namespace blis {
namespace {

using record::Field;
using record::Value;

double number(const Value& v, double lo, bool open_lo, double hi) {
  double d = 0;
  auto r = std::from_chars(v.text.data(), v.text.data() + v.text.size(), d);
  if (r.ec != std::errc() || r.ptr != v.text.data() + v.text.size() || !std::isfinite(d) || d < lo ||
      (open_lo && d == lo) || d > hi)
    throw v.bad(fmt::format("{}={} must be a number in {}{}, {}]", v.key, v.text, open_lo ? "(" : "[", lo, hi));
  return d;
}

int32_t count(const Value& v) {
  const double d = number(v, 0, false, 100000);
  if (d != std::floor(d)) throw v.bad(fmt::format("{}={} must be a whole instance count", v.key, v.text));
  return static_cast<int32_t>(d);
}

// Seconds of a duration text (30s, 500ms, 3m).
double seconds(const Value& v) {
  auto us = duration_text_us(v.text);
  if (!us || *us < 0) throw v.bad(fmt::format("{}={} is not a duration >= 0 (30s, 500ms, 3m)", v.key, v.text));
  return static_cast<double>(*us) / 1e6;
}
SimTime micros(const Value& v) { return static_cast<SimTime>(std::llround(seconds(v) * 1e6)); }

// The rows of --lifecycle and of a pool's own lifecycle keys.
constexpr Field<PoolLifecycle> kLifecycle[] = {
    {"min", "fewest instances the autoscaler keeps", [](PoolLifecycle& l, const Value& v) { l.min = count(v); }},
    {"max", "most instances the autoscaler starts", [](PoolLifecycle& l, const Value& v) { l.max = count(v); }},
    {"provisioning_delay", "mean time to provision an added instance",
     [](PoolLifecycle& l, const Value& v) { l.provisioning.mean_s = seconds(v); }},
    {"provisioning_stddev", "its standard deviation",
     [](PoolLifecycle& l, const Value& v) { l.provisioning.stddev_s = seconds(v); }},
    {"loading_delay", "mean time to load the model once provisioned",
     [](PoolLifecycle& l, const Value& v) { l.loading.mean_s = seconds(v); }},
    {"loading_stddev", "its standard deviation",
     [](PoolLifecycle& l, const Value& v) { l.loading.stddev_s = seconds(v); }},
    {"warm_start", "true: the initial instances take traffic at once; false: they load first",
     [](PoolLifecycle& l, const Value& v) {
       if (v.text != "true" && v.text != "false")
         throw v.bad(fmt::format("warm_start={} must be true or false", v.text));
       l.warm_start = v.text == "true";
     }},
    {"warm_up_request_count", "how many first requests of each instance are slowed",
     [](PoolLifecycle& l, const Value& v) { l.warm_up_requests = count(v); }},
    {"warm_up_ttft_factor", "what their TTFT is multiplied by (0: none, else >= 1)",
     [](PoolLifecycle& l, const Value& v) {
       // spec head §6.1: 0 means no penalty (1.0); any other factor is at least 1.
       const double f = number(v, 0, false, 1e6);
       if (f != 0 && f < 1) throw v.bad(fmt::format("warm_up_ttft_factor={} must be 0 (none) or >= 1", v.text));
       l.warm_up_ttft_factor = f == 0 ? 1.0 : f;
     }},
};

// The rows of --autoscaler.
constexpr Field<AutoscalerConfig> kAutoscaler[] = {
    {"interval", "time between scaling decisions", [](AutoscalerConfig& a, const Value& v) { a.interval = micros(v); }},
    {"up_window", "how long demand must stay high before scaling up",
     [](AutoscalerConfig& a, const Value& v) { a.up_window = micros(v); }},
    {"down_window", "how long demand must stay low before scaling down",
     [](AutoscalerConfig& a, const Value& v) { a.down_window = micros(v); }},
    {"actuation_delay", "mean time from a decision to its effect",
     [](AutoscalerConfig& a, const Value& v) { a.actuation.mean_s = seconds(v); }},
    {"actuation_stddev", "its standard deviation",
     [](AutoscalerConfig& a, const Value& v) { a.actuation.stddev_s = seconds(v); }},
    {"kv_cache_threshold", "KV usage in (0, 1] counted as saturated",
     [](AutoscalerConfig& a, const Value& v) { a.kv_cache_threshold = number(v, 0, true, 1); }},
    {"scale_up_threshold", "demand per instance above which it scales up",
     [](AutoscalerConfig& a, const Value& v) { a.scale_up_threshold = number(v, 0, true, 1e9); }},
    {"scale_down_boundary", "demand per instance below which it scales down",
     [](AutoscalerConfig& a, const Value& v) { a.scale_down_boundary = number(v, 0, true, 1e9); }},
    {"avg_input_tokens", "prompt length assumed for queued requests",
     [](AutoscalerConfig& a, const Value& v) { a.avg_input_tokens = number(v, 0, true, 1e9); }},
    {"policy", "a scaling rule (plugin or Lua script) instead of the built-in one",
     [](AutoscalerConfig& a, const Value& v) { a.policy = v.text; }},
};

// A node pool being read: max_nodes defaults to initial_nodes.
struct NodePoolRead {
  NodePoolConfig n;
  bool max_given = false;
};

// The rows of --node-pool.
constexpr Field<NodePoolRead> kNodePool[] = {
    {"name", "the node pool's name", [](NodePoolRead& r, const Value& v) { r.n.name = v.text; }},
    {"gpu_type", "the GPU type of its nodes; pools of that hardware run on them",
     [](NodePoolRead& r, const Value& v) { r.n.gpu_type = v.text; }},
    {"gpus_per_node", "GPUs per node (>= 1)",
     [](NodePoolRead& r, const Value& v) {
       r.n.gpus_per_node = count(v);
       if (r.n.gpus_per_node < 1) throw v.bad(fmt::format("gpus_per_node={} must be >= 1", v.text));
     }},
    {"gpu_memory_gib", "memory per GPU",
     [](NodePoolRead& r, const Value& v) { r.n.gpu_memory_gib = number(v, 0, true, 1e9); }},
    {"initial_nodes", "nodes at the start", [](NodePoolRead& r, const Value& v) { r.n.initial_nodes = count(v); }},
    {"min_nodes", "fewest nodes", [](NodePoolRead& r, const Value& v) { r.n.min_nodes = count(v); }},
    {"max_nodes", "most nodes (default initial_nodes)",
     [](NodePoolRead& r, const Value& v) {
       r.n.max_nodes = count(v);
       r.max_given = true;
     }},
    {"provisioning_delay", "mean time to provision a node",
     [](NodePoolRead& r, const Value& v) { r.n.provisioning.mean_s = seconds(v); }},
    {"provisioning_stddev", "its standard deviation",
     [](NodePoolRead& r, const Value& v) { r.n.provisioning.stddev_s = seconds(v); }},
    {"cost_per_hour", "$ per node-hour",
     [](NodePoolRead& r, const Value& v) { r.n.cost_per_hour = number(v, 0, false, 1e12); }},
};

}  // namespace

namespace {
template <class T, size_t N>
std::vector<std::string_view> keys_of(const Field<T> (&rows)[N]) {
  std::vector<std::string_view> out;
  for (const auto& f : rows) out.push_back(f.key);
  return out;
}
}  // namespace

std::vector<std::string_view> lifecycle_keys() { return keys_of(kLifecycle); }
std::vector<std::string_view> autoscaler_keys() { return keys_of(kAutoscaler); }
std::vector<std::string_view> node_pool_keys() { return keys_of(kNodePool); }

PoolLifecycle parse_lifecycle(const std::string& text, const RecordPlace& place, PoolLifecycle base) {
  return record::read<PoolLifecycle>(kLifecycle, text, place, "lifecycle", std::move(base));
}

AutoscalerConfig parse_autoscaler(const std::string& text, const RecordPlace& place) {
  AutoscalerConfig a = record::read<AutoscalerConfig>(kAutoscaler, text, place, "autoscaler", {});
  if (a.interval <= 0)
    throw InputError(place.of("interval"),
                     fmt::format("autoscaler '{}': needs interval=DURATION > 0 (e.g. interval=30s)", text));
  // spec head §6.1: the boundary below which it scales down must lie below the one above which it scales up.
  if (a.scale_down_boundary >= a.scale_up_threshold)
    throw InputError(place.of("scale_down_boundary"),
                     fmt::format("autoscaler '{}': scale_down_boundary {} must be below scale_up_threshold {}",
                                 text, a.scale_down_boundary, a.scale_up_threshold));
  return a;
}

NodePoolConfig parse_node_pool(const std::string& text, const RecordPlace& place) {
  const std::string& where = place.where;
  NodePoolRead r = record::read<NodePoolRead>(kNodePool, text, place, "node pool", {});
  NodePoolConfig& n = r.n;
  if (n.name.empty()) throw InputError(where, fmt::format("node pool '{}': needs name=NAME", text));
  if (n.gpu_type.empty())
    throw InputError(where, fmt::format("node pool '{}': needs gpu_type=GPU (e.g. H100)", text));
  if (!r.max_given) n.max_nodes = n.initial_nodes;
  if (n.max_nodes < n.initial_nodes)
    throw InputError(place.of("max_nodes"), fmt::format("node pool '{}': max_nodes {} is below initial_nodes {}",
                                                        text, n.max_nodes, n.initial_nodes));
  if (n.min_nodes > n.max_nodes)
    throw InputError(place.of("min_nodes"), fmt::format("node pool '{}': min_nodes {} is above max_nodes {}", text,
                                                        n.min_nodes, n.max_nodes));
  if (n.max_nodes < 1)
    throw InputError(where,
                     fmt::format("node pool '{}': needs max_nodes >= 1 (or initial_nodes >= 1)", text));
  return n;
}

void check_records(const RunConfig& c) {
  for (size_t k = 0; k < c.events.size(); ++k) parse_scenario_event(c.events[k], c.record_place("events", k));
  for (size_t k = 0; k < c.pool_specs.size(); ++k) {
    const RecordPlace place = c.record_place("pools", k);
    const config::PoolText t = config::read_pool_text(c.pool_specs[k], place);
    if (!t.lifecycle.empty()) parse_lifecycle(t.lifecycle, place, {});
  }
  for (size_t k = 0; k < c.node_pool_specs.size(); ++k)
    parse_node_pool(c.node_pool_specs[k], c.record_place("node_pools", k));
  if (c.lifecycle) parse_lifecycle(*c.lifecycle, c.record_place("lifecycle"), {});
  if (c.autoscaler) parse_autoscaler(*c.autoscaler, c.record_place("autoscaler"));
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
    if (c.lifecycle) pl = parse_lifecycle(*c.lifecycle, c.record_place("lifecycle"), pl);
    RecordPlace place = i < c.pool_specs.size() ? c.record_place("pools", i) : RecordPlace(c.where("pools"));
    place.where = fmt::format("{}: pool {}", place.where, p.name);
    const std::string& where = place.where;
    if (!p.lifecycle.empty()) pl = parse_lifecycle(p.lifecycle, place, pl);
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
    const RecordPlace place = c.record_place("node_pools", k);
    const std::string& where = place.where;
    NodePoolConfig n = parse_node_pool(c.node_pool_specs[k], place);
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
  if (c.autoscaler) f.autoscaler = parse_autoscaler(*c.autoscaler, c.record_place("autoscaler"));
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
