// The cluster simulation on one shared clock (spec cluster §1): arrivals,
// admission, routing, and N instances. Used for every run, N = 1 included.
#pragma once

#include "cluster/arrivals.hpp"
#include "cluster/cluster_config.hpp"
#include "cluster/cluster_core.hpp"
#include "cluster/fleet.hpp"
#include "cluster/gateway.hpp"
#include "cluster/pd_flow.hpp"
#include "cluster/request_signals.hpp"
#include "cluster/rerouting.hpp"
#include "cluster/routing.hpp"
#include "cluster/scaling_loop.hpp"
#include "cluster/scenario_driver.hpp"
#include "engine/instance.hpp"
#include "engine/request.hpp"
#include "metrics/collector.hpp"
#include "metrics/request_names.hpp"

#include <blis/go_rand.hpp>
#include <blis/kernel.hpp>
#include <blis/policies.hpp>
#include <blis/scenario_events.hpp>
#include <blis/workload.hpp>

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <vector>

namespace blis {

// Every request that arrived by the end of the run is in exactly one of:
// completed, still queued, still running, dropped or timed out at an instance
// (the sums over `instances`), rejected, or in the pipeline.
struct ClusterResult {
  std::vector<InstanceMetrics> instances;
  int64_t rejected = 0;
  // Of those, rejected at routing (no instance took traffic); and the
  // admission policy's rejections by SLO class (HEAD's "Shed (class)" lines).
  int64_t routing_rejected = 0;
  std::map<int32_t, int64_t> admission_rejected_by_class;
  // Arrived, but the run stopped before its admission or routing decision.
  int64_t in_pipeline = 0;
  TraceSummary trace;
  SteadyState steady;  // the steady-state verdict (metrics/steady_state.hpp)
  // The observers of cluster/request_signals.hpp (goodput, ...), as parts of
  // the report (metrics/observer.hpp), in their list's order.
  std::vector<std::unique_ptr<ReportPart>> observers;
  SaturationVerdict saturation;  // the detectors of spec head §3 (metrics/saturation.hpp)
  std::string saturation_report;  // with ClusterConfig::saturation_report: the file's text
  TimedSamples timed;            // with ClusterConfig::keep_timed_samples
  std::vector<TimeSeriesPoint> series;  // with ClusterConfig::keep_series
  uint64_t events = 0;
  uint64_t steps = 0;
  uint64_t member_steps = 0, member_updates = 0;  // see InstanceEnd
  uint64_t lazy_steps = 0;                        // steps run without an event (counted in `events`)
  std::string timeseries;               // the --timeseries CSV, "" when off
  std::vector<std::string> event_log;   // scenario events as applied, in time order
  int64_t rerouted = 0;                 // requests moved off failed instances
  int64_t initial_instances = 0;        // at the start (instances: every slot, reserve ones too)
  std::vector<InstanceSpan> spans;      // with a fleet: when each instance was provisioned
  std::vector<ScalingAction> scaling;   // the autoscaler's actions, in time order
  std::vector<NodeSpan> nodes;          // with node pools: every node of the run
  int64_t unplaced_waits = 0;           // instances that waited for GPUs no node pool could give
  int64_t unplaced_at_end = 0;          // of them, still waiting when the run ended
  std::optional<PdMetrics> pd;          // with P/D pools (spec head §5.4)
  std::optional<GatewayCounts> gateway;  // with --flow-control (cluster/gateway.hpp)
};

// Builds one latency model per instance.
using LatencyFactory = std::function<std::unique_ptr<LatencyModel>(int32_t instance)>;

// The coordinator: it owns the clock, the requests, the instances and the
// lifecycle signals (cluster/cluster_core.hpp), and its parts, each owning
// its own state: the arrivals (cluster/arrivals.hpp), the fleet of instance
// slots (cluster/fleet.hpp), the autoscaler's loop (cluster/scaling_loop.hpp),
// the router's part (cluster/routing.hpp), the
// requests' way back to routing (cluster/rerouting.hpp), P/D
// (cluster/pd_flow.hpp) and the scenario driver
// (cluster/scenario_driver.hpp). It takes each request through admission
// and routing (through the gateway's queue with --flow-control,
// cluster/gateway.hpp) and hands every kernel event to the part it belongs to.
class ClusterSimulation final : public EventHandler {
 public:
  ClusterSimulation(const ClusterConfig& cfg, WorkloadSource& source,
                    const LatencyFactory& latency, ClusterPolicies policies = {});
  ~ClusterSimulation() override;

  // A scenario's `workload` event (docs/cli.md "Scenario events"): from
  // virtual time `at` on, arrivals come from `source`, its times counted from
  // `at`; the current workload's later arrivals never come. Phases are given
  // in time order, before run(); `source` outlives the simulation.
  void add_workload_phase(SimTime at, WorkloadSource& source) { arrivals_.add_phase(at, source); }

  ClusterResult run();
  void handle(const Event& e) override;

  // Online runs (blis serve, src/serve/): start(), then advance() the clock
  // as wall time passes, inject() requests as they come and cancel() those
  // whose clients left; what happens to them reaches ClusterConfig::live.
  // One thread calls all of these.
  void start();
  void advance(SimTime t) { kernel_.run_until(*this, t); }
  SimTime now() const { return kernel_.now(); }
  SimTime next_event() const { return kernel_.next_time(); }
  // A request arriving now (its arrival time is set): its handle.
  uint64_t inject(const WorkloadRequest& spec);
  // The request leaves wherever it is, as if its deadline passed now (a
  // timeout); nothing when it left already.
  void cancel(uint64_t handle);
  // Each instance's load as /metrics shows it.
  struct InstanceLoad {
    int64_t running = 0, waiting = 0, used_blocks = 0, total_blocks = 0, hit_blocks = 0, missed_blocks = 0;
  };
  std::vector<InstanceLoad> loads() const;

 private:
  void on_cluster_arrival(uint32_t slot);
  void on_admission(uint32_t slot);
  void on_routing(uint32_t slot);
  void reject(uint32_t slot, std::string_view reason);
  void warn_if_none_completed(const ClusterResult& out) const;
  void name_records(const RequestNames& names);

  ClusterConfig cfg_;
  Kernel kernel_;
  RequestPool pool_;
  Arrivals arrivals_;
  std::vector<InstanceMetrics> metrics_;
  // The subscribers of the lifecycle signals, then the signals.
  MetricsCollector collector_;
  RequestRecords records_;
  InFlight in_flight_;
  TenantBudget budget_;
  DecisionTrace trace_;
  SteadyStateProbe steady_;
  TimedSampleProbe timed_;
  SaturationProbe saturation_;
  TimeSeriesProbe step_series_;
  ClosedLoop closed_loop_;
  TimeSeries series_;
  PdMetrics pd_metrics_;
  RunObservers observers_;
  LiveTap live_;
  RequestSignals signals_;
  std::vector<std::unique_ptr<Instance>> instances_;
  // The parts, after what they share.
  ClusterCore core_;
  Fleet fleet_;
  ScalingLoop scaling_;
  Routing routing_;
  Rerouting rerouting_;
  std::optional<PdFlow> pd_;  // with P/D pools
  std::optional<Gateway> gateway_;  // with --flow-control
  ScenarioDriver driver_;
};

// The cluster's metrics: the instances' merged (spec cluster §7.2), with the
// requests still in the admission/routing pipeline counted as still queued,
// so that injected_requests + rejected = every arrival.
InstanceMetrics cluster_metrics(const ClusterResult& result);

}  // namespace blis
