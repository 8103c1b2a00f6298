// The simulator's event kinds and their order among events at the same time:
// the one place that decides it (DESIGN §5: the key is (time, priority, seq)).
//
//   kind             | priority at equal time          | why
//   -----------------+---------------------------------+----------------------------------------
//   ClusterArrival   | 0                               | cluster events before instance events,
//   Admission        | 1                               | and in pipeline order: arrivals, then
//   Routing          | 2                               | admissions, then routings (spec cluster §1.4)
//   Scenario         | 3                               | a scenario event: after the cluster's own
//                    |                                 | decisions at that time, before instances
//   NodeReady        | 4                               | a node is ready (spec head §6.2: before
//                    |                                 | instance readiness, as -2 before -1 there)
//   InstanceReady    | 5                               | an added instance takes traffic, then the
//   GatewayEviction  | 6                               | gateway (cluster/gateway.cpp): an in-flight
//   GatewayExpiry    | 7                               | eviction, a queued request's TTL, then the
//   GatewayTick      | 8                               | dispatch tick (HEAD: 5, 6, 7, before its
//                    |                                 | autoscaler's 8)
//   ScalingTick      | 9                               | autoscaler looks (spec head §6.3: tick,
//   ScaleActuation   | 10                              | then actuation), all before instances
//   PdPrefillRouting | 11                              | P/D (spec head §5.2): the prefill routing,
//   PdPrefilled      | 12                              | a prefill's end (its transfer starts),
//   PdTransferCheck  | 13                              | shares of the link settled,
//   PdTransferDone   | 14                              | a transfer's end: the reference's order
//   InstanceArrival  | kInstanceBase + 8·index + 1     | instance events after every cluster
//   Queued           | kInstanceBase + 8·index + 2     | event; the lowest instance index first
//   AdapterLoad      | kInstanceBase + 8·index + 3     | (spec cluster §1.4); within an instance:
//   Step             | kInstanceBase + 8·index + 4     | arrival, enqueue, a LoRA adapter's load
//                    |                                 | done (HEAD: before a step at its time),
//                    |                                 | step (spec engine §2)
//   Timeout          | kInstanceBase + 8·index + 5     | last: a completion at the deadline's tick
//                    |                                 | wins over the timeout (spec head §4.1)
//
// Events with equal time and priority run in the order they were scheduled.
#pragma once

#include <blis/kernel.hpp>

#include <cstdint>

namespace blis {

enum class EventKind : uint32_t {
  ClusterArrival,   // a request reaches the cluster
  Admission,        // its admission decision, L_adm later
  Routing,          // its routing decision, L_rt after admission
  InstanceArrival,  // it reaches the chosen instance
  Queued,           // it enters that instance's wait queue, after the model's queueing time
  Step,             // an instance runs one step of its batch
  Timeout,          // a request's deadline passes (payload: timeout_payload)
  Scenario,         // a scenario event (blis/scenario_events.hpp); payload: its index
  InstanceReady,    // an added instance is loaded (cluster/fleet.cpp); payload: its slot
  ScalingTick,      // the autoscaler's collect -> analyze -> optimize step
  ScaleActuation,   // an autoscaler decision is applied; payload: its index
  // P/D disaggregation (cluster/pd_flow.cpp); payload: a request's slot, or
  // (incarnation << 32) | slot where the request may have left meanwhile.
  PdPrefillRouting,
  PdPrefilled,
  PdTransferCheck,  // payload: the link's generation
  PdTransferDone,
  NodeReady,  // a provisioned node is ready (cluster/fleet.cpp); payload: its index
  GatewayEviction,  // --in-flight-eviction (cluster/gateway.cpp); payload: (incarnation << 32) | slot
  GatewayExpiry,  // a request's --request-ttl at the gateway (cluster/gateway.cpp); payload: its id
  GatewayTick,    // the gateway's dispatch tick
  AdapterLoad,    // an instance's LoRA adapter load completes (engine/lora.hpp)
};

// Instance events sort after all cluster events at the same time. The
// numbers are kept small: the kernel packs a priority and a sequence number
// into one word (blis/kernel.hpp), which bounds the instances.
inline constexpr uint64_t kInstanceBase = 16;
inline constexpr int64_t kMaxInstances = static_cast<int64_t>((kPriorityLimit - kInstanceBase) / 8);

// The priority of `kind` (for instance events, of instance `index`), as the
// table above gives it.
constexpr uint64_t event_priority(EventKind kind, int32_t index = 0) {
  switch (kind) {
    case EventKind::ClusterArrival: return 0;
    case EventKind::Admission: return 1;
    case EventKind::Routing: return 2;
    case EventKind::Scenario: return 3;
    case EventKind::NodeReady: return 4;
    case EventKind::InstanceReady: return 5;
    case EventKind::GatewayEviction: return 6;
    case EventKind::GatewayExpiry: return 7;
    case EventKind::GatewayTick: return 8;
    case EventKind::ScalingTick: return 9;
    case EventKind::ScaleActuation: return 10;
    case EventKind::PdPrefillRouting: return 11;
    case EventKind::PdPrefilled: return 12;
    case EventKind::PdTransferCheck: return 13;
    case EventKind::PdTransferDone: return 14;
    case EventKind::InstanceArrival: return kInstanceBase + (static_cast<uint64_t>(index) << 3) + 1;
    case EventKind::Queued: return kInstanceBase + (static_cast<uint64_t>(index) << 3) + 2;
    case EventKind::AdapterLoad: return kInstanceBase + (static_cast<uint64_t>(index) << 3) + 3;
    case EventKind::Step: return kInstanceBase + (static_cast<uint64_t>(index) << 3) + 4;
    case EventKind::Timeout: return kInstanceBase + (static_cast<uint64_t>(index) << 3) + 5;
  }
  return 0;
}

// Schedules an event of `kind` at `time`, ordered as the table says; `index`
// is the instance (the event's target), `payload` a request slot.
inline void schedule(Kernel& kernel, SimTime time, EventKind kind, int32_t index = 0,
                     uint64_t payload = 0) {
  kernel.schedule(time, event_priority(kind, index), static_cast<uint32_t>(kind),
                  static_cast<uint32_t>(index), payload);
}

// A step of instance `index` through its lane (EventQueue::add_lane): the
// same place in the order as schedule(kernel, time, EventKind::Step, index).
inline void schedule_step(Kernel& kernel, uint32_t lane, SimTime time, int32_t index) {
  kernel.schedule_lane(lane, time, event_priority(EventKind::Step, index),
                       static_cast<uint32_t>(EventKind::Step), static_cast<uint32_t>(index), 0);
}

inline EventKind kind_of(const Event& e) { return static_cast<EventKind>(e.kind); }

}  // namespace blis
