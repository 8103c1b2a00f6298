// The fleet's record settings as a configuration holds them (docs/autoscaling.md):
// the instances' lifecycle, the autoscaler and the node pools, read into
// these structs when they are given (src/config/fleet_records.cpp), whoever
// gives them: a flag's text, a scenario's table, a Lua table, the policy file.
// The cluster's own types (src/cluster/fleet_types.hpp) build on them.
#pragma once

#include <blis/kernel.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace blis {

// A delay drawn per use: mean, and a normal spread around it (clamped at 0).
struct DelaySpec {
  double mean_s = 0, stddev_s = 0;
  bool zero() const { return mean_s <= 0 && stddev_s <= 0; }
};

// --lifecycle, or a pool's own lifecycle keys: only the keys given, each laid
// over what a pool has before (its size as the range, then --lifecycle).
struct LifecycleSettings {
  std::optional<int32_t> min, max;
  std::optional<double> provisioning_mean_s, provisioning_stddev_s;
  std::optional<double> loading_mean_s, loading_stddev_s;
  std::optional<bool> warm_start;
  std::optional<int32_t> warm_up_requests;
  std::optional<double> warm_up_ttft_factor;  // 1 for a given 0 (no penalty)
};

// The autoscaler (spec head §6.1 `autoscaler:`, §6.3). interval 0 = off.
struct AutoscalerSettings {
  SimTime interval = 0;
  SimTime up_window = 0, down_window = 0;  // stabilisation windows
  DelaySpec actuation;                     // decision -> action (hpa_scrape_delay)
  double kv_cache_threshold = 0.8, scale_up_threshold = 0.8, scale_down_boundary = 0.4;
  double avg_input_tokens = 512;
  std::string policy;  // a registered autoscaler's name ("" = the built-in rule)
  bool enabled() const { return interval > 0; }
};

// A pool of nodes of `gpus_per_node` GPUs each (spec head §6.1
// `node_pools:`): instances of the pools on its GPU type are placed on its
// nodes; nodes are provisioned (after a delay) when no node has room, and
// billed per node from the request to provision until release.
struct NodePoolConfig {
  std::string name, gpu_type;
  int32_t gpus_per_node = 1;
  double gpu_memory_gib = 0;
  int32_t initial_nodes = 0, min_nodes = 0, max_nodes = 0;  // max_nodes: initial_nodes unless given
  DelaySpec provisioning;
  double cost_per_hour = 0;  // $ per node-hour
};

}  // namespace blis
