// A target measured in steady state (metrics/steady_window.hpp) on synthetic
// series: the warm-up is cut, the drain is not judged, a metric that keeps
// rising is called drifting.
#include "catch.hpp"

#include "metrics/steady_window.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

using namespace blis;

namespace {

// Inter-token latencies, one step every 20 ms of `seconds`, worth `level(t)`
// ms at time t (s), then `drain` seconds of 5 ms steps after the last arrival.
TimedSamples itl_series(double seconds, const std::function<double(double)>& level, double drain = 0) {
  TimedSamples s;
  s.first_arrival = 0;
  s.last_arrival = static_cast<int64_t>(seconds * 1e6);
  for (int64_t at = 0; at < s.last_arrival; at += 20'000)
    s.itl.push_back({at, std::llround(level(static_cast<double>(at) / 1e6) * 1e3), 8});
  for (int64_t at = s.last_arrival; at < s.last_arrival + static_cast<int64_t>(drain * 1e6); at += 20'000)
    s.itl.push_back({at, 5'000, 1});
  return s;
}

}  // namespace

TEST_CASE("steady window: a flat metric is measured over the whole window, converged", "[metrics]") {
  const SteadyMeasure m = measure_steady(itl_series(200, [](double t) { return 20 + std::fmod(t * 7, 3.0); }), "itl", 99);
  REQUIRE(m.measured);
  CHECK_FALSE(m.drifting);
  CHECK(m.value_ms == Approx(23).margin(0.1));
  CHECK(m.warm_up_s < 100);
  CHECK(m.half_width_ms < 1);
}

TEST_CASE("steady window: a warm-up transient is cut, the drain is not judged", "[metrics]") {
  // 40 s of a batch filling (10 ms to 40 ms), then 40 ms for 360 s, then a
  // drain of 60 s at 5 ms. The whole run's p99 is 40 ms too, but its mean is
  // pulled down by the warm-up and the drain; the steady window's is not.
  auto level = [](double t) { return t < 40 ? 10 + 0.75 * t : 40.0; };
  const SteadyMeasure m = measure_steady(itl_series(400, level, 60), "itl", -1);
  REQUIRE(m.measured);
  CHECK_FALSE(m.drifting);
  CHECK(m.warm_up_s >= 20);
  CHECK(m.warm_up_s <= 80);
  CHECK(m.value_ms == Approx(40).margin(0.5));
}

TEST_CASE("steady window: a metric still rising at the end is drifting, whatever its value", "[metrics]") {
  // A batch that takes minutes to fill: the ITL climbs for the whole run.
  const SteadyMeasure m = measure_steady(itl_series(60, [](double t) { return 10 + t / 2; }), "itl", 99);
  REQUIRE(m.measured);
  CHECK(m.drifting);
  CHECK(m.rising);
}

TEST_CASE("steady window: requests are keyed by arrival, without the last mean E2E", "[metrics]") {
  // 10 req/s for 100 s, TTFT 50 ms but 500 ms for the last 4 s of arrivals
  // (they arrive into the drain and are cut with it: E2E is 5 s).
  TimedSamples s;
  s.first_arrival = 0;
  s.last_arrival = 100'000'000;
  for (int64_t at = 0; at <= s.last_arrival; at += 100'000) {
    s.ttft.push_back({at, at > 96'000'000 ? 500'000 : 50'000, 1});
    s.e2e.push_back({at, 5'000'000, 1});
  }
  const SteadyMeasure m = measure_steady(s, "ttft", 99);
  REQUIRE(m.measured);
  CHECK(m.value_ms == Approx(50));
  CHECK_FALSE(measure_steady(s, "queue", 99).measured);
}

TEST_CASE("steady window: the samples' order does not change a measure (instances stop in any order)",
          "[metrics]") {
  // The cluster hands over the instances' timed latencies in the order the
  // instances stopped: shuffled samples give the same bits.
  auto level = [](double t) { return t < 40 ? 10 + 0.75 * t : 40.0 + std::fmod(t * 13, 7.0); };
  const TimedSamples sorted = itl_series(400, level, 60);
  TimedSamples shuffled = sorted;
  std::reverse(shuffled.itl.begin(), shuffled.itl.end());
  std::rotate(shuffled.itl.begin(), shuffled.itl.begin() + 777, shuffled.itl.end());
  for (const double stat : {-1.0, 50.0, 99.0, 99.9}) {
    const SteadyMeasure a = measure_steady(sorted, "itl", stat), b = measure_steady(shuffled, "itl", stat);
    REQUIRE(a.measured);
    CHECK(a.value_ms == b.value_ms);
    CHECK(a.warm_up_s == b.warm_up_s);
    CHECK(a.half_width_ms == b.half_width_ms);
    CHECK(a.drifting == b.drifting);
  }
}

TEST_CASE("steady window: values in a small span, counted, measure as selected ones do", "[metrics]") {
  // Values within a span small beside their number are counted by value;
  // the same values times 1024 span too much and are selected. A factor of
  // 2^10 scales every step of a measure exactly, so the two must agree bit
  // for bit once scaled back.
  std::mt19937_64 rng(7);
  for (int round = 0; round < 40; ++round) {
    const int64_t span = 1 + static_cast<int64_t>(rng() % 3000);
    const int64_t lo = static_cast<int64_t>(rng() % 20'000) - 1'000;
    const size_t n = static_cast<size_t>(span) * 12 + rng() % 5000;  // 20 batches x span <= 2n: counted
    TimedSamples small;
    small.first_arrival = 1'000'000;
    small.last_arrival = 61'000'000;
    const int64_t rise = static_cast<int64_t>(rng() % 3);  // 0: flat; else a warm-up or a drift
    for (size_t i = 0; i < n; ++i) {
      const int64_t at = static_cast<int64_t>(rng() % 64'000'000);  // some before and after the window
      int64_t value = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
      if (rise == 1 && at < 15'000'000) value = std::min(lo + span - 1, value + span / 2);
      if (rise == 2 && at > 40'000'000)
        value = std::min(lo + span - 1, value + (at - 40'000'000) * span / 40'000'000);
      small.itl.push_back({at, value, static_cast<int64_t>(rng() % 10)});
    }
    TimedSamples large = small;
    for (TimedSample& x : large.itl) x.value *= 1024;
    for (const double stat : {0.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
      const SteadyMeasure a = measure_steady(small, "itl", stat), b = measure_steady(large, "itl", stat);
      REQUIRE(a.measured == b.measured);
      CHECK(a.value_ms * 1024 == b.value_ms);
      CHECK(a.half_width_ms * 1024 == b.half_width_ms);
      CHECK(a.warm_up_s == b.warm_up_s);
      CHECK(a.drifting == b.drifting);
      CHECK(a.rising == b.rising);
    }
  }
}

TEST_CASE("steady window: instances' steps read in place measure as the same samples copied out",
          "[metrics]") {
  // The collector hands over each instance's packed steps (TimedSteps); the
  // measures must be those of the samples they stand for, counted or
  // selected, percentile or mean, with samples given as such beside them.
  std::mt19937_64 rng(11);
  for (int round = 0; round < 30; ++round) {
    TimedSamples packed, copied;
    packed.first_arrival = copied.first_arrival = 2'000'000;
    packed.last_arrival = copied.last_arrival = 50'000'000;
    const int64_t span =
        round % 3 == 0 ? 100'000 : 1 + static_cast<int64_t>(rng() % 2000);  // some too wide to count
    for (int extra = 0; extra < round % 2 * 50; ++extra) {
      const TimedSample x{static_cast<int64_t>(rng() % 52'000'000), 5'000 + static_cast<int64_t>(rng() % 100),
                          1};
      packed.itl.push_back(x);
      copied.itl.push_back(x);
    }
    for (int inst = 0; inst < 1 + round % 5; ++inst) {
      TimedSteps& t = packed.itl_steps.emplace_back();
      int64_t at = static_cast<int64_t>(rng() % 1'000'000), count = 0;
      const size_t steps = rng() % 12'000;
      for (size_t i = 0; i < steps; ++i) {
        at += 1 + static_cast<int64_t>(rng() % 9000);
        const int64_t itl = 4'000 + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
        const auto d =
            static_cast<int32_t>(rng() % 5) - (count > 0 ? 2 : 0);  // the count wanders, at times to 0
        count += d;
        t.itl.push_back(itl);
        t.end.push_back(at);
        t.delta.push_back(d);
        if (count > 0) {
          copied.itl.push_back({at, itl, count});
          t.lo = std::min(t.lo, itl), t.hi = std::max(t.hi, itl);
        }
      }
      t.delta.push_back(0);
      t.steps = steps;
    }
    for (const double stat : {-1.0, 0.0, 50.0, 99.0, 99.9, 100.0}) {
      const SteadyMeasure a = measure_steady(packed, "itl", stat), b = measure_steady(copied, "itl", stat);
      REQUIRE(a.measured == b.measured);
      CHECK(a.value_ms == b.value_ms);
      CHECK(a.half_width_ms == b.half_width_ms);
      CHECK(a.warm_up_s == b.warm_up_s);
      CHECK(a.drifting == b.drifting);
    }
    // As samples (a copy across processes): the same, in the same order.
    const std::vector<TimedSample> flat = itl_samples(packed);
    REQUIRE(flat.size() == copied.itl.size());
    bool same = true;
    for (size_t i = 0; i < flat.size(); ++i)
      same = same && flat[i].at == copied.itl[i].at && flat[i].value == copied.itl[i].value &&
             flat[i].weight == copied.itl[i].weight;
    CHECK(same);
  }
}
