// Requests in flight per instance: routed to it and not yet departed (spec
// cluster §4.2), counted directly from the routing and departure signals.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"

#include <cstdint>
#include <vector>

namespace blis {

class InFlight : public LifecycleSubscriber {
 public:
  explicit InFlight(size_t instances) : counts_(instances, 0) {}

  void on_routed(Request& r, const RoutingChoice&) { ++counts_[static_cast<size_t>(r.instance)]; }
  void on_departed(Request& r, SimTime) { --counts_[static_cast<size_t>(r.instance)]; }

  // P/D: a request whose KV is on its way to `instance` (spec head §5.2).
  void add(size_t instance) { ++counts_[instance]; }

  int64_t operator[](size_t instance) const { return counts_[instance]; }

 private:
  std::vector<int64_t> counts_;
};

}  // namespace blis
