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
    if (e.time == prev.time && e.priority == prev.priority) REQUIRE(e.kind > prev.kind);
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
      pending.push_back(Event{time, priority, pushed, pushed, 0, 0});
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
