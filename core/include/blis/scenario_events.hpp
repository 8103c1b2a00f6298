// Scenario events (docs/scenarios.md "Events"): things that happen to the
// cluster in virtual time, at a given time or when a cluster metric crosses a
// threshold. They go through the kernel like every other event, so a run
// with events is as deterministic as one without.
//
// Written as text, one event per item of the `events` setting:
//   at=30s action=fail instance=2 requests=reroute
//   when=queue_depth>40 action=rate factor=0.5
//   at=10m action=workload spec=evening-mix.yaml
//   at=5s action=adapter instance=1 load=sql-r16
//   at=20s action=tier tier=1 factor=4
//   at=8s action=fail pool=encode instance=0
#pragma once

#include <blis/kernel.hpp>
#include <blis/record_place.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace blis {

enum class EventAction {
  Fail,      // the instance dies: its requests are re-routed or failed; it gets no traffic
  Drain,     // it gets no new traffic and finishes what it holds
  Restore,   // a failed or drained instance takes traffic again
  Slow,      // its step times are multiplied by `factor` (1 restores the speed)
  Rate,      // the arrival rate (`tenant`: of its clients only) is multiplied by `factor` from now on
  Weight,    // the weight of routing scorer `scorer` becomes `weight`
  Routing,   // the routing policy becomes `policy` (the scorers stay)
  Workload,  // from now on, arrivals come from the workload spec `spec` (at= only)
  Add,       // `count` instances of pool `pool` are added (after its provisioning and loading delays)
  Remove,    // `count` instances of pool `pool` (or instance `instance`) leave, drained as `drain` says
  Adapter,   // LoRA: instance `instance` (-1: every one) loads adapter `adapter` (`load`), or drops it
  Tier,      // offload tier `tier` of instance `instance` (-1: every one): transfers take `factor` x as long
  Gateway,   // --flow-control: the band capacity and queue depth become `band_capacity`, `queue_depth`
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
  // add, remove: the pool's name ("" = the only pool); fail, drain, restore,
  // slow, tier: with instance=K, the K-th instance of that pool (resolved to
  // the cluster's index by the scenario driver).
  std::string pool;
  int32_t count = 1;  // add, remove: how many instances
  DrainMode drain = DrainMode::Wait;  // remove
  std::string adapter;                // adapter: its id
  bool load = true;                   // adapter: load it (else unload it)
  int32_t tier = 0;                   // tier: 0 the CPU tier, k >= 1 the k-th secondary tier
  std::string tenant;                 // rate: only this tenant's clients ("" = the whole workload)
  int64_t band_capacity = -1;         // gateway: the new --per-band-capacity (0 = unlimited; -1 = kept)
  int64_t queue_depth = -1;           // gateway: the new --max-gateway-queue-depth (0 = unlimited; -1 = kept)
  std::string text;  // as given, for the report
  std::string where;  // where it was given ("--event", "s.toml:7:1: events"), for messages
};

// Parses one event's text (src/config/event_text.cpp); InputError at
// `place` (a value's own, where it has one) on anything malformed. With `default_at` >= 0 a text without at=
// and when= happens at that time (scenario code's events: now).
ScenarioEvent parse_scenario_event(const std::string& text, const RecordPlace& place, SimTime default_at = -1);

// What scenario code (a Lua scenario's at()/every() callbacks) sees of the
// cluster at one instant: docs/scenarios.md "Events from Lua code".
struct ClusterSnapshot {
  struct Pool {
    std::string name;
    int32_t instances = 0;  // taking traffic (not failed, drained, starting or leaving)
    int32_t present = 0;    // in the pool at all (starting and leaving ones too)
  };
  struct Instance {
    int32_t index = 0;  // as events name it (instance=N)
    int32_t pool = 0;   // into `pools`
    const char* state = "active";  // active, failed, drained, starting, leaving
    int32_t queue = 0, running = 0;
    int64_t in_flight = 0;  // routed to it, not yet completed
    double kv = 0;          // used / total KV blocks
  };
  SimTime now = 0;
  std::vector<Pool> pools;
  std::vector<Instance> instances;  // every instance present, in index order
  int64_t arrived = 0, completed = 0, failed = 0, timed_out = 0, dropped = 0, rejected = 0, rerouted = 0;
};

// The cluster's side of scenario code, valid during a callback.
class ScenarioHost {
 public:
  virtual SimTime now() const = 0;
  virtual void snapshot(ClusterSnapshot& out) const = 0;
  // Applies one event's text now (without at=), or schedules it (at=TIME, not
  // before now); the same checks as data events, InputError naming `where`.
  virtual void apply_text(const std::string& text, const std::string& where) = 0;
  // Asks for code.fire(id) at `at` (>= now), as a kernel Scenario event.
  virtual void call_at(SimTime at, uint64_t id) = 0;
  // Whether the run would end but for calls of the code: the workload is
  // exhausted, nothing else is pending and no horizon is set. A periodic
  // call stops then, or it would keep the run alive for ever.
  virtual bool only_code_left() = 0;

 protected:
  ~ScenarioHost() = default;
};

// Scenario code run inside the simulation (src/lua/lua_scenario_code.cpp).
// Owned by the run; lives as long as the cluster simulation.
class ScenarioCode {
 public:
  virtual ~ScenarioCode() = default;
  // At time 0: asks for the calls the code registered when it was loaded.
  virtual void start(ScenarioHost& host) = 0;
  // The call `id` is due. Throws ScriptError (script:line) when it fails.
  virtual void fire(uint64_t id, ScenarioHost& host) = 0;
};

// How often threshold triggers are checked, in virtual time.
inline constexpr SimTime kTriggerCheckInterval = 100000;

}  // namespace blis
