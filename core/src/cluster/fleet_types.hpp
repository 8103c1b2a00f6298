// Instance lifecycle and the autoscaler (docs/autoscaling.md, spec head §6):
// their settings, states and records; the part that runs them is the fleet
// (cluster/fleet.hpp). Instances are added and removed at run time, by
// scenario events (`add`, `remove`) or by the autoscaler's collect ->
// analyze -> optimize -> actuate loop. The cluster keeps a fixed set of instance slots: the initial
// instances, then per pool the slots that additions may fill; a removed
// instance's slot is free again once it has drained.
#pragma once

#include <blis/fleet_settings.hpp>
#include <blis/kernel.hpp>
#include <blis/policies.hpp>
#include <blis/scenario_events.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blis {

class GoRand;

// One pool's lifecycle settings (the [[pools]] keys min, max,
// provisioning_delay, loading_delay).
struct PoolLifecycle {
  std::string model;       // instances of the same model (and P/D role) are one scaling group
  uint8_t pd_role = 0;     // P/D: kPdPrefill | kPdDecode bits (0 without P/D); pools of different roles scale apart
  int32_t tp = 1;          // GPUs per instance (GPU-hours)
  double cost_per_hour = 0;  // $ per instance-hour (orders scale-up/down)
  int32_t min = 0, max = 0;  // autoscaler limits on live instances (max 0: no autoscaling of the pool)
  DelaySpec provisioning;    // until the node is there
  DelaySpec loading;         // until the model is loaded and the instance takes traffic
  // spec head §6.2 warm-up: the first `warm_up_requests` requests routed to
  // each instance (in each of its lives) have their TTFT multiplied by
  // `warm_up_ttft_factor` in the metrics; scheduling is unaffected.
  int32_t warm_up_requests = 0;
  double warm_up_ttft_factor = 1.0;
  // false: the initial instances load first too (spec head §6.1
  // warm_start_initial_instances false): they take traffic after a loading
  // delay from t=0 (their nodes exist, so no provisioning delay).
  bool warm_start = true;
  // The node pool its instances are placed on (spec head §6.2), -1: none
  // (each instance provisioned and billed on its own).
  int32_t node_pool = -1;
};

// One node's life: asked for at `start`, ready at `ready`, released at `end`
// (-1: still held when the run ended).
struct NodeSpan {
  int32_t node_pool = 0;
  SimTime start = 0, ready = 0, end = -1;
};

// The autoscaler as the run has it: its settings and, with a policy, the
// rule created for the run.
struct AutoscalerConfig : AutoscalerSettings {
  std::shared_ptr<Autoscaler> rule;
};

struct FleetConfig {
  std::vector<PoolLifecycle> pools;  // one per pool (empty: no lifecycle)
  std::vector<uint8_t> absent;       // per instance slot: 1 = starts absent (a reserve slot)
  AutoscalerConfig autoscaler;
  std::vector<NodePoolConfig> node_pools;  // empty: no node model
  int64_t seed = 0;
  bool enabled() const { return !pools.empty(); }
};

// One pool's load in a scaling group, as the autoscaler collected it.
struct VariantLoad {
  int32_t pool = 0;
  double cost_per_hour = 0;
  double supply = 0, demand = 0, max_supply = 0;  // KV tokens, over its active instances
  int32_t count = 0;                              // active instances taking traffic
  int32_t room = 0;                               // how many more it may start (max - live)
  int32_t above_min = 0;                          // how many it may remove (count - min)
  int64_t queue_depth = 0, in_flight = 0;         // over its active instances
};

struct ScalingDecision {
  int32_t pool = -1, delta = 0;  // delta 0: nothing to do
  double required = 0, spare = 0;
};

// spec head §6.3 analyze and optimize for one scaling group
// (cluster/scaling_loop.cpp): `pending_supply` is the supply of the instances
// still starting. Scale up on the cheapest pool with room, down on the most
// expensive above its minimum.
ScalingDecision decide_scaling(std::vector<VariantLoad> variants, double pending_supply, const AutoscalerConfig& a);

// spec head §6.1 delay sampling: the mean without a spread, else a normal
// draw around it, clamped at 0; whole microseconds.
SimTime sample_delay(const DelaySpec& d, GoRand& rng);

// Where an instance slot is in its life (spec head §6.2 states, without the
// node placement): Starting covers provisioning and loading.
enum class Life : uint8_t { Active, Starting, Draining, Absent };

// A span of time an instance slot was provisioned (billed), for GPU-hours.
struct InstanceSpan {
  int32_t instance = 0, pool = 0;
  SimTime start = 0, end = -1;  // end -1: still provisioned when the run ended
};

// One autoscaler decision as applied.
struct ScalingAction {
  SimTime time = 0;
  int32_t pool = 0;
  int32_t delta = 0;  // +n added, -n removed
  std::string why;
};

}  // namespace blis
