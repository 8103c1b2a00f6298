// Request deadlines (spec head §4.1): a request whose deadline passes at its
// instance leaves the wait queue or the running batch with its KV, counts as
// timed out, and keeps conservation; a completion in the deadline's tick wins.
//
// The blackbox model with β = (1000, 10, 5) and α = 0 makes the numbers easy:
// a 64-token prefill step takes 1640 µs, a one-request decode step 1005 µs, so
// a request of 64 in / 400 out alone on its instance gives its first token at
// 1640 and its last (the 400th) at 1640 + 399·1005 = 402635, in a step that
// starts at 401630.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"

#include <algorithm>
#include <string>

using namespace blis;
using namespace blis::test;

namespace {

const ConfigTable& model() { return step_1000_10_5(); }

WorkloadRequest with_deadline(WorkloadRequest r, int64_t deadline) {
  r.deadline_us = deadline;
  return r;
}

ClusterConfig timeouts_config() {
  ClusterConfig cfg;
  cfg.keep_records = true;
  cfg.deadlines = true;
  return cfg;
}

const RequestRecord& record_of(const InstanceMetrics& m, uint64_t id) {
  auto it = std::find_if(m.records.begin(), m.records.end(), [&](const RequestRecord& r) { return r.id == id; });
  REQUIRE(it != m.records.end());
  return *it;
}

}  // namespace

TEST_CASE("timeouts: the worked request completes at 402635 without a deadline", "[cluster][engine]") {
  VectorSource src({make_request(0, 0, 64, 400, 1)});
  auto out = run_cluster(timeouts_config(), src, "blackbox", model());
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.timed_out == 0);
  CHECK(out.cluster.end_time == 402635);
  CHECK(record_of(out.cluster, 0).e2e == 402635);
  CHECK(record_of(out.cluster, 0).ttft == 1640);
  // With deadlines possible the key is there, at 0.
  CHECK(out.json.find("\"timed_out_requests\": 0,") != std::string::npos);
}

TEST_CASE("timeouts: a running request is abandoned at its deadline with its KV", "[cluster][engine]") {
  VectorSource src({with_deadline(make_request(0, 0, 64, 400, 1), 401629)});
  auto out = run_cluster(timeouts_config(), src, "blackbox", model());
  CHECK(out.cluster.completed == 0);
  CHECK(out.cluster.timed_out == 1);
  CHECK(out.cluster.still_running == 0);
  CHECK(out.cluster.final_kv_blocks == 0);
  // 399 tokens were out by then. The step already set for 401630 still comes,
  // finds nothing to do, and ends the instance's clock.
  CHECK(out.cluster.end_time == 401630);
  CHECK(out.result.steps == 399);  // the empty one is not a step
  CHECK(out.cluster.output_tokens == 399);
  CHECK(out.cluster.input_tokens == 64);
  const RequestRecord& r = record_of(out.cluster, 0);
  CHECK(r.timed_out);
  CHECK(r.ttft == 1640);
  CHECK(r.e2e == -1);
  CHECK(out.cluster.e2e.empty());
  CHECK(out.json.find("\"timed_out_requests\": 1,") != std::string::npos);
  CHECK(out.json.find("\"injected_requests\": 1,") != std::string::npos);
}

TEST_CASE("timeouts: a step starting at the deadline completes the request first", "[cluster][engine]") {
  VectorSource src({with_deadline(make_request(0, 0, 64, 400, 1), 401630)});
  auto out = run_cluster(timeouts_config(), src, "blackbox", model());
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.timed_out == 0);
  CHECK(out.cluster.end_time == 402635);
}

TEST_CASE("timeouts: a deadline after the completion leaves the end time alone", "[cluster][engine]") {
  VectorSource src({with_deadline(make_request(0, 0, 64, 400, 1), 402640)});
  auto out = run_cluster(timeouts_config(), src, "blackbox", model());
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.timed_out == 0);
  CHECK(out.cluster.end_time == 402635);  // not the stale timeout's 402640
}

TEST_CASE("timeouts: a queued request times out in the queue and never runs", "[cluster][engine]") {
  ClusterConfig cfg = timeouts_config();
  cfg.engine.max_running = 1;  // request 1 waits behind request 0
  VectorSource src({make_request(0, 0, 64, 400, 1), with_deadline(make_request(1, 0, 64, 10, 5000), 5000)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.timed_out == 1);
  CHECK(out.cluster.input_tokens == 128);
  CHECK(out.cluster.output_tokens == 400);
  const RequestRecord& r = record_of(out.cluster, 1);
  CHECK(r.timed_out);
  CHECK(r.scheduling_delay == -1);
  CHECK(r.ttft == -1);
  // Request 0 is unaffected.
  CHECK(record_of(out.cluster, 0).e2e == 402635);
}

TEST_CASE("timeouts: a deadline already past at the enqueue times the request out there",
          "[cluster][engine]") {
  ClusterConfig cfg = timeouts_config();
  cfg.routing_latency = 100;  // enqueued at 100, deadline 50
  VectorSource src({with_deadline(make_request(0, 0, 64, 10, 1), 50), make_request(1, 0, 64, 10, 5000)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.timed_out == 1);
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.input_tokens == 128);  // its input counts though it never queued
  CHECK(record_of(out.cluster, 0).timed_out);
}

TEST_CASE("timeouts: a horizon before the deadline leaves the request in flight", "[cluster][engine]") {
  ClusterConfig cfg = timeouts_config();
  cfg.engine.horizon = 100000;
  VectorSource src({with_deadline(make_request(0, 0, 64, 400, 1), 200000)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.timed_out == 0);
  CHECK(out.cluster.still_running == 1);
}

TEST_CASE("timeouts: without deadlines the report has no timed_out_requests", "[cluster][metrics]") {
  ClusterConfig cfg;
  VectorSource src({make_request(0, 0, 64, 4, 1)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.json.find("timed_out") == std::string::npos);
}
