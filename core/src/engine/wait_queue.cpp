#include "engine/wait_queue.hpp"

#include <cstdio>
#include <cstring>

namespace blis {

bool id_string_less(uint64_t a, uint64_t b) {
  char sa[24], sb[24];
  std::snprintf(sa, sizeof sa, "%llu", static_cast<unsigned long long>(a));
  std::snprintf(sb, sizeof sb, "%llu", static_cast<unsigned long long>(b));
  return std::strcmp(sa, sb) < 0;
}

WaitQueue::Key WaitQueue::key_of(uint32_t slot, int64_t arrival, int64_t input_len, uint64_t id,
                                 int64_t rank) const {
  switch (order_) {
    case QueueOrder::ArrivalDesc: return Key{-arrival, 0, id, slot};
    case QueueOrder::ShortestFirst: return Key{input_len, arrival, id, slot};
    case QueueOrder::RankAsc: return Key{rank, arrival, id, slot};
    case QueueOrder::RankDesc: return Key{-rank, arrival, id, slot};
    default: return Key{arrival, 0, id, slot};
  }
}

void WaitQueue::push_back(uint32_t slot, int64_t arrival, int64_t input_len, uint64_t id, int64_t rank) {
  if (order_ == QueueOrder::Fcfs) fifo_.push_back(slot);
  else
    sorted_.insert(key_of(slot, arrival, input_len, id, rank));
  recount();
}

void WaitQueue::push_front(uint32_t slot, int64_t arrival, int64_t input_len, uint64_t id, int64_t rank) {
  if (order_ == QueueOrder::Fcfs) fifo_.push_front(slot);
  else
    sorted_.insert(key_of(slot, arrival, input_len, id, rank));
  recount();
}

void WaitQueue::erase(uint32_t slot, int64_t arrival, int64_t input_len, uint64_t id, int64_t rank) {
  if (order_ == QueueOrder::Fcfs) {
    for (auto it = fifo_.begin(); it != fifo_.end(); ++it)
      if (*it == slot) {
        fifo_.erase(it);
        break;
      }
  } else {
    sorted_.erase(key_of(slot, arrival, input_len, id, rank));
  }
  recount();
}

void WaitQueue::pop_front() {
  if (order_ == QueueOrder::Fcfs) fifo_.pop_front();
  else sorted_.erase(sorted_.begin());
  recount();
}

}  // namespace blis
