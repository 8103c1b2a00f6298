// The steady-state verdict on synthetic series: arrivals at a rate, each
// started after a TTFT and decoding for a while.
#include "catch.hpp"

#include "engine/request.hpp"
#include "metrics/steady_state.hpp"

#include <functional>

using namespace blis;

namespace {

// `n` arrivals `gap` µs apart; request i starts `ttft(i)` µs after arriving
// and completes `decode` µs later.
SteadyState judge(int n, int64_t gap, const std::function<int64_t(int)>& ttft, int64_t decode) {
  SteadyStateProbe probe;
  Request r;
  for (int i = 0; i < n; ++i) {
    r.spec.arrival_us = static_cast<int64_t>(i) * gap;
    probe.on_admitted(r);
    r.timing.set().ttft = ttft(i);
    probe.on_first_token(r, r.spec.arrival_us + r.timing.ttft());
    r.timing.set().e2e = r.timing.ttft() + decode;
    probe.on_completed(r, r.spec.arrival_us + r.timing.e2e());
  }
  return probe.judge();
}

}  // namespace

TEST_CASE("steady state: flat TTFT and starts that keep up", "[metrics]") {
  // 20 req/s for 250 s, 40 ms TTFT, 7 s of decoding.
  const SteadyState s = judge(5000, 50'000, [](int) { return 40'000; }, 7'000'000);
  CHECK(s.verdict == Verdict::Steady);
  CHECK(s.offered_rps == Approx(20).epsilon(0.01));
  CHECK(s.started_rps == Approx(20).epsilon(0.01));
  CHECK(s.advice().empty());
}

TEST_CASE("steady state: a queue that grows is saturation", "[metrics]") {
  // Arrivals at 20 req/s, service at 10 req/s: request i starts at i / 10 s.
  const SteadyState s = judge(5000, 50'000, [](int i) { return int64_t{50'000} * i; }, 7'000'000);
  CHECK(s.verdict == Verdict::Saturated);
  CHECK(s.started_rps < 0.9 * s.offered_rps);
  CHECK(s.advice().find("saturated") != std::string::npos);
}

TEST_CASE("steady state: TTFT still rising when starts keep up is not steady", "[metrics]") {
  // Starts keep pace (TTFT grows by 1 ms per request: within 10 % of the
  // arrival rate) but latency climbs from ~1.7 s to ~4.2 s.
  const SteadyState s = judge(5000, 50'000, [](int i) { return int64_t{1'000} * i; }, 7'000'000);
  CHECK(s.verdict == Verdict::NotSteady);
  CHECK(s.ttft_last_ms > 1.25 * s.ttft_middle_ms);
}

TEST_CASE("steady state: a burst the batch absorbs is too short to judge", "[metrics]") {
  // 1,000 requests in 5 s with 7 s of decoding each: the batches were still
  // filling up when arrivals stopped.
  const SteadyState s = judge(1000, 5'000, [](int) { return 40'000; }, 7'000'000);
  CHECK(s.verdict == Verdict::TooShort);
  // And under 100 completions nothing is said either.
  CHECK(judge(50, 1'000'000, [](int) { return 40'000; }, 1'000'000).verdict == Verdict::TooShort);
}

TEST_CASE("steady state: saturation whose TTFT does not grow says why instead of 'grew'", "[metrics]") {
  // The grown case names the growth; when TTFT stays flat or falls (requests
  // that waited too long timed out), the advice must not say it grew.
  SteadyState s;
  s.verdict = Verdict::Saturated;
  s.offered_rps = 30;
  s.started_rps = 12;
  s.ttft_middle_ms = 4000;
  s.ttft_last_ms = 9000;
  CHECK(s.advice().find("TTFT grew from 4000 ms to 9000 ms") != std::string::npos);
  s.ttft_last_ms = 3900;
  const std::string flat = s.advice();
  CHECK(flat.find("grew") == std::string::npos);
  CHECK(flat.find("TTFT did not grow (4000 ms in the middle third, 3900 ms in the last)") != std::string::npos);
  CHECK(flat.find("timed out or were dropped") != std::string::npos);
}
