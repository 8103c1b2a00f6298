// HEAD's session metrics (--output-form head): the requests of multi-turn
// sessions and of closed-loop users — each session or user one "session" —
// split by round: TTFT of round 0 (cold) and of later rounds (warm), and per
// session the time from its round 0's arrival to its last completion. An
// observer (metrics/observer.hpp): it keeps a few numbers per session and
// per request that has a user; open-loop requests cost one branch.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/observer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace blis {

// A distribution as HEAD's session block computes it: values in ms, sorted
// ascending, summed in that order, percentiles interpolated between ranks.
struct SessionDistribution {
  double mean = 0, p50 = 0, p95 = 0, p99 = 0;
  int64_t count = 0;
};
SessionDistribution session_distribution(std::vector<double> values_ms);

// HEAD's "=== Session Metrics ===" block: `count` sessions, the TTFTs of
// rounds 0 and >= 1 and the sessions' durations, in ms.
std::string session_block(int64_t count, std::vector<double> cold_ms, std::vector<double> warm_ms,
                          std::vector<double> durations_ms);

class SessionMetrics : public LifecycleSubscriber, public ReportPart {
 public:
  SessionMetrics() = default;
  explicit SessionMetrics(const ObserverSetup&) {}

  // A request enters HEAD's per-request metrics when it is routed to an instance.
  void on_routed(Request& r, const RoutingChoice&) {
    if (r.spec.user >= 0) routed(r);
  }
  void on_completed(Request& r, SimTime t) {
    if (r.spec.user >= 0) ended(r, t, true);
  }
  void on_timed_out(Request& r, SimTime t) {
    if (r.spec.user >= 0) ended(r, t, false);
  }
  void on_dropped(Request& r, SimTime t) {
    if (r.spec.user >= 0) ended(r, t, false);
  }
  void on_failed(Request& r, SimTime t) {
    if (r.spec.user >= 0) ended(r, t, false);
  }
  void on_stopped(Request& r) {
    if (r.spec.user >= 0) ended(r, 0, false);
  }

  // HEAD's "=== Session Metrics ===" block, under --output-form head.
  void text_blocks(const ReportScope& s, std::string& out) const override;

 private:
  struct Session {
    bool seen = false;         // some request of it reached an instance
    bool has_round0 = false;
    double round0_arrival_ms = 0;
    double last_completion_ms = 0;
  };
  Session& session(const Request& r);
  void routed(const Request& r);
  void ended(const Request& r, SimTime t, bool completed);

  std::vector<Session> sessions_;  // by user number
  int64_t count_ = 0;              // sessions seen
  std::vector<double> cold_ms_, warm_ms_;  // TTFTs of rounds 0 and ≥ 1
};

}  // namespace blis
