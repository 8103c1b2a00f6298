// Instance lifecycle and the autoscaler (cluster/fleet.hpp, docs/autoscaling.md):
// add and remove events, provisioning and loading delays, drain modes,
// conservation when instances leave, and the autoscaler's loop.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"

#include <blis/errors.hpp>
#include <blis/go_rand.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>

using namespace blis;
using namespace blis::test;

namespace {

const ConfigTable& model() { return step_1000_10_5(); }

ScenarioEvent ev(const std::string& text) { return parse_scenario_event(text, "test"); }

// One pool of `initial` instances with `reserve` slots that additions may fill.
void fleet(ClusterConfig& cfg, int32_t initial, int32_t reserve, PoolLifecycle pl = {}) {
  cfg.num_instances = initial + reserve;
  cfg.fleet.pools = {pl};
  cfg.fleet.absent.assign(static_cast<size_t>(initial), 0);
  cfg.fleet.absent.resize(static_cast<size_t>(initial + reserve), 1);
  cfg.fleet.seed = 42;
}

int64_t injected(const RunOutcome& o) {
  return o.cluster.completed + o.cluster.still_queued + o.cluster.still_running + o.cluster.dropped_unservable +
         o.cluster.failed + o.result.rejected;
}

// Column `col` of every row of the time series.
std::vector<int64_t> column(const std::string& csv, size_t col) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<int64_t> out;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    out.push_back(std::stoll(f[col]));
  }
  return out;
}

}  // namespace

TEST_CASE("add and remove events parse, and bad ones are refused", "[cluster][events][fleet]") {
  const ScenarioEvent a = ev("at=10s action=add pool=h100 count=3");
  CHECK(a.action == EventAction::Add);
  CHECK(a.pool == "h100");
  CHECK(a.count == 3);
  CHECK(ev("at=1s action=add").count == 1);
  const ScenarioEvent r = ev("at=10s action=remove count=2 drain=redirect");
  CHECK(r.action == EventAction::Remove);
  CHECK(r.drain == DrainMode::Redirect);
  CHECK(r.instance == -1);
  CHECK(ev("at=1s action=remove instance=4 drain=immediate").instance == 4);
  CHECK(ev("at=1s action=remove").drain == DrainMode::Wait);
  CHECK_THROWS_WITH(ev("at=1s action=add count=0"), Catch::Contains("count=0 is not an instance count"));
  CHECK_THROWS_WITH(ev("at=1s action=remove drain=later"), Catch::Contains("drain=later must be wait"));
  CHECK_THROWS_WITH(ev("at=1s action=add drain=wait"), Catch::Contains("unknown or unused key 'drain'"));
  CHECK_THROWS_WITH(ev("at=1s action=remove instance=1 count=2"), Catch::Contains("leave out pool= and count="));
}

TEST_CASE("an added instance takes traffic after its provisioning and loading delays", "[cluster][events][fleet]") {
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 100000;
  cfg.keep_records = true;
  cfg.trace_decisions = true;
  cfg.timeseries_interval = 10000;
  PoolLifecycle pl;
  pl.max = 3;
  pl.provisioning.mean_s = 0.020;
  pl.loading.mean_s = 0.010;
  fleet(cfg, 1, 2, pl);
  cfg.events = {ev("at=50ms action=add count=2")};
  VectorSource src(evenly_spaced(5000, 40));  // one request per 5 ms, to 195 ms
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 40);
  for (const auto& r : out.cluster.records) {
    INFO("request arriving at " << r.arrival_us);
    if (r.arrival_us < 80000) CHECK(r.instance == 0);
  }
  CHECK(out.result.trace.targets[1] > 0);
  CHECK(out.result.trace.targets[2] > 0);
  // Provisioned (billed) from the decision at 50 ms, still there at the end.
  REQUIRE(out.result.spans.size() == 3);
  CHECK(out.result.spans[1].start == 50000);
  CHECK(out.result.spans[2].start == 50000);
  CHECK(out.result.spans[1].end == -1);
  // The time series counts instances taking traffic: 1 until 80 ms (a
  // boundary sees the cluster before the events at its time), then 3.
  const std::vector<int64_t> instances = column(out.result.timeseries, 2);
  REQUIRE(instances.size() >= 9);
  CHECK(instances[7] == 1);  // at 80 ms
  CHECK(instances[8] == 3);  // at 90 ms
  CHECK(out.result.event_log.size() == 1);
  CHECK(out.result.event_log[0].find("2 instance(s) starting") != std::string::npos);
}

TEST_CASE("a removed instance takes no new traffic, finishes its requests and stops being billed",
          "[cluster][events][fleet]") {
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 100000;
  cfg.keep_records = true;
  fleet(cfg, 3, 0);
  cfg.events = {ev("at=50ms action=remove")};
  VectorSource src(evenly_spaced(5000, 40));
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.cluster.completed == 40);
  CHECK(out.result.rerouted == 0);
  int64_t late_on_0 = 0;
  for (const auto& r : out.cluster.records)
    if (r.instance == 0 && r.arrival_us > 50000) ++late_on_0;
  CHECK(late_on_0 == 0);
  // Instance 0 (the oldest) left once its last request completed.
  REQUIRE(out.result.spans.size() == 3);
  CHECK(out.result.spans[0].end > 50000);
  CHECK(out.result.spans[0].end < 400000);
  CHECK(out.result.spans[1].end == -1);
}

TEST_CASE("remove with drain=redirect and drain=immediate moves the instance's requests elsewhere",
          "[cluster][events][fleet]") {
  for (const char* mode : {"redirect", "immediate"}) {
    ClusterConfig cfg;
    cfg.engine.total_kv_blocks = 100000;
    cfg.engine.max_running = 4;
    fleet(cfg, 2, 0);
    cfg.events = {ev(fmt::format("at=1ms action=remove instance=1 drain={}", mode))};
    VectorSource src(evenly_spaced(0, 40));  // 20 per instance at once; 4 running each
    auto out = run_cluster(cfg, src, "blackbox", model());
    INFO(mode);
    CHECK(injected(out) == 40);
    CHECK(out.result.rerouted == 16);  // the queued ones; the 4 running have a token out
    if (std::string(mode) == "redirect") {
      CHECK(out.cluster.failed == 0);
      CHECK(out.cluster.completed == 40);
    } else {
      CHECK(out.cluster.failed == 4);
      CHECK(out.cluster.completed == 36);
    }
  }
}

TEST_CASE("conservation over random add/remove scripts", "[cluster][events][fleet][invariant]") {
  GoRand rng(11);
  for (int script = 0; script < 40; ++script) {
    ClusterConfig cfg;
    const int32_t initial = 1 + static_cast<int32_t>(rng.intn(3));
    cfg.engine.total_kv_blocks = 200 + rng.intn(2000);
    cfg.engine.max_running = 1 + rng.intn(32);
    if (rng.intn(2) == 1) cfg.engine.horizon = 200000 + rng.intn(800000);
    cfg.routing_latency = rng.intn(3) * 1000;
    cfg.timeseries_interval = 50000;
    PoolLifecycle pl;
    pl.max = 8;
    pl.provisioning.mean_s = static_cast<double>(rng.intn(50)) / 1000;
    pl.loading.mean_s = static_cast<double>(rng.intn(50)) / 1000;
    pl.loading.stddev_s = 0.005;
    const int nevents = 1 + static_cast<int>(rng.intn(8));
    std::string script_text;
    int32_t adds = 0;
    std::vector<ScenarioEvent> events;
    for (int k = 0; k < nevents; ++k) {
      const int64_t at = rng.intn(900000);
      std::string text;
      switch (rng.intn(6)) {
        case 0: text = fmt::format("at={} action=add count={}", at, 1 + rng.intn(2)); break;
        case 1: text = fmt::format("at={} action=remove drain=wait", at); break;
        case 2: text = fmt::format("at={} action=remove drain=redirect", at); break;
        case 3: text = fmt::format("at={} action=remove drain=immediate", at); break;
        case 4: text = fmt::format("at={} action=fail instance={} requests=reroute", at, rng.intn(initial)); break;
        default: text = fmt::format("at={} action=remove instance={}", at, rng.intn(initial)); break;
      }
      events.push_back(ev(text));
      if (events.back().action == EventAction::Add) adds += events.back().count;
      script_text += text + "; ";
    }
    fleet(cfg, initial, adds, pl);
    cfg.events = events;
    const int count = 50 + static_cast<int>(rng.intn(100));
    VectorSource src(evenly_spaced(2000 + rng.intn(8000), count, 64 + static_cast<int32_t>(rng.intn(512)),
                           1 + static_cast<int32_t>(rng.intn(300))));
    INFO("script " << script << ": " << script_text);
    auto out = run_cluster(cfg, src, "blackbox", model());
    int64_t arrived = 0;
    for (int64_t a : column(out.result.timeseries, 6)) arrived += a;
    INFO("completed " << out.cluster.completed << " queued " << out.cluster.still_queued << " running "
                      << out.cluster.still_running << " dropped " << out.cluster.dropped_unservable << " failed "
                      << out.cluster.failed << " rejected " << out.result.rejected << " pipeline "
                      << out.result.in_pipeline << " rerouted " << out.result.rerouted << " horizon "
                      << cfg.engine.horizon << " count " << count << " initial " << initial);
    // (the cluster's still-queued count includes the requests in the pipeline)
    CHECK(injected(out) == arrived);
    if (!cfg.engine.horizon || cfg.engine.horizon == kForever) {
      CHECK(arrived == count);
    }
    // Spans never overlap on a slot and end after they start.
    for (const InstanceSpan& s : out.result.spans)
      if (s.end >= 0) CHECK(s.end >= s.start);
  }
}

TEST_CASE("the autoscaler's analyzer: the worked example of spec head 6.3", "[cluster][fleet]") {
  AutoscalerConfig a;
  a.interval = 30000000;
  // 2 replicas, 100,000 tokens each, 70,000 in use and 10 queued each.
  VariantLoad v;
  v.pool = 0;
  v.count = 2;
  v.supply = 2 * 80000;
  v.max_supply = 80000;
  v.demand = 2 * (70000 + 10 * 512);
  v.room = 5;
  v.above_min = 2;
  ScalingDecision up = decide_scaling({v}, 0, a);
  CHECK(up.required == Approx(27800));
  CHECK(up.delta == 1);
  // Pending supply covers it: nothing to do.
  CHECK(decide_scaling({v}, 80000, a).delta == 0);
  // No room left: nothing.
  VariantLoad full = v;
  full.room = 0;
  CHECK(decide_scaling({full}, 0, a).delta == 0);
  // Total demand 20,000: spare 110,000 -> -floor(110,000 / 80,000) = -1.
  v.demand = 20000;
  ScalingDecision down = decide_scaling({v}, 0, a);
  CHECK(down.spare == Approx(110000));
  CHECK(down.delta == -1);
  // No demand at all: spare 160,000 -> floor(2) = 2, but the group keeps
  // one instance (differences row 32).
  v.demand = 0;
  CHECK(decide_scaling({v}, 0, a).delta == -1);
  v.demand = 20000;
  v.above_min = 0;
  CHECK(decide_scaling({v}, 0, a).delta == 0);
  // Two pools: up on the cheaper one, down on the dearer one.
  VariantLoad cheap = v, dear = v;
  cheap.pool = 0, cheap.cost_per_hour = 1, cheap.room = 3, cheap.above_min = 2, cheap.demand = 150000;
  dear.pool = 1, dear.cost_per_hour = 5, dear.room = 3, dear.above_min = 2, dear.demand = 150000;
  CHECK(decide_scaling({dear, cheap}, 0, a).pool == 0);
  cheap.demand = dear.demand = 1000;
  const ScalingDecision d = decide_scaling({dear, cheap}, 0, a);
  CHECK(d.pool == 1);
  CHECK(d.delta < 0);
}

namespace {

// A load that needs more than one instance of 400 KV blocks: one request per
// `gap` µs (300 of them), then nothing.
RunOutcome scaled_run(double provisioning_s, SimTime up_window = 0, int64_t gap = 2000, int count = 300) {
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 400;
  cfg.engine.max_running = 64;
  cfg.timeseries_interval = 10000;
  PoolLifecycle pl;
  pl.min = 1;
  pl.max = 20;
  pl.provisioning.mean_s = provisioning_s;
  fleet(cfg, 1, 40, pl);
  cfg.fleet.autoscaler.interval = 10000;
  cfg.fleet.autoscaler.up_window = up_window;
  VectorSource src(evenly_spaced(gap, count));
  return run_cluster(cfg, src, "blackbox", model());
}

}  // namespace

TEST_CASE("the autoscaler follows the load: up after the provisioning delay, down once it is gone",
          "[cluster][fleet]") {
  const RunOutcome out = scaled_run(0.050);
  CHECK(out.cluster.completed == 300);
  REQUIRE_FALSE(out.result.scaling.empty());
  const ScalingAction& first = out.result.scaling.front();
  CHECK(first.delta > 0);
  CHECK(first.time % 10000 == 0);  // on a tick
  // The instances it added serve from 50 ms after the decision: the time
  // series shows 1 instance until then.
  const std::vector<int64_t> instances = column(out.result.timeseries, 2);
  const size_t tick = static_cast<size_t>(first.time / 10000);
  CHECK(instances[tick + 4] == 1);      // 50 ms later, the boundary before the ready event
  CHECK(instances[tick + 5] > 1);
  int64_t added = 0, removed = 0;
  for (const ScalingAction& a : out.result.scaling) (a.delta > 0 ? added : removed) += std::abs(a.delta);
  CHECK(removed > 0);
  CHECK(instances.back() >= 1);
  // Every instance added was billed from its decision.
  CHECK(out.result.spans.size() == static_cast<size_t>(1 + added));
  // Deterministic.
  const RunOutcome again = scaled_run(0.050);
  CHECK(again.result.timeseries == out.result.timeseries);
}

TEST_CASE("the autoscaler counts instances still being provisioned as pending capacity", "[cluster][fleet]") {
  // 60 requests at once: the first tick asks for enough instances; with a
  // provisioning delay of 12 ticks, they are not asked for again at each
  // tick while they are provisioned (the queue only shrinks meanwhile).
  const RunOutcome out = scaled_run(0.120, 0, 0, 60);
  REQUIRE_FALSE(out.result.scaling.empty());
  const ScalingAction& first = out.result.scaling.front();
  CHECK(first.time == 10000);
  CHECK(first.delta > 1);
  for (const ScalingAction& a : out.result.scaling)
    if (a.time > first.time && a.time < first.time + 120000) CHECK(a.delta <= 0);
}

TEST_CASE("a stabilisation window delays the scale-up by that long", "[cluster][fleet]") {
  const RunOutcome now = scaled_run(0.050, 0), later = scaled_run(0.050, 30000);
  REQUIRE_FALSE(now.result.scaling.empty());
  REQUIRE_FALSE(later.result.scaling.empty());
  CHECK(later.result.scaling.front().time == now.result.scaling.front().time + 30000);
}

TEST_CASE("warm-up: the first N requests routed to each instance have their TTFT multiplied, nothing else changes",
          "[cluster][fleet]") {
  auto run = [](int32_t warm_up, double factor) {
    ClusterConfig cfg;
    cfg.engine.total_kv_blocks = 100000;
    cfg.keep_records = true;
    PoolLifecycle pl;
    pl.max = 2;
    pl.warm_up_requests = warm_up;
    pl.warm_up_ttft_factor = factor;
    fleet(cfg, 1, 1, pl);
    cfg.events = {ev("at=100ms action=add count=1")};
    VectorSource src(evenly_spaced(5000, 40));  // one request per 5 ms, to 195 ms
    return run_cluster(cfg, src, "blackbox", model());
  };
  RunOutcome cold = run(0, 1.0), warm = run(3, 2.5);
  REQUIRE(cold.cluster.records.size() == 40);
  REQUIRE(warm.cluster.records.size() == 40);
  // In arrival (= routing) order.
  auto by_id = [](const auto& a, const auto& b) { return a.id < b.id; };
  std::sort(cold.cluster.records.begin(), cold.cluster.records.end(), by_id);
  std::sort(warm.cluster.records.begin(), warm.cluster.records.end(), by_id);
  std::map<int32_t, int> seen;  // requests routed so far, per instance
  int penalised = 0;
  for (size_t k = 0; k < 40; ++k) {
    const auto& c = cold.cluster.records[k];
    const auto& w = warm.cluster.records[k];
    INFO("request " << c.id << " on instance " << c.instance);
    REQUIRE(w.id == c.id);
    CHECK(w.instance == c.instance);  // routing and scheduling are unaffected
    CHECK(w.e2e == c.e2e);
    // Each instance's first three requests (the added one's too): 2.5 x TTFT, rounded to the µs.
    const bool first = seen[c.instance]++ < 3;
    CHECK(w.ttft == (first ? std::llround(static_cast<double>(c.ttft) * 2.5) : c.ttft));
    penalised += first;
  }
  CHECK(penalised == 6);
  CHECK(seen.size() == 2);
}

TEST_CASE("warm_start=false: the initial instances load first, billed from t=0, refusing traffic until loaded",
          "[cluster][fleet]") {
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 100000;
  cfg.keep_records = true;
  PoolLifecycle pl;
  pl.max = 2;
  pl.provisioning.mean_s = 1.0;  // their nodes exist: no provisioning delay for them
  pl.loading.mean_s = 0.020;
  pl.warm_start = false;
  fleet(cfg, 2, 0, pl);
  VectorSource src(evenly_spaced(5000, 20));  // one request per 5 ms from 0
  auto out = run_cluster(cfg, src, "blackbox", model());
  // Arrivals at 0 to 20 ms find no instance taking traffic (a routing rejection, as the
  // reference); at 20 ms too, since an instance becomes ready after the routings of its µs.
  CHECK(out.result.rejected == 5);
  CHECK(out.cluster.completed == 15);
  for (const auto& r : out.cluster.records) CHECK(r.arrival_us > 20000);
  REQUIRE(out.result.spans.size() == 2);
  CHECK(out.result.spans[0].start == 0);
  CHECK(out.result.spans[1].start == 0);
  CHECK(injected(out) == 20);
  // With warm_start (the default) the same run serves everything.
  pl.warm_start = true;
  fleet(cfg, 2, 0, pl);
  VectorSource again(evenly_spaced(5000, 20));
  CHECK(run_cluster(cfg, again, "blackbox", model()).cluster.completed == 20);
}
