#include "config/fleet_records.hpp"

#include "config/record_fields.hpp"

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
constexpr Field<LifecycleSettings> kLifecycle[] = {
    {"min", "fewest instances the autoscaler keeps", [](LifecycleSettings& l, const Value& v) { l.min = count(v); }},
    {"max", "most instances the autoscaler starts", [](LifecycleSettings& l, const Value& v) { l.max = count(v); }},
    {"provisioning_delay", "mean time to provision an added instance",
     [](LifecycleSettings& l, const Value& v) { l.provisioning_mean_s = seconds(v); }},
    {"provisioning_stddev", "its standard deviation",
     [](LifecycleSettings& l, const Value& v) { l.provisioning_stddev_s = seconds(v); }},
    {"loading_delay", "mean time to load the model once provisioned",
     [](LifecycleSettings& l, const Value& v) { l.loading_mean_s = seconds(v); }},
    {"loading_stddev", "its standard deviation",
     [](LifecycleSettings& l, const Value& v) { l.loading_stddev_s = seconds(v); }},
    {"warm_start", "true: the initial instances take traffic at once; false: they load first",
     [](LifecycleSettings& l, const Value& v) {
       if (v.text != "true" && v.text != "false")
         throw v.bad(fmt::format("warm_start={} must be true or false", v.text));
       l.warm_start = v.text == "true";
     }},
    {"warm_up_request_count", "how many first requests of each instance are slowed",
     [](LifecycleSettings& l, const Value& v) { l.warm_up_requests = count(v); }},
    {"warm_up_ttft_factor", "what their TTFT is multiplied by (0: none, else >= 1)",
     [](LifecycleSettings& l, const Value& v) {
       // spec head §6.1: 0 means no penalty (1.0); any other factor is at least 1.
       const double f = number(v, 0, false, 1e6);
       if (f != 0 && f < 1) throw v.bad(fmt::format("warm_up_ttft_factor={} must be 0 (none) or >= 1", v.text));
       l.warm_up_ttft_factor = f == 0 ? 1.0 : f;
     }},
};

// The rows of --autoscaler.
constexpr Field<AutoscalerSettings> kAutoscaler[] = {
    {"interval", "time between scaling decisions",
     [](AutoscalerSettings& a, const Value& v) { a.interval = micros(v); }},
    {"up_window", "how long demand must stay high before scaling up",
     [](AutoscalerSettings& a, const Value& v) { a.up_window = micros(v); }},
    {"down_window", "how long demand must stay low before scaling down",
     [](AutoscalerSettings& a, const Value& v) { a.down_window = micros(v); }},
    {"actuation_delay", "mean time from a decision to its effect",
     [](AutoscalerSettings& a, const Value& v) { a.actuation.mean_s = seconds(v); }},
    {"actuation_stddev", "its standard deviation",
     [](AutoscalerSettings& a, const Value& v) { a.actuation.stddev_s = seconds(v); }},
    {"kv_cache_threshold", "KV usage in (0, 1] counted as saturated",
     [](AutoscalerSettings& a, const Value& v) { a.kv_cache_threshold = number(v, 0, true, 1); }},
    {"scale_up_threshold", "demand per instance above which it scales up",
     [](AutoscalerSettings& a, const Value& v) { a.scale_up_threshold = number(v, 0, true, 1e9); }},
    {"scale_down_boundary", "demand per instance below which it scales down",
     [](AutoscalerSettings& a, const Value& v) { a.scale_down_boundary = number(v, 0, true, 1e9); }},
    {"avg_input_tokens", "prompt length assumed for queued requests",
     [](AutoscalerSettings& a, const Value& v) { a.avg_input_tokens = number(v, 0, true, 1e9); }},
    {"policy", "a scaling rule (plugin or Lua script) instead of the built-in one",
     [](AutoscalerSettings& a, const Value& v) { a.policy = v.text; }},
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

LifecycleSettings parse_lifecycle(const std::string& text, const RecordPlace& place) {
  return record::read<LifecycleSettings>(kLifecycle, text, place, "lifecycle", {});
}

AutoscalerSettings parse_autoscaler(const std::string& text, const RecordPlace& place) {
  AutoscalerSettings a = record::read<AutoscalerSettings>(kAutoscaler, text, place, "autoscaler", {});
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

}  // namespace blis
