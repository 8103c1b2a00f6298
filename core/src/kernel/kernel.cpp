#include <blis/errors.hpp>
#include <blis/kernel.hpp>

#include <string>
#include <utility>

namespace blis {

void EventQueue::push(SimTime time, uint64_t priority, uint32_t kind, uint32_t target,
                      uint64_t payload) {
  heap_.push_back(Event{time, priority, next_seq_++, kind, target, payload});
  // Sift up.
  size_t j = heap_.size() - 1;
  Event x = heap_[j];
  while (j > 0) {
    size_t i = (j - 1) / 2;
    if (!x.before(heap_[i])) break;
    heap_[j] = heap_[i];
    j = i;
  }
  heap_[j] = x;
}

Event EventQueue::pop() {
  Event out = heap_.front();
  Event x = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n > 0) {
    // Sift the former last element down from the root.
    size_t i = 0;
    while (true) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && heap_[c + 1].before(heap_[c])) ++c;
      if (!heap_[c].before(x)) break;
      heap_[i] = heap_[c];
      i = c;
    }
    heap_[i] = x;
  }
  return out;
}

void Kernel::schedule(SimTime time, uint64_t priority, uint32_t kind, uint32_t target,
                      uint64_t payload) {
  if (time < now_)
    throw RuntimeError("internal error: event scheduled in the past (t=" + std::to_string(time) +
                       " < now=" + std::to_string(now_) + ")");
  queue_.push(time, priority, kind, target, payload);
}

void Kernel::run(EventHandler& handler) {
  while (!queue_.empty() && queue_.top().time <= horizon_) {
    Event e = queue_.pop();
    now_ = e.time;
    ++processed_;
    handler.handle(e);
  }
}

void Kernel::run_until(EventHandler& handler, SimTime t) {
  const SimTime until = t < horizon_ ? t : horizon_;
  while (!queue_.empty() && queue_.top().time <= until) {
    Event e = queue_.pop();
    now_ = e.time;
    ++processed_;
    handler.handle(e);
  }
  if (until > now_) now_ = until;
}

}  // namespace blis
