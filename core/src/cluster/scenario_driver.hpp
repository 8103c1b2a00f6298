// The scenario driver: scenario events (blis/scenario_events.hpp), a
// scenario's code (Lua at()/every() callbacks, as the ScenarioHost it
// calls) and the time series' interval boundaries (metrics/time_series.hpp):
// all look at or act on the cluster at instants of virtual time. Timed
// events and code calls are kernel events (EventKind::Scenario); interval
// boundaries and threshold checks are "probes" taken before the first event
// at or after their time, so they add no kernel events and cost one
// comparison per event when neither is used. What an event does to
// instances is the fleet's (cluster/fleet.hpp); to routers, the router
// part's; to arrivals, theirs.
#pragma once

#include "cluster/cluster_core.hpp"

#include <blis/scenario_events.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace blis {

class Arrivals;
class Fleet;
class Gateway;
class Rerouting;
class Routing;

class ScenarioDriver final : public ScenarioHost {
 public:
  // What it reads for scenario code's snapshot besides the instances:
  // their metrics and the collector. All outlive it.
  ScenarioDriver(const ClusterCore& core, Fleet& fleet, Routing& routing, Arrivals& arrivals, Rerouting& rerouting,
                 TimeSeries& series, const std::vector<InstanceMetrics>& metrics, const MetricsCollector& collector);

  // With --flow-control, the gateway `gateway` events act on (before setup()).
  void attach_gateway(Gateway* gateway) { gateway_ = gateway; }
  // Checks the events and schedules the timed ones; before the fleet's setup
  // (kernel events scheduled at equal times keep that order).
  void setup();
  // Probes due at or before an event at time t.
  void before(SimTime t) {
    if (t >= next_probe_) probe(t);
  }
  // A kernel Scenario event.
  void on_event(uint64_t payload);
  // At the end of the run: the last boundaries of the time series.
  void finish();
  std::vector<std::string> take_log() { return std::move(event_log_); }

  // ScenarioHost: what scenario code does during a callback.
  SimTime now() const override { return core_.kernel.now(); }
  void snapshot(ClusterSnapshot& out) const override;
  void apply_text(const std::string& text, const std::string& where) override;
  void call_at(SimTime at, uint64_t id) override;
  bool only_code_left() override;

 private:
  void probe(SimTime now);
  std::vector<PoolGauges> gauges() const;
  double trigger_value(TriggerMetric m) const;
  void apply_event(size_t index);
  // apply_event()'s `remove` action: the event log's note.
  std::string remove_by_event(size_t index);
  std::string adapter_by_event(const ScenarioEvent& e, SimTime now);
  void check_event(const ScenarioEvent& e, const std::string& where) const;
  void check_adapter_event(const ScenarioEvent& e, const std::string& where) const;
  // `tier` events: the check, and the action (the event log's note).
  void check_tier_event(const ScenarioEvent& e, const std::string& where) const;
  std::string tier_by_event(const ScenarioEvent& e);
  // pool=NAME instance=K on an instance's action: K becomes the cluster's
  // index of the pool's K-th instance.
  void resolve_pool_instance(ScenarioEvent& e, const std::string& where) const;
  std::vector<std::string> pool_names() const;
  // The pool an add or remove event names (0 for other events).
  int32_t pool_of_event(const ScenarioEvent& e, const std::string& where) const;

  ClusterCore core_;
  Fleet& fleet_;
  Routing& routing_;
  Arrivals& arrivals_;
  Rerouting& rerouting_;
  TimeSeries& series_;
  Gateway* gateway_ = nullptr;
  const std::vector<InstanceMetrics>& metrics_;
  const MetricsCollector& collector_;
  // The events: the configuration's, then those scenario code applies; the
  // pool each add or remove event names (with a fleet); the pending
  // threshold triggers.
  std::vector<ScenarioEvent> events_;
  std::vector<int32_t> event_pool_;
  std::vector<size_t> triggers_;
  SimTime next_probe_ = kForever, next_sample_ = kForever, next_check_ = kForever;
  std::vector<std::string> event_log_;
  size_t code_calls_ = 0;  // calls of the scenario's code in the kernel's queue
};

}  // namespace blis
