// P/D disaggregation in the cluster (spec head §5.2; docs/disaggregation.md):
// where a split request goes, what its latencies are, and that every request
// is counted once wherever the run stops.
//
// The blackbox model with β = (1000, 10, 5) and α = 0: a 256-token prefill
// step takes 3560 µs, a one-request decode step 1005 µs. The link carries
// 1000 bytes per µs and each token's KV is 1000 bytes, so a 256-token prompt
// (16 blocks) takes 256 µs + the base latency of 50.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"

#include <blis/errors.hpp>
#include <blis/go_rand.hpp>

#include <fmt/format.h>

#include <sstream>
#include <string>

using namespace blis;
using namespace blis::test;

namespace {

const ConfigTable& model() { return step_1000_10_5(); }

// Instances with these roles, the decider, a link of 1000 bytes/µs and 50 µs.
ClusterConfig pd_config(std::vector<uint8_t> roles, PdDecider decider) {
  ClusterConfig cfg;
  cfg.num_instances = static_cast<int32_t>(roles.size());
  cfg.engine.total_kv_blocks = 10000;
  cfg.pd.roles = std::move(roles);
  cfg.pd.decider = decider;
  cfg.pd.bytes_per_us = 1000;
  cfg.pd.base_latency_us = 50;
  cfg.pd.kv_bytes_per_token = 1000;
  return cfg;
}

constexpr uint8_t P = kPdPrefill, D = kPdDecode;

std::string block(const RunOutcome& out) {
  return out.result.pd->block(out.result.instances, 1.0);
}

}  // namespace

TEST_CASE("P/D: a split request's first token comes after prefill, transfer and one decode step", "[cluster][pd]") {
  // Co-located: the prefill step gives the first token at 3560, nine decode
  // steps the tenth at 3560 + 9·1005 = 12605.
  {
    ClusterConfig cfg;
    cfg.engine.total_kv_blocks = 10000;
    VectorSource src({make_request(0, 0, 256, 10, 0)});
    auto out = run_cluster(cfg, src, "blackbox", model());
    REQUIRE(out.cluster.ttft.size() == 1);
    CHECK(out.cluster.ttft[0] == 3560);
    CHECK(out.cluster.e2e[0] == 12605);
  }
  // Split: prefill ends at 3560 (no token), the KV arrives at 3560 + 306,
  // the first decode step ends 1005 later: 4871; the tenth token 9·1005 later.
  VectorSource src({make_request(0, 0, 256, 10, 0)});
  auto out = run_cluster(pd_config({P, D}, PdDecider::Always), src, "blackbox", model());
  REQUIRE(out.cluster.ttft.size() == 1);
  CHECK(out.cluster.ttft[0] == 4871);
  CHECK(out.cluster.e2e[0] == 4871 + 9 * 1005);
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.input_tokens == 256);
  CHECK(out.cluster.output_tokens == 10);
  CHECK(out.result.instances[0].completed == 0);  // the prefill instance delivers nothing
  CHECK(out.result.instances[1].completed == 1);
  CHECK(out.result.instances[0].scheduling_delay.size() == 1);  // admitted there first
  CHECK(out.result.instances[1].final_kv_blocks == 0);
  const std::string text = block(out);
  CHECK_THAT(text, Catch::Contains("Disaggregated Requests: 1\n"));
  CHECK_THAT(text, Catch::Contains("KV Transfer Duration (us): mean=306.0 p50=306.0"));
  CHECK_THAT(text, Catch::Contains("Parent TTFT (us): mean=4871.0"));
  CHECK_THAT(text, Catch::Contains("Prefill Throughput: 1.0000 sub-req/s\nDecode Throughput: 1.0000 sub-req/s\n"));
}

TEST_CASE("P/D never: every request stays on the decode pool; the prefill pool idles", "[cluster][pd]") {
  std::vector<WorkloadRequest> reqs;
  for (int i = 0; i < 6; ++i) reqs.push_back(make_request(static_cast<uint64_t>(i), i * 500, 128, 5, i * 1000u));
  VectorSource src(reqs);
  auto out = run_cluster(pd_config({P, D, D}, PdDecider::Never), src, "blackbox", model());
  CHECK(out.result.instances[0].completed == 0);
  CHECK(out.result.instances[1].completed + out.result.instances[2].completed == 6);
  CHECK_THAT(block(out), Catch::Contains("Disaggregated Requests: 0\n"));
  CHECK_THAT(block(out), Catch::Contains("Load Imbalance Ratio: inf (one pool idle)\n"));
}

TEST_CASE("P/D prefix-threshold: a prompt the decode instance holds is served there", "[cluster][pd]") {
  // The first request's blocks reach the decode instance with its transfer
  // and stay in its cache; the second, the same prompt, finds all 16 there.
  ClusterConfig cfg = pd_config({P, D}, PdDecider::PrefixThreshold);
  cfg.cache_query = true;
  cfg.cache_signal_delay = 0;
  VectorSource src({make_request(0, 0, 256, 4, 0), make_request(1, 100000, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 2);
  CHECK_THAT(block(out), Catch::Contains("Disaggregated Requests: 1\n"));
  // A longer prompt with the same start: 384 - 16·16 = 128 tokens to compute.
  VectorSource longer({make_request(0, 0, 256, 4, 0), make_request(1, 100000, 384, 4, 0)});
  auto split = run_cluster(cfg, longer, "blackbox", model());
  CHECK_THAT(block(split), Catch::Contains("Disaggregated Requests: 2\n"));
  cfg.pd.prefix_threshold = 128;  // 128 is not > 128
  VectorSource again({make_request(0, 0, 256, 4, 0), make_request(1, 100000, 384, 4, 0)});
  auto kept = run_cluster(cfg, again, "blackbox", model());
  CHECK_THAT(block(kept), Catch::Contains("Disaggregated Requests: 1\n"));
}

TEST_CASE("P/D: a decode instance without room for the prompt's KV drops the request there", "[cluster][pd]") {
  ClusterConfig cfg = pd_config({P, D}, PdDecider::Always);
  EngineConfig small = cfg.engine;
  small.total_kv_blocks = 10;  // a 256-token prompt needs 16
  cfg.engines = {cfg.engine, small};
  VectorSource src({make_request(0, 0, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 0);
  CHECK(out.result.instances[1].dropped_unservable == 1);
  CHECK(out.result.instances[0].final_kv_blocks == 0);
  CHECK_THAT(block(out), Catch::Contains("Dropped at Decode KV: 1\n"));
}

TEST_CASE("P/D: a deadline passing on the wire frees the decode instance's reservation", "[cluster][pd]") {
  ClusterConfig cfg = pd_config({P, D}, PdDecider::Always);
  cfg.pd.bytes_per_us = 10;  // 25,600 µs on the wire
  cfg.deadlines = true;
  WorkloadRequest r = make_request(0, 0, 256, 4, 0);
  r.deadline_us = 10000;  // prefill ends at 3560, the transfer at 29,210
  VectorSource src({r});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.timed_out == 1);
  CHECK(out.cluster.completed == 0);
  CHECK(out.result.instances[1].final_kv_blocks == 0);
  CHECK_THAT(block(out), Catch::Contains("Still in KV Transfer: 0\n"));
}

TEST_CASE("P/D: a request on the wire when the run stops counts as still queued", "[cluster][pd]") {
  ClusterConfig cfg = pd_config({P, D}, PdDecider::Always);
  cfg.pd.bytes_per_us = 10;
  cfg.engine.horizon = 10000;
  VectorSource src({make_request(0, 0, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.still_queued == 1);
  CHECK(out.cluster.completed == 0);
  CHECK(out.result.pd->in_transfer() == 1);
  CHECK_THAT(block(out), Catch::Contains("Still in KV Transfer: 1\n"));
}

// Conservation over random topologies, deciders, links, KV sizes, deadlines
// and horizons: every arrival the run processed is in exactly one place.
TEST_CASE("P/D conservation over random runs", "[cluster][pd][invariant]") {
  GoRand rng(2026);
  for (int run = 0; run < 60; ++run) {
    std::vector<uint8_t> roles;
    const int64_t p = rng.intn(3), d = rng.intn(3), s = (p == 0 || d == 0) ? 1 + rng.intn(2) : rng.intn(2);
    for (int64_t k = 0; k < p + d + s; ++k) roles.push_back(k < p ? P : k < p + d ? D : static_cast<uint8_t>(P | D));
    const PdDecider decider = static_cast<PdDecider>(rng.intn(3));
    ClusterConfig cfg = pd_config(roles, decider);
    cfg.cache_query = decider == PdDecider::PrefixThreshold;
    cfg.cache_signal_delay = rng.intn(2) * 20000;
    cfg.pd.contention = rng.intn(2) == 1;
    cfg.pd.bytes_per_us = 5 + static_cast<double>(rng.intn(2000));
    cfg.engine.total_kv_blocks = 40 + rng.intn(400);
    cfg.deadlines = rng.intn(2) == 1;
    const bool cut = rng.intn(2) == 1;
    if (cut) cfg.engine.horizon = 20001 + 2 * rng.intn(200000);
    const int count = 30 + static_cast<int>(rng.intn(120));
    const int64_t gap = 200 + rng.intn(5000);
    std::vector<WorkloadRequest> reqs;
    int64_t arrived = 0;
    for (int i = 0; i < count; ++i) {
      // Prompts share one of three prefixes, so prefix-threshold has hits.
      WorkloadRequest r = make_request(static_cast<uint64_t>(i), i * gap, 32 + static_cast<int32_t>(rng.intn(600)),
                                       1 + static_cast<int32_t>(rng.intn(200)), static_cast<uint32_t>(rng.intn(3)) * 5000);
      if (cfg.deadlines) r.deadline_us = r.arrival_us + 1000 + rng.intn(400000);
      if (r.arrival_us <= cfg.engine.horizon) ++arrived;
      reqs.push_back(std::move(r));
    }
    VectorSource src(reqs);
    INFO("run " << run << " roles " << p << "/" << d << "/" << s << " decider " << static_cast<int>(decider));
    auto out = run_cluster(cfg, src, "blackbox", model());
    const InstanceMetrics& c = out.cluster;
    CHECK(c.completed + c.still_queued + c.still_running + c.dropped_unservable + c.timed_out + out.result.rejected ==
          arrived);
    CHECK(out.result.pd->in_transfer() <= c.still_queued);
    if (!cut) {
      CHECK(c.still_queued == 0);
      CHECK(c.still_running == 0);
      for (const auto& m : out.result.instances) CHECK(m.final_kv_blocks == 0);
    }
  }
}

// Scenario events on P/D clusters (docs/disaggregation.md "Scenario events").
// One request of 256 tokens: prefill 0..3560; with 10 bytes/µs its KV is on
// the wire 25,650 µs, until 29,210.
namespace {

ClusterConfig pd_events(std::vector<uint8_t> roles, std::vector<std::string> events) {
  ClusterConfig cfg = pd_config(std::move(roles), PdDecider::Always);
  cfg.pd.bytes_per_us = 10;
  for (const std::string& e : events) cfg.events.push_back(parse_scenario_event(e, "test"));
  return cfg;
}

}  // namespace

TEST_CASE("P/D events: a destination failing mid-transfer re-routes the request from its prefill", "[cluster][pd][events]") {
  ClusterConfig cfg = pd_events({P, D, D}, {"at=10000 action=fail instance=1 requests=reroute"});
  VectorSource src({make_request(0, 0, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.failed == 0);
  CHECK(out.result.rerouted == 1);
  CHECK(out.result.instances[2].completed == 1);  // the other decode instance
  CHECK(out.result.instances[1].final_kv_blocks == 0);
  // Prefilled again from 10,000, its prompt cached there but the last block
  // (1000 + 10·16 = 1,160 µs), on the wire until 36,810, then four decode steps.
  REQUIRE(out.cluster.e2e.size() == 1);
  CHECK(out.cluster.e2e[0] == 36810 + 4 * 1005);
  CHECK_THAT(block(out), Catch::Contains("Disaggregated Requests: 1\nKV Transfers: 2\n"));
  CHECK_THAT(out.result.event_log.at(0), Catch::Contains("(1 request(s) re-routed, 0 failed)"));
}

TEST_CASE("P/D events: with requests=fail a request on the wire to a failed instance counts as failed",
          "[cluster][pd][events]") {
  ClusterConfig cfg = pd_events({P, D}, {"at=10000 action=fail instance=1 requests=fail"});
  VectorSource src({make_request(0, 0, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 0);
  CHECK(out.cluster.failed == 1);
  CHECK(out.cluster.still_queued == 0);
  CHECK(out.result.instances[1].final_kv_blocks == 0);
  CHECK_THAT(block(out), Catch::Contains("Still in KV Transfer: 0\n"));
  CHECK_THAT(out.result.event_log.at(0), Catch::Contains("(0 request(s) re-routed, 1 failed)"));
}

TEST_CASE("P/D events: the source failing mid-transfer abandons it too", "[cluster][pd][events]") {
  // Round-robin: the decode routing takes the first turn, so the prefill goes to instance 1.
  ClusterConfig cfg = pd_events({P, P, D}, {"at=10000 action=fail instance=1 requests=reroute"});
  VectorSource src({make_request(0, 0, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 1);
  CHECK(out.result.rerouted == 1);
  CHECK(out.result.pd->block(out.result.instances, 1.0).find("KV Transfers: 2\n") != std::string::npos);
  REQUIRE(out.cluster.e2e.size() == 1);
  CHECK(out.cluster.e2e[0] == 39210 + 4 * 1005);  // prefilled again, on instance 0 (nothing cached)
  CHECK(out.result.instances[1].final_kv_blocks == 0);
}

TEST_CASE("P/D events: a decode instance failing during the prefill leaves the KV to another one",
          "[cluster][pd][events]") {
  ClusterConfig cfg = pd_events({P, D, D}, {"at=1000 action=fail instance=1 requests=fail"});
  VectorSource src({make_request(0, 0, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 1);
  CHECK(out.cluster.failed == 0);
  CHECK(out.result.rerouted == 0);
  CHECK(out.result.instances[2].completed == 1);
  REQUIRE(out.cluster.e2e.size() == 1);
  CHECK(out.cluster.e2e[0] == 29210 + 4 * 1005);  // nothing lost: the transfer starts at 3560 as planned
  // With no decode instance left, it is routed again and rejected there.
  ClusterConfig alone = pd_events({P, D}, {"at=1000 action=fail instance=1 requests=fail"});
  VectorSource one({make_request(0, 0, 256, 4, 0)});
  auto none = run_cluster(alone, one, "blackbox", model());
  CHECK(none.cluster.completed == 0);
  CHECK(none.result.rejected == 1);
  CHECK(none.result.rerouted == 1);
}

TEST_CASE("P/D events: a destination drained mid-transfer still takes and serves the request", "[cluster][pd][events]") {
  ClusterConfig cfg = pd_events({P, D, D}, {"at=10000 action=drain instance=1"});
  VectorSource src({make_request(0, 0, 256, 4, 0), make_request(1, 20000, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 2);
  CHECK(out.result.instances[1].completed == 1);
  CHECK(out.result.instances[2].completed == 1);  // the one after the drain goes elsewhere
}

TEST_CASE("P/D events: a weight event reaches the pools' routers", "[cluster][pd][events]") {
  ClusterConfig cfg = pd_config({P, D}, PdDecider::Always);
  cfg.events.push_back(parse_scenario_event("at=100 action=weight scorer=queue-depth weight=3", "test"));
  ClusterPolicies policies;
  std::vector<WeightedScorer> scorers;
  ConfigTable none;
  scorers.push_back({"queue-depth", 1.0, builtin_registries().scorers.create("queue-depth", CreateArgs{&none, 1})});
  policies.decode_router = std::make_unique<Router>(RoutingPolicy::Weighted, std::move(scorers), 1);
  VectorSource src({make_request(0, 0, 256, 4, 0)});
  auto out = run_cluster(cfg, src, "blackbox", model(), std::move(policies));
  CHECK(out.cluster.completed == 1);
  REQUIRE(out.result.event_log.size() == 1);
  // Without a router that has the scorer, the event is refused.
  ClusterConfig bad = pd_config({P, D}, PdDecider::Always);
  bad.events.push_back(parse_scenario_event("at=100 action=weight scorer=queue-depth weight=3", "test"));
  VectorSource src2({make_request(0, 0, 256, 4, 0)});
  CHECK_THROWS_AS(run_cluster(bad, src2, "blackbox", model()), InputError);
}

// Conservation over random event scripts on P/D clusters: every arrival is
// completed, failed, dropped, timed out, rejected, still queued (on the wire
// included), running or in the pipeline, exactly once; the KV comes back.
TEST_CASE("P/D conservation over random event scripts", "[cluster][pd][events][invariant]") {
  GoRand rng(515);
  for (int run = 0; run < 60; ++run) {
    std::vector<uint8_t> roles;
    const int64_t p = 1 + rng.intn(2), d = 1 + rng.intn(3), s = rng.intn(2);
    for (int64_t k = 0; k < p + d + s; ++k) roles.push_back(k < p ? P : k < p + d ? D : static_cast<uint8_t>(P | D));
    const PdDecider decider = static_cast<PdDecider>(rng.intn(3));
    ClusterConfig cfg = pd_config(roles, decider);
    const int32_t n = static_cast<int32_t>(roles.size());
    cfg.cache_query = decider == PdDecider::PrefixThreshold;
    cfg.pd.contention = rng.intn(2) == 1;
    cfg.pd.bytes_per_us = 5 + static_cast<double>(rng.intn(500));
    cfg.engine.total_kv_blocks = 40 + rng.intn(400);
    cfg.engine.max_running = 1 + rng.intn(16);
    cfg.deadlines = rng.intn(2) == 1;
    cfg.routing_latency = rng.intn(3) * 500;
    cfg.timeseries_interval = 50000;
    const bool cut = rng.intn(2) == 1;
    if (cut) cfg.engine.horizon = 20001 + 2 * rng.intn(300000);
    std::string script;
    const int nevents = 1 + static_cast<int>(rng.intn(8));
    for (int k = 0; k < nevents; ++k) {
      const int64_t at = rng.intn(600000);
      const int64_t i = rng.intn(n);
      std::string text;
      switch (rng.intn(7)) {
        case 0: text = fmt::format("at={} action=fail instance={} requests=reroute", at, i); break;
        case 1: text = fmt::format("at={} action=fail instance={} requests=fail", at, i); break;
        case 2: text = fmt::format("at={} action=drain instance={}", at, i); break;
        case 3: text = fmt::format("at={} action=restore instance={}", at, i); break;
        case 4: text = fmt::format("at={} action=slow instance={} factor={}", at, i, 1 + rng.intn(4)); break;
        case 5: text = fmt::format("at={} action=rate factor=2", at); break;
        default: text = fmt::format("when=running>{} action=fail instance={} requests=reroute", 1 + rng.intn(10), i);
      }
      cfg.events.push_back(parse_scenario_event(text, "test"));
      script += text + "; ";
    }
    const int count = 30 + static_cast<int>(rng.intn(120));
    const int64_t gap = 200 + rng.intn(5000);
    std::vector<WorkloadRequest> reqs;
    for (int k = 0; k < count; ++k) {
      WorkloadRequest r = make_request(static_cast<uint64_t>(k), k * gap, 32 + static_cast<int32_t>(rng.intn(600)),
                                       1 + static_cast<int32_t>(rng.intn(200)), static_cast<uint32_t>(rng.intn(3)) * 5000);
      if (cfg.deadlines) r.deadline_us = r.arrival_us + 1000 + rng.intn(400000);
      reqs.push_back(std::move(r));
    }
    VectorSource src(reqs);
    INFO("run " << run << " roles " << p << "/" << d << "/" << s << " decider " << static_cast<int>(decider)
                << " events " << script);
    auto out = run_cluster(cfg, src, "blackbox", model());
    int64_t arrived = 0;  // the time series' arrivals column
    std::istringstream csv(out.result.timeseries);
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line)) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
      arrived += std::stoll(f[6]);
    }
    const InstanceMetrics& c = out.cluster;
    CHECK(c.completed + c.still_queued + c.still_running + c.dropped_unservable + c.timed_out + c.failed +
              out.result.rejected ==
          arrived);
    CHECK(out.result.pd->in_transfer() <= c.still_queued);
    if (!cut) {
      CHECK(arrived == count);
      CHECK(c.still_queued == 0);
      CHECK(c.still_running == 0);
      for (const auto& m : out.result.instances) CHECK(m.final_kv_blocks == 0);
    }
  }
}

// The same with instances joining and leaving (add and remove events, every
// drain mode): reserve slots of the decode role, whose requests are on the
// wire or queued when their instance goes.
TEST_CASE("P/D conservation over random add and remove scripts", "[cluster][pd][events][invariant]") {
  GoRand rng(616);
  for (int run = 0; run < 40; ++run) {
    const int64_t p = 1 + rng.intn(2), d = 1 + rng.intn(3), reserve = 1 + rng.intn(3);
    std::vector<uint8_t> roles;
    roles.insert(roles.end(), static_cast<size_t>(p), P);
    roles.insert(roles.end(), static_cast<size_t>(d + reserve), D);
    ClusterConfig cfg = pd_config(roles, PdDecider::Always);
    const int32_t initial = static_cast<int32_t>(p + d);
    cfg.fleet.pools.push_back(PoolLifecycle{"m", kPdPrefill | kPdDecode, 1, 0, 0, static_cast<int32_t>(roles.size()),
                                            DelaySpec{0.001 * static_cast<double>(rng.intn(20)), 0}, DelaySpec{}});
    cfg.fleet.absent.assign(roles.size(), 0);
    for (size_t k = static_cast<size_t>(initial); k < roles.size(); ++k) cfg.fleet.absent[k] = 1;
    cfg.pd.contention = rng.intn(2) == 1;
    cfg.pd.bytes_per_us = 5 + static_cast<double>(rng.intn(200));
    cfg.engine.total_kv_blocks = 60 + rng.intn(400);
    cfg.deadlines = rng.intn(2) == 1;
    cfg.timeseries_interval = 50000;
    std::string script;
    const int nevents = 1 + static_cast<int>(rng.intn(6));
    for (int k = 0; k < nevents; ++k) {
      const int64_t at = rng.intn(250000);
      const int64_t i = rng.intn(static_cast<int64_t>(roles.size()));
      static const char* kModes[] = {"wait", "redirect", "immediate"};
      std::string text;
      switch (rng.intn(4)) {
        case 0: text = fmt::format("at={} action=add count={}", at, 1 + rng.intn(2)); break;
        case 1: text = fmt::format("at={} action=remove instance={} drain={}", at, i, kModes[rng.intn(3)]); break;
        case 2: text = fmt::format("at={} action=fail instance={} requests=reroute", at, i); break;
        default: text = fmt::format("at={} action=restore instance={}", at, i);
      }
      cfg.events.push_back(parse_scenario_event(text, "test"));
      script += text + "; ";
    }
    const int count = 30 + static_cast<int>(rng.intn(100));
    const int64_t gap = 200 + rng.intn(1500);
    std::vector<WorkloadRequest> reqs;
    for (int k = 0; k < count; ++k) {
      WorkloadRequest r = make_request(static_cast<uint64_t>(k), k * gap, 32 + static_cast<int32_t>(rng.intn(600)),
                                       1 + static_cast<int32_t>(rng.intn(200)), static_cast<uint32_t>(k));
      if (cfg.deadlines) r.deadline_us = r.arrival_us + 1000 + rng.intn(400000);
      reqs.push_back(std::move(r));
    }
    VectorSource src(reqs);
    INFO("run " << run << " roles " << p << "/" << d << "+" << reserve << " events " << script);
    auto out = run_cluster(cfg, src, "blackbox", model());
    const InstanceMetrics& c = out.cluster;
    CHECK(c.completed + c.still_queued + c.still_running + c.dropped_unservable + c.timed_out + c.failed +
              out.result.rejected ==
          count);
    CHECK(c.still_queued == 0);
    CHECK(c.still_running == 0);
    for (const auto& m : out.result.instances) CHECK(m.final_kv_blocks == 0);
  }
}
