// The event kernel: one clock, one queue, one loop. Everything else is a
// handler the kernel calls. Time is an integer count of microseconds; the
// event key (time, priority, sequence) is total, so the order of events, and
// therefore every result, is deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace blis {

using SimTime = int64_t;
inline constexpr SimTime kForever = std::numeric_limits<SimTime>::max();

struct Event {
  SimTime time = 0;
  uint64_t priority = 0;  // lower runs first among events at the same time
  uint64_t seq = 0;       // push order: breaks the remaining ties
  uint32_t kind = 0;      // meaning is the handler's
  uint32_t target = 0;    // e.g. an instance index
  uint64_t payload = 0;   // e.g. a request slot

  bool before(const Event& o) const {
    if (time != o.time) return time < o.time;
    if (priority != o.priority) return priority < o.priority;
    return seq < o.seq;
  }
};

// A 4-ary min-heap on (time, priority, seq). The key is total, so events
// leave in the same order whatever the heap's shape.
class EventQueue {
 public:
  void push(SimTime time, uint64_t priority, uint32_t kind, uint32_t target, uint64_t payload);
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event pop();
  uint64_t pushed() const { return next_seq_; }

 private:
  static constexpr size_t kArity = 4;
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void handle(const Event& e) = 0;
};

// Owns simulated time. run() processes events in key order until the queue is
// empty or the next event lies after the horizon (events exactly at the
// horizon run). The clock never decreases.
class Kernel {
 public:
  explicit Kernel(SimTime horizon = kForever) : horizon_(horizon) {}

  SimTime now() const { return now_; }
  SimTime horizon() const { return horizon_; }
  EventQueue& queue() { return queue_; }
  uint64_t processed() const { return processed_; }

  // Schedules an event; `time` must not lie in the past.
  void schedule(SimTime time, uint64_t priority, uint32_t kind, uint32_t target, uint64_t payload);
  void run(EventHandler& handler);
  // Online runs (blis serve): processes the events up to `t` (and the
  // horizon), then moves the clock to `t`, so that what happens next, a
  // request arriving say, happens at `t`.
  void run_until(EventHandler& handler, SimTime t);
  // The time of the next event, kForever when there is none.
  SimTime next_time() const { return queue_.empty() ? kForever : queue_.top().time; }

 private:
  EventQueue queue_;
  SimTime now_ = 0;
  SimTime horizon_;
  uint64_t processed_ = 0;
};

}  // namespace blis
