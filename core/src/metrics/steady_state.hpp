// Is a run in steady state? A lifecycle subscriber that keeps, in a few dozen
// time buckets (never per request), the arrivals, the completions and the
// TTFT of each arrival bucket, and judges the run when it ends
// (docs/planning.md, "The steady-state verdict"):
//
//  - saturated: over the last third of the arrival window the instances
//    started (gave a first token to) less than 90 % of what arrived in it;
//  - not steady: the TTFT of requests that arrived in the last third exceeds
//    1.25 x that of the middle third (plus 20 ms): queues still grow;
//  - too short: fewer than 100 completions, fewer than three buckets of
//    arrivals, or arrivals lasting less than three times the time a request
//    spends decoding (E2E - TTFT): the running batches were still filling
//    up, so a burst that they absorb looks steady when it is not;
//  - steady otherwise.
//
// The first third is warm-up and only serves as context. Buckets start at
// 100 ms and double (merging pairs) whenever the run outgrows 1024 of them, so
// memory is constant and a signal costs a division and an add.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/observer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace blis {

enum class Verdict { Steady, NotSteady, Saturated, TooShort };

const char* verdict_name(Verdict v);  // "steady", "not steady", "saturated", "too short"

struct SteadyState {
  Verdict verdict = Verdict::TooShort;
  double offered_rps = 0;  // admitted arrivals per second over the last third of the arrival window
  double started_rps = 0;  // first tokens per second over the same window
  double ttft_middle_ms = 0;  // mean TTFT of the middle third's arrivals
  double ttft_last_ms = 0;    // mean TTFT of the last third's arrivals
  // One sentence for a warning on stderr: what was seen and what to do; "" when steady.
  std::string advice() const;
};

// The verdict's part of the report: "steady_state" in --format json, the
// verdict line of --format table. `s` outlives it.
class SteadyStateReport : public ReportPart {
 public:
  explicit SteadyStateReport(const SteadyState& s) : s_(&s) {}
  void json_members(const ReportScope&, JsonPlace place, std::string& out) const override;
  void table_lines(const ReportScope&, TablePlace place, std::string& out) const override;

 private:
  const SteadyState* s_;
};

class SteadyStateProbe : public LifecycleSubscriber {
 public:
  // Admitted arrivals only: what admission turned away is not the instances'
  // to serve (a run that rejects is judged by its rejections, not here).
  void on_admitted(Request& r) { arrival(r.spec.arrival_us); }
  void on_first_token(Request& r, SimTime t) {
    Bucket& b = at(r.spec.arrival_us);
    b.ttft_sum += static_cast<double>(r.timing.ttft());
    ++b.ttft_count;
    ++at(t).starts;
  }
  // An abandoned request was not served: it takes back its start, so that
  // runs whose requests time out look saturated (spec head §4.1).
  void on_timed_out(Request& r, SimTime) {
    if (r.timing.ttft() >= 0) --at(r.timing.first_token_end()).starts;
  }
  void on_completed(Request& r, SimTime) {
    ++completions_;
    if (r.timing.e2e() >= 0 && r.timing.ttft() >= 0)
      decode_sum_ += static_cast<double>(r.timing.e2e() - r.timing.ttft()), ++decode_count_;
  }

  SteadyState judge() const;

 private:
  struct Bucket {
    int64_t arrivals = 0, starts = 0, ttft_count = 0;
    double ttft_sum = 0;
  };
  static constexpr size_t kMaxBuckets = 1024;

  void arrival(SimTime t) {
    ++at(t).arrivals;
    if (t > last_arrival_) last_arrival_ = t;
  }
  Bucket& at(SimTime t);

  int64_t width_ = 100'000;  // µs
  SimTime last_arrival_ = 0;
  int64_t completions_ = 0;
  double decode_sum_ = 0;  // Σ (E2E - TTFT) of completed requests, µs
  int64_t decode_count_ = 0;
  std::vector<Bucket> buckets_;
};

}  // namespace blis
