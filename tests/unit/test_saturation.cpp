// The saturation detectors of spec head §3 on synthetic series: the spec's
// worked numbers, and the cases where blis departs from the reference
// (docs/differences.md).
#include "catch.hpp"

#include "metrics/saturation.hpp"

#include <cmath>

using namespace blis;

namespace {

SaturationEvent arrival(int64_t t, int64_t id) { return {t, false, id, 0}; }
SaturationEvent completion(int64_t t, int64_t id, double ms) { return {t, true, id, ms}; }

// `n` arrivals `gap` µs apart; request i completes `latency(i)` µs after it
// arrived when `completes(i)`.
std::vector<SaturationEvent> series(int n, int64_t gap, const std::function<int64_t(int)>& latency,
                                    const std::function<bool(int)>& completes = [](int) { return true; }) {
  std::vector<SaturationEvent> e;
  for (int i = 0; i < n; ++i) {
    const int64_t t = i * gap;
    e.push_back(arrival(t, i));
    if (completes(i)) e.push_back(completion(t + latency(i), i, static_cast<double>(latency(i)) / 1e3));
  }
  sort_events(e);
  return e;
}

double signal(const DetectorResult& r, const std::string& name) {
  for (const auto& [k, v] : r.signals)
    if (k == name) return v;
  FAIL("no signal " << name);
  return 0;
}

}  // namespace

TEST_CASE("saturation threshold: the spec's worked numbers", "[metrics]") {
  ThresholdDetector over(5000);
  over.observe(completion(1, 1, 5000));
  over.observe(completion(2, 2, 10000));  // mean 7500 ms
  DetectorResult r = over.detect();
  CHECK(r.level == SaturationLevel::Overloaded);
  CHECK(r.score == Approx(0.875));
  CHECK(r.confidence == Approx(1 - 1 / std::sqrt(3.0)));
  CHECK(signal(r, "mean_e2e") == 7500);

  ThresholdDetector under(5000);
  under.observe(arrival(0, 1));  // arrivals do not count
  under.observe(completion(1, 1, 2500));
  r = under.detect();
  CHECK(r.level == SaturationLevel::Stable);
  CHECK(r.score == Approx(0.25));

  CHECK(ThresholdDetector(5000).detect().confidence == 0);  // no completions
}

TEST_CASE("saturation composite: deficit, trend, quartiles", "[metrics]") {
  // 100 arrivals, all complete, latencies 100..199 ms rising in completion
  // order: halves 124.5 and 174.5 ms, quartiles monotone.
  CompositeDetector rising;
  for (int i = 0; i < 100; ++i) rising.observe(arrival(i, i));
  for (int i = 0; i < 100; ++i) rising.observe(completion(1000 + i, i, 100 + i));
  DetectorResult r = rising.detect();
  CHECK(r.level == SaturationLevel::Overloaded);
  CHECK(signal(r, "rate_deficit") == 0);
  CHECK(signal(r, "latency_trend") == Approx(50 / 124.5));
  CHECK(signal(r, "quartile_monotone") == 1);
  CHECK(signal(r, "noise_floor") == Approx(0.1));
  CHECK(r.score == Approx(50 / 124.5));
  CHECK(r.confidence == 1);

  // 100 arrivals, 60 completions of flat latency: a deficit of 0.4 without a
  // trend is a backlog.
  CompositeDetector short_of;
  for (int i = 0; i < 100; ++i) short_of.observe(arrival(i, i));
  for (int i = 0; i < 60; ++i) short_of.observe(completion(1000 + i, i, 100));
  r = short_of.detect();
  CHECK(r.level == SaturationLevel::Backlogged);
  CHECK(r.score == Approx(0.4));
  CHECK(signal(r, "latency_trend") == 0);

  // A rise that is not monotone over the quartiles is no trend.
  CompositeDetector zigzag;
  for (int i = 0; i < 40; ++i) zigzag.observe(arrival(i, i));
  for (int i = 0; i < 40; ++i) zigzag.observe(completion(1000 + i, i, i < 10 ? 100 : i < 20 ? 300 : i < 30 ? 200 : 400));
  r = zigzag.detect();
  CHECK(signal(r, "latency_trend_raw") > 0);
  CHECK(signal(r, "quartile_monotone") == 0);
  CHECK(r.level == SaturationLevel::Stable);
  CHECK(r.confidence == 1);

  CHECK(CompositeDetector().detect().level == SaturationLevel::Stable);
}

TEST_CASE("saturation backlog-drift: the in-flight count growing while traffic is offered", "[metrics]") {
  // 20 req/s for 100 s served at 10 req/s: request i completes at i / 10 s,
  // so the in-flight count grows by 100 per 10 s window, half the window's
  // 200 arrivals.
  const auto saturated = series(2000, 50'000, [](int i) { return int64_t{50'000} * i; });
  int64_t last_arrival = 0;
  for (const auto& e : saturated)
    if (!e.completion) last_arrival = e.time;
  BacklogDriftDetector d({}, 10'000'000, last_arrival);
  for (const auto& e : saturated) d.observe(e);
  const DetectorResult r = d.detect();
  CHECK(signal(r, "running_slope") == Approx(100).epsilon(0.02));
  CHECK(signal(r, "drift") == Approx(0.5).epsilon(0.02));
  CHECK(r.level == SaturationLevel::Overloaded);
  // The 100 s of drain after the last arrival (in-flight falling) do not
  // hide it: the reference's slope over rise and fall would be about zero.
  CHECK(saturation_labels(saturated, {"backlog-drift"}).at("backlog-drift") == SaturationLevel::Overloaded);
  CHECK(saturation_labels(saturated, {"composite"}).at("composite") == SaturationLevel::Overloaded);

  // The same arrivals each served in 2 s: about 40 in flight throughout.
  const auto steady = series(2000, 50'000, [](int) { return int64_t{2'000'000}; });
  const auto labels = saturation_labels(steady, {"composite", "threshold", "backlog-drift"});
  CHECK(labels.at("backlog-drift") == SaturationLevel::Stable);
  CHECK(labels.at("composite") == SaturationLevel::Stable);
  CHECK(labels.at("threshold") == SaturationLevel::Stable);
  CHECK_FALSE(judge_saturation(steady).saturated());
  CHECK(judge_saturation(saturated).saturated());
  CHECK(judge_saturation(saturated).summary() == "composite OVERLOADED, backlog-drift OVERLOADED, threshold OVERLOADED");

  // Fewer judged windows than min_windows: no drift measured.
  BacklogDriftConfig cfg;
  cfg.window_size_sec = 30;  // 100 s of arrivals: 4 windows, 1 judged
  SaturationConfig sc;
  sc.drift = cfg;
  CHECK(saturation_labels(saturated, {"backlog-drift"}, sc).at("backlog-drift") == SaturationLevel::Stable);
}

TEST_CASE("saturation: requests that never complete count against the run", "[metrics]") {
  // A fifth of the requests rejected or dropped, the rest served in 2 s: the
  // reference sees only the completed ones and calls it stable.
  const auto lossy = series(2000, 50'000, [](int) { return int64_t{2'000'000}; }, [](int i) { return i % 5 != 0; });
  const auto labels = saturation_labels(lossy, {"composite"});
  CHECK(labels.at("composite") == SaturationLevel::Backlogged);
  std::vector<SaturationEvent> completed_only;
  for (const auto& e : lossy)
    if (e.completion || e.id % 5 != 0) completed_only.push_back(e);
  CHECK(saturation_labels(completed_only, {"composite"}).at("composite") == SaturationLevel::Stable);
  CHECK(saturation_labels({}, {"composite"}).empty());
}

TEST_CASE("saturation: events in the detectors' order", "[metrics]") {
  std::vector<SaturationEvent> e{completion(5, 2, 1), arrival(5, 3), arrival(5, 1), arrival(1, 9)};
  sort_events(e);
  CHECK(e[0].id == 9);
  CHECK(e[1].id == 1);
  CHECK(e[2].id == 3);
  CHECK(e[3].completion);
}

TEST_CASE("saturation report: HEAD's JSON, a record per event and detector, the final labels by name",
          "[metrics]") {
  // One request: an arrival at 1 ms, its completion 2.5 ms later.
  const std::vector<SaturationEvent> events = {arrival(1000, 0), completion(3500, 0, 2.5)};
  const std::string report = saturation_report(events, {"threshold"}, SaturationConfig{});
  CHECK(report ==
        "{\n  \"final\": {\n    \"threshold\": \"STABLE\"\n  },\n  \"trace\": [\n"
        "    {\n      \"timestamp\": 1000,\n      \"detector\": \"threshold\",\n      \"result\": {\n"
        "        \"level\": \"STABLE\",\n        \"score\": 0,\n        \"confidence\": 0,\n"
        "        \"signals\": {}\n      }\n    },\n"
        "    {\n      \"timestamp\": 3500,\n      \"detector\": \"threshold\",\n      \"result\": {\n"
        "        \"level\": \"STABLE\",\n        \"score\": 0.00025,\n"
        "        \"confidence\": 0.29289321881345254,\n        \"signals\": {\n"
        "          \"mean_e2e\": 2.5,\n          \"threshold\": 5000\n        }\n      }\n    }\n  ]\n}\n");
  // Event by event, the detectors in roster order.
  const std::string both = saturation_report(events, {"composite", "threshold"}, SaturationConfig{});
  const size_t c = both.find("\"detector\": \"composite\""), t = both.find("\"detector\": \"threshold\"");
  CHECK(c < t);
  CHECK(both.find("\"timestamp\": 3500") > t);
  // No events: no final labels, an empty trace, as HEAD writes it.
  CHECK(saturation_report({}, {"threshold"}, SaturationConfig{}) == "{\n  \"trace\": []\n}\n");
}

TEST_CASE("saturation labels: the final window and the threshold of the configuration", "[metrics]") {
  // Latencies rising from 1 s to 10 s: the mean passes 5 s late in the run.
  const auto events = series(100, 100'000, [](int i) { return 1'000'000 + int64_t{i} * 90'000; });
  SaturationConfig cfg;
  CHECK(saturation_labels(events, {"threshold"}, cfg).at("threshold") == SaturationLevel::Stable);
  cfg.threshold_ms = 1000;
  CHECK(saturation_labels(events, {"threshold"}, cfg).at("threshold") == SaturationLevel::Overloaded);
  // A 1 µs window votes on the last event only, when the mean (5.455 s) is over 5 s.
  cfg.threshold_ms = 5000;
  cfg.final_window_us = 1;
  CHECK(saturation_labels(events, {"threshold"}, cfg).at("threshold") == SaturationLevel::Overloaded);
}
