// The cluster simulation on one shared clock (spec cluster §1): arrivals,
// admission, routing, and N instances. Used for every run, N = 1 included.
#pragma once

#include "cluster/fleet.hpp"
#include "cluster/instance_record.hpp"
#include "cluster/pd.hpp"
#include "cluster/request_signals.hpp"
#include "cluster/router.hpp"
#include "engine/instance.hpp"
#include "engine/request.hpp"
#include "metrics/collector.hpp"

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
  ObserverSetup observers;                // what the metrics' observers read (metrics/observer.hpp)
  // Fill blis_instance_snapshot.cached_blocks (a plugin declared
  // BLIS_NEED_PREFIX_CACHE), from caches at most this old (0 = live).
  bool cache_query = false;
  SimTime cache_signal_delay = 50000;
  bool judge_saturation = false;  // run the detectors of spec head §3 (metrics/saturation.hpp)
  bool keep_series = false;  // queue, batch and KV over time (metrics/step_series.hpp)
  bool keep_timed_samples = false;  // latencies with their times (metrics/steady_window.hpp)
  // Called every 1024 arrivals with the arrivals so far and the simulated
  // time (progress on stderr); empty = none.
  std::function<void(int64_t arrived, SimTime now)> on_progress;
  bool deadlines = false;                 // requests may time out: report timed_out_requests
  bool head_report = false;               // HEAD's output form: timed_out_requests always
  // --timeseries: the interval of its rows (0 = off) and the pool's name.
  SimTime timeseries_interval = 0;
  std::string pool_name = "default";
  std::vector<ScenarioEvent> events;  // scenario events (blis/scenario_events.hpp)
  // A scenario's code (Lua at()/every() callbacks), or null; not owned, it
  // outlives the simulation.
  ScenarioCode* code = nullptr;
  // Pools: each instance's engine and pool (empty: every instance has
  // `engine`, one pool called pool_name). The block size is the same for all.
  std::vector<EngineConfig> engines;
  std::vector<int32_t> pool_of;
  std::vector<std::string> pool_names;
  std::vector<int32_t> pool_tp;  // each pool's TP (snapshots' `tp`); empty: `tp`
  int32_t tp = 1;
  FleetConfig fleet;  // instance lifecycle and autoscaling (cluster/fleet.hpp); off when it has no pools
  PdConfig pd;  // prefill/decode disaggregation (cluster/pd.hpp); off without roles
};

// Admission and routing of a run. A null admission policy admits everything;
// a null router routes round-robin.
struct ClusterPolicies {
  std::unique_ptr<AdmissionPolicy> admission;
  std::unique_ptr<Router> router;
  // P/D: the routers of the prefill and decode pools (null: `router`).
  std::unique_ptr<Router> prefill_router, decode_router;
};

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
  TimedSamples timed;            // with ClusterConfig::keep_timed_samples
  std::vector<TimeSeriesPoint> series;  // with ClusterConfig::keep_series
  uint64_t events = 0;
  uint64_t steps = 0;
  uint64_t member_steps = 0, member_updates = 0;  // see InstanceEnd
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
};

// Builds one latency model per instance.
using LatencyFactory = std::function<std::unique_ptr<LatencyModel>(int32_t instance)>;

class ClusterSimulation final : public EventHandler, private FollowUps, private ScenarioHost {
 public:
  ClusterSimulation(const ClusterConfig& cfg, WorkloadSource& source,
                    const LatencyFactory& latency, ClusterPolicies policies = {});
  ~ClusterSimulation() override;

  // A scenario's `workload` event (docs/cli.md "Scenario events"): from
  // virtual time `at` on, arrivals come from `source`, its times counted from
  // `at`; the current workload's later arrivals never come. Phases are given
  // in time order, before run(); `source` outlives the simulation.
  void add_workload_phase(SimTime at, WorkloadSource& source) { phases_.emplace_back(at, &source); }

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
  // Scenario events and the time series (cluster/scenario_driver.cpp).
  void setup_scenario();
  void probe(SimTime now);
  void finish_timeseries();
  std::vector<PoolGauges> gauges() const;
  double trigger_value(TriggerMetric m) const;
  void apply_event(size_t index);
  // apply_event()'s `fail` and `remove` actions: the event log's note.
  std::string fail_instance(const ScenarioEvent& e, size_t i);
  std::string remove_by_event(size_t index);
  void check_event(const ScenarioEvent& e, const std::string& where) const;
  void scenario_event(uint64_t payload);
  // ScenarioHost: what scenario code does during a callback.
  SimTime now() const override { return kernel_.now(); }
  void snapshot(ClusterSnapshot& out) const override;
  void apply_text(const std::string& text, const std::string& where) override;
  void call_at(SimTime at, uint64_t id) override;
  bool only_code_left() override;
  void lose(uint32_t slot, bool reroute);
  void reroute(uint32_t slot);
  SimTime warp_arrival(SimTime source_time);
  // Instance lifecycle and the autoscaler (cluster/fleet.cpp).
  void setup_fleet();
  size_t pool_index(size_t instance) const;
  int32_t live_instances(size_t pool) const;
  int32_t pool_of_event(const ScenarioEvent& e, const std::string& where) const;
  int32_t add_instances(size_t pool, int32_t count);
  // Node pools (spec head §6.2): placement of an instance on a node, the
  // node's readiness, and the release of GPUs and of idle nodes.
  void setup_nodes();
  bool place(size_t instance);
  int32_t provision_node(int32_t node_pool);
  void start_loading(size_t instance);
  void on_node_ready(uint64_t node);
  void release_gpus(size_t instance);
  void warn_unplaced(size_t instance) const;
  void on_instance_ready(uint64_t payload);
  void instance_ready(size_t i);
  int32_t remove_instances(size_t pool, int32_t count, DrainMode mode);
  void remove_instance(size_t i, DrainMode mode);
  void close_span(size_t i);
  void check_drained(size_t i);
  void scaling_tick();
  // The load of scaling group `group`'s pools, and the KV capacity of its
  // instances still starting (pending_capacity).
  std::vector<VariantLoad> group_load(size_t group, double& pending_capacity) const;
  // One tick for scaling group `group`: its decision, stabilised, then
  // actuated (now, or after the actuation delay).
  void scale_group(size_t group, SimTime now);
  std::pair<int32_t, int32_t> ask_rule(std::vector<VariantLoad> variants, double pending_supply);
  void actuate(size_t decision);
  // P/D disaggregation (cluster/pd_flow.cpp).
  const blis_route_input& pd_pool_state(uint32_t slot, uint8_t role);
  void pd_route(uint32_t slot);
  void pd_prefill_route(uint32_t slot);
  void pd_prefilled(uint64_t payload);
  void pd_check(uint64_t generation);
  void pd_transfer_done(uint64_t payload);
  bool pd_timeout(const Event& e);
  void pd_schedule();
  uint64_t transfer_tag(const Request& r) const;
  bool pd_decode_takes(size_t d) const;
  int64_t pd_abandon(size_t i, bool reroute);

  ClusterConfig cfg_;
  WorkloadSource* source_;
  // Workload phases still to come, and the offsets of the current one: its
  // arrival times count from phase_start_, its ids from id_offset_.
  std::vector<std::pair<SimTime, WorkloadSource*>> phases_;
  size_t next_phase_ = 0;
  SimTime phase_start_ = 0;
  uint64_t id_offset_ = 0, next_id_ = 0;
  Kernel kernel_;
  RequestPool pool_;
  std::vector<InstanceMetrics> metrics_;
  // The subscribers of the lifecycle signals, then the signals.
  MetricsCollector collector_;
  RequestRecords records_;
  InFlight in_flight_;
  DecisionTrace trace_;
  SteadyStateProbe steady_;
  TimedSampleProbe timed_;
  SaturationProbe saturation_;
  TimeSeriesProbe step_series_;
  ClosedLoop closed_loop_;
  TimeSeries series_;
  PdMetrics pd_metrics_;
  RunObservers observers_;
  RequestSignals signals_;
  std::vector<std::unique_ptr<Instance>> instances_;
  ClusterPolicies policies_;

  // Routing snapshots: refreshed per instance at most every
  // snapshot_refresh_interval (spec cluster §4.3); in-flight counts are live.
  std::vector<blis_instance_snapshot> cached_;
  std::vector<SimTime> last_refresh_;
  std::vector<uint64_t> snapshot_changes_;  // Instance::changes() at cached_'s refresh
  std::vector<blis_instance_snapshot> state_;
  // The instances' prefix indexes as the router sees them with a cache signal
  // delay (spec head §7.2), taken together at last_cache_refresh_.
  std::vector<PrefixIndexCopy> cache_copies_;
  SimTime last_cache_refresh_ = 0;
  int64_t arrived_ = 0;
  blis_request_view view_{};
  blis_route_input input_{};
  std::vector<double> scores_;
  int64_t routable_count_ = 0;  // instances in state_ (those taking traffic)

  // Each instance slot's record (cluster/instance_record.hpp): its
  // lifecycle, whether it takes traffic or failed, its warm-up, start
  // generation, open span and node. One per instance, whatever is on.
  std::vector<InstanceRecord> slots_;
  // Whether instances warm up (a pool of the fleet has warm_up_requests) and
  // whether they are placed on nodes (the fleet has node pools): else the
  // records' warm_left and node are never read.
  bool warm_up_on_ = false, nodes_on_ = false;

  // Scenario events: whether an instance is failed (slots_[i].down), the
  // pending threshold triggers, and the arrival time warp of rate changes
  // (arrivals after source time warp_src_ come 1/rate_factor_ as far apart,
  // from warp_dst_).
  bool any_down_ = false;
  std::vector<size_t> triggers_;
  SimTime next_probe_ = kForever, next_sample_ = kForever, next_check_ = kForever;
  double warp_src_ = 0, warp_dst_ = 0, rate_factor_ = 1;
  bool warped_ = false;
  SimTime pending_source_time_ = 0, pending_arrival_ = 0;
  std::vector<uint32_t> evicted_;
  std::vector<std::string> event_log_;
  int64_t rerouted_ = 0;
  int64_t unroutable_ = 0;  // rejected because no instance took traffic (for the warning)
  std::map<int32_t, int64_t> unroutable_by_class_;
  // A request no instance takes: rejected at routing.
  void reject_unroutable(Request& r, std::string_view reason);
  size_t code_calls_ = 0;  // calls of the scenario's code in the kernel's queue

  // Instance lifecycle (cluster/fleet.hpp), besides the slots' records: the
  // provisioning spans, the pool of each add/remove event, and the
  // autoscaler's scaling groups and decisions.
  struct ScalingGroup {
    std::vector<int32_t> pools;
    SimTime up_since = -1, down_since = -1;
  };
  std::vector<InstanceSpan> spans_;
  std::vector<int32_t> event_pool_;
  std::vector<ScalingGroup> groups_;
  std::vector<ScalingAction> decisions_, applied_;
  std::unique_ptr<GoRand> lifecycle_rng_, autoscaler_rng_;
  // Node pools: every node (its span and free GPUs), and the slots no node
  // could take yet, in the order they asked.
  std::vector<NodeSpan> nodes_;
  std::vector<int32_t> node_free_;
  std::vector<size_t> unplaced_;
  int64_t unplaced_waits_ = 0;
  std::unique_ptr<GoRand> node_rng_;
  int64_t draining_ = 0;
  bool source_done_ = false;
  // P/D: the link between the pools, its checks' generation (older checks
  // are stale), and scratch for the transfers it reports done.
  std::optional<KvTransferLink> pd_link_;
  uint64_t pd_generation_ = 0;
  uint32_t pd_transfers_ = 0;  // transfers started (their serials)
  // P/D: where each request split in two goes, by pool slot (set when it is
  // split; only requests in P/D stages are read). Beside the pool, not in
  // the Request: without P/D this is empty.
  struct PdRoute {
    int32_t decode = -1;   // the decode instance chosen for it
    int32_t prefill = -1;  // the prefill instance its KV comes from (in transfer)
    // The serial of its current transfer (the link's events name it; a
    // transfer abandoned by a failure leaves stale ones).
    uint32_t transfer = 0;
    int64_t transfer_start = 0;  // µs
  };
  std::vector<PdRoute> pd_routes_;
  PdRoute& pd_route_of(uint32_t slot) {
    if (slot >= pd_routes_.size()) pd_routes_.resize(static_cast<size_t>(slot) + 1);
    return pd_routes_[slot];
  }
  std::vector<KvTransferLink::Done> pd_done_;
};

// The cluster's metrics: the instances' merged (spec cluster §7.2), with the
// requests still in the admission/routing pipeline counted as still queued,
// so that injected_requests + rejected = every arrival.
InstanceMetrics cluster_metrics(const ClusterResult& result);

}  // namespace blis
