// The instance lifecycle and autoscaler settings (--lifecycle, --autoscaler,
// the pools' own lifecycle keys) made into the cluster's FleetConfig, with
// the reserve instance slots that additions fill (docs/autoscaling.md).
#pragma once

#include "cluster/cluster.hpp"

#include <blis/run_config.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace blis {

// What the fleet needs to know of each pool.
struct FleetPool {
  std::string name, model;
  int32_t tp = 1;
  int64_t count = 0;
  double cost_per_hour = 0;
  std::string lifecycle;  // the pool's own lifecycle keys, "" for none
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

// Parses the texts alone (tests, --dump-config): "key=value ..." into the
// pool's lifecycle, over `base`. Each message names the place of the field it
// is about (`place`: the record's, and its fields' own where they have one).
PoolLifecycle parse_lifecycle(const std::string& text, const RecordPlace& place, PoolLifecycle base);
AutoscalerConfig parse_autoscaler(const std::string& text, const RecordPlace& place);
// "name=... gpu_type=... gpus_per_node=8 ..." (a --node-pool text).
NodePoolConfig parse_node_pool(const std::string& text, const RecordPlace& place);

// Reads every record setting (events, pools, node pools, lifecycle,
// autoscaler) once and throws the first error, placed: what a run would
// refuse, refused before --dump-config writes the records out.
void check_records(const RunConfig& c);

// The keys of each record, in their rows' order (docs and tests check them).
std::vector<std::string_view> lifecycle_keys();
std::vector<std::string_view> autoscaler_keys();
std::vector<std::string_view> node_pool_keys();

}  // namespace blis
