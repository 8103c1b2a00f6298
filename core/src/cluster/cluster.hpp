// The cluster simulation on one shared clock (spec cluster §1): arrivals,
// admission, routing, and N instances. Used for every run, N = 1 included.
#pragma once

#include "cluster/request_signals.hpp"
#include "cluster/router.hpp"
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
  SimTime snapshot_refresh_interval = 0;  // 0 = routing signals are always fresh
  bool trace_decisions = false;           // --trace-level decisions
  int64_t counterfactual_k = 0;           // > 0: compute regret
  SloTargetMap slo_targets;               // goodput targets by SLO class (--slo-ttft, ...)
  // Fill blis_instance_snapshot.cached_blocks (a plugin declared
  // BLIS_NEED_PREFIX_CACHE), from caches at most this old (0 = live).
  bool cache_query = false;
  SimTime cache_signal_delay = 50000;
  bool keep_series = false;  // queue, batch and KV over time (metrics/time_series.hpp)
  // Called every 1024 arrivals with the arrivals so far and the simulated
  // time (progress on stderr); empty = none.
  std::function<void(int64_t arrived, SimTime now)> on_progress;
  bool deadlines = false;                 // requests may time out: report timed_out_requests
};

// Admission and routing of a run. A null admission policy admits everything;
// a null router routes round-robin.
struct ClusterPolicies {
  std::unique_ptr<AdmissionPolicy> admission;
  std::unique_ptr<Router> router;
};

// Every request that arrived by the end of the run is in exactly one of:
// completed, still queued, still running, dropped or timed out at an instance
// (the sums over `instances`), rejected, or in the pipeline.
struct ClusterResult {
  std::vector<InstanceMetrics> instances;
  int64_t rejected = 0;
  // Arrived, but the run stopped before its admission or routing decision.
  int64_t in_pipeline = 0;
  TraceSummary trace;
  SteadyState steady;  // the steady-state verdict (metrics/steady_state.hpp)
  Goodput goodput;     // per-class SLO attainment (metrics/goodput.hpp); off without targets
  SaturationVerdict saturation;  // the detectors of spec head §3 (metrics/saturation.hpp)
  std::vector<TimeSeriesPoint> series;  // with ClusterConfig::keep_series
  uint64_t events = 0;
  uint64_t steps = 0;
};

// Builds one latency model per instance.
using LatencyFactory = std::function<std::unique_ptr<LatencyModel>(int32_t instance)>;

class ClusterSimulation final : public EventHandler, private FollowUps {
 public:
  ClusterSimulation(const ClusterConfig& cfg, WorkloadSource& source,
                    const LatencyFactory& latency, ClusterPolicies policies = {});
  ~ClusterSimulation() override;

  ClusterResult run();
  void handle(const Event& e) override;

 private:
  void pull_next_arrival();
  void completed(const Request& r, SimTime t) override;  // FollowUps
  void on_cluster_arrival(uint32_t slot);
  void on_admission(uint32_t slot);
  void on_routing(uint32_t slot);
  const blis_route_input& router_state(uint32_t slot);
  void fill_cached_blocks(SimTime now);

  ClusterConfig cfg_;
  WorkloadSource& source_;
  Kernel kernel_;
  RequestPool pool_;
  std::vector<InstanceMetrics> metrics_;
  // The subscribers of the lifecycle signals, then the signals.
  MetricsCollector collector_;
  RequestRecords records_;
  InFlight in_flight_;
  DecisionTrace trace_;
  SteadyStateProbe steady_;
  GoodputTracker goodput_;
  SaturationProbe saturation_;
  TimeSeriesProbe series_;
  ClosedLoop closed_loop_;
  RequestSignals signals_;
  std::vector<std::unique_ptr<Instance>> instances_;
  ClusterPolicies policies_;

  // Routing snapshots: refreshed per instance at most every
  // snapshot_refresh_interval (spec cluster §4.3); in-flight counts are live.
  std::vector<blis_instance_snapshot> cached_;
  std::vector<SimTime> last_refresh_;
  std::vector<blis_instance_snapshot> state_;
  // The instances' prefix indexes as the router sees them with a cache signal
  // delay (spec head §7.2), taken together at last_cache_refresh_.
  std::vector<PrefixIndexCopy> cache_copies_;
  SimTime last_cache_refresh_ = 0;
  int64_t arrived_ = 0;
  blis_request_view view_{};
  blis_route_input input_{};
  std::vector<double> scores_;
};

// The cluster's metrics: the instances' merged (spec cluster §7.2), with the
// requests still in the admission/routing pipeline counted as still queued,
// so that injected_requests + rejected = every arrival.
InstanceMetrics cluster_metrics(const ClusterResult& result);

}  // namespace blis
