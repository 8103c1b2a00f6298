// The autoscaler's loop (spec head §6.3, docs/autoscaling.md): every
// interval, per scaling group (the pools of one model and P/D role), collect
// the load of the fleet's instances, analyze and optimize it (the built-in
// decide_scaling or an `autoscaler` plugin), stabilise the decision over
// its window, then actuate it on the fleet, now or after the actuation
// delay. It owns the groups and the decisions; adding and removing
// instances is the fleet's (cluster/fleet.hpp).
#pragma once

#include "cluster/cluster_core.hpp"
#include "cluster/fleet_types.hpp"

#include <blis/go_rand.hpp>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace blis {

class Arrivals;
class Fleet;

class ScalingLoop {
 public:
  // `series` receives its actions as scenario events; `arrivals` says when
  // the workload is over (the loop stops then). All outlive it.
  ScalingLoop(const ClusterCore& core, Fleet& fleet, const Arrivals& arrivals, TimeSeries& series)
      : core_(core), fleet_(fleet), arrivals_(arrivals), series_(series) {}

  // The groups and the first tick; after the fleet's setup (kernel events
  // scheduled at equal times keep that order). Nothing without an autoscaler.
  void setup();
  // Its kernel events.
  void tick();                   // ScalingTick
  void actuate(size_t decision);  // ScaleActuation
  // At the end of the run: the actions as applied, in time order.
  std::vector<ScalingAction> take_actions() { return std::move(applied_); }

 private:
  struct ScalingGroup {
    std::vector<int32_t> pools;
    SimTime up_since = -1, down_since = -1;
  };
  // The load of scaling group `group`'s pools, and the KV capacity of its
  // instances still starting (pending_capacity).
  std::vector<VariantLoad> group_load(size_t group, double& pending_capacity) const;
  // One tick for scaling group `group`: its decision, stabilised, then
  // actuated (now, or after the actuation delay).
  void scale_group(size_t group, SimTime now);
  SimTime next_window_end() const;
  std::pair<int32_t, int32_t> ask_rule(std::vector<VariantLoad> variants, double pending_supply);

  ClusterCore core_;
  Fleet& fleet_;
  const Arrivals& arrivals_;
  TimeSeries& series_;
  std::vector<ScalingGroup> groups_;
  std::vector<ScalingAction> decisions_, applied_;
  std::unique_ptr<GoRand> rng_;
};

}  // namespace blis
