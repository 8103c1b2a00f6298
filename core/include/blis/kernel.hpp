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

// An event's place among events at the same time: its priority in the high
// bits, its push order (sequence) in the low ones, so that one comparison
// orders both. Priorities are below kPriorityLimit (kernel/events.hpp keeps
// them small); the sequence is renumbered, order kept, before it would
// overflow its bits.
inline constexpr int kSeqBits = 38;
inline constexpr uint64_t kSeqLimit = uint64_t{1} << kSeqBits;
// Not 2^(64 - kSeqBits): the greatest key stays free, for "no event".
inline constexpr uint64_t kPriorityLimit = (uint64_t{1} << (64 - kSeqBits)) - 1;
__extension__ typedef unsigned __int128 EventKey;
inline constexpr EventKey kNoEventKey = ~EventKey{0};

// (time, order) as one unsigned number (the time's sign bit flipped, so that
// it orders as the signed time): a comparison without branches.
inline EventKey event_key(SimTime time, uint64_t order) {
  return (static_cast<EventKey>(static_cast<uint64_t>(time) ^ (uint64_t{1} << 63)) << 64) | order;
}

struct Event {
  SimTime time = 0;
  uint64_t order = 0;     // (priority << kSeqBits) | seq
  uint32_t kind = 0;      // meaning is the handler's
  uint32_t target = 0;    // e.g. an instance index
  uint64_t payload = 0;   // e.g. a request slot

  uint64_t priority() const { return order >> kSeqBits; }   // lower runs first at the same time
  uint64_t seq() const { return order & (kSeqLimit - 1); }  // push order: breaks the remaining ties
  bool before(const Event& o) const { return key() < o.key(); }
  EventKey key() const { return event_key(time, order); }
};

// The pending events, taken in the order of (time, priority, seq). The key
// is total, so events leave in the same order whatever the structure.
//
// Most events go to a 4-ary min-heap. A lane (add_lane) is a place for one
// event at a time beside it, for a stream of events of which one at most
// usually waits: an instance's next step. The lanes are the leaves of a
// winner tree, so that taking a lane's event and giving it the next one
// costs one walk up that tree, not a sift down and up the heap among every
// other instance's steps. An event pushed to a lane that holds one already
// goes to the heap: where an event waits never changes when it leaves.
class EventQueue {
 public:
  // `seq_limit` (at most kSeqLimit, a power of two): where the sequence is
  // renumbered; smaller only in tests.
  explicit EventQueue(uint64_t seq_limit = kSeqLimit);
  // `priority` must be below kPriorityLimit.
  void push(SimTime time, uint64_t priority, uint32_t kind, uint32_t target, uint64_t payload);
  uint32_t add_lane();
  void push_lane(uint32_t lane, SimTime time, uint64_t priority, uint32_t kind, uint32_t target,
                 uint64_t payload);
  // Moves the event `lane` holds to `time`, its order (priority, sequence)
  // kept: where it waits among the events of its new time is where an event
  // of its priority pushed then would wait, since no other event shares its
  // priority (the lane's stream has one event pending at most).
  void retime_lane(uint32_t lane, SimTime time);
  bool empty() const { return heap_.empty() && held_ == 0; }
  size_t size() const { return heap_.size() + held_; }
  const Event& top() const {
    settle();
    return lane_first() ? events_[win_[1]] : heap_.front();
  }
  Event pop();  // the queue must not be empty
  // Takes the next event into `out` if there is one at or before `limit`.
  bool pop_until(SimTime limit, Event& out);
  uint64_t pushed() const { return pushed_; }

 private:
  static constexpr size_t kArity = 4;
  static constexpr uint32_t kNoLane = UINT32_MAX;
  uint64_t next_order(uint64_t priority);
  void renumber();
  void heap_push(SimTime time, uint64_t order, uint32_t kind, uint32_t target, uint64_t payload);
  Event heap_pop();
  // The tree's matches on the way from `lane` to the root, played again.
  void replay(uint32_t lane) const;
  // Whether the next event is the lanes' winner, not the heap's top (settled).
  bool lane_first() const { return held_ > 0 && (heap_.empty() || keys_[win_[1]] < heap_.front().key()); }
  // A lane emptied by pop() is replayed at the next change or look.
  void settle() const {
    if (stale_ != kNoLane) {
      replay(stale_);
      stale_ = kNoLane;
    }
  }

  std::vector<Event> heap_;
  // Lanes: a power-of-two count of leaves; win_[n] is the lane that wins
  // node n's subtree (node 1 the root, leaves at lanes_cap_ + lane).
  std::vector<Event> events_;
  std::vector<EventKey> keys_;  // kNoEventKey: the lane is empty
  mutable std::vector<uint32_t> win_ = std::vector<uint32_t>(2, 0);
  uint32_t lanes_ = 0;
  uint32_t lanes_cap_ = 1;
  size_t held_ = 0;  // lanes holding an event
  mutable uint32_t stale_ = kNoLane;
  uint64_t next_seq_ = 0;
  uint64_t seq_limit_;
  uint64_t pushed_ = 0;
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
  // The same, through one of the queue's lanes (EventQueue::add_lane).
  void schedule_lane(uint32_t lane, SimTime time, uint64_t priority, uint32_t kind, uint32_t target,
                     uint64_t payload);
  // The event waiting in `lane` moves to `time` (EventQueue::retime_lane).
  void retime_lane(uint32_t lane, SimTime time);
  void run(EventHandler& handler);
  // Online runs (blis serve): processes the events up to `t` (and the
  // horizon), then moves the clock to `t`, so that what happens next, a
  // request arriving say, happens at `t`.
  void run_until(EventHandler& handler, SimTime t);
  // The time of the next event, kForever when there is none.
  SimTime next_time() const { return queue_.empty() ? kForever : queue_.top().time; }

 private:
  void check_not_past(SimTime time) const;
  EventQueue queue_;
  SimTime now_ = 0;
  SimTime horizon_;
  uint64_t processed_ = 0;
};

}  // namespace blis
