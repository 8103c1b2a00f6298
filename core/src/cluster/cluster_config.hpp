// What a cluster simulation is asked to run (cluster/cluster.hpp): its
// configuration and its admission and routing policies, apart from the
// simulation so that each part of it (cluster/cluster_core.hpp) can read them.
#pragma once

#include "cluster/fleet_types.hpp"
#include "cluster/gateway_config.hpp"
#include "cluster/pd.hpp"
#include "cluster/router.hpp"
#include "cluster/tenant_budget.hpp"
#include "engine/instance.hpp"
#include "metrics/observer.hpp"
#include "metrics/saturation.hpp"

#include <blis/kernel.hpp>
#include <blis/policies.hpp>
#include <blis/scenario_events.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace blis {

class LiveSink;

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
  SaturationConfig saturation;    // their settings (--saturation-config, --saturation-final-window)
  // --saturation-report: the detectors whose per-event results it holds;
  // empty = no report.
  std::vector<std::string> saturation_report;
  bool keep_series = false;  // queue, batch and KV over time (metrics/step_series.hpp)
  bool keep_timed_samples = false;  // latencies with their times (metrics/steady_window.hpp)
  // Plain steps may run without events where nothing else reads the
  // instances (Instance::allow_lazy_steps()); the results are the same
  // either way, which the tests check by turning it off.
  bool lazy_steps = true;
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
  FleetConfig fleet;  // instance lifecycle and autoscaling (cluster/fleet_types.hpp); off when it has no pools
  PdConfig pd;  // prefill/decode disaggregation (cluster/pd.hpp); off without roles
  GatewayConfig gateway;  // flow control at the gateway (cluster/gateway.hpp); off unless enabled
  TenantBudgetConfig tenant_budgets;  // cluster/tenant_budget.hpp; empty = none
  workload::SloPriorities slo_priorities;  // the gateway's bands, sheddability (engine.slo_priorities alike)
  // An online run's listener (cluster/live_tap.hpp), or null; not owned.
  LiveSink* live = nullptr;
};

// Admission and routing of a run. A null admission policy admits everything;
// a null router routes round-robin.
struct ClusterPolicies {
  std::unique_ptr<AdmissionPolicy> admission;
  uint32_t admission_reads = kReadsAll;  // RouteReads of `admission` (route_reads of its needs)
  std::unique_ptr<Router> router;
  // P/D: the routers of the prefill and decode pools (null: `router`).
  std::unique_ptr<Router> prefill_router, decode_router;
};

}  // namespace blis
