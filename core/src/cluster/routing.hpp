// The router's part of the cluster (spec cluster §4): the instances as the
// policies see them — snapshots refreshed per instance at most every
// snapshot_refresh_interval (§4.3), live in-flight counts, each instance's
// cached prefix of the request (spec head §7.2) — and the admission and
// routing policies that decide over them. It reads which instances take
// traffic from the fleet's records; it schedules nothing.
#pragma once

#include "cluster/cluster_core.hpp"
#include "cluster/instance_record.hpp"
#include "cluster/router.hpp"

#include <blis/plugin.h>

#include <limits>
#include <string>
#include <vector>

namespace blis {

class Routing {
 public:
  // `slots`: each instance slot's record (the fleet's), read for `routable`;
  // it outlives this part.
  Routing(const ClusterCore& core, const std::vector<InstanceRecord>& slots, ClusterPolicies policies);

  // Once the instances exist: the delayed view of their caches starts as
  // they are now.
  void start();

  // The instances taking traffic as the policies see them now, and the view
  // of the request in `slot`. Valid until the next call.
  const blis_route_input& state(uint32_t slot);
  // The same snapshots without a request (the gateway's saturation detector).
  const blis_route_input& gate_state();
  // P/D: state() narrowed to the instances with `role` (kPdPrefill, kPdDecode, kPdEncode).
  const blis_route_input& state_of_role(uint32_t slot, uint8_t role);
  // Whether an instance with `role` takes traffic (the last state() stays valid).
  bool any_routable(uint8_t role) const;
  // How many instances with `role` take traffic.
  int64_t routable_count(uint8_t role) const;
  // The admission policy's decision on the request in `slot` (true without a
  // policy); `reason`: its word on a rejection.
  bool admit(uint32_t slot, std::string& reason);

  // `router`'s choice among `in` (the last state()): its position there.
  int32_t route(Router& router, const blis_route_input& in) { return router.route(in, scores_); }
  const blis_instance_snapshot& at(int32_t position) const { return state_[static_cast<size_t>(position)]; }
  // The choice at `position` as the lifecycle signal `routed` reports it.
  RoutingChoice choice(int32_t position, const blis_route_input& in) const {
    return RoutingChoice{at(position).index, scores_, in, position};
  }
  Router& router() { return *policies_.router; }
  // P/D: the pools' routers (the cluster's router when a pool has none).
  Router& prefill_router() { return policies_.prefill_router ? *policies_.prefill_router : *policies_.router; }
  Router& decode_router() { return policies_.decode_router ? *policies_.decode_router : *policies_.router; }

  // Scenario `weight` and `routing` events: every router that has the scorer
  // (P/D: the pools' and the cluster's), every router's policy.
  bool has_scorer(const std::string& name) const;
  void set_weight(const std::string& name, double weight);
  void set_policy(RoutingPolicy policy);

  // Instance i starts taking traffic: its first snapshot is fresh.
  void refresh_next(size_t i) { last_refresh_[i] = std::numeric_limits<SimTime>::min() / 2; }

  // What state() fills besides the count and indexes (RouteReads): what the
  // run's policies read, or all when something else may read it too.
  uint32_t reads() const { return reads_; }

 private:
  uint32_t run_reads() const;
  void snapshots(SimTime now);  // state_ and routable_count_, refreshed as due
  void indexes();               // state_'s indexes and routable_count_ only
  void fill_cached_blocks(SimTime now);
  void fill_adapter_resident(const Label& adapter);  // LoRA: the request's adapter in each snapshot's resident set

  ClusterCore core_;
  const std::vector<InstanceRecord>& slots_;
  ClusterPolicies policies_;
  uint32_t reads_ = kReadsAll;  // RouteReads: what state() fills
  bool indexed_ = false;        // indexes() ran
  // The blocks past the shareable ones are the request's own; the router
  // sees them only once unless something may route the request again.
  bool routed_once_;
  // Snapshots: refreshed per instance at most every snapshot_refresh_interval
  // (spec cluster §4.3); in-flight counts are live.
  std::vector<blis_instance_snapshot> cached_;
  std::vector<SimTime> last_refresh_;
  std::vector<uint64_t> snapshot_changes_;  // Instance::changes() at cached_'s refresh
  std::vector<blis_instance_snapshot> state_;
  // LoRA (engine/lora.hpp): each instance's resident adapters as of cached_'s refresh.
  bool lora_ = false;
  std::vector<std::vector<Label>> resident_;
  // The instances' prefix indexes as the router sees them with a cache signal
  // delay (spec head §7.2), taken together at last_cache_refresh_.
  std::vector<PrefixIndexCopy> cache_copies_;
  SimTime last_cache_refresh_ = 0;
  blis_request_view view_{};
  blis_route_input input_{};
  blis_route_input gate_input_{};
  std::vector<double> scores_;
  int64_t routable_count_ = 0;  // instances in state_ (those taking traffic)
};

}  // namespace blis
