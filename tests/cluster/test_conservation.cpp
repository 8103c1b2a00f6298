// Request conservation across the whole pipeline (spec cluster §7.10, issue
// 13): every request that arrived by the horizon is completed, still queued,
// still running, dropped, rejected or still in the admission/routing
// pipeline; and every request that reached an instance has a record.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"

#include <algorithm>
#include <string>

using namespace blis;
using namespace blis::test;

namespace {

// Rejects every request with an odd id.
class RejectOdd final : public AdmissionPolicy {
 public:
  bool admit(const blis_route_input& input, std::string& reason) override {
    if (input.request->id % 2 == 0) return true;
    reason = "odd";
    return false;
  }
};

std::vector<WorkloadRequest> every(int64_t gap, int count) {
  std::vector<WorkloadRequest> out;
  for (int i = 0; i < count; ++i)
    out.push_back(make_request(static_cast<uint64_t>(i), i * gap, 64, 400, static_cast<uint32_t>(i) * 1000));
  return out;
}

}  // namespace

TEST_CASE("requests in the admission and routing pipeline at the horizon are counted",
          "[cluster][invariant]") {
  // One arrival every 10 ms, 20 + 30 ms of admission and routing latency,
  // horizon at 500 ms: arrivals 0..500 ms (51); odd ids are rejected.
  ClusterConfig cfg;
  cfg.num_instances = 2;
  cfg.engine.total_kv_blocks = 1000;
  cfg.engine.horizon = 500000;
  cfg.admission_latency = 20000;
  cfg.routing_latency = 30000;
  cfg.keep_records = true;
  ClusterPolicies policies;
  policies.admission = std::make_unique<RejectOdd>();
  VectorSource src(every(10000, 100));
  auto out = run_cluster(cfg, src, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}),
                         std::move(policies));

  int64_t completed = 0, queued = 0, running = 0, dropped = 0;
  for (const auto& m : out.result.instances) {
    completed += m.completed;
    queued += m.still_queued;
    running += m.still_running;
    dropped += m.dropped_unservable;
  }
  // Admission at a + 20 ms <= 500 ms: ids 0..48, 24 of them odd.
  CHECK(out.result.rejected == 24);
  // Not routed by 500 ms: the admitted 460 and 480 ms ones (routing at 510
  // and 530 ms), and those of 490 and 500 ms (admission at 510 and 520 ms).
  CHECK(out.result.in_pipeline == 4);
  CHECK(queued + running > 0);
  CHECK(completed + queued + running + dropped + out.result.rejected + out.result.in_pipeline == 51);
  // The cluster's report counts them as still queued: injected + rejected = arrivals.
  CHECK(out.cluster.still_queued == queued + out.result.in_pipeline);
  CHECK(out.json.find("\"injected_requests\": 27,") != std::string::npos);
  // Records: every routed request, none of the rejected or unrouted ones.
  CHECK(static_cast<int64_t>(out.cluster.records.size()) == 51 - 24 - 4);
}

TEST_CASE("a request on its way to its instance's queue at the horizon counts as still queued",
          "[cluster][invariant]") {
  // The model's queueing time is 5 ms (α0): the second request reaches the
  // instance at 1 ms and would enter its queue at 6 ms, after the horizon.
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 1000;
  cfg.engine.horizon = 3000;
  cfg.keep_records = true;
  VectorSource src({make_request(0, 0, 64, 400, 1), make_request(1, 1000, 64, 400, 5000)});
  auto out = run_cluster(cfg, src, "blackbox", blackbox_config({5000, 0, 0}, {1000, 10, 5}));
  const InstanceMetrics& m = out.result.instances[0];
  CHECK(m.completed == 0);
  CHECK(m.still_running == 0);
  CHECK(m.still_queued == 2);
  CHECK(out.result.in_pipeline == 0);
  CHECK(out.json.find("\"injected_requests\": 2,") != std::string::npos);
  CHECK(out.cluster.records.size() == 2);
}

TEST_CASE("a dropped request has a record marked dropped", "[cluster][metrics]") {
  // 2000 input tokens never fit 100 blocks of 16: dropped at its enqueue.
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 100;
  cfg.keep_records = true;
  VectorSource src({make_request(0, 0, 2000, 10, 1), make_request(1, 0, 64, 10, 5000)});
  auto out = run_cluster(cfg, src, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}));
  CHECK(out.cluster.dropped_unservable == 1);
  CHECK(out.cluster.completed == 1);
  REQUIRE(out.cluster.records.size() == 2);
  auto dropped = std::find_if(out.cluster.records.begin(), out.cluster.records.end(),
                              [](const RequestRecord& r) { return r.id == 0; });
  REQUIRE(dropped != out.cluster.records.end());
  CHECK(dropped->dropped);
  CHECK(dropped->instance == 0);
  CHECK(dropped->ttft == -1);
  CHECK(out.json.find("\"requestID\": \"request_0\"") != std::string::npos);
  CHECK(out.json.find("\"dropped_unservable\": true") != std::string::npos);
}
