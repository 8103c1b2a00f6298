// Goodput and SLO attainment (spec head §2): per SLO class, the requests that
// met every configured target (TTFT, mean ITL, E2E) among those that arrived
// at the cluster — so rejected, dropped and unfinished requests count against
// attainment. A lifecycle subscriber that keeps nothing unless targets are set.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blis {

// One class's targets in ms; 0 = not set.
struct SloTargets {
  double ttft_ms = 0, itl_ms = 0, e2e_ms = 0;
};
// By blis_slo_class (the default class is 0).
using SloTargetMap = std::map<int32_t, SloTargets>;

struct GoodputClass {
  int64_t arrived = 0, good = 0;
  std::array<int64_t, 3> counted{}, met{};  // ttft, itl, e2e
  std::array<bool, 3> targeted{};           // the dimensions the class has a target for
  std::vector<int64_t> ttft, e2e;           // µs, completed requests
  std::vector<double> itl;                  // µs, each request's mean ITL
};

struct Goodput {
  std::map<std::string, GoodputClass> classes;  // by class name ("default" for the default class)
  SloTargetMap targets;
  bool enabled() const { return !targets.empty(); }
};

class GoodputTracker : public LifecycleSubscriber {
 public:
  // Every class with a target has an entry, requests or not (as HEAD prints).
  explicit GoodputTracker(SloTargetMap targets);

  void on_admitted(Request& r) {
    if (!on(r)) return;
    r.timing.admitted = true;
    ++cls(r).arrived;
  }
  void on_rejected(Request& r, std::string_view) {
    if (on(r)) ++cls(r).arrived;
  }
  // Stopped before its admission decision: it arrived all the same.
  void on_stopped(Request& r) {
    if (on(r) && r.state == RequestState::Pipeline && !r.timing.admitted) ++cls(r).arrived;
  }
  void on_completed(Request& r, SimTime);

  const Goodput& result() const { return result_; }

 private:
  bool on(const Request& r) const { return result_.targets.count(r.spec.slo_class) != 0; }
  GoodputClass& cls(const Request& r);

  Goodput result_;
};

// The keys goodput adds to the cluster's metrics JSON block (after its last
// key, each line starting with ",\n  "), per spec head §2.3; "" when off.
// `runtime_s` is the run's simulated duration.
std::string goodput_json(const Goodput& g, double runtime_s);
// The overall figures, for rows and searches: goodput_rps, slo_attainment.
std::pair<double, double> goodput_totals(const Goodput& g, double runtime_s);

// Parses --slo-ttft / --slo-itl / --slo-e2e ("class=duration,..."; Go
// durations such as 100ms, 1.5s, 250us) into `targets` (the field of each
// class chosen by `dim`: 0 ttft, 1 itl, 2 e2e). InputError naming `where`.
void parse_slo_flag(const std::string& text, int dim, const std::string& where, SloTargetMap& targets);

}  // namespace blis
