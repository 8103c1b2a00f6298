// What an online run (blis serve, src/serve/) hears of its requests: their
// tokens, their end and their preemptions, through an interface the cluster
// holds a pointer to (ClusterConfig::live). Batch runs leave it null, and the
// tap then costs one untaken branch per signal it listens to.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"

#include <string_view>

namespace blis {

// How a request left the simulation.
enum class LiveEnd { Completed, Rejected, Dropped, TimedOut };

class LiveSink {
 public:
  virtual ~LiveSink() = default;
  // An output token of `r`, delivered at `end` (>= the simulation's clock:
  // its step has just been priced). Called from the simulation's thread.
  virtual void token(const Request& r, SimTime end) = 0;
  // `r` left at `t` (>= the clock); completed: after its last token.
  virtual void finished(const Request& r, SimTime t, LiveEnd how) = 0;
  virtual void preempted(const Request& r) = 0;
};

struct LiveTap : LifecycleSubscriber {
  explicit LiveTap(LiveSink* s) : sink(s) {}
  // A P/D prefill delivers no token: its decode instance makes them all.
  void on_token(Request& r, SimTime end) {
    if (sink && r.pd != PdStage::Prefill) sink->token(r, end);
  }
  void on_completed(Request& r, SimTime t) {
    if (sink) sink->finished(r, t, LiveEnd::Completed);
  }
  void on_rejected(Request& r, std::string_view) {
    if (sink) sink->finished(r, 0, LiveEnd::Rejected);
  }
  void on_dropped(Request& r, SimTime t) {
    if (sink) sink->finished(r, t, LiveEnd::Dropped);
  }
  void on_timed_out(Request& r, SimTime t) {
    if (sink) sink->finished(r, t, LiveEnd::TimedOut);
  }
  void on_preempted(Request& r, SimTime) {
    if (sink) sink->preempted(r);
  }
  LiveSink* sink;
};

}  // namespace blis
