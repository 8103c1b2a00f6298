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

#include <blis/go_rand.hpp>

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
    roles.insert(roles.end(), static_cast<size_t>(p), P);
    roles.insert(roles.end(), static_cast<size_t>(d), D);
    roles.insert(roles.end(), static_cast<size_t>(s), static_cast<uint8_t>(P | D));
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
