// Closed-loop multi-turn sessions (--session-mode closed-loop, set by
// --profile-set head; HEAD f90a1e3a sim/workload/session.go): round k + 1 of
// a session arrives its think time after round k completes, is not capped by
// the request cap (which counts the generated rounds, of which only the
// rounds 0 are sent), and with context_growth accumulate carries the whole
// conversation so far.
//
// The blackbox model has α = 0, so a request's E2E is exactly the time from
// its arrival to the end of the step that completes it, the time its
// session's next round is made.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace blis;
using namespace blis::test;

namespace {

WorkloadSpec session_spec(int64_t rounds, int64_t think_us, bool accumulate, bool closed = true) {
  WorkloadSpec spec;
  spec.seed = 11;
  spec.aggregate_rate = 100;  // sessions start ~10 ms apart
  spec.closed_loop_sessions = closed;
  ClientSpec c;
  c.id = "chat";
  c.rate_fraction = 1;
  c.arrival.process = "poisson";
  c.input_distribution = DistSpec{"constant", {{"value", 64}}};
  c.output_distribution = DistSpec{"constant", {{"value", 20}}};
  ReasoningSpec reasoning;
  reasoning.multi_turn = MultiTurnSpec{rounds, think_us, accumulate ? "accumulate" : "", false};
  c.reasoning = reasoning;
  spec.clients.push_back(c);
  return spec;
}

RunOutcome run_spec(const WorkloadSpec& spec, int64_t cap, int64_t horizon = kNoHorizon) {
  ClusterConfig cfg;
  cfg.keep_records = true;
  cfg.deadlines = true;
  auto src = make_spec_workload(spec, horizon, cap, cfg.engine.block_size);
  return run_cluster(cfg, *src, "blackbox", blackbox_config({0, 0, 0}, {1000, 10, 5}), {});
}

std::vector<RequestRecord> by_arrival(const InstanceMetrics& m) {
  std::vector<RequestRecord> out = m.records;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.arrival_us < b.arrival_us; });
  return out;
}

}  // namespace

TEST_CASE("closed sessions: each round arrives the think time after the previous round completed",
          "[cluster][workload]") {
  // One session (the cap of 1 keeps one round 0), four rounds.
  const auto out = run_spec(session_spec(4, 5000, false), 1);
  CHECK(out.cluster.completed == 4);
  const auto recs = by_arrival(out.cluster);
  REQUIRE(recs.size() == 4);
  for (size_t k = 0; k + 1 < recs.size(); ++k) {
    INFO("round " << k);
    CHECK(recs[k].round == static_cast<int32_t>(k));
    REQUIRE(recs[k].e2e > 0);
    CHECK(recs[k + 1].arrival_us == recs[k].arrival_us + recs[k].e2e + 5000);
  }
  // Open-loop, the rounds come on their schedule: think time plus 1 µs per
  // output token after the previous round's arrival, whatever the server does.
  const auto open = by_arrival(run_spec(session_spec(4, 5000, false, false), 4).cluster);
  REQUIRE(open.size() == 4);
  CHECK(open[1].arrival_us == open[0].arrival_us + 5000 + 20);
}

TEST_CASE("closed sessions: the request cap counts sessions' first rounds, not their follow-ups",
          "[cluster][workload]") {
  // A think time of 10 s: the first 30 generated rounds are all rounds 0,
  // and each of those 30 sessions then runs its 2 rounds.
  const auto out = run_spec(session_spec(2, 10'000'000, false), 30);
  CHECK(out.cluster.completed == 60);
  int64_t firsts = 0;
  for (const auto& r : out.cluster.records) firsts += r.round == 0;
  CHECK(firsts == 30);
  // A client generates at most twice the cap (HEAD's per-client cap): 60
  // rounds are 12 sessions of 5, whose 12 rounds 0 come first.
  const auto five = run_spec(session_spec(5, 10'000'000, false), 30);
  CHECK(five.cluster.completed == 60);
  firsts = 0;
  for (const auto& r : five.cluster.records) firsts += r.round == 0;
  CHECK(firsts == 12);
  // Open-loop, the cap is the number of requests sent.
  CHECK(run_spec(session_spec(5, 10'000'000, false, false), 30).cluster.completed == 30);
  // One round: nothing follows.
  CHECK(run_spec(session_spec(1, 0, false), 30).cluster.completed == 30);
}

TEST_CASE("closed sessions: with context_growth accumulate a round's prompt holds the conversation so far",
          "[cluster][workload]") {
  const auto grown = by_arrival(run_spec(session_spec(4, 1000, true), 1).cluster);
  REQUIRE(grown.size() == 4);
  // 64 new input tokens per round, after every earlier round's 64 inputs
  // and 20 outputs but the last (HEAD carries on from the ProgressIndex a
  // completed request reached: its input and all but its last output token).
  for (size_t k = 0; k < grown.size(); ++k) {
    INFO("round " << k);
    CHECK(grown[k].input_tokens == 64 + 83 * static_cast<int32_t>(k));
    CHECK(grown[k].output_tokens == 20);
  }
  const auto fresh = by_arrival(run_spec(session_spec(4, 1000, false), 1).cluster);
  REQUIRE(fresh.size() == 4);
  for (const auto& r : fresh) CHECK(r.input_tokens == 64);
}

TEST_CASE("closed sessions: no round arrives past the horizon", "[cluster][workload]") {
  // Each round ends ~1 s + its E2E after the previous: a 2.5 s horizon
  // leaves the session's first three rounds at most.
  const auto out = run_spec(session_spec(10, 1'000'000, false), 1, 2'500'000);
  CHECK(out.cluster.completed >= 2);
  CHECK(out.cluster.completed <= 3);
  for (const auto& r : out.cluster.records) CHECK(r.arrival_us <= 2'500'000);
}
