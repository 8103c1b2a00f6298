// Scenario events (docs/scenarios.md "Events"): things that happen to the
// cluster in virtual time, at a given time or when a cluster metric crosses a
// threshold. They go through the kernel like every other event, so a run
// with events is as deterministic as one without.
//
// Written as text, one event per item of the `events` setting:
//   at=30s action=fail instance=2 requests=reroute
//   when=queue_depth>40 action=rate factor=0.5
//   at=10m action=workload spec=evening-mix.yaml
#pragma once

#include <blis/kernel.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace blis {

enum class EventAction {
  Fail,     // the instance dies: its requests are re-routed or failed; it gets no traffic
  Drain,    // it gets no new traffic and finishes what it holds
  Restore,  // a failed or drained instance takes traffic again
  Slow,     // its step times are multiplied by `factor` (1 restores the speed)
  Rate,     // the arrival rate is multiplied by `factor` from now on
  Weight,   // the weight of routing scorer `scorer` becomes `weight`
  Routing,  // the routing policy becomes `policy` (the scorers stay)
  Workload, // from now on, arrivals come from the workload spec `spec` (at= only)
  Add,      // `count` instances of pool `pool` are added (after its provisioning and loading delays)
  Remove,   // `count` instances of pool `pool` (or instance `instance`) leave, drained as `drain` says
};

// How a removed instance lets go of its requests (spec head §6.2 drain policies).
enum class DrainMode : uint8_t {
  Wait,       // it takes no new traffic; queued and running requests finish there
  Redirect,   // its queued requests are routed again; running ones finish
  Immediate,  // all its requests are routed again (failed when already streaming)
};

// Cluster metrics a threshold trigger reads, over the routable instances.
enum class TriggerMetric { QueueDepth, Running, InFlight, KvUsage };

struct ScenarioEvent {
  SimTime at = -1;  // µs; -1 for a threshold trigger
  TriggerMetric metric = TriggerMetric::QueueDepth;
  bool above = true;  // fires when metric > threshold (else <)
  double threshold = 0;
  EventAction action = EventAction::Fail;
  int32_t instance = -1;
  bool reroute = true;  // fail: re-route the requests (else they fail)
  double factor = 1;
  std::string scorer;
  double weight = 0;
  std::string policy;
  std::string spec;  // workload: the path of a workload spec (YAML)
  std::string pool;   // add, remove: the pool's name ("" = the only pool)
  int32_t count = 1;  // add, remove: how many instances
  DrainMode drain = DrainMode::Wait;  // remove
  std::string text;  // as given, for the report
};

// Parses one event's text (src/config/event_text.cpp); InputError naming
// `where` on anything malformed.
ScenarioEvent parse_scenario_event(const std::string& text, const std::string& where);

// How often threshold triggers are checked, in virtual time.
inline constexpr SimTime kTriggerCheckInterval = 100000;

}  // namespace blis
