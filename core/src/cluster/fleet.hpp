// The fleet: the instance slots and their records (cluster/instance_record.hpp)
// — lifecycle, node, pool, standing with the router, warm-up — and everything
// that changes them: scenario events that fail, drain, restore, add or remove
// instances, the provisioning and loading delays, node placement (spec head
// §6.2). Failing, draining, adding or removing an instance is a method of
// this class, whoever asks (scenario events, the autoscaler's loop of
// cluster/scaling_loop.hpp). It schedules its own kernel events
// (InstanceReady, NodeReady).
#pragma once

#include "cluster/cluster_core.hpp"
#include "cluster/fleet_types.hpp"
#include "cluster/instance_record.hpp"

#include <blis/go_rand.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blis {

class PdFlow;
class Rerouting;
class Routing;
struct ClusterResult;

class Fleet {
 public:
  explicit Fleet(const ClusterCore& core) : core_(core) {}

  // The parts it works with, once they exist (they outlive it): the router's
  // (an instance ready takes traffic), the requests' way back to routing and
  // P/D (null without it: transfers to abandon).
  void connect(Routing& routing, Rerouting& rerouting, PdFlow* pd);
  // Once the instances exist: the initial lifecycle, nodes and autoscaler.
  void setup(MetricsCollector& collector);

  const InstanceRecord& record(size_t i) const { return slots_[i]; }
  const std::vector<InstanceRecord>& records() const { return slots_; }
  size_t pool_of(size_t i) const {
    return core_.cfg.pool_of.empty() ? 0 : static_cast<size_t>(core_.cfg.pool_of[i]);
  }
  // Live instances of pool p: taking traffic or on their way to it.
  int32_t live_instances(size_t pool) const;
  // Whether an instance has failed: requests still reaching it are lost.
  bool any_down() const { return any_down_; }

  // A request left instance i, or was lost on its way to it: a draining
  // instance with nothing left leaves.
  void departed(size_t i) {
    if (draining_ > 0) check_drained(i);
  }
  // spec head §6.2 warm-up: the request in `r` routed to instance i.
  void warm_up(size_t i, Request& r) {
    if (!warm_up_on_) return;
    int32_t& left = slots_[i].warm_left;
    r.marks.warm_up = left > 0;
    if (left > 0) --left;
  }

  // Scenario events on instance i; each returns the event log's note.
  std::string fail(size_t i, bool reroute);  // its requests re-routed or failed
  std::string drain(size_t i);               // takes no more traffic
  std::string restore(size_t i);             // takes traffic again
  // Starts up to `count` instances of pool p in free slots; how many started.
  int32_t add(size_t p, int32_t count);
  // Removes up to `count` instances of pool p, the lowest-indexed (oldest)
  // active ones first; how many.
  int32_t remove(size_t p, int32_t count, DrainMode mode);
  // Removes instance i if it is active or starting; whether it was.
  bool remove_one(size_t i, DrainMode mode);

  // Its kernel events.
  void on_instance_ready(uint64_t payload);
  void on_node_ready(uint64_t node);

  // At the end of the run: the spans and nodes.
  void report(ClusterResult& out);

 private:
  // Node pools (spec head §6.2): placement of an instance on a node, the
  // node's readiness, and the release of GPUs and of idle nodes.
  void setup_nodes();
  bool place(size_t instance);
  int32_t provision_node(int32_t node_pool);
  void start_loading(size_t instance);
  void release_gpus(size_t instance);
  void warn_unplaced(size_t instance) const;
  void instance_ready(size_t i);
  void remove_instance(size_t i, DrainMode mode);
  void close_span(size_t i);
  void check_drained(size_t i);

  ClusterCore core_;
  Routing* routing_ = nullptr;
  Rerouting* rerouting_ = nullptr;
  PdFlow* pd_ = nullptr;

  // Each instance slot's record: its lifecycle, whether it takes traffic or
  // failed, its warm-up, start generation, open span and node. One per
  // instance, whatever is on.
  std::vector<InstanceRecord> slots_;
  // Whether instances warm up (a pool of the fleet has warm_up_requests) and
  // whether they are placed on nodes (the fleet has node pools): else the
  // records' warm_left and node are never read.
  bool warm_up_on_ = false, nodes_on_ = false;
  bool any_down_ = false;  // some slot's record is down
  int64_t draining_ = 0;   // instances draining
  std::vector<uint32_t> evicted_;  // scratch: requests taken off an instance
  // The provisioning spans.
  std::vector<InstanceSpan> spans_;
  std::unique_ptr<GoRand> lifecycle_rng_;
  // Node pools: every node (its span and free GPUs), and the slots no node
  // could take yet, in the order they asked.
  std::vector<NodeSpan> nodes_;
  std::vector<int32_t> node_free_;
  std::vector<size_t> unplaced_;
  int64_t unplaced_waits_ = 0;
  std::unique_ptr<GoRand> node_rng_;
};

}  // namespace blis
