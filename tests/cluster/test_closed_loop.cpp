// Closed-loop concurrency clients (spec head §4.2) through the cluster: a
// user sends its next request when its previous one completes plus the think
// time; at most N requests are in flight; a user whose request times out or
// is rejected stops; the request cap bounds first requests and follow-ups.
//
// The blackbox model has α = 0, so a request's E2E is exactly the time from
// its arrival to the end of the step that completes it, the time its user's
// next request is sent from.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"
#include "workload/samplers.hpp"

#include <blis/go_rand.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace blis;
using namespace blis::test;

namespace {

WorkloadSpec closed_loop_spec(int64_t users, int64_t think_us) {
  WorkloadSpec spec;
  spec.seed = 7;
  ClientSpec c;
  c.id = "users";
  c.concurrency = users;
  c.think_time_us = think_us;
  c.input_distribution = DistSpec{"constant", {{"value", 64}}};
  c.output_distribution = DistSpec{"constant", {{"value", 20}}};
  spec.clients.push_back(c);
  return spec;
}

RunOutcome run_spec(const WorkloadSpec& spec, int64_t cap, ClusterConfig cfg = {}, ClusterPolicies policies = {}) {
  cfg.keep_records = true;
  cfg.deadlines = true;
  auto src = make_spec_workload(spec, kNoHorizon, cap, cfg.engine.block_size);
  return run_cluster(cfg, *src, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}), std::move(policies));
}

std::vector<RequestRecord> by_id(const InstanceMetrics& m) {
  std::vector<RequestRecord> out = m.records;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

class RejectAll final : public AdmissionPolicy {
 public:
  bool admit(const blis_route_input&, std::string& reason) override {
    reason = "no";
    return false;
  }
};

}  // namespace

TEST_CASE("closed loop: one user sends each request a think time after the previous completed",
          "[cluster][workload]") {
  const auto out = run_spec(closed_loop_spec(1, 1000), 5);
  CHECK(out.cluster.completed == 5);
  const auto recs = by_id(out.cluster);
  REQUIRE(recs.size() == 5);
  CHECK(recs[0].arrival_us == 0);
  for (size_t k = 0; k + 1 < recs.size(); ++k) {
    INFO("request " << k);
    REQUIRE(recs[k].e2e > 0);
    CHECK(recs[k + 1].arrival_us == recs[k].arrival_us + recs[k].e2e + 1000);
  }
}

TEST_CASE("closed loop: N users start staggered over one think time and keep at most N in flight",
          "[cluster][workload]") {
  const auto out = run_spec(closed_loop_spec(3, 3000), 30);
  CHECK(out.cluster.completed == 30);
  CHECK(out.json.find("\"injected_requests\": 30,") != std::string::npos);
  const auto recs = by_id(out.cluster);
  REQUIRE(recs.size() == 30);
  // First requests at u·think/N.
  CHECK(recs[0].arrival_us == 0);
  CHECK(recs[1].arrival_us == 1000);
  CHECK(recs[2].arrival_us == 2000);
  // In flight at any arrival: requests arrived and not yet complete.
  for (const auto& r : recs) {
    const auto busy = std::count_if(recs.begin(), recs.end(), [&](const RequestRecord& q) {
      return q.arrival_us <= r.arrival_us && r.arrival_us < q.arrival_us + q.e2e;
    });
    CHECK(busy <= 3);
  }
  // The same run twice gives the same report.
  CHECK(run_spec(closed_loop_spec(3, 3000), 30).json == out.json);
}

TEST_CASE("closed loop: a user whose request times out stops", "[cluster][workload]") {
  WorkloadSpec spec = closed_loop_spec(2, 0);
  spec.clients[0].timeout_us = 500;  // less than one prefill step (1640 µs)
  const auto out = run_spec(spec, 0);  // no cap: only the timeouts end the run
  CHECK(out.cluster.completed == 0);
  CHECK(out.cluster.timed_out == 2);
  CHECK(out.json.find("\"injected_requests\": 2,") != std::string::npos);
}

TEST_CASE("closed loop: a user whose request is rejected stops", "[cluster][workload]") {
  ClusterPolicies p;
  p.admission = std::make_unique<RejectAll>();
  const auto out = run_spec(closed_loop_spec(4, 0), 0, {}, std::move(p));
  CHECK(out.result.rejected == 4);
  CHECK(out.cluster.completed == 0);
}

TEST_CASE("closed loop: users beyond the request cap never start", "[cluster][workload]") {
  const auto out = run_spec(closed_loop_spec(8, 0), 3);
  CHECK(out.cluster.completed == 3);
  const auto recs = by_id(out.cluster);
  REQUIRE(recs.size() == 3);
  for (const auto& r : recs) CHECK(r.arrival_us == 0);
}

TEST_CASE("closed loop: a concurrency client without timeout gets 300 s deadlines", "[cluster][workload]") {
  auto src = make_spec_workload(closed_loop_spec(2, 0), kNoHorizon, 0, 16);
  WorkloadRequest r;
  REQUIRE(src->next(r));
  CHECK(r.user == 0);
  CHECK(r.round == 0);
  CHECK(r.deadline_us == r.arrival_us + 300'000'000);
  WorkloadRequest next;
  REQUIRE(src->follow_up(r, 5000, next));
  CHECK(next.arrival_us == 5000);
  CHECK(next.user == 0);
  CHECK(next.round == 1);
  CHECK(next.deadline_us == 5000 + 300'000'000);
  CHECK(next.input_tokens == 64);
  CHECK(next.output_tokens == 20);
}

TEST_CASE("closed loop: conservation with timeouts, with and without a horizon", "[cluster][workload][invariant]") {
  // Five users, 0.7 ms think time; deadlines none-but-default (300 s), tight
  // (some requests time out in the queue or mid-decode) and moderate; the
  // run ends when the cap is met, or at a horizon with users' requests in
  // flight and follow-ups on their way.
  int64_t total_timed_out = 0, with_in_flight = 0;
  for (const int64_t timeout : {int64_t{-1}, int64_t{2500}, int64_t{40000}}) {
    for (const SimTime horizon : {kNoHorizon, SimTime{30000}, SimTime{123457}}) {
      WorkloadSpec spec = closed_loop_spec(5, 700);
      if (timeout > 0) spec.clients[0].timeout_us = timeout;
      ClusterConfig cfg;
      cfg.keep_records = true;
      cfg.deadlines = true;
      cfg.engine.horizon = horizon;
      cfg.engine.max_running = 2;  // requests wait in the queue
      const int64_t cap = horizon == kNoHorizon ? 60 : 0;
      auto src = make_spec_workload(spec, horizon, cap, cfg.engine.block_size);
      const auto out = run_cluster(cfg, *src, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}));
      INFO("timeout " << timeout << " horizon " << horizon);
      const InstanceMetrics& m = out.cluster;
      // injected = completed + timed out + dropped + still queued (the
      // pipeline included) + still running.
      const int64_t injected = m.completed + m.timed_out + m.dropped_unservable + m.still_queued + m.still_running;
      CHECK(out.json.find("\"injected_requests\": " + std::to_string(injected) + ",") != std::string::npos);
      CHECK(out.json.find("\"timed_out_requests\": " + std::to_string(m.timed_out) + ",") != std::string::npos);
      // Every request made has an id below the count, and one record once it
      // reached its instance.
      CHECK(static_cast<int64_t>(m.records.size()) + out.result.in_pipeline == injected);
      for (const auto& r : m.records) CHECK(static_cast<int64_t>(r.id) < injected);
      if (horizon == kNoHorizon) {
        // The cap, unless users stopped on a timeout; nothing is left.
        if (m.timed_out == 0) CHECK(injected == 60);
        else CHECK(injected <= 60);
        CHECK(m.still_queued + m.still_running == 0);
      } else {
        // At most one request per user is anywhere at the end.
        CHECK(m.still_queued + m.still_running <= 5);
        with_in_flight += m.still_queued + m.still_running;
      }
      total_timed_out += m.timed_out;
    }
  }
  CHECK(total_timed_out > 0);
  CHECK(with_in_flight > 0);
}

TEST_CASE("closed loop: users draw from rand(seed + 10007): a user seed, then a blueprint seed",
          "[cluster][workload]") {
  // spec head §4.2: per user, the shared stream gives the seed of the user's
  // first request and then the seed of its follow-ups; a request draws its
  // input length, then its output length.
  WorkloadSpec spec = closed_loop_spec(3, 0);
  spec.seed = 11;
  spec.clients[0].input_distribution = DistSpec{"gaussian", {{"mean", 400}, {"std_dev", 150}, {"min", 10}, {"max", 2000}}};
  spec.clients[0].output_distribution = DistSpec{"exponential", {{"mean", 90}}};
  const workload::LengthSampler in(spec.clients[0].input_distribution, "in");
  const workload::LengthSampler out(spec.clients[0].output_distribution, "out");
  GoRand users(11 + 10007);
  std::vector<int64_t> user_seed, blueprint_seed;
  for (int u = 0; u < 3; ++u) {
    user_seed.push_back(users.int63());
    blueprint_seed.push_back(users.int63());
  }
  auto src = make_spec_workload(spec, kNoHorizon, 0, 16);
  std::vector<WorkloadRequest> first(3);
  for (int u = 0; u < 3; ++u) {
    REQUIRE(src->next(first[static_cast<size_t>(u)]));
    const WorkloadRequest& r = first[static_cast<size_t>(u)];
    CHECK(r.user == u);
    CHECK(r.arrival_us == 0);  // no think time: every user starts at 0
    GoRand rng(user_seed[static_cast<size_t>(u)]);
    CHECK(r.input_tokens == in.sample(rng));
    CHECK(r.output_tokens == out.sample(rng));
  }
  WorkloadRequest none;
  CHECK_FALSE(src->next(none));
  // User 1's first two follow-ups, from its blueprint stream (each request
  // also draws its token ids there, so the second lengths follow them).
  GoRand blueprint(blueprint_seed[1]);
  WorkloadRequest f1, f2;
  REQUIRE(src->follow_up(first[1], 5000, f1));
  const int64_t in1 = in.sample(blueprint);
  const int64_t out1 = out.sample(blueprint);
  CHECK(f1.input_tokens == in1);
  CHECK(f1.output_tokens == out1);
  CHECK(f1.round == 1);
  REQUIRE(src->follow_up(f1, 9000, f2));
  CHECK(f2.arrival_us == 9000);
  CHECK(f2.round == 2);
  CHECK(f2.deadline_us == 9000 + 300'000'000);
}
