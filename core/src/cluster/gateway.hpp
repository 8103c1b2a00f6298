// The gateway's flow control (llm-d / GIE flow control, HEAD's --flow-control;
// docs/gateway.md): between admission and routing, admitted requests wait in
// a queue of priority bands, each band one FIFO flow per tenant, and leave it
// one at a time for routing when the saturation detector says the instances
// have room. The queue has a depth (and per-band capacity) past which a
// request is refused, or sheds a less urgent one (--queue-shedding); a
// request that waits longer than --request-ttl expires. Dispatch is tried on
// each enqueue and on a tick that runs while the queue is not empty.
//
// Only built with --flow-control: without it, the cluster never names it.
#pragma once

#include "cluster/cluster_core.hpp"
#include "cluster/gateway_config.hpp"
#include "cluster/routing.hpp"

#include <blis/plugin.h>

#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace blis {

class Gateway {
 public:
  Gateway(const ClusterCore& core, Routing& routing);

  // At the admission decision of the request in `slot` (already announced
  // admitted): queues it, or refuses it, or sheds a less urgent one for it,
  // then tries one dispatch.
  void enqueue(uint32_t slot);
  // Kernel events: the dispatch tick; a request's TTL (payload: its id).
  void on_tick();
  void on_expiry(uint64_t id);
  // --in-flight-eviction: the request in `slot` was just routed (from the
  // gateway, --routing-latency ago); and the eviction's kernel event: the
  // instance the request left, or -1 when it was not there to evict.
  void routed(uint32_t slot);
  int32_t on_eviction(uint64_t payload);
  // When the run stops: the counts; what is still queued leaves the pool.
  GatewayCounts finish();
  // A scenario `gateway` event: the per-band capacity and the queue depth
  // become these from now on (-1 keeps one; 0 is unlimited). Requests
  // already queued stay: a smaller limit refuses arrivals until the queue
  // is below it. The event log's note.
  std::string set_capacity(int64_t band_capacity, int64_t queue_depth);
  // Requests it dropped (shed or expired), by SLO class (HEAD's "Shed (class)").
  const std::map<int32_t, int64_t>& dropped_by_class() const { return dropped_by_class_; }

 private:
  struct Entry {
    uint32_t slot;
    int32_t slo_class;
    int64_t seq;
    uint64_t id;
    double key;  // the dispatch order's, at enqueue: lower leaves first, ties by seq
    SimTime enqueued;
  };
  // One tenant's requests of a band, in enqueue order; `sorted` while their
  // keys do not decrease (then the head has the lowest: no scan).
  struct Flow {
    std::deque<Entry> q;
    bool sorted = true;
  };
  struct Band {
    int priority;
    std::map<std::string, Flow> flows;  // by tenant ("default" for none), sorted
    int64_t len = 0;
    std::string cursor;  // round-robin: the tenant picked last ("" = none)
  };
  struct Where {
    int priority;
    std::string tenant;
  };

  Band& band_of(int priority);
  Band* find_band(int priority);
  bool try_dispatch();
  // One request of the bands allowed at saturation `sat`, or none.
  bool take(double sat, Entry& out);
  double key_of(const Request& r, int priority, SimTime now);
  std::map<std::string, Flow>::iterator pick(Band& band);
  static size_t lowest(const Flow& flow);
  bool take_across(size_t allowed, Entry& out);
  Entry take_from(Band& band, std::map<std::string, Flow>::iterator flow, size_t at);
  bool shed_for(const Request& r, int priority, int64_t seq);
  bool non_sheddable_waiting() const;
  bool evict_one();
  void drop(const Entry& e);

  ClusterCore core_;
  Routing& routing_;
  const GatewayConfig& cfg_;
  SaturationDetector& detector_;
  DispatchOrder& order_;
  FairnessPolicy& fairness_;
  SheddingPolicy* shedding_;  // with --queue-shedding only
  const bool across_;  // order_.across_bands()
  std::vector<Band> bands_;  // descending priority; bands stay once made (HEAD's ceilings count them)
  int64_t len_ = 0;
  int64_t seq_ = 0;
  bool tick_pending_ = false;
  std::unordered_map<uint64_t, Where> where_;  // queued requests by id
  // --in-flight-eviction: routed sheddable requests, in routing order;
  // those that left meanwhile are dropped when looked at.
  struct Routed {
    uint32_t slot;
    uint32_t incarnation;
    int32_t instance;
    int priority;
    SimTime dispatched;
  };
  std::vector<Routed> routed_;
  // pick()'s buffers: the band's flows and their heads, as the policy sees them.
  std::vector<blis_fairness_flow> flows_;
  std::vector<blis_request_view> heads_;
  // shed_for()'s buffers: every queued request, as the shedding policy sees it.
  std::vector<blis_shedding_candidate> queued_;
  std::vector<blis_request_view> views_;
  GatewayCounts counts_;
  std::map<int32_t, int64_t> dropped_by_class_;
  // --per-band-capacity and --max-gateway-queue-depth, as events leave them.
  int64_t band_capacity_, max_depth_;
};

}  // namespace blis
