// What every part of the cluster (cluster/cluster.hpp) reaches: its
// configuration, the clock, the requests, the instances, the lifecycle
// signals, the in-flight counts and the tenants' slots. ClusterSimulation owns all of them and
// outlives its parts; a part keeps this bundle of references.
#pragma once

#include "cluster/cluster_config.hpp"
#include "cluster/request_signals.hpp"
#include "engine/instance.hpp"
#include "engine/request.hpp"

#include <blis/kernel.hpp>

#include <memory>
#include <vector>

namespace blis {

struct ClusterCore {
  const ClusterConfig& cfg;
  Kernel& kernel;
  RequestPool& pool;
  std::vector<std::unique_ptr<Instance>>& instances;
  RequestSignals& signals;
  InFlight& in_flight;
  TenantBudget& budget;
};

}  // namespace blis
