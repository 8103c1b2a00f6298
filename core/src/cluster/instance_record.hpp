// What the cluster knows of one instance slot besides the instance itself:
// its lifecycle, its standing with the router and scenario events, and its
// node. One record per slot (ClusterSimulation::slots_), so that failing,
// draining, adding or removing an instance reads and writes one struct. The
// defaults are a slot at the start of a run with every feature off.
#pragma once

#include "cluster/fleet_types.hpp"

#include <cstdint>

namespace blis {

struct InstanceRecord {
  Life life = Life::Active;      // lifecycle state (cluster/fleet_types.hpp); always Active without a fleet
  bool routable = true;          // takes traffic: not failed, drained, starting, leaving or absent
  bool down = false;             // failed (a `fail` event): requests still reaching it are lost
  bool down_reroutes = false;    // of those, re-routed (else failed), as its failure said
  int32_t warm_left = 0;         // warm-up: requests still routed to it while it warms up
  uint32_t generation = 0;       // of its current start: ready events of an older one are stale
  int64_t open_span = -1;        // its open provisioning span, an index in spans_ (-1: none)
  int32_t node = -1;             // node pools: the node it is placed on (-1: none)
  bool awaits_node = false;      // node pools: placed on a node not ready yet
};

}  // namespace blis
