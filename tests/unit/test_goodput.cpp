// Goodput and SLO attainment (spec head §2.2's worked example, and parsing).
#include "catch.hpp"

#include "engine/request.hpp"
#include "metrics/goodput.hpp"

#include <blis/errors.hpp>

using namespace blis;

TEST_CASE("goodput: spec head §2.2 worked example", "[metrics]") {
  // default: TTFT 100 ms; 10 requests arrive, 8 complete, 6 of those within 100 ms; 20 s run.
  SloTargetMap targets;
  parse_slo_flag("default=100ms", 0, "--slo-ttft", targets);
  GoodputTracker g(targets);
  Request r;
  for (int i = 0; i < 10; ++i) {
    r = Request{};
    r.state = RequestState::Pipeline;
    if (i == 9) {  // rejected by admission
      g.on_rejected(r, "full");
      continue;
    }
    g.on_admitted(r);
    if (i == 8) continue;  // admitted, never completed
    r.timing.set().ttft = i < 6 ? 80'000 : 150'000;
    r.timing.set().e2e = 2'000'000;
    r.timing.set().itl_avg = 10'000;
    g.on_completed(r, 0);
  }
  const auto [rps, attainment] = goodput_totals(g.result(), 20);
  CHECK(attainment == Approx(0.6));
  CHECK(rps == Approx(0.3));
  const std::string json = goodput_json(g.result(), 20);
  CHECK(json.find("\"count\": 10") != std::string::npos);
  CHECK(json.find("\"ttft\": 0.75") != std::string::npos);
}

// The observer's own part of the report (metrics/observer.hpp), fed through
// an Observers list as the cluster feeds it.
TEST_CASE("goodput: an observer that writes its own part of the report", "[metrics]") {
  ObserverSetup setup;
  parse_slo_flag("default=100ms", 0, "--slo-ttft", setup.slo_targets);
  Observers<GoodputTracker> observers(setup);
  Request r;
  r.state = RequestState::Pipeline;
  for (int i = 0; i < 4; ++i) {
    observers.on_admitted(r);
    r.timing.set().ttft = i < 3 ? 80'000 : 150'000;
    r.timing.set().e2e = 1'000'000;
    observers.on_completed(r, 0);
  }
  const std::vector<std::unique_ptr<ReportPart>> parts = observers.release();
  REQUIRE(parts.size() == 1);
  const ReportPart& part = *parts[0];
  const InstanceMetrics cluster;
  const std::vector<InstanceMetrics> instances;
  const ReportScope scope{cluster, instances, 2.0, false};
  std::string members;
  part.cluster_members(scope, ClusterPlace::Labels, members);
  CHECK(members.empty());
  part.cluster_members(scope, ClusterPlace::Figures, members);
  CHECK(members.rfind(",\n  \"goodput_rps\": 1.5,\n  \"slo_attainment\": 0.75,\n  \"per_class\": {", 0) == 0);
  std::string table;
  part.table_lines(scope, TablePlace::Verdict, table);
  CHECK(table.empty());
  part.table_lines(scope, TablePlace::Latency, table);
  CHECK(table == "goodput      1.50 requests/s within the SLO targets; attainment 75.0 %\n");
  std::vector<MetricField> figures;
  part.figures(scope, figures);
  REQUIRE(figures.size() == 2);
  CHECK(figures[0].name == "goodput_rps");
  CHECK(figures[1].value == Approx(0.75));
  ReportContext ctx;
  part.shape(ctx);
  CHECK(ctx.per_slo_always);

  // Without targets it writes nothing anywhere.
  Observers<GoodputTracker> off{ObserverSetup{}};
  const auto idle = off.release();
  std::string none;
  idle[0]->cluster_members(scope, ClusterPlace::Figures, none);
  idle[0]->table_lines(scope, TablePlace::Latency, none);
  std::vector<MetricField> no_figures;
  idle[0]->figures(scope, no_figures);
  ReportContext untouched;
  idle[0]->shape(untouched);
  CHECK(none.empty());
  CHECK(no_figures.empty());
  CHECK_FALSE(untouched.per_slo_always);
}

TEST_CASE("goodput: targets are parsed like the reference's flags", "[metrics]") {
  SloTargetMap t;
  parse_slo_flag("critical=1.5s, default=250us", 2, "--slo-e2e", t);
  CHECK(t.at(BLIS_SLO_CRITICAL).e2e_ms == Approx(1500));
  CHECK(t.at(BLIS_SLO_DEFAULT).e2e_ms == Approx(0.25));
  parse_slo_flag("critical=1m30s", 0, "--slo-ttft", t);
  CHECK(t.at(BLIS_SLO_CRITICAL).ttft_ms == Approx(90'000));
  CHECK_THROWS_WITH(parse_slo_flag("critical", 0, "--slo-ttft", t), Catch::Contains("has no '='"));
  CHECK_THROWS_WITH(parse_slo_flag("=1s", 0, "--slo-ttft", t), Catch::Contains("no class name"));
  CHECK_THROWS_WITH(parse_slo_flag("gold=1s", 0, "--slo-ttft", t), Catch::Contains("unknown SLO class 'gold'"));
  CHECK_THROWS_WITH(parse_slo_flag("default=0s", 0, "--slo-ttft", t), Catch::Contains("must be > 0"));
  CHECK_THROWS_WITH(parse_slo_flag("default=fast", 0, "--slo-ttft", t), Catch::Contains("must be > 0"));
}
