#include <blis/errors.hpp>
#include <blis/kernel.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace blis {

EventQueue::EventQueue(uint64_t seq_limit) : seq_limit_(seq_limit) {
  if (seq_limit < 2 || seq_limit > kSeqLimit || (seq_limit & (seq_limit - 1)) != 0)
    throw RuntimeError("internal error: event sequence limit " + std::to_string(seq_limit) +
                       " is not a power of two in [2, 2^" + std::to_string(kSeqBits) + "]");
}

uint64_t EventQueue::next_order(uint64_t priority) {
  if (priority >= kPriorityLimit)
    throw RuntimeError("internal error: event priority " + std::to_string(priority) + " is not below " +
                       std::to_string(kPriorityLimit));
  if (next_seq_ == seq_limit_) renumber();
  ++pushed_;
  return (priority << kSeqBits) | next_seq_++;
}

void EventQueue::push(SimTime time, uint64_t priority, uint32_t kind, uint32_t target,
                      uint64_t payload) {
  heap_push(time, next_order(priority), kind, target, payload);
}

namespace {

// Field by field: an event made whole on the stack and copied in wide moves
// would be read back before its narrow stores reach the cache (a stall of
// a dozen cycles at every push).
void put(Event& e, SimTime time, uint64_t order, uint32_t kind, uint32_t target, uint64_t payload) {
  e.time = time;
  e.order = order;
  e.kind = kind;
  e.target = target;
  e.payload = payload;
}

}  // namespace

void EventQueue::heap_push(SimTime time, uint64_t order, uint32_t kind, uint32_t target, uint64_t payload) {
  // Sift up: the parents the new event precedes move down a level.
  size_t j = heap_.size();
  heap_.emplace_back();
  const EventKey key = event_key(time, order);
  while (j > 0) {
    const size_t i = (j - 1) / kArity;
    if (!(key < heap_[i].key())) break;
    heap_[j] = heap_[i];
    j = i;
  }
  put(heap_[j], time, order, kind, target, payload);
}

uint32_t EventQueue::add_lane() {
  const uint32_t lane = lanes_++;
  if (lanes_ > lanes_cap_) {
    // Twice the leaves: the tree is built again, bottom up.
    settle();
    lanes_cap_ *= 2;
    win_.assign(2 * static_cast<size_t>(lanes_cap_), 0);
    for (uint32_t i = 0; i < lanes_cap_; ++i) win_[lanes_cap_ + i] = i;
    keys_.resize(lanes_cap_, kNoEventKey);
    events_.resize(lanes_cap_);
    for (size_t n = lanes_cap_ - 1; n >= 1; --n) {
      const uint32_t a = win_[2 * n], b = win_[2 * n + 1];
      win_[n] = keys_[b] < keys_[a] ? b : a;
    }
  } else if (keys_.empty()) {
    keys_.assign(1, kNoEventKey);
    events_.resize(1);
  }
  return lane;
}

void EventQueue::push_lane(uint32_t lane, SimTime time, uint64_t priority, uint32_t kind, uint32_t target,
                           uint64_t payload) {
  if (lane >= lanes_) throw RuntimeError("internal error: no event lane " + std::to_string(lane));
  const uint64_t order = next_order(priority);
  if (keys_[lane] != kNoEventKey) {
    heap_push(time, order, kind, target, payload);  // the lane is taken
    return;
  }
  if (stale_ != lane) settle();
  stale_ = kNoLane;
  Event& e = events_[lane];
  put(e, time, order, kind, target, payload);
  keys_[lane] = e.key();
  ++held_;
  replay(lane);
}

void EventQueue::retime_lane(uint32_t lane, SimTime time) {
  if (lane >= lanes_ || keys_[lane] == kNoEventKey)
    throw RuntimeError("internal error: no event waits in lane " + std::to_string(lane));
  settle();
  Event& e = events_[lane];
  e.time = time;
  keys_[lane] = e.key();
  replay(lane);
}

void EventQueue::replay(uint32_t lane) const {
  size_t node = lanes_cap_ + lane;
  uint32_t w = lane;
  while (node > 1) {
    const uint32_t other = win_[node ^ 1];
    if (keys_[other] < keys_[w]) w = other;
    node >>= 1;
    win_[node] = w;
  }
}

// The pending events' sequence numbers become 0, 1, ... in their order, so
// the next pushes still come after every pending event of their time and
// priority. The relative order of the pending events is unchanged, so the
// heap stays a heap and the tree's winners stay winners.
void EventQueue::renumber() {
  settle();
  std::vector<Event*> pending;
  pending.reserve(size());
  for (Event& e : heap_) pending.push_back(&e);
  for (uint32_t lane = 0; lane < lanes_; ++lane)
    if (keys_[lane] != kNoEventKey) pending.push_back(&events_[lane]);
  if (pending.size() >= seq_limit_)
    throw RuntimeError("internal error: more than " + std::to_string(seq_limit_ - 1) + " events pending");
  std::sort(pending.begin(), pending.end(), [](const Event* a, const Event* b) { return a->before(*b); });
  for (size_t i = 0; i < pending.size(); ++i) pending[i]->order = (pending[i]->priority() << kSeqBits) | i;
  for (uint32_t lane = 0; lane < lanes_; ++lane)
    if (keys_[lane] != kNoEventKey) keys_[lane] = events_[lane].key();
  next_seq_ = pending.size();
}

Event EventQueue::pop() {
  Event out;
  pop_until(kForever, out);
  return out;
}

bool EventQueue::pop_until(SimTime limit, Event& out) {
  settle();
  if (lane_first()) {
    const uint32_t w = win_[1];
    if (events_[w].time > limit) return false;
    out = events_[w];
    --held_;
    keys_[w] = kNoEventKey;
    stale_ = w;  // replayed when the lane is given its next event, or at the next look
    return true;
  }
  if (heap_.empty() || heap_.front().time > limit) return false;
  out = heap_pop();
  return true;
}

Event EventQueue::heap_pop() {
  const Event out = heap_.front();
  const Event x = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n > 0) {
    // Sift the former last element down from the root: half the levels of
    // a binary heap, so half the moves, for the same comparisons.
    size_t i = 0;
    while (true) {
      const size_t first = kArity * i + 1;
      if (first >= n) break;
      size_t c = first;
      if (first + kArity <= n) {
        // All four children: a tournament of pairs.
        const size_t a = heap_[first + 1].before(heap_[first]) ? first + 1 : first;
        const size_t b = heap_[first + 3].before(heap_[first + 2]) ? first + 3 : first + 2;
        c = heap_[b].before(heap_[a]) ? b : a;
      } else {
        for (size_t k = first + 1; k < n; ++k)
          if (heap_[k].before(heap_[c])) c = k;
      }
      if (!heap_[c].before(x)) break;
      heap_[i] = heap_[c];
      i = c;
    }
    heap_[i] = x;
  }
  return out;
}

void Kernel::check_not_past(SimTime time) const {
  if (time < now_)
    throw RuntimeError("internal error: event scheduled in the past (t=" + std::to_string(time) +
                       " < now=" + std::to_string(now_) + ")");
}

void Kernel::schedule(SimTime time, uint64_t priority, uint32_t kind, uint32_t target, uint64_t payload) {
  check_not_past(time);
  queue_.push(time, priority, kind, target, payload);
}

void Kernel::schedule_lane(uint32_t lane, SimTime time, uint64_t priority, uint32_t kind, uint32_t target,
                           uint64_t payload) {
  check_not_past(time);
  queue_.push_lane(lane, time, priority, kind, target, payload);
}

void Kernel::run(EventHandler& handler) {
  Event e;
  while (queue_.pop_until(horizon_, e)) {
    now_ = e.time;
    ++processed_;
    handler.handle(e);
  }
}

void Kernel::run_until(EventHandler& handler, SimTime t) {
  const SimTime until = t < horizon_ ? t : horizon_;
  Event e;
  while (queue_.pop_until(until, e)) {
    now_ = e.time;
    ++processed_;
    handler.handle(e);
  }
  if (until > now_) now_ = until;
}

void Kernel::retime_lane(uint32_t lane, SimTime time) {
  check_not_past(time);
  queue_.retime_lane(lane, time);
}

}  // namespace blis
