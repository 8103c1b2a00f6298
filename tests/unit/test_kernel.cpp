// The event kernel: total order on (time, priority, sequence), a clock that
// never goes back, and the horizon.
#include "catch.hpp"

#include "kernel/events.hpp"

#include <blis/errors.hpp>
#include <blis/go_rand.hpp>
#include <blis/kernel.hpp>

#include <vector>

using namespace blis;

namespace {

struct Recorder : EventHandler {
  std::vector<Event> seen;
  Kernel* kernel = nullptr;
  void handle(const Event& e) override { seen.push_back(e); }
};

}  // namespace

TEST_CASE("events run in time order, then priority, then push order", "[kernel]") {
  Kernel k;
  k.schedule(30, 0, 1, 0, 0);
  k.schedule(10, 5, 2, 0, 0);
  k.schedule(10, 1, 3, 0, 0);
  k.schedule(10, 1, 4, 0, 0);  // same time and priority as the previous: pushed later
  k.schedule(20, 0, 5, 0, 0);
  Recorder r;
  k.run(r);
  std::vector<uint32_t> kinds;
  for (const auto& e : r.seen) kinds.push_back(e.kind);
  CHECK(kinds == std::vector<uint32_t>{3, 4, 2, 5, 1});
  CHECK(k.now() == 30);
  CHECK(k.processed() == 5);
}

TEST_CASE("many ties keep push order (FIFO) whatever the heap shape", "[kernel]") {
  EventQueue q;
  GoRand rng(7);
  for (uint32_t i = 0; i < 5000; ++i) q.push(rng.intn(20), rng.intn(3), i, 0, 0);
  Event prev = q.pop();
  while (!q.empty()) {
    Event e = q.pop();
    REQUIRE(prev.before(e));
    if (e.time == prev.time && e.priority() == prev.priority()) REQUIRE(e.kind > prev.kind);
    prev = e;
  }
}

TEST_CASE("pushes and pops interleaved: each pop is the least key pending", "[kernel]") {
  // Heap sizes rise and fall through every count of last children.
  EventQueue q;
  std::vector<Event> pending;  // the reference: scanned for its least
  GoRand rng(11);
  uint32_t pushed = 0;
  for (int round = 0; round < 20000; ++round) {
    const bool push = pending.empty() || rng.intn(100) < (round % 4000 < 2000 ? 60 : 40);
    if (push) {
      const auto time = static_cast<SimTime>(rng.intn(50));
      const auto priority = static_cast<uint64_t>(rng.intn(4));
      q.push(time, priority, pushed, 0, 0);
      pending.push_back(Event{time, (priority << kSeqBits) | pushed, pushed, 0, 0});
      ++pushed;
      continue;
    }
    auto least = pending.begin();
    for (auto it = pending.begin(); it != pending.end(); ++it)
      if (it->before(*least)) least = it;
    const Event e = q.pop();
    REQUIRE(e.kind == least->kind);
    pending.erase(least);
    REQUIRE(q.size() == pending.size());
  }
}

TEST_CASE("the clock never decreases, events scheduled while running included", "[kernel]") {
  struct Chain : EventHandler {
    Kernel& k;
    SimTime last = 0;
    int n = 0;
    explicit Chain(Kernel& kk) : k(kk) {}
    void handle(const Event& e) override {
      REQUIRE(e.time >= last);
      last = e.time;
      if (++n < 1000) {
        k.schedule(k.now() + (n % 3), n % 2, 0, 0, 0);  // same time or later
        if (n % 5 == 0) k.schedule(k.now(), 0, 0, 0, 0);
      }
    }
  };
  Kernel k;
  k.schedule(0, 0, 0, 0, 0);
  Chain c(k);
  k.run(c);
  CHECK(c.n >= 1000);
  CHECK_THROWS_AS(k.schedule(k.now() - 1, 0, 0, 0, 0), RuntimeError);
}

TEST_CASE("the horizon: events at it run, the first after it stops the loop", "[kernel]") {
  Kernel k(100);
  k.schedule(50, 0, 1, 0, 0);
  k.schedule(100, 0, 2, 0, 0);
  k.schedule(101, 0, 3, 0, 0);
  k.schedule(200, 0, 4, 0, 0);
  Recorder r;
  k.run(r);
  REQUIRE(r.seen.size() == 2);
  CHECK(r.seen[1].kind == 2);
  CHECK(k.now() == 100);
  CHECK(k.queue().size() == 2);  // left unprocessed
}

TEST_CASE("event kinds keep the order of the table in kernel/events.hpp", "[kernel]") {
  // Cluster events in pipeline order, then instances by index, each instance
  // in the order arrival, enqueue, step.
  const EventKind cluster[] = {EventKind::ClusterArrival, EventKind::Admission, EventKind::Routing};
  const EventKind instance[] = {EventKind::InstanceArrival, EventKind::Queued, EventKind::Step};
  std::vector<uint64_t> order;
  for (EventKind k : cluster) order.push_back(event_priority(k));
  for (int32_t index : {0, 1, 99999})
    for (EventKind k : instance) order.push_back(event_priority(k, index));
  for (size_t i = 1; i < order.size(); ++i) CHECK(order[i - 1] < order[i]);
}

TEST_CASE("sequence numbers renumbered before they overflow keep push order", "[kernel]") {
  // A limit of 16 numbers renumbers every few pushes; the order must be
  // what an unbounded sequence gives.
  EventQueue small(16), big;
  GoRand rng(5);
  std::vector<uint32_t> a, b;
  uint32_t id = 0;
  for (int round = 0; round < 4000; ++round) {
    if (small.empty() || (small.size() < 12 && rng.intn(100) < 55)) {
      const auto time = static_cast<SimTime>(round / 8 + rng.intn(3));
      const auto priority = static_cast<uint64_t>(rng.intn(2));
      small.push(time, priority, id, 0, 0);
      big.push(time, priority, id, 0, 0);
      ++id;
    } else {
      a.push_back(small.pop().kind);
      b.push_back(big.pop().kind);
    }
  }
  while (!small.empty()) a.push_back(small.pop().kind), b.push_back(big.pop().kind);
  CHECK(a == b);
  CHECK(small.pushed() == id);
}

TEST_CASE("too many events pending to renumber, or a priority out of range, is an error", "[kernel]") {
  EventQueue q(4);
  for (int i = 0; i < 4; ++i) q.push(i, 0, 0, 0, 0);
  CHECK_THROWS_AS(q.push(9, 0, 0, 0, 0), RuntimeError);
  EventQueue r;
  CHECK_THROWS_AS(r.push(0, kPriorityLimit, 0, 0, 0), RuntimeError);
  CHECK(event_priority(EventKind::Timeout, static_cast<int32_t>(kMaxInstances - 1)) < kPriorityLimit);
}

TEST_CASE("events through lanes leave in the order the heap alone gives them", "[kernel]") {
  // Lanes added as the run goes (the tree grows), pushes to free and taken
  // lanes, to the heap, looks at the top between: the same order as one heap.
  for (const uint64_t seq_limit : {kSeqLimit, uint64_t{64}}) {
    EventQueue lanes(seq_limit), plain;
    GoRand rng(13);
    std::vector<uint32_t> a, b;
    uint32_t id = 0, count = 1;
    lanes.add_lane();
    SimTime now = 0;
    for (int round = 0; round < 30000; ++round) {
      if (round % 3000 == 0 && count < 40) {
        for (int k = 0; k < 5; ++k) CHECK(lanes.add_lane() == count++);
      }
      const int op = static_cast<int>(rng.intn(10));
      if (lanes.empty() || (op < 5 && lanes.size() < 50)) {
        const SimTime time = now + static_cast<SimTime>(rng.intn(30));
        const auto priority = static_cast<uint64_t>(rng.intn(3));
        if (op < 3)
          lanes.push_lane(static_cast<uint32_t>(rng.intn(count)), time, priority, id, 0, 0);
        else
          lanes.push(time, priority, id, 0, 0);
        plain.push(time, priority, id, 0, 0);
        ++id;
      } else if (op < 7) {
        REQUIRE(lanes.top().kind == plain.top().kind);
      } else {
        const Event e = lanes.pop();
        a.push_back(e.kind);
        b.push_back(plain.pop().kind);
        now = e.time;
        REQUIRE(a.back() == b.back());
      }
      REQUIRE(lanes.size() == plain.size());
    }
    Event e;
    while (lanes.pop_until(kForever, e)) a.push_back(e.kind), b.push_back(plain.pop().kind);
    CHECK(plain.empty());
    CHECK(a == b);
  }
}

TEST_CASE("pop_until leaves an event later than its limit", "[kernel]") {
  EventQueue q;
  const uint32_t lane = q.add_lane();
  q.push_lane(lane, 20, 0, 1, 0, 0);
  q.push(30, 0, 2, 0, 0);
  Event e;
  REQUIRE(q.pop_until(25, e));
  CHECK(e.kind == 1);
  CHECK_FALSE(q.pop_until(25, e));
  CHECK(q.size() == 1);
  REQUIRE(q.pop_until(30, e));
  CHECK(e.kind == 2);
  CHECK(q.empty());
}
