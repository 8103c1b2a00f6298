// The cluster simulation on one shared clock (spec cluster §1): arrivals,
// admission, routing, and N instances. Used for every run, N = 1 included.
#pragma once

#include "engine/instance.hpp"
#include "engine/request.hpp"
#include "metrics/collector.hpp"

#include <blis/kernel.hpp>
#include <blis/policies.hpp>
#include <blis/workload.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace blis {

struct ClusterConfig {
  int32_t num_instances = 1;
  SimTime admission_latency = 0;
  SimTime routing_latency = 0;
  EngineConfig engine;
  bool keep_records = false;
  bool keep_completions = false;
};

struct ClusterResult {
  std::vector<InstanceMetrics> instances;
  int64_t rejected = 0;
  uint64_t events = 0;
  uint64_t steps = 0;
};

// Builds one latency model per instance.
using LatencyFactory = std::function<std::unique_ptr<LatencyModel>(int32_t instance)>;

class ClusterSimulation final : public EventHandler {
 public:
  ClusterSimulation(const ClusterConfig& cfg, WorkloadSource& source,
                    const LatencyFactory& latency);
  ~ClusterSimulation() override;

  ClusterResult run();
  void handle(const Event& e) override;

 private:
  void pull_next_arrival();
  void on_cluster_arrival(uint32_t slot);
  void on_admission(uint32_t slot);
  void on_routing(uint32_t slot);
  int32_t route(uint32_t slot);

  ClusterConfig cfg_;
  WorkloadSource& source_;
  Kernel kernel_;
  RequestPool pool_;
  std::vector<InstanceMetrics> metrics_;
  std::vector<std::unique_ptr<Instance>> instances_;
  std::vector<int64_t> in_flight_;
  int64_t rejected_ = 0;
  uint64_t round_robin_ = 0;
};

}  // namespace blis
