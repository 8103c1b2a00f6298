// Tenant budgets and SLO priorities in the cluster (cluster/tenant_budget.hpp,
// docs/gateway.md "Tenant budgets and SLO priorities"): a tenant over its
// share of the batch slots has its sheddable requests rejected at admission,
// its others pass, its slots come back as requests leave; an override of a
// class's priority moves it between the gateway's bands; a request's own
// SLO target orders slo-deadline dispatch.
#include "catch.hpp"

#include "gateway_harness.hpp"

#include <algorithm>

using namespace blis;
using namespace blis::test;

namespace {

// One instance of 4 batch slots; requests 10 µs apart, each ~200 steps of ~1 ms.
ClusterConfig four_slots() {
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 10000;
  cfg.engine.max_running = 4;
  cfg.keep_records = true;
  return cfg;
}

std::vector<WorkloadRequest> burst(int n, int32_t slo, const char* tenant) {
  std::vector<WorkloadRequest> out = evenly_spaced(10, n, 64, 200);
  for (auto& r : out) {
    r.slo_class = slo;
    r.tenant_id = tenant;
  }
  return out;
}

int64_t completed(const RunOutcome& out) {
  int64_t n = 0;
  for (const auto& m : out.result.instances) n += m.completed;
  return n;
}

}  // namespace

TEST_CASE("a tenant over its budget has its sheddable requests rejected, its critical ones pass",
          "[cluster][gateway]") {
  // A budget of 0.25 is one of the 4 slots: the tenant may go on while it
  // holds at most one, so the first two are admitted and the rest, arriving
  // while those run, are rejected.
  ClusterConfig cfg = four_slots();
  cfg.tenant_budgets = {{"acme", 0.25}};
  VectorSource shed(burst(8, BLIS_SLO_SHEDDABLE, "acme"));
  auto out = run_cluster(cfg, shed, "blackbox", step_1000_10_5());
  CHECK(completed(out) == 2);
  CHECK(out.result.rejected == 6);
  CHECK(out.result.admission_rejected_by_class.at(BLIS_SLO_SHEDDABLE) == 6);

  VectorSource crit(burst(8, BLIS_SLO_CRITICAL, "acme"));
  CHECK(completed(run_cluster(cfg, crit, "blackbox", step_1000_10_5())) == 8);
  // Another tenant, or no tenant, is never held back.
  VectorSource other(burst(8, BLIS_SLO_SHEDDABLE, "beta"));
  CHECK(completed(run_cluster(cfg, other, "blackbox", step_1000_10_5())) == 8);
  VectorSource none(burst(8, BLIS_SLO_SHEDDABLE, ""));
  CHECK(completed(run_cluster(cfg, none, "blackbox", step_1000_10_5())) == 8);
}

TEST_CASE("a tenant's slots come back as its requests leave", "[cluster][gateway]") {
  // Two bursts a second apart: the first holds two slots until it is done,
  // the second finds them free again.
  ClusterConfig cfg = four_slots();
  cfg.tenant_budgets = {{"acme", 0.25}};
  std::vector<WorkloadRequest> reqs = burst(4, BLIS_SLO_BATCH, "acme");
  std::vector<WorkloadRequest> later = burst(4, BLIS_SLO_BATCH, "acme");
  for (size_t i = 0; i < later.size(); ++i) {
    later[i].arrival_us += 2'000'000;
    later[i].id += 4;
  }
  reqs.insert(reqs.end(), later.begin(), later.end());
  VectorSource src(reqs);
  auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
  CHECK(completion_order(out) == std::vector<uint64_t>{0, 1, 4, 5});
  CHECK(out.result.rejected == 4);
}

TEST_CASE("an SLO priority override makes batch non-sheddable and moves its gateway band", "[cluster][gateway]") {
  ClusterConfig cfg = four_slots();
  cfg.tenant_budgets = {{"acme", 0.25}};
  cfg.slo_priorities.of[BLIS_SLO_BATCH] = 0;
  VectorSource src(burst(8, BLIS_SLO_BATCH, "acme"));
  CHECK(completed(run_cluster(cfg, src, "blackbox", step_1000_10_5())) == 8);

  // Gated gateway, priority order: batch raised above critical goes first.
  ClusterConfig gw;
  gw.engine.total_kv_blocks = 10000;
  gw.keep_records = true;
  gw.gateway.enabled = true;
  gw.gateway.detector = detector("concurrency", 1);
  gw.gateway.order = order("priority");
  gw.gateway.fairness = fairness("global-strict");
  auto mixed = [] {
    std::vector<WorkloadRequest> r = evenly_spaced(10, 3, 64, 200);
    r[0].slo_class = BLIS_SLO_STANDARD;
    r[1].slo_class = BLIS_SLO_CRITICAL;
    r[2].slo_class = BLIS_SLO_BATCH;
    return r;
  };
  VectorSource a(mixed());
  CHECK(completion_order(run_cluster(gw, a, "blackbox", step_1000_10_5())) == std::vector<uint64_t>{0, 1, 2});
  gw.slo_priorities.of[BLIS_SLO_BATCH] = 5;
  VectorSource b(mixed());
  CHECK(completion_order(run_cluster(gw, b, "blackbox", step_1000_10_5())) == std::vector<uint64_t>{0, 2, 1});
}

TEST_CASE("a request's own SLO target orders slo-deadline dispatch before its class's", "[cluster][gateway]") {
  ClusterConfig gw;
  gw.engine.total_kv_blocks = 10000;
  gw.keep_records = true;
  gw.gateway.enabled = true;
  gw.gateway.detector = detector("concurrency", 1);
  gw.gateway.order = order("slo-deadline", "standard", 500000);
  gw.gateway.fairness = fairness("global-strict");
  auto reqs = [](int32_t target) {
    std::vector<WorkloadRequest> r = evenly_spaced(10, 3, 64, 200);
    for (auto& q : r) q.slo_class = BLIS_SLO_STANDARD;
    r[2].slo_target_us = target;
    return r;
  };
  VectorSource a(reqs(0));
  CHECK(completion_order(run_cluster(gw, a, "blackbox", step_1000_10_5())) == std::vector<uint64_t>{0, 1, 2});
  VectorSource b(reqs(1000));
  CHECK(completion_order(run_cluster(gw, b, "blackbox", step_1000_10_5())) == std::vector<uint64_t>{0, 2, 1});
}
