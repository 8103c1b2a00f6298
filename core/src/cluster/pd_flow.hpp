// Prefill/decode disaggregation in the cluster (spec head §5.2): a request
// is routed to a decode instance first; the decider then sends it there, or
// splits it: a prefill on the prefill pool, its KV over the link
// (cluster/pd.hpp), its decode on the chosen decode instance. The request
// keeps its slot, id and metrics slot all along, so it counts once: arrival,
// one completion (its first token and E2E from the decode instance).
// The part owns the link and where each split request goes; it routes
// through the router's part and reads the fleet's records.
#pragma once

#include "cluster/cluster_core.hpp"
#include "cluster/pd.hpp"

#include <cstdint>
#include <vector>

namespace blis {

class Fleet;
class PdMetrics;
class Rerouting;
class Routing;

class PdFlow {
 public:
  // The parts it works with outlive it.
  PdFlow(const ClusterCore& core, PdMetrics& metrics, Routing& routing, Fleet& fleet, Rerouting& rerouting);

  // The routing decision of the request in `slot` (EventKind::Routing):
  // true when it went whole to one instance (not split, not refused), where
  // the gateway's in-flight eviction may take it back, as HEAD's does.
  bool route(uint32_t slot);
  // Its kernel events.
  void prefill_route(uint32_t slot);      // PdPrefillRouting
  void prefilled(uint64_t payload);       // PdPrefilled
  void check(uint64_t generation);        // PdTransferCheck
  void transfer_done(uint64_t payload);   // PdTransferDone
  // A Timeout event: true if it is this part's (the request is between
  // instances, or moved on from the instance whose queue set it).
  bool timeout(const Event& e);

  // Instance i failed or left without waiting: the transfers from or to it
  // are abandoned and their requests lost (`reroute`: re-routed); how many.
  int64_t abandon(size_t i, bool reroute);
  // The request in `slot` goes back to routing: where it went is forgotten.
  void forget(uint32_t slot) {
    if (slot < routes_.size()) routes_[slot] = Route{};
  }
  // At the end of the run: the link's contention figures to the metrics.
  void finish();

 private:
  // Where each request split in two goes, by pool slot (set when it is
  // split; only requests in P/D stages are read). Beside the pool, not in
  // the Request: without P/D there is none.
  struct Route {
    int32_t decode = -1;   // the decode instance chosen for it
    int32_t prefill = -1;  // the prefill instance its KV comes from (in transfer)
    // The serial of its current transfer (the link's events name it; a
    // transfer abandoned by a failure leaves stale ones).
    uint32_t transfer = 0;
    int64_t transfer_start = 0;  // µs
  };
  bool encodes(uint32_t slot);
  Route& route_of(uint32_t slot) {
    if (slot >= routes_.size()) routes_.resize(static_cast<size_t>(slot) + 1);
    return routes_[slot];
  }
  void schedule_link();
  void encode_route(uint32_t slot);
  uint64_t transfer_tag(const Request& r) const;
  bool decode_takes(size_t d) const;

  ClusterCore core_;
  PdMetrics& metrics_;
  Routing& routing_;
  Fleet& fleet_;
  Rerouting& rerouting_;
  // The link between the pools, its checks' generation (older checks are
  // stale), and scratch for the transfers it reports done.
  KvTransferLink link_;
  uint64_t generation_ = 0;
  uint32_t transfers_ = 0;  // transfers started (their serials)
  int64_t encoded_ = 0;     // requests sent through the encode pool
  std::vector<Route> routes_;
  std::vector<KvTransferLink::Done> done_;
};

}  // namespace blis
