// The gateway's flow control (cluster/gateway.hpp, docs/gateway.md): what a
// user of --flow-control sees — requests held while the detector says the
// instances are saturated, refused at a full queue, shed for more urgent
// ones, expired past their TTL, dispatched most urgent first — and that
// every arrival is still accounted for.
#include "catch.hpp"

#include "gateway_harness.hpp"

#include <blis/scenario_events.hpp>

#include <algorithm>
#include <string>

using namespace blis;
using namespace blis::test;

namespace {

// One instance; requests 10 µs apart, each running ~200 steps of ~1 ms.
ClusterConfig gated(int64_t max_concurrency) {
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 10000;
  cfg.keep_records = true;
  cfg.gateway.enabled = true;
  cfg.gateway.detector = detector("concurrency", max_concurrency);
  cfg.gateway.order = order("fifo");
  cfg.gateway.fairness = fairness("global-strict");
  cfg.gateway.shedding_policy = shedding("lowest-priority");
  return cfg;
}

std::vector<WorkloadRequest> burst(const std::vector<int32_t>& classes) {
  std::vector<WorkloadRequest> out = evenly_spaced(10, static_cast<int>(classes.size()), 64, 200);
  for (size_t i = 0; i < classes.size(); ++i) out[i].slo_class = classes[i];
  return out;
}

int64_t sum(const RunOutcome& out, int64_t InstanceMetrics::*field) {
  int64_t n = 0;
  for (const auto& m : out.result.instances) n += m.*field;
  return n;
}

}  // namespace

TEST_CASE("a saturated detector holds dispatch and a full gateway queue rejects", "[cluster][gateway]") {
  // Request 0 runs alone (1 in flight = saturated); 1..3 fill the queue of
  // 3; 4..9 are rejected; the queued ones run one after another.
  ClusterConfig cfg = gated(1);
  cfg.gateway.max_depth = 3;
  VectorSource src(burst(std::vector<int32_t>(10, BLIS_SLO_STANDARD)));
  auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
  REQUIRE(out.result.gateway);
  CHECK(out.result.gateway->rejected == 6);
  CHECK(out.result.gateway->shed == 0);
  CHECK(out.result.gateway->depth == 0);
  CHECK(sum(out, &InstanceMetrics::completed) == 4);
  CHECK(out.result.rejected == 0);  // not the admission policy's rejections
  CHECK(completion_order(out) == std::vector<uint64_t>{0, 1, 2, 3});
  // Held: request 1 starts only when request 0 is done.
  const auto& recs = out.cluster.records;
  auto rec = [&](uint64_t id) { return *std::find_if(recs.begin(), recs.end(), [&](auto& r) { return r.id == id; }); };
  CHECK(rec(1).arrival_us + rec(1).ttft > rec(0).arrival_us + rec(0).e2e);
}

TEST_CASE("without saturation the gateway queue passes requests straight through", "[cluster][gateway]") {
  ClusterConfig cfg = gated(1);
  cfg.gateway.detector = detector("never");
  cfg.gateway.max_depth = 1;
  VectorSource src(burst(std::vector<int32_t>(10, BLIS_SLO_STANDARD)));
  auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
  CHECK(out.result.gateway->rejected == 0);
  CHECK(sum(out, &InstanceMetrics::completed) == 10);
}

TEST_CASE("a request queued past --request-ttl expires", "[cluster][gateway]") {
  ClusterConfig cfg = gated(1);
  cfg.gateway.ttl = 50000;  // request 0 runs ~200 ms: every other one expires
  VectorSource src(burst(std::vector<int32_t>(10, BLIS_SLO_CRITICAL)));
  auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
  CHECK(out.result.gateway->expired == 9);
  CHECK(sum(out, &InstanceMetrics::completed) == 1);
  // HEAD's "Shed (critical)" counts them.
  CHECK(out.result.admission_rejected_by_class.at(BLIS_SLO_CRITICAL) == 9);
}

TEST_CASE("priority dispatch sends the most urgent band first, fifo the earliest arrival", "[cluster][gateway]") {
  const std::vector<int32_t> classes{BLIS_SLO_STANDARD, BLIS_SLO_SHEDDABLE, BLIS_SLO_BATCH, BLIS_SLO_CRITICAL,
                                     BLIS_SLO_STANDARD};
  ClusterConfig cfg = gated(1);
  cfg.gateway.order = order("priority");
  VectorSource a(burst(classes));
  CHECK(completion_order(run_cluster(cfg, a, "blackbox", step_1000_10_5())) ==
        std::vector<uint64_t>{0, 3, 4, 2, 1});
  cfg.gateway.order = order("fifo");
  VectorSource b(burst(classes));
  CHECK(completion_order(run_cluster(cfg, b, "blackbox", step_1000_10_5())) ==
        std::vector<uint64_t>{0, 1, 2, 3, 4});
}

TEST_CASE("the fairness policy picks the tenant: global-strict in arrival order, round-robin in turn",
          "[cluster][gateway]") {
  // One band, held to one request at a time: request 0 (tenant a) runs, then
  // a, a, b, b wait. global-strict sends them as they came; round-robin
  // alternates the tenants, b first (a was picked last, for request 0).
  auto tenants = [] {
    std::vector<WorkloadRequest> reqs = burst(std::vector<int32_t>(5, BLIS_SLO_STANDARD));
    const char* const t[] = {"a", "a", "a", "b", "b"};
    for (size_t i = 0; i < reqs.size(); ++i) reqs[i].tenant_id = Label(t[i]);
    return reqs;
  };
  ClusterConfig cfg = gated(1);
  cfg.gateway.order = order("priority");
  VectorSource strict(tenants());
  CHECK(completion_order(run_cluster(cfg, strict, "blackbox", step_1000_10_5())) ==
        std::vector<uint64_t>{0, 1, 2, 3, 4});
  cfg.gateway.fairness = fairness("round-robin");
  VectorSource turns(tenants());
  CHECK(completion_order(run_cluster(cfg, turns, "blackbox", step_1000_10_5())) ==
        std::vector<uint64_t>{0, 3, 1, 4, 2});
}

TEST_CASE("with --queue-shedding a full queue sheds its least urgent request for a more urgent one",
          "[cluster][gateway]") {
  // Queue of 2 holds sheddable 1 and batch 2; critical 3 sheds the sheddable
  // one (the lowest priority), standard 4 the batch one; background 5 finds
  // nothing less urgent and is rejected.
  ClusterConfig cfg = gated(1);
  cfg.gateway.max_depth = 2;
  cfg.gateway.shedding = true;
  cfg.gateway.order = order("priority");
  VectorSource src(burst({BLIS_SLO_STANDARD, BLIS_SLO_SHEDDABLE, BLIS_SLO_BATCH, BLIS_SLO_CRITICAL,
                          BLIS_SLO_STANDARD, BLIS_SLO_BACKGROUND}));
  auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
  CHECK(out.result.gateway->shed == 2);
  CHECK(out.result.gateway->rejected == 1);
  CHECK(completion_order(out) == std::vector<uint64_t>{0, 3, 4});
}

TEST_CASE("requests still in the gateway queue at the horizon are counted there only", "[cluster][gateway]") {
  ClusterConfig cfg = gated(1);
  cfg.engine.horizon = 100000;
  VectorSource src(burst(std::vector<int32_t>(10, BLIS_SLO_STANDARD)));
  auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
  CHECK(out.result.gateway->depth == 9);
  // Request 0 is the only one that reached an instance.
  CHECK(sum(out, &InstanceMetrics::still_running) + sum(out, &InstanceMetrics::still_queued) == 1);
  CHECK(out.result.in_pipeline == 0);
}

TEST_CASE("with --in-flight-eviction a waiting critical request evicts a running sheddable one",
          "[cluster][gateway]") {
  // Sheddable 0 runs alone (saturated); critical 1 waits: sheddable 0 is
  // taken off the instance at once and critical 1 is dispatched at the next
  // tick. Without eviction, 1 waits for 0 to finish.
  ClusterConfig cfg = gated(1);
  cfg.gateway.eviction = true;
  VectorSource src(burst({BLIS_SLO_SHEDDABLE, BLIS_SLO_CRITICAL}));
  auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
  CHECK(out.result.gateway->evicted == 1);
  CHECK(completion_order(out) == std::vector<uint64_t>{1});
  // Request 0 keeps its record (HEAD writes one too), marked evicted, with no E2E.
  const auto& recs = out.cluster.records;
  const auto evicted =
      std::find_if(recs.begin(), recs.end(), [](const RequestRecord& r) { return r.evicted; });
  REQUIRE(evicted != recs.end());
  CHECK(evicted->id == 0);
  CHECK(evicted->e2e == -1);
  CHECK(sum(out, &InstanceMetrics::completed) == 1);
  CHECK(out.result.admission_rejected_by_class.at(BLIS_SLO_SHEDDABLE) == 1);  // HEAD's "Shed (sheddable)"
  cfg.gateway.eviction = false;
  VectorSource again(burst({BLIS_SLO_SHEDDABLE, BLIS_SLO_CRITICAL}));
  CHECK(completion_order(run_cluster(cfg, again, "blackbox", step_1000_10_5())) == std::vector<uint64_t>{0, 1});
}

TEST_CASE("every arrival is accounted for under random gateway settings", "[cluster][gateway][invariant]") {
  // arrivals = at an instance (completed, queued, running, dropped, timed
  // out) + in the pipeline + the gateway's rejected, shed, evicted, expired
  // and still queued.
  uint64_t state = 12345;
  auto draw = [&](uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  const int32_t classes[] = {BLIS_SLO_CRITICAL, BLIS_SLO_STANDARD, BLIS_SLO_SHEDDABLE, BLIS_SLO_BATCH,
                             BLIS_SLO_BACKGROUND, BLIS_SLO_DEFAULT};
  for (int trial = 0; trial < 40; ++trial) {
    const auto max_concurrency = static_cast<int64_t>(1 + draw(4));
    ClusterConfig cfg = gated(max_concurrency);
    cfg.num_instances = static_cast<int32_t>(1 + draw(3));
    cfg.engine.horizon = draw(2) == 0 ? kNoHorizon : static_cast<int64_t>(50000 + draw(300000));
    const char* const detectors[] = {"never", "utilization", "concurrency"};
    cfg.gateway.detector = detector(detectors[draw(3)], max_concurrency, 1);
    const char* const orders[] = {"fifo", "priority", "slo-deadline"};
    cfg.gateway.order = order(orders[draw(3)], "critical", 30000);
    cfg.gateway.fairness = fairness(draw(2) == 0 ? "round-robin" : "global-strict");
    cfg.gateway.max_depth = static_cast<int64_t>(draw(6));
    cfg.gateway.per_band_capacity = static_cast<int64_t>(draw(4));
    cfg.gateway.shedding = draw(2) == 0;
    cfg.gateway.eviction = draw(2) == 0;
    cfg.gateway.usage_limit = draw(2) == 0 ? 1.0 : 0.5;
    cfg.gateway.ttl = static_cast<int64_t>(draw(3) * 20000);
    cfg.routing_latency = static_cast<int64_t>(draw(2) * 500);
    // Mid-run changes of the queue's limits (scenario `gateway` events).
    for (auto k = draw(4); k > 0; --k)
      cfg.events.push_back(parse_scenario_event(
          "at=" + std::to_string(draw(200000)) + " action=gateway band_capacity=" + std::to_string(draw(4)) +
              (draw(2) == 0 ? "" : " queue_depth=" + std::to_string(draw(6))),
          "test"));
    std::vector<WorkloadRequest> reqs = evenly_spaced(static_cast<int64_t>(1 + draw(3000)), 60, 64, 40);
    for (auto& r : reqs) {
      r.slo_class = classes[draw(6)];
      r.tenant_id = draw(2) == 0 ? Label("a") : Label("b");
    }
    VectorSource src(reqs);
    auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
    const GatewayCounts& g = *out.result.gateway;
    const int64_t at_instances = sum(out, &InstanceMetrics::completed) + sum(out, &InstanceMetrics::still_queued) +
                                 sum(out, &InstanceMetrics::still_running) +
                                 sum(out, &InstanceMetrics::dropped_unservable) + sum(out, &InstanceMetrics::timed_out);
    int64_t arrived = 0;
    for (const auto& r : reqs) arrived += r.arrival_us <= cfg.engine.horizon ? 1 : 0;
    INFO("trial " << trial);
    CHECK(at_instances + out.result.in_pipeline + g.rejected + g.shed + g.evicted + g.expired + g.depth == arrived);
  }
}
