// Node pools (spec head §6.1-§6.2, docs/autoscaling.md "Node pools"):
// instances placed on nodes of gpus_per_node GPUs, nodes provisioned after a
// delay when none has room, released when idle down to min_nodes, billed per
// node; conservation when instances wait for GPUs.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"

#include <blis/go_rand.hpp>

#include <fmt/format.h>

#include <string>

using namespace blis;
using namespace blis::test;

namespace {

const ConfigTable& model() { return step_1000_10_5(); }

ScenarioEvent ev(const std::string& text) { return parse_scenario_event(text, "test"); }

// One pool of TP 2 instances, `initial` of them and `reserve` slots, on a
// node pool of 8-GPU nodes: one node at start, up to `max_nodes`, ready
// 30 ms after it is asked for, $10 per node-hour.
void nodes(ClusterConfig& cfg, int32_t initial, int32_t reserve, int32_t max_nodes, int32_t min_nodes = 0) {
  cfg.engine.total_kv_blocks = 100000;
  cfg.keep_records = true;
  cfg.num_instances = initial + reserve;
  PoolLifecycle pl;
  pl.tp = 2;
  pl.max = initial + reserve;
  pl.node_pool = 0;
  cfg.fleet.pools = {pl};
  cfg.fleet.absent.assign(static_cast<size_t>(initial), 0);
  cfg.fleet.absent.resize(static_cast<size_t>(initial + reserve), 1);
  cfg.fleet.seed = 42;
  NodePoolConfig n;
  n.name = "h100-nodes";
  n.gpu_type = "H100";
  n.gpus_per_node = 8;
  n.initial_nodes = 1;
  n.min_nodes = min_nodes;
  n.max_nodes = max_nodes;
  n.provisioning.mean_s = 0.030;
  n.cost_per_hour = 10;
  cfg.fleet.node_pools = {n};
}

SimTime first_arrival_on(const RunOutcome& o, int32_t instance) {
  SimTime t = -1;
  for (const auto& r : o.cluster.records)
    if (r.instance == instance && (t < 0 || r.arrival_us < t)) t = r.arrival_us;
  return t;
}

}  // namespace

TEST_CASE("node pools: four TP-2 instances fill an 8-GPU node; a fifth provisions a second node",
          "[cluster][fleet]") {
  ClusterConfig cfg;
  nodes(cfg, 5, 0, 2);
  VectorSource src(evenly_spaced(2000, 100));  // one request per 2 ms, to 198 ms
  const RunOutcome out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 100);
  // Node 0 at t=0; node 1 asked for at t=0 for instance 4, ready at 30 ms.
  REQUIRE(out.result.nodes.size() == 2);
  CHECK(out.result.nodes[0].start == 0);
  CHECK(out.result.nodes[0].ready == 0);
  CHECK(out.result.nodes[1].start == 0);
  CHECK(out.result.nodes[1].ready == 30000);
  CHECK(out.result.nodes[1].end == -1);
  // Instance 4 takes traffic only once its node is ready.
  const SimTime first = first_arrival_on(out, 4);
  CHECK(first >= 30000);
  CHECK(first_arrival_on(out, 0) == 0);
  CHECK(out.result.unplaced_waits == 0);
}

TEST_CASE("node pools: an added instance waits for its node's delay; the next one shares that node, no third",
          "[cluster][fleet]") {
  ClusterConfig cfg;
  nodes(cfg, 4, 2, 3);
  cfg.events = {ev("at=50ms action=add count=1"), ev("at=60ms action=add count=1")};
  VectorSource src(evenly_spaced(2000, 100));
  const RunOutcome out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 100);
  REQUIRE(out.result.nodes.size() == 2);  // 6 x TP 2 = 12 GPUs: two 8-GPU nodes
  CHECK(out.result.nodes[1].start == 50000);
  CHECK(out.result.nodes[1].ready == 80000);
  // Both added instances start on node 1 once it is ready, at 80 ms.
  CHECK(first_arrival_on(out, 4) >= 80000);
  CHECK(first_arrival_on(out, 5) >= 80000);
  // Billed per node: node 0 over the whole run, node 1 from 50 ms.
  CHECK(out.result.nodes[0].end == -1);
}

TEST_CASE("node pools: an instance that finds no room waits, and is placed when GPUs are freed",
          "[cluster][fleet]") {
  ClusterConfig cfg;
  nodes(cfg, 4, 1, 1);  // max one node: the added fifth instance cannot be placed
  cfg.events = {ev("at=20ms action=add count=1"), ev("at=100ms action=remove instance=0")};
  VectorSource src(evenly_spaced(2000, 400));  // to 798 ms
  const RunOutcome out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 400);
  CHECK(out.result.unplaced_waits == 1);
  CHECK(out.result.unplaced_at_end == 0);
  REQUIRE(out.result.nodes.size() == 1);
  // Instance 0 leaves once drained (after 100 ms); instance 4 takes its GPUs then.
  REQUIRE(out.result.spans[0].end > 100000);
  const SimTime first = first_arrival_on(out, 4);
  CHECK(first >= out.result.spans[0].end);
  SimTime last_on_0 = 0;
  for (const auto& r : out.cluster.records)
    if (r.instance == 0) last_on_0 = std::max(last_on_0, r.arrival_us);
  CHECK(last_on_0 <= 100000);

  // Never freed: still waiting at the end, and it never takes traffic.
  ClusterConfig stuck;
  nodes(stuck, 4, 1, 1);
  stuck.events = {ev("at=20ms action=add count=1")};
  VectorSource src2(evenly_spaced(2000, 100));
  const RunOutcome out2 = run_cluster(stuck, src2, "blackbox", model());
  CHECK(out2.cluster.completed == 100);
  CHECK(out2.result.unplaced_waits == 1);
  CHECK(out2.result.unplaced_at_end == 1);
  CHECK(first_arrival_on(out2, 4) == -1);
}

TEST_CASE("node pools: a node left without instances is released, down to min_nodes", "[cluster][fleet]") {
  for (int32_t min_nodes : {0, 1, 2}) {
    ClusterConfig cfg;
    nodes(cfg, 5, 0, 2, min_nodes);
    // Instance 4, alone on node 1, is removed at 100 ms and leaves once drained.
    cfg.events = {ev("at=100ms action=remove instance=4")};
    VectorSource src(evenly_spaced(2000, 100));
    const RunOutcome out = run_cluster(cfg, src, "blackbox", model());
    INFO("min_nodes " << min_nodes);
    CHECK(out.cluster.completed == 100);
    REQUIRE(out.result.nodes.size() == 2);
    CHECK(out.result.nodes[0].end == -1);
    if (min_nodes <= 1) {
      CHECK(out.result.nodes[1].end > 100000);
      CHECK(out.result.nodes[1].end == out.result.spans[4].end);  // with its last instance
    } else {
      CHECK(out.result.nodes[1].end == -1);
    }
  }
}

TEST_CASE("node pools: a provisioning delay with a spread is drawn per node on its own stream",
          "[cluster][fleet]") {
  ClusterConfig cfg;
  nodes(cfg, 5, 0, 2);
  cfg.fleet.node_pools[0].provisioning.stddev_s = 0.010;
  VectorSource src(evenly_spaced(2000, 50));
  const RunOutcome out = run_cluster(cfg, src, "blackbox", model());
  REQUIRE(out.result.nodes.size() == 2);
  // spec head §6.1: N(0,1) * stddev + mean from the node-provisioning stream, whole µs.
  GoRand rng(derive_seed(42, "node-provisioning"));
  const double s = rng.norm_float64() * 0.010 + 0.030;
  CHECK(out.result.nodes[1].ready == static_cast<SimTime>(std::max(0.0, s) * 1e6));
}

TEST_CASE("node pools: conservation over random add/remove scripts", "[cluster][fleet][invariant]") {
  GoRand rng(7);
  for (int script = 0; script < 30; ++script) {
    ClusterConfig cfg;
    const int32_t initial = 1 + static_cast<int32_t>(rng.intn(6));
    const int nevents = 1 + static_cast<int>(rng.intn(8));
    std::vector<ScenarioEvent> events;
    std::string text_all;
    int32_t adds = 0;
    for (int k = 0; k < nevents; ++k) {
      const int64_t at = rng.intn(400000);
      std::string text;
      switch (rng.intn(4)) {
        case 0:
        case 1: text = fmt::format("at={} action=add count={}", at, 1 + rng.intn(3)); break;
        case 2: text = fmt::format("at={} action=remove drain=wait", at); break;
        default: text = fmt::format("at={} action=remove drain=redirect", at); break;
      }
      events.push_back(ev(text));
      if (events.back().action == EventAction::Add) adds += events.back().count;
      text_all += text + "; ";
    }
    nodes(cfg, initial, adds, 1 + static_cast<int32_t>(rng.intn(3)), static_cast<int32_t>(rng.intn(2)));
    cfg.fleet.node_pools[0].gpus_per_node = 2 + 2 * static_cast<int32_t>(rng.intn(4));
    if (cfg.fleet.node_pools[0].min_nodes > cfg.fleet.node_pools[0].max_nodes)
      cfg.fleet.node_pools[0].min_nodes = 0;
    cfg.events = events;
    const int count = 50 + static_cast<int>(rng.intn(100));
    VectorSource src(
        evenly_spaced(1000 + rng.intn(4000), count, 64, 1 + static_cast<int32_t>(rng.intn(200))));
    INFO("script " << script << ": " << text_all);
    const RunOutcome out = run_cluster(cfg, src, "blackbox", model());
    CHECK(out.cluster.completed + out.cluster.still_queued + out.cluster.still_running +
              out.cluster.dropped_unservable + out.cluster.failed + out.result.rejected ==
          count);
    // GPUs are conserved: at no time do a node's instances hold more than it has.
    for (const NodeSpan& n : out.result.nodes) {
      CHECK(n.ready >= n.start);
      if (n.end >= 0) CHECK(n.end >= n.start);
    }
    int64_t live = 0;
    for (const NodeSpan& n : out.result.nodes) live += n.end < 0;
    CHECK(live <= cfg.fleet.node_pools[0].max_nodes);
    CHECK(live >= std::min<int64_t>(cfg.fleet.node_pools[0].min_nodes, 1));
  }
}
