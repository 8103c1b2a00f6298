// The wait queue. FCFS keeps enqueue order (preempted requests go back to the
// front). Every other scheduler/priority combination of the reference orders
// the queue by a key that does not change while a request waits (spec engine
// §7: priorities are ages, so "priority descending" is "arrival ascending"),
// so those keep the queue sorted instead of re-sorting it every step.
#pragma once

#include <cstdint>
#include <cstddef>
#include <deque>
#include <set>

namespace blis {

enum class QueueOrder {
  Fcfs,           // enqueue order
  ArrivalAsc,     // (arrival, id)
  ArrivalDesc,    // (-arrival, id)
  ShortestFirst,  // (input length, arrival, id)
  RankAsc,        // (rank, arrival, id): HEAD's priority-fcfs, rank its vLLM priority
  RankDesc,       // (-rank, arrival, id): HEAD's reverse-priority
};

// True if "request_<a>" sorts before "request_<b>" as strings.
bool id_string_less(uint64_t a, uint64_t b);

class WaitQueue {
 public:
  explicit WaitQueue(QueueOrder order) : order_(order) {}

  struct Key {
    int64_t k1, k2;
    uint64_t id;
    uint32_t slot;
  };

  void push_back(uint32_t slot, int64_t arrival, int64_t input_len, uint64_t id, int64_t rank);
  void push_front(uint32_t slot, int64_t arrival, int64_t input_len, uint64_t id, int64_t rank);
  uint32_t front() const { return order_ == QueueOrder::Fcfs ? fifo_.front() : sorted_.begin()->slot; }
  void pop_front();
  // Removes a request from anywhere in the queue (a timeout); the key fields
  // are those it was pushed with (`rank` is read by the Rank orders only). Linear in the queue length for
  // FCFS.
  void erase(uint32_t slot, int64_t arrival, int64_t input_len, uint64_t id, int64_t rank);
  // Counted as it changes: a deque's size is a computation, and a step asks for it.
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  template <class F>
  void for_each(F&& f) const {
    if (order_ == QueueOrder::Fcfs)
      for (uint32_t s : fifo_) f(s);
    else
      for (const Key& k : sorted_) f(k.slot);
  }

 private:
  struct KeyLess {
    bool operator()(const Key& a, const Key& b) const {
      if (a.k1 != b.k1) return a.k1 < b.k1;
      if (a.k2 != b.k2) return a.k2 < b.k2;
      if (a.id != b.id) return id_string_less(a.id, b.id);
      return a.slot < b.slot;
    }
  };
  Key key_of(uint32_t slot, int64_t arrival, int64_t input_len, uint64_t id, int64_t rank) const;

  void recount() { size_ = order_ == QueueOrder::Fcfs ? fifo_.size() : sorted_.size(); }

  QueueOrder order_;
  std::deque<uint32_t> fifo_;
  std::set<Key, KeyLess> sorted_;
  std::size_t size_ = 0;
};

}  // namespace blis
