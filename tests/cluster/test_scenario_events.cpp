// Scenario events in virtual time (blis/scenario_events.hpp) and the time
// series: conservation over random event scripts, and what each action does.
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

ScenarioEvent ev(const std::string& text) { return parse_scenario_event(text, "test"); }

struct Totals {
  int64_t completed = 0, failed = 0, dropped = 0, queued = 0, running = 0;
};
Totals totals(const ClusterResult& r) {
  Totals t;
  for (const auto& m : r.instances) {
    t.completed += m.completed;
    t.failed += m.failed;
    t.dropped += m.dropped_unservable;
    t.queued += m.still_queued;
    t.running += m.still_running;
  }
  return t;
}

// The arrival times of the requests routed (their records), in id order.
std::vector<int64_t> arrivals(const InstanceMetrics& m) {
  std::vector<std::pair<uint64_t, int64_t>> v;
  for (const auto& r : m.records) v.emplace_back(r.id, r.arrival_us);
  std::sort(v.begin(), v.end());
  std::vector<int64_t> out;
  for (const auto& p : v) out.push_back(p.second);
  return out;
}

}  // namespace

TEST_CASE("event texts parse, and bad ones are refused with the reason", "[cluster][events]") {
  const ScenarioEvent f = ev("at=30s action=fail instance=2 requests=fail");
  CHECK(f.at == 30000000);
  CHECK(f.action == EventAction::Fail);
  CHECK(f.instance == 2);
  CHECK_FALSE(f.reroute);
  CHECK(ev("at=1s action=fail instance=0").reroute);
  const ScenarioEvent t = ev("when=kv_usage>0.75 action=rate factor=0.5");
  CHECK(t.at == -1);
  CHECK(t.metric == TriggerMetric::KvUsage);
  CHECK(t.above);
  CHECK(t.threshold == 0.75);
  CHECK(t.factor == 0.5);
  CHECK(ev("when=queue_depth<3 action=restore instance=1").above == false);
  const ScenarioEvent w = ev("at=500ms action=weight scorer=queue-depth weight=4");
  CHECK(w.at == 500000);
  CHECK(w.scorer == "queue-depth");
  CHECK(w.weight == 4);

  auto error_of = [](const std::string& text) {
    try {
      ev(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of("at=30s action=explode instance=1").find("unknown action 'explode'") != std::string::npos);
  CHECK(error_of("action=fail instance=1").find("exactly one of at=TIME") != std::string::npos);
  CHECK(error_of("at=1s when=running>3 action=drain instance=1").find("exactly one of") != std::string::npos);
  CHECK(error_of("at=soon action=drain instance=1").find("not a duration") != std::string::npos);
  CHECK(error_of("at=1s action=drain").find("needs instance=") != std::string::npos);
  CHECK(error_of("at=1s action=slow instance=0 factor=0").find("factor=0 is not a slowdown in [0.001, 1000]") != std::string::npos);
  CHECK(error_of("at=1s action=drain instance=0 factor=2").find("unknown or unused key 'factor'") != std::string::npos);
  CHECK(error_of("when=temperature>3 action=drain instance=0").find("unknown metric") != std::string::npos);
  CHECK(error_of("at=1s action=fail instance=0 requests=maybe").find("reroute or fail") != std::string::npos);
  CHECK(error_of("at=1s action=fail instance=-1").find("not an instance index") != std::string::npos);
}

TEST_CASE("an event naming an instance the cluster does not have is refused", "[cluster][events]") {
  ClusterConfig cfg;
  cfg.num_instances = 2;
  cfg.engine.total_kv_blocks = 1000;
  cfg.events = {ev("at=1s action=drain instance=2")};
  VectorSource src(evenly_spaced(1000, 3));
  CHECK_THROWS_AS(run_cluster(cfg, src, "blackbox", model()), InputError);
}

TEST_CASE("conservation over random event scripts: injected = completed + failed + dropped + queued + "
          "running", "[cluster][events][invariant]") {
  GoRand rng(7);
  for (int script = 0; script < 40; ++script) {
    ClusterConfig cfg;
    cfg.num_instances = 1 + static_cast<int32_t>(rng.intn(4));
    cfg.engine.total_kv_blocks = 200 + rng.intn(2000);
    cfg.engine.max_running = 1 + rng.intn(32);
    cfg.keep_records = rng.intn(2) == 1;
    if (rng.intn(2) == 1) cfg.engine.horizon = 200000 + rng.intn(800000);
    cfg.routing_latency = rng.intn(3) * 1000;
    cfg.timeseries_interval = 50000;
    const int nevents = 1 + static_cast<int>(rng.intn(8));
    std::string script_text;
    for (int k = 0; k < nevents; ++k) {
      const int64_t at = rng.intn(900000);
      const int64_t i = rng.intn(cfg.num_instances);
      std::string text;
      switch (rng.intn(6)) {
        case 0: text = fmt::format("at={} action=fail instance={} requests=reroute", at, i); break;
        case 1: text = fmt::format("at={} action=fail instance={} requests=fail", at, i); break;
        case 2: text = fmt::format("at={} action=drain instance={}", at, i); break;
        case 3: text = fmt::format("at={} action=restore instance={}", at, i); break;
        case 4: text = fmt::format("at={} action=slow instance={} factor={}", at, i, 1 + rng.intn(4)); break;
        default: text = fmt::format("when=running>{} action=rate factor=3", 1 + rng.intn(20)); break;
      }
      cfg.events.push_back(ev(text));
      script_text += text + "; ";
    }
    const int count = 50 + static_cast<int>(rng.intn(100));
    VectorSource src(evenly_spaced(2000 + rng.intn(8000), count, 64 + static_cast<int32_t>(rng.intn(512)),
                           1 + static_cast<int32_t>(rng.intn(300))));
    INFO("script " << script << ": " << script_text);
    auto out = run_cluster(cfg, src, "blackbox", model());
    const Totals t = totals(out.result);
    // Every arrival processed by the horizon is somewhere, exactly once.
    int64_t arrived = 0;
    std::istringstream csv(out.result.timeseries);
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line)) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
      arrived += std::stoll(f[6]);
    }
    CHECK(t.completed + t.failed + t.dropped + t.queued + t.running + out.result.rejected + out.result.in_pipeline ==
          arrived);
    if (!cfg.engine.horizon || cfg.engine.horizon == kForever) {
      CHECK(arrived == count);
    }
    CHECK(out.cluster.completed + out.cluster.still_queued + out.cluster.still_running + out.cluster.dropped_unservable +
              out.cluster.failed + out.result.rejected ==
          arrived);
  }
}

TEST_CASE("a failed instance's requests are re-routed, or failed, as the event says", "[cluster][events]") {
  // Two instances, round-robin; 40 requests arrive at once; instance 1 fails
  // at 1 ms. A failure lands between steps: the step in progress (4 requests
  // of its 20, max-running 4) completes, so those 4 have a token out and
  // fail either way; the 16 queued are re-routed or failed.
  for (const bool reroute : {true, false}) {
    ClusterConfig cfg;
    cfg.num_instances = 2;
    cfg.engine.total_kv_blocks = 100000;
    cfg.engine.max_running = 4;
    cfg.trace_decisions = true;
    cfg.events = {ev(std::string("at=1ms action=fail instance=1 requests=") + (reroute ? "reroute" : "fail"))};
    VectorSource src(evenly_spaced(0, 40));
    auto out = run_cluster(cfg, src, "blackbox", model());
    const Totals t = totals(out.result);
    if (reroute) {
      CHECK(out.result.rerouted == 16);
      CHECK(t.failed == 4);
      CHECK(t.completed == 36);
      CHECK(out.result.instances[0].completed == 36);
      CHECK(out.result.trace.routings == 56);  // every one once, the 16 moved twice
    } else {
      CHECK(out.result.rerouted == 0);
      CHECK(t.failed == 20);
      CHECK(t.completed == 20);
    }
    CHECK(out.result.event_log.size() == 1);
    // Input tokens count once per request, re-routed or not.
    CHECK(out.cluster.input_tokens == 40 * 256);
  }
}

TEST_CASE("requests already streaming tokens fail with their instance even when re-routing", "[cluster][events]") {
  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = 100000;
  cfg.num_instances = 2;
  // Request 0 to instance 0, request 1 to instance 1; instance 1 fails after
  // its request's first token (prefill: 1000 + 256*10 µs = 3.56 ms).
  cfg.events = {ev("at=10ms action=fail instance=1 requests=reroute")};
  VectorSource src(evenly_spaced(0, 2));
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(out.result.rerouted == 0);
  CHECK(out.result.instances[1].failed == 1);
  CHECK(out.result.instances[0].completed == 1);
}

TEST_CASE("a drained instance takes no new requests and finishes its own; restore brings it back",
          "[cluster][events]") {
  ClusterConfig cfg;
  cfg.num_instances = 2;
  cfg.engine.total_kv_blocks = 100000;
  cfg.trace_decisions = true;
  cfg.keep_records = true;
  // One request per 10 ms; instance 1 drained at 95 ms, back at 195 ms.
  cfg.events = {ev("at=95ms action=drain instance=1"), ev("at=195ms action=restore instance=1")};
  VectorSource src(evenly_spaced(10000, 30));
  auto out = run_cluster(cfg, src, "blackbox", model());
  int64_t on1_while_drained = 0;
  for (const auto& r : out.cluster.records)
    if (r.instance == 1 && r.arrival_us > 95000 && r.arrival_us < 195000) ++on1_while_drained;
  CHECK(on1_while_drained == 0);
  CHECK(out.cluster.completed == 30);
  // Round-robin over the instances taking traffic: 0,1,...; 10 requests
  // (100..190 ms) all to instance 0; then alternating again.
  CHECK(out.result.trace.targets[0] == 5 + 10 + 5);
  CHECK(out.result.trace.targets[1] == 5 + 5);
}

TEST_CASE("a slow event multiplies the instance's step times", "[cluster][events]") {
  auto e2e = [](const char* event) {
    ClusterConfig cfg;
    cfg.engine.total_kv_blocks = 100000;
    if (event) cfg.events = {ev(event)};
    VectorSource src(evenly_spaced(0, 1, 256, 100));
    auto out = run_cluster(cfg, src, "blackbox", model());
    return out.cluster.e2e.at(0);
  };
  const int64_t base = e2e(nullptr);
  // Prefill step 1000 + 2560 µs, then 99 decode steps of 1005 µs.
  CHECK(base == 3560 + 99 * 1005);
  CHECK(e2e("at=0s action=slow instance=0 factor=2") == 2 * base);
  CHECK(e2e("at=0s action=slow instance=0 factor=1.5") == 5340 + 99 * 1508);
}

TEST_CASE("a rate event changes the arrival spacing from the arrival after the pending one",
          "[cluster][events]") {
  ClusterConfig cfg;
  cfg.num_instances = 2;
  cfg.engine.total_kv_blocks = 100000;
  cfg.keep_records = true;
  // Source: one request per 10 ms. At 25 ms (pending arrival: 30 ms) the
  // rate doubles: 30, 35, 40, ...; at 52 ms (pending: 55) it is x0.25 of
  // that... i.e. half the base rate: 55, 75, 95.
  cfg.events = {ev("at=25ms action=rate factor=2"), ev("at=52ms action=rate factor=0.25")};
  VectorSource src(evenly_spaced(10000, 10));
  auto out = run_cluster(cfg, src, "blackbox", model());
  CHECK(arrivals(out.cluster) ==
        std::vector<int64_t>{0, 10000, 20000, 30000, 35000, 40000, 45000, 50000, 55000, 75000});
}

TEST_CASE("a threshold trigger fires once, when its metric crosses the value", "[cluster][events]") {
  ClusterConfig cfg;
  cfg.num_instances = 1;
  cfg.engine.total_kv_blocks = 100000;
  cfg.engine.max_running = 2;
  // 20 requests at once: the queue holds 18 after the first step; the
  // trigger adds a second... drain is the only thing to see: it fires at the
  // first check (100 ms) and logs once.
  cfg.events = {ev("when=queue_depth>10 action=slow instance=0 factor=1")};
  VectorSource src(evenly_spaced(0, 20));
  auto out = run_cluster(cfg, src, "blackbox", model());
  REQUIRE(out.result.event_log.size() == 1);
  CHECK(out.result.event_log[0].rfind("0.1", 0) == 0);
}

TEST_CASE("the time series: rows per interval, counts that add up, gauges at each boundary",
          "[cluster][metrics]") {
  ClusterConfig cfg;
  cfg.num_instances = 2;
  cfg.engine.total_kv_blocks = 100000;
  cfg.timeseries_interval = 100000;
  cfg.events = {ev("at=150ms action=drain instance=1")};
  VectorSource src(evenly_spaced(10000, 30));
  auto out = run_cluster(cfg, src, "blackbox", model());
  std::istringstream csv(out.result.timeseries);
  std::string line;
  std::getline(csv, line);
  CHECK(line == "time_s,pool,instances,queue_depth,running,kv_usage,arrivals,completions,failed,events");
  std::getline(csv, line);
  CHECK(line.rfind("0.100000,default,2,", 0) == 0);
  int64_t arrivals = 0, completions = 0, events = 0, rows = 1;
  std::string last;
  do {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    arrivals += std::stoll(f[6]);
    completions += std::stoll(f[7]);
    events += std::stoll(f[9]);
    last = line;
  } while (std::getline(csv, line) && ++rows);
  CHECK(arrivals == 30);
  CHECK(completions == 30);
  CHECK(events == 1);
  CHECK(last.find(",default,1,0,0,0.0000,") != std::string::npos);  // drained, idle at the end
  // Off: nothing kept.
  ClusterConfig off = cfg;
  off.timeseries_interval = 0;
  VectorSource src2(evenly_spaced(10000, 30));
  CHECK(run_cluster(off, src2, "blackbox", model()).result.timeseries.empty());
}

TEST_CASE("a routing event switches the routing policy from then on", "[cluster][events]") {
  ClusterConfig cfg;
  cfg.num_instances = 2;
  cfg.engine.total_kv_blocks = 100000;
  cfg.trace_decisions = true;
  // Round-robin for the requests of 0..50 ms (3 each), then always-busiest:
  // every later request joins the busier instance, which stays the busier.
  cfg.events = {ev("at=55ms action=routing policy=always-busiest")};
  VectorSource src(evenly_spaced(10000, 30, 256, 2000));
  auto out = run_cluster(cfg, src, "blackbox", model());
  const auto& t = out.result.trace.targets;
  CHECK(std::max(t[0], t[1]) == 27);
  CHECK(std::min(t[0], t[1]) == 3);
  CHECK(ev("at=1s action=routing policy=least-loaded").policy == "least-loaded");
  ClusterConfig bad = cfg;
  bad.events = {ev("at=1s action=routing policy=fastest")};
  VectorSource src2(evenly_spaced(10000, 3));
  CHECK_THROWS_AS(run_cluster(bad, src2, "blackbox", model()), InputError);
}
