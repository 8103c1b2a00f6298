// The lifecycle signals of a request (DESIGN §10, after SimGrid's activity
// callbacks): the cluster and the engine announce what happens to a request;
// metrics, per-request records, the decision trace and the in-flight counts
// listen. Whoever announces names no listener.
//
// The listeners are fixed at compile time (cluster/request_signals.hpp lists
// them), so announcing a signal is a handful of inlined calls: no virtual
// dispatch, no std::function, and a listener that ignores a signal costs
// nothing. A listener derives from LifecycleSubscriber and hides the
// handlers it wants; they run in the order of the list.
#pragma once

#include "engine/lora.hpp"

#include <blis/kernel.hpp>
#include <blis/plugin.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace blis {

struct Request;

// One routing decision (spec cluster §4): the target, the router's scores
// (empty for policies without scores) and the instances as the router saw them.
struct RoutingChoice {
  int32_t target;
  const std::vector<double>& scores;
  const blis_route_input& input;
  int32_t position;  // the target's place in input.instances (and scores)
};

// One step of an instance, announced when its duration is known and its
// batch formed, before any token of it is delivered.
struct StepSample {
  int32_t instance;
  SimTime start;
  int64_t duration;       // µs, from the latency model plus KV transfers
  int64_t waiting;        // wait-queue length after batch formation
  int64_t used_kv_blocks;  // held during the step (completions only release)
  int64_t running;         // the batch's size
};

// An instance when the run stops (spec cluster §7.1).
struct InstanceEnd {
  int32_t instance;
  SimTime end_time;  // min(its clock, horizon)
  double cache_hit_rate, kv_thrashing_rate;
  int64_t used_kv_blocks;          // still held
  int64_t kv_allocation_failures;  // final tokens whose KV did not fit
  // Batch members over all steps, and how many of those were handled member
  // by member (the rest were implicit decodes: see Instance::Member).
  int64_t member_steps, member_updates;
  // LoRA: each adapter's loads and evictions here (null without adapters).
  const std::map<std::string, LoraEvents>* adapter_events = nullptr;
};

// The signals, in a request's order, with empty handlers. `r` stays valid and
// unchanged by its announcer while the handler runs; handlers may write the
// request's metrics slot (r.timing), nothing else of it.
struct LifecycleSubscriber {
  // The cluster (spec cluster §1.2-§4).
  void on_admitted(Request&) {}
  void on_rejected(Request&, std::string_view /*reason*/) {}  // the policy's reason, "" if none
  // --flow-control: left the gateway's queue for routing at `t`, having
  // entered it at `enqueued` (its admission decision).
  void on_dispatched(Request&, SimTime /*enqueued*/, SimTime /*t*/) {}
  void on_routed(Request&, const RoutingChoice&) {}  // r.instance is the target
  // Its instance (spec engine §2-§3).
  void on_queued(Request&, SimTime) {}     // entered the wait queue past the enqueue guards
  void on_scheduled(Request&, SimTime) {}  // joined the running batch (again after a preemption)
  void on_first_token(Request&, SimTime) {}  // at the end of the step that made it
  // Its tokens of steps [first_step, end_step) came one step apart: their
  // inter-token latencies are those steps' standard values.
  void on_token_run(Request&, uint64_t /*first_step*/, uint64_t /*end_step*/) {}
  // A token after a stall or a preemption; `itl` is the real gap (µs).
  void on_token_gap(Request&, int64_t /*itl*/) {}
  // Each output token of a member handled member by member, when its step
  // is executed, with the step's end (when the token is delivered). Members
  // decoding implicitly announce their runs only (see Instance::Member): a
  // run that needs every token (blis serve) prices steps member by member.
  void on_token(Request&, SimTime /*end*/) {}
  void on_preempted(Request&, SimTime) {}
  // Right after on_preempted under --preemption-mode restart: its tokens so
  // far are void; its next first token replaces the one it had.
  void on_restarted(Request&) {}
  void on_completed(Request&, SimTime) {}  // finished or length-capped; r.step() is final
  void on_dropped(Request&, SimTime) {}    // can never be served (spec engine §2.7)
  // Its deadline passed at its instance: at the enqueue (r.state Routed),
  // while queued or while running (r.step() holds its step state); its KV is
  // already free (spec head §4.1).
  void on_timed_out(Request&, SimTime) {}
  // Lost with its instance (a scenario's `fail` event); departs next.
  void on_failed(Request&, SimTime) {}
  // Taken back from its instance, queued or running, by the gateway's
  // --in-flight-eviction; departs next.
  void on_evicted(Request&, SimTime) {}
  void on_departed(Request&, SimTime) {}   // left its instance, after completed, dropped, timed out or failed
  // The run stopped with the request still inside: in the admission/routing
  // pipeline, on its way to its instance's queue, queued or running.
  void on_stopped(Request&) {}
  // Not of one request: a step of an instance, an instance when the run stops.
  void on_step(const StepSample&) {}
  void on_instance_stopped(const InstanceEnd&) {}
};

// Announces each signal to every subscriber, in list order. Holds references:
// the subscribers outlive it.
template <class... Subscribers>
class Lifecycle {
 public:
  explicit Lifecycle(Subscribers&... s) : subs_(s...) {}

  void admitted(Request& r) { each([&](auto& s) { s.on_admitted(r); }); }
  void rejected(Request& r, std::string_view reason) { each([&](auto& s) { s.on_rejected(r, reason); }); }
  void dispatched(Request& r, SimTime enqueued, SimTime t) {
    each([&](auto& s) { s.on_dispatched(r, enqueued, t); });
  }
  void routed(Request& r, const RoutingChoice& c) { each([&](auto& s) { s.on_routed(r, c); }); }
  void queued(Request& r, SimTime t) { each([&](auto& s) { s.on_queued(r, t); }); }
  void scheduled(Request& r, SimTime t) { each([&](auto& s) { s.on_scheduled(r, t); }); }
  void first_token(Request& r, SimTime t) { each([&](auto& s) { s.on_first_token(r, t); }); }
  void token_run(Request& r, uint64_t first, uint64_t end) {
    each([&](auto& s) { s.on_token_run(r, first, end); });
  }
  void token_gap(Request& r, int64_t itl) { each([&](auto& s) { s.on_token_gap(r, itl); }); }
  void token(Request& r, SimTime end) { each([&](auto& s) { s.on_token(r, end); }); }
  void preempted(Request& r, SimTime t) { each([&](auto& s) { s.on_preempted(r, t); }); }
  void restarted(Request& r) { each([&](auto& s) { s.on_restarted(r); }); }
  void completed(Request& r, SimTime t) { each([&](auto& s) { s.on_completed(r, t); }); }
  void dropped(Request& r, SimTime t) { each([&](auto& s) { s.on_dropped(r, t); }); }
  void timed_out(Request& r, SimTime t) { each([&](auto& s) { s.on_timed_out(r, t); }); }
  void failed(Request& r, SimTime t) { each([&](auto& s) { s.on_failed(r, t); }); }
  void evicted(Request& r, SimTime t) { each([&](auto& s) { s.on_evicted(r, t); }); }
  void departed(Request& r, SimTime t) { each([&](auto& s) { s.on_departed(r, t); }); }
  void stopped(Request& r) { each([&](auto& s) { s.on_stopped(r); }); }
  void step(const StepSample& x) { each([&](auto& s) { s.on_step(x); }); }
  void instance_stopped(const InstanceEnd& x) { each([&](auto& s) { s.on_instance_stopped(x); }); }

 private:
  template <class F>
  void each(F&& f) {
    std::apply([&](auto&... s) { (f(s), ...); }, subs_);
  }
  std::tuple<Subscribers&...> subs_;
};

}  // namespace blis
