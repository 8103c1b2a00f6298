#include <blis/errors.hpp>
#include <blis/kernel.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace blis {

void EventQueue::push(SimTime time, uint64_t priority, uint32_t kind, uint32_t target,
                      uint64_t payload) {
  heap_.push_back(Event{time, priority, next_seq_++, kind, target, payload});
  // Sift up.
  size_t j = heap_.size() - 1;
  const Event x = heap_[j];
  while (j > 0) {
    const size_t i = (j - 1) / kArity;
    if (!x.before(heap_[i])) break;
    heap_[j] = heap_[i];
    j = i;
  }
  heap_[j] = x;
}

Event EventQueue::pop() {
  const Event out = heap_.front();
  const Event x = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n > 0) {
    // Sift the former last element down from the root: half the levels of
    // a binary heap, so half the 40-byte moves, for the same comparisons.
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
