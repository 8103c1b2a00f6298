// Wait-queue order of the schedulers and priority policies (spec engine §7).
// With one request running at a time, the order of first tokens is the order
// in which the scheduler picked the waiting requests.
#include "catch.hpp"

#include "engine_harness.hpp"

#include <algorithm>

using namespace blis;
using namespace blis::test;

namespace {

// Requests 1..3 arrive while request 0 runs; returns ids by first token time.
std::vector<uint64_t> service_order(QueueOrder order) {
  ClusterConfig c;
  c.engine.total_kv_blocks = 1000;
  c.engine.max_running = 1;
  c.engine.order = order;
  c.keep_records = true;
  VectorSource src({make_request(0, 0, 64, 20, 1), make_request(1, 10, 300, 2, 1000),
                    make_request(2, 20, 100, 2, 2000), make_request(3, 30, 200, 2, 3000)});
  auto out = run_cluster(c, src, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}));
  auto recs = out.cluster.records;
  std::sort(recs.begin(), recs.end(), [](const auto& a, const auto& b) {
    return a.arrival_us + a.ttft < b.arrival_us + b.ttft;
  });
  std::vector<uint64_t> ids;
  for (const auto& r : recs) ids.push_back(r.id);
  return ids;
}

}  // namespace

TEST_CASE("fcfs serves in arrival order", "[engine]") {
  CHECK(service_order(QueueOrder::Fcfs) == std::vector<uint64_t>{0, 1, 2, 3});
}

TEST_CASE("sjf serves the shortest prompt first", "[engine]") {
  CHECK(service_order(QueueOrder::ShortestFirst) == std::vector<uint64_t>{0, 2, 3, 1});
}

TEST_CASE("ageing priorities serve the oldest first, inverted ones the newest", "[engine]") {
  // priority-fcfs + slo-based and reverse-priority + inverted-slo: oldest first.
  CHECK(service_order(QueueOrder::ArrivalAsc) == std::vector<uint64_t>{0, 1, 2, 3});
  // priority-fcfs + inverted-slo and reverse-priority + slo-based: newest first.
  CHECK(service_order(QueueOrder::ArrivalDesc) == std::vector<uint64_t>{0, 3, 2, 1});
}

TEST_CASE("request ids tie-break as strings, like the reference", "[engine]") {
  CHECK(id_string_less(10, 2));   // "request_10" < "request_2"
  CHECK_FALSE(id_string_less(2, 10));
  CHECK(id_string_less(1, 10));
}
