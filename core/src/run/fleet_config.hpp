// The instance lifecycle and autoscaler settings (--lifecycle, --autoscaler,
// the pools' own lifecycle keys) made into the cluster's FleetConfig, with
// the reserve instance slots that additions fill (docs/autoscaling.md).
#pragma once

#include "cluster/cluster.hpp"

#include <blis/run_config.hpp>

#include <string>
#include <vector>

namespace blis {

// What the fleet needs to know of each pool.
struct FleetPool {
  std::string name, model;
  int32_t tp = 1;
  int64_t count = 0;
  double cost_per_hour = 0;
  LifecycleSettings lifecycle;  // the pool's own lifecycle keys
  std::string lifecycle_text;   // how they were written, "" for none
  std::string hardware;   // its GPU type, matched against the node pools' gpu_type
};

// True when the run adds or removes instances: add/remove events, an
// autoscaler or a lifecycle setting.
bool wants_fleet(const RunConfig& c, const ClusterConfig& cc);

// Fills cc.fleet and appends the reserve slots after the initial instances
// (cc.num_instances, cc.engines, cc.pool_of grow). `engines` gives each
// pool's engine (empty without pools). InputError naming the setting on a
// bad key or value.
void configure_fleet(const RunConfig& c, const std::vector<FleetPool>& pools, const std::vector<EngineConfig>& engines,
                     int64_t seed, ClusterConfig& cc);


}  // namespace blis
