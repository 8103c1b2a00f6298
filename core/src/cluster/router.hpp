// Routing (spec cluster §3): the four policies of the reference, the weighted
// scorer pipeline over routing-scorer plugins, and ties broken from the
// router's own seeded stream.
#pragma once

#include <blis/go_rand.hpp>
#include <blis/plugin.h>
#include <blis/plugin.hpp>
#include <blis/policies.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blis {

enum class RoutingPolicy { RoundRobin, LeastLoaded, AlwaysBusiest, Weighted };

// Parses a policy name ("" means round-robin); InputError listing the valid
// names otherwise.
RoutingPolicy parse_routing_policy(const std::string& name);

// What a policy reads of its blis_route_input (ABI 1.8), as bits: the
// router's part fills only what the run's policies read (Routing). The
// instances' count and each snapshot's index are always filled.
enum RouteReads : uint32_t {
  kReadsNothing = 0,
  kReadsSnapshots = 1,  // the snapshots' fields besides index
  kReadsRequest = 2,    // the request view
  kReadsAll = kReadsSnapshots | kReadsRequest,
};
// A plugin's reads from its blis_need bits: all unless it declares them.
uint32_t route_reads(uint32_t needs);

struct WeightedScorer {
  std::string name;
  double weight = 0;
  std::unique_ptr<RoutingScorer> scorer;
  uint32_t reads = kReadsAll;  // RouteReads of the scorer (route_reads of its needs)
};

// effective load = queue depth + batch size + in-flight (spec cluster §3.2),
// one definition shared with the plugins through the SDK.
using blis::sdk::effective_load;

class Router {
 public:
  Router(RoutingPolicy policy, std::vector<WeightedScorer> scorers, int64_t seed);

  // Chooses an instance for input.request among input.instances. `scores`
  // receives the composite score of each instance for weighted routing and
  // is left empty otherwise.
  int32_t route(const blis_route_input& input, std::vector<double>& scores);

  // Scenario `weight` events: sets the weight of the scorer called `name`;
  // false if the router has none of that name.
  bool set_weight(const std::string& name, double weight);
  // Scenario `routing` events: the policy from now on (scorers and streams stay).
  void set_policy(RoutingPolicy policy) { policy_ = policy; }
  // What the policy reads (RouteReads): round-robin nothing, least-loaded
  // and always-busiest the snapshots, weighted what its scorers read.
  uint32_t reads() const;
  bool has_scorer(const std::string& name) const {
    for (const WeightedScorer& s : scorers_)
      if (s.name == name) return true;
    return false;
  }

 private:
  int32_t pick_tied(const std::vector<int32_t>& tied);

  RoutingPolicy policy_;
  std::vector<WeightedScorer> scorers_;
  GoRand rng_;
  uint64_t round_robin_ = 0;
  std::vector<double> dim_;        // one scorer's scores
  std::vector<int32_t> tied_;
};

}  // namespace blis
