// `blis plan` (blis/plan.hpp): bracketing then bisection over the instance
// count (or the rate), every trial a full simulation judged by its SLO
// targets and its steady-state verdict; runs too short to judge are redone
// longer. docs/planning.md explains the method.
#include <blis/errors.hpp>
#include <blis/plan.hpp>
#include <blis/run.hpp>
#include <blis/settings.hpp>

#include "plan/min_count.hpp"
#include "plan/search.hpp"
#include "plan/slo_targets.hpp"
#include "report/report.hpp"
#include "run/farm.hpp"
#include "run/resolve.hpp"
#include "run/simulate.hpp"
#include "run/workload_reuse.hpp"
#include "util/json_format.hpp"
#include "util/log_once.hpp"
#include "util/progress.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>

namespace blis {
namespace {

constexpr double kFirstDuration = 60;    // seconds of arrivals per first trial, doubled while it cannot be judged
constexpr double kLongestDuration = 960;
constexpr double kDecodesPerTrial = 3;  // a first trial lasts at least this many decode times (the "too short" rule's)
constexpr int64_t kFewestRequests = 500;
constexpr int64_t kMostRequests = 2'000'000;
// The capacity probe: requests sent to one instance at once, at this rate.
constexpr int64_t kProbeRequests = 2000;
constexpr double kProbeRate = 1e6;
// Bracket counts up to this are tried whatever the capacity bound says.
constexpr int64_t kBracketFrom = 32;
constexpr size_t kBracketBatch = 4;

// A target measured in a trial's steady state, and whether the measure can be
// trusted (metrics/steady_window.hpp).
struct TargetMeasure {
  SteadyMeasure m;
  bool converged = true;  // not drifting, and its interval narrow or clear of the limit
};

struct Trial {
  int64_t instances = 0;
  double rate = 0;
  int64_t requests = 0;
  double seconds = 0;  // of arrivals
  // The first replicate's outcome; with replicates its metrics are the means
  // over them and its verdict the worst of theirs.
  RunOutcome outcome;
  std::vector<bool> replicate_pass;  // by replicate (seed, seed+1, ...)
  std::map<std::string, double> ci;  // 95 % half-width by metric, with replicates
  std::map<std::string, TargetMeasure> measures;  // by target metric, the first replicate's
  bool pass = false;
  bool conclusive = true;  // false: to be lengthened (too short, not converged, or overloaded while filling)
  std::string verdict;     // steady, saturated, not steady, overloaded, not converged, too short
  std::string why;         // what failed, or "meets every target"
};

// The trials' verdicts from the best to the worst: with replicates a trial
// shows its worst replicate's.
int verdict_rank(const std::string& v) {
  static const char* const order[] = {"steady", "too short", "not converged", "overloaded", "not steady", "saturated"};
  for (int i = 0; i < 6; ++i)
    if (v == order[i]) return i;
  return 0;
}

// "itl_p99_ms" -> ("itl", 99); "e2e_p99.9_ms" -> ("e2e", 99.9); "ttft_mean_ms" -> ("ttft", -1); family ""
// for a metric not measured in steady state (scheduling_delay_p99_ms).
std::pair<std::string, double> family_and_stat(const std::string& metric) {
  const size_t cut = metric.find('_');
  if (cut == std::string::npos) return {"", 0};
  const std::string family = metric.substr(0, cut), stat = metric.substr(cut + 1);
  if (family != "ttft" && family != "itl" && family != "e2e" && family != "tpot") return {"", 0};
  if (stat == "mean_ms") return {family, -1};
  for (const char* p : {"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99.9_ms"})
    if (stat == p) return {family, std::stod(stat.substr(1, stat.size() - 4))};
  return {"", 0};
}

class Planner {
 private:
  // Settings of `blis run` that a plan would silently not use: refused, so
  // that a planner is never misled into thinking they shaped the answer.
  void refuse_ignored_settings(const PlanRequest& req) const {
    if (base_.origins.count("timeseries"))
      throw InputError(base_.where("timeseries"), "blis plan runs many trials and writes no time series; run "
                                                  "the configuration it answers with blis run --timeseries");
    if (base_.origins.count("num_instances") && !req.max_rate)
      throw InputError(base_.where("num_instances"), "blis plan searches the instance count itself; give "
                                                     "--max-instances for its upper bound (--num-instances goes "
                                                     "with --max-rate)");
  }

 public:
  Planner(const PlanRequest& req, Progress& progress, PdUnit unit = {})
      : req_(req), progress_(progress), unit_(unit) {
    base_ = build_config({&req.command_line});
    if (req.replicates < 1 || req.replicates > 100)
      throw InputError("--replicates", fmt::format("must be between 1 and 100, got {}", req.replicates));
    set_log_level(base_.outputs.log_level);
    if (!req.slo.empty()) targets_ = parse_slo_targets(req.slo, "--slo");
    if (req.max_instances < 1 || req.max_instances > 100000)
      throw InputError("--max-instances", fmt::format("must be between 1 and 100000, got {}", req.max_instances));
    fixed_workload_ = base_.workload.spec.has_value() || base_.workload.trace.has_value();
    if (fixed_workload_ && req.max_rate)
      throw InputError("--max-rate", "varies --rate, so it needs a distribution or preset workload, not "
                                     "--workload-spec or --workload-trace");
    refuse_ignored_settings(req);
    if (!fixed_workload_ && !req.max_rate && !base_.origins.count("rate"))
      throw InputError("--rate", "blis plan needs the traffic to plan for: give --rate (requests per second), "
                                 "or a --workload-spec / --workload-trace");
    if (!req.duration.empty()) {
      const SettingDef* horizon = find_setting("horizon");
      const int64_t us = std::get<int64_t>(parse_setting(*horizon, req.duration, "--duration"));
      // The first trial's length: a trial too short to judge is still
      // lengthened, and never counted as a miss (issue 30, finding 6).
      // Shorter than kFewestRequests arrivals it cannot be: a trial has as many.
      const double shortest =
          !fixed_workload_ && base_.workload.rate > 0 ? static_cast<double>(kFewestRequests) / base_.workload.rate : 0;
      duration_ = std::clamp(static_cast<double>(us) / 1e6, std::min(shortest, kLongestDuration), kLongestDuration);
    }
  }

  // The fewest instances meeting every target (0: none up to the bound).
  int64_t find_min_instances() {
    const int64_t least = capacity_bound();
    if (least > req_.max_instances) {
      refused_ = fmt::format("one instance completes {:.3g} requests/s when saturated, so {:g} req/s needs at least "
                             "{} instances, more than --max-instances {}",
                             saturated_rate_, base_.workload.rate, least, req_.max_instances);
      progress_.finish();
      return 0;
    }
    for (;;) {
      trials_.clear();
      int64_t lo = 0, hi = 0;  // lo fails (0: none tried), hi passes (0: none found)
      const std::vector<int64_t> counts = bracket(least, lo);
      search_bracket(counts, lo, hi);
      while (hi != 0 && hi - lo > 1) {
        // The bisection, the confirmation, the monotonicity check, and one trial
        // lengthened (a reserve, so that the estimate need not grow).
        expect(static_cast<size_t>(std::ceil(std::log2(static_cast<double>(hi - lo)))) + 3);
        const int64_t mid = lo + (hi - lo) / 2;
        const Trial* t = evaluate({{mid, base_.workload.rate}}).front();
        (t->pass ? hi : lo) = mid;
      }
      if (hi != 0 && !confirmed(hi, base_.workload.rate)) continue;
      if (hi != 0 && hi < req_.max_instances) check_monotone(hi);
      return hi;
    }
  }

 private:
  // The counts tried first: powers of two up to --max-instances, then it.
  // Counts far below the capacity bound `least` cannot sustain the rate, and
  // at high rates they are the costliest trials: the bracket starts below
  // the bound instead (counts up to kBracketFrom are always tried). `lo`
  // becomes the count below its first, taken as failing (0: none).
  std::vector<int64_t> bracket(int64_t least, int64_t& lo) const {
    std::vector<int64_t> counts;
    int64_t first = 1;
    if (least > kBracketFrom)
      while (first * 2 <= least / 2) first *= 2;
    lo = first > 1 ? first - 1 : 0;
    for (int64_t n = first; n <= req_.max_instances; n *= 2) counts.push_back(n);
    if (counts.back() != req_.max_instances) counts.push_back(req_.max_instances);
    return counts;
  }

  // Tries the bracket's counts in order until one passes (hi; lo the last
  // that failed) or the trials are too short.
  void search_bracket(const std::vector<int64_t>& counts, int64_t& lo, int64_t& hi) {
    for (size_t i = 0; i < counts.size() && hi == 0;) {
      // What is left at most: the rest of the bracket, a bisection as deep
      // as the largest gap, a confirmation and the monotonicity check. An
      // estimate that only shrinks as the search narrows (it once grew
      // batch by batch, and the time left with it); one trial lengthened.
      expect(counts.size() - i +
             static_cast<size_t>(std::ceil(std::log2(static_cast<double>(std::max<int64_t>(2, req_.max_instances))))) +
             3);
      // Four counts at a time, in order (--jobs runs them in parallel; the
      // batches do not depend on it, so neither do the rows).
      std::vector<std::pair<int64_t, double>> batch;
      for (; i < counts.size() && batch.size() < kBracketBatch; ++i) batch.emplace_back(counts[i], base_.workload.rate);
      for (const Trial* t : evaluate(batch)) {
        if (hi != 0) break;
        if (t->pass) hi = t->instances;
        else lo = t->instances;
      }
    }
  }

  // Monotonicity: one more instance than the answer `hi` must pass too.
  void check_monotone(int64_t hi) {
    const Trial* t = evaluate({{hi + 1, base_.workload.rate}}).front();
    if (!t->pass)
      progress_.finish(), spdlog::warn("{} instances meet the targets but {} do not: the answer is not monotone in the "
                                       "instance count (routing or admission effects); check the rows",
                                       hi, hi + 1);
  }

 public:
  // The answer's trial (valid when answer > 0).
  const Trial& trial(int64_t instances) const { return trials_.at({instances, base_.workload.rate}); }
  const RunConfig& base() const { return base_; }

  // The highest rate `instances` sustain within every target (0: none).
  double max_rate(std::ostream& out) {
    const int64_t n = base_.pool().instances;
    for (;;) {
      trials_.clear();
      double lo = 0, hi = 0;  // lo passes, hi fails
      for (double rate = 1; rate <= 1e6 && hi == 0; rate *= 2) {
        expect(12);
        const Trial* t = evaluate({{n, rate}}).front();
        (t->pass ? lo : hi) = rate;
      }
      while (lo > 0 && hi > 0 && (hi - lo) / lo > 0.01) {
        expect(static_cast<size_t>(std::ceil(std::log2((hi - lo) / lo / 0.01))) + 1);
        const double mid = std::round((lo + hi) / 2 * 100) / 100;
        if (mid <= lo || mid >= hi) break;
        const Trial* t = evaluate({{n, mid}}).front();
        (t->pass ? lo : hi) = mid;
      }
      if (lo > 0 && !confirmed(n, lo)) continue;
      progress_.finish();
      rate_answer_ = lo;
      print_rate(out, n, lo);
      return lo;
    }
  }

 private:
  // A lower bound on the instances the plan's rate needs (0: none applies,
  // with a spec or trace, pools or P/D): one instance, sent kProbeRequests
  // requests at once, completes saturated_rate_ requests per second at most,
  // so fewer than rate / (1.25 x that) instances cannot sustain the rate.
  int64_t capacity_bound() {
    if (fixed_workload_ || !base_.pool_specs.empty() || base_.pd.configured()) return 0;
    RunOutcome done;
    const FarmFailure failure = simulation_farm().run({capacity_probe()}, 1, [&](size_t, RunOutcome& outcome, double) {
      done = std::move(outcome);
    });
    if (failure) std::rethrow_exception(failure->second);
    saturated_rate_ = metric_value(done.metrics, "responses_per_sec");
    size_first_trial((metric_value(done.metrics, "e2e_mean_ms") - metric_value(done.metrics, "ttft_mean_ms")) / 1e3);
    if (!(saturated_rate_ > 0)) return 0;
    const double least = std::floor(base_.workload.rate / (1.25 * saturated_rate_));
    return static_cast<int64_t>(std::min(least, 1e15));
  }

 public:
  // capacity_bound()'s probe: one instance (or P/D unit), kProbeRequests
  // requests per instance at once.
  RunConfig capacity_probe() const {
    RunConfig probe = trial_config(1, kProbeRate, 0);
    probe.outputs.keep_timed_samples = false;
    probe.workload.num_requests = kProbeRequests * unit_.instances();
    return probe;
  }
  std::string answer_configuration(int64_t instances) const { return configuration(instances, base_.workload.rate); }

 private:
  // The first trial's length from the workload's own time scale: the running
  // batches fill for about as long as a request decodes, and a run with
  // arrivals shorter than three decode times is "too short" to judge; so a
  // first trial holds at least kDecodesPerTrial decode times (the probe's, at
  // a full batch: the longest). Kept on the doubling ladder from
  // kFirstDuration; --duration wins.
  void size_first_trial(double decode_s) {
    if (!req_.duration.empty() || !(decode_s > 0)) return;
    decode_s_ = decode_s;
    while (duration_ < kDecodesPerTrial * decode_s && duration_ * 2 <= kLongestDuration) duration_ *= 2;
  }

  // The answer must hold in a run twice as long as its trial: a slow drift
  // can pass for a steady state in a short one. If it does not, the search
  // starts again with first trials that long (true: confirmed, or its trial
  // is as long as trials get).
  bool confirmed(int64_t instances, double rate) {
    const double seconds = trials_.at({instances, rate}).seconds * 2;
    confirmation_.reset();
    if (fixed_workload_ || seconds > kLongestDuration || requests_for(rate, seconds) == requests_for(rate, seconds / 2))
      return true;
    expect(2);  // the confirmation, then the monotonicity check
    confirmation_ = std::move(settle({{instances, rate}}, {seconds}).front());
    const Trial& confirm = *confirmation_;
    if (confirm.pass) return true;
    duration_ = seconds;
    progress_.note(fmt::format("the answer misses the targets in a run of {:g} s of arrivals ({}); searching again "
                               "with first trials that long",
                               seconds, confirm.why));
    return false;
  }

  int64_t requests_for(double rate, double seconds) const {
    const double r = std::ceil(rate * seconds);
    return std::clamp<int64_t>(static_cast<int64_t>(std::min(r, 1e15)), kFewestRequests, kMostRequests);
  }

  // Simulates (instances, rate) pairs not tried yet, --jobs at a time; the
  // trials in the order asked.
  std::vector<const Trial*> evaluate(const std::vector<std::pair<int64_t, double>>& points) {
    std::vector<std::pair<int64_t, double>> todo;
    for (const auto& p : points)
      if (!trials_.count(p)) todo.push_back(p);
    std::vector<Trial> done = settle(todo, std::vector<double>(todo.size(), duration_));
    for (size_t i = 0; i < todo.size(); ++i) trials_[todo[i]] = std::move(done[i]);
    std::vector<const Trial*> out;
    out.reserve(points.size());
    for (const auto& p : points) out.push_back(&trials_.at(p));
    return out;
  }

  // Simulates `points`, `seconds` of arrivals each, and doubles the length of
  // each trial that cannot be judged yet until it can or reaches
  // kLongestDuration.
  std::vector<Trial> settle(const std::vector<std::pair<int64_t, double>>& todo, const std::vector<double>& first) {
    std::vector<Trial> done = run_points(todo, first);
    for (;;) {
      std::vector<size_t> again;
      std::vector<std::pair<int64_t, double>> longer;
      std::vector<double> seconds;
      for (size_t i = 0; i < done.size(); ++i)
        if (!done[i].conclusive) again.push_back(i), longer.push_back(todo[i]), seconds.push_back(done[i].seconds * 2);
      if (again.empty()) break;
      std::vector<Trial> redone = run_points(longer, seconds);
      for (size_t j = 0; j < again.size(); ++j) done[again[j]] = std::move(redone[j]);
    }
    return done;
  }

  // Simulates each point once per replicate (--jobs at a time), judges them.
  // `seconds` of arrivals each.
  std::vector<Trial> run_points(const std::vector<std::pair<int64_t, double>>& points, const std::vector<double>& seconds) {
    const size_t k = static_cast<size_t>(req_.replicates);
    std::vector<RunConfig> configs;
    configs.reserve(points.size() * k);
    for (size_t p = 0; p < points.size(); ++p)
      for (size_t r = 0; r < k; ++r) configs.push_back(trial_config(points[p].first, points[p].second, seconds[p], r));
    std::vector<RunOutcome> outcomes(configs.size());
    std::vector<std::map<std::string, SteadyMeasure>> measures(configs.size());
    const FarmFailure failure = simulation_farm().run(configs, req_.jobs, [&](size_t i, RunOutcome& outcome, double) {
      const auto& [n, rate] = points[i / k];
      progress_.tick(fmt::format("{} instance(s) at {:g} req/s{}: {}", n, rate,
                                 k > 1 ? fmt::format(", seed {}", seed_of(i % k)) : "",
                                 verdict_name(outcome.steady.verdict)));
      measures[i] = measure(outcome);
      outcomes[i] = std::move(outcome);
    });
    if (failure) std::rethrow_exception(failure->second);
    std::vector<Trial> done;
    for (size_t p = 0; p < points.size(); ++p) {
      std::vector<RunOutcome> reps(std::make_move_iterator(outcomes.begin() + static_cast<std::ptrdiff_t>(p * k)),
                                   std::make_move_iterator(outcomes.begin() + static_cast<std::ptrdiff_t>(p * k + k)));
      std::vector<std::map<std::string, SteadyMeasure>> rep_measures(
          std::make_move_iterator(measures.begin() + static_cast<std::ptrdiff_t>(p * k)),
          std::make_move_iterator(measures.begin() + static_cast<std::ptrdiff_t>(p * k + k)));
      done.push_back(combine(points[p], seconds[p], std::move(reps), rep_measures));
      report(done.back());
    }
    return done;
  }

  // The table's latency columns and the targets measured in the run's steady
  // state (metrics/steady_window.hpp); the figures of the outcome become
  // those, and its samples are dropped.
  std::map<std::string, SteadyMeasure> measure(RunOutcome& outcome) const {
    std::map<std::string, SteadyMeasure> out;
    if (outcome.timed.empty()) return out;
    for (const std::string& metric : columns()) {
      const auto [family, stat] = family_and_stat(metric);
      if (family.empty()) continue;
      const SteadyMeasure m = measure_steady(outcome.timed, family, stat);
      if (!m.measured) continue;
      out[metric] = m;
      // Targets the metrics block has no key for (tpot_*, *_p50, *_p99.9)
      // are added to it, so that they are judged and shown as the others.
      auto field = std::find_if(outcome.metrics.begin(), outcome.metrics.end(),
                                [&](const MetricField& f) { return f.name == metric; });
      if (field == outcome.metrics.end()) field = outcome.metrics.insert(field, MetricField{metric, 0, false});
      field->value = m.value_ms;
    }
    outcome.timed = {};
    return out;
  }

  int64_t seed_of(size_t replicate) const { return base_.seed.value_or(42) + static_cast<int64_t>(replicate); }

  // The replicates of one point as one trial: it meets the targets when every
  // replicate does; metrics are their means, with a t-interval.
  Trial combine(std::pair<int64_t, double> point, double seconds, std::vector<RunOutcome> reps,
                const std::vector<std::map<std::string, SteadyMeasure>>& measures) const {
    std::vector<Trial> judged;
    judged.reserve(reps.size());
    for (size_t r = 0; r < reps.size(); ++r) judged.push_back(judge(point, seconds, std::move(reps[r]), measures[r]));
    if (judged.size() == 1) {
      judged[0].replicate_pass = {judged[0].pass};
      return std::move(judged[0]);
    }
    // The replicates' metrics, before the first trial becomes the result.
    std::vector<std::vector<MetricField>> metrics;
    metrics.reserve(judged.size());
    for (const Trial& j : judged) metrics.push_back(j.outcome.metrics);
    Trial t = std::move(judged[0]);
    const double k = static_cast<double>(judged.size());
    std::vector<std::string> failing;
    bool conclusive = true;
    t.replicate_pass = {t.pass};
    if (!t.pass) failing.push_back(fmt::format("seed {}: {}", seed_of(0), t.why));  // the first: its reasons are shown
    conclusive = conclusive && t.conclusive;
    for (size_t r = 1; r < judged.size(); ++r) {
      const Trial& j = judged[r];
      t.replicate_pass.push_back(j.pass);
      if (!j.pass) failing.push_back(fmt::format("seed {}: {}", seed_of(r), j.why));
      if (verdict_rank(j.verdict) > verdict_rank(t.verdict)) t.verdict = j.verdict;
      if (j.outcome.saturation.saturated()) t.outcome.saturation = j.outcome.saturation;
      conclusive = conclusive && j.conclusive;
    }
    // Means and 95 % t-intervals over the replicates, metric by metric.
    for (size_t f = 0; f < t.outcome.metrics.size(); ++f) {
      double sum = 0, sq = 0;
      for (const auto& m : metrics) sum += f < m.size() ? m[f].value : 0;
      const double mean = sum / k;
      for (const auto& m : metrics) {
        const double d = (f < m.size() ? m[f].value : 0) - mean;
        sq += d * d;
      }
      t.outcome.metrics[f].value = mean;
      t.ci[t.outcome.metrics[f].name] = student_t975(static_cast<int64_t>(k) - 1) * std::sqrt(sq / (k - 1)) / std::sqrt(k);
    }
    t.pass = failing.empty();
    t.conclusive = conclusive || std::any_of(judged.begin(), judged.end(), [](const Trial& j) { return j.conclusive && !j.pass; });
    // One cell of the table: how many seeds miss, and the first one's reasons
    // (all of them made the cell hundreds of characters wide).
    t.why = t.pass           ? "meets every target"
            : !t.conclusive ? fmt::format("not judged yet after {:g} s of arrivals", seconds)
                            : fmt::format("{} of {} seeds miss; {}{}", failing.size(), judged.size(), failing.front(),
                                          failing.size() > 1 ? ", ..." : "");
    return t;
  }

  RunConfig trial_config(int64_t instances, double rate, double seconds, size_t replicate = 0) const {
    RunConfig c = base_;
    set_count(c, instances, unit_);
    if (replicate > 0) c.seed = seed_of(replicate);
    c.outputs.results_path.reset();
    c.outputs.report.reset();
    c.outputs.detectors.reset();
    c.outputs.keep_distributions = !req_.report.empty();
    c.outputs.profile = false;
    c.outputs.warn_unsteady = false;
    c.outputs.quiet = true;
    c.outputs.report_text = false;  // a trial is judged from its metrics
    c.outputs.keep_timed_samples = true;
    if (!fixed_workload_) {
      c.workload.rate = rate;
      c.workload.num_requests = requests_for(rate, seconds);
    }
    return c;
  }

  // Can a target's steady-state measure be trusted: it does not drift, and
  // its 95 % interval either clears the limit or is within 5 % of it.
  static bool converged(const SteadyMeasure& m, double limit_ms) {
    if (!m.measured) return true;  // no samples: the whole run's figure
    if (m.drifting) return false;
    return std::abs(m.value_ms - limit_ms) > m.half_width_ms || m.half_width_ms <= 0.05 * limit_ms;
  }

  // Would a trial twice as long have more arrivals?
  bool can_lengthen(double rate, double seconds) const {
    return !fixed_workload_ && seconds * 2 <= kLongestDuration &&
           requests_for(rate, seconds * 2) > requests_for(rate, seconds);
  }

  // With --flow-control, a request the gateway lost missed its SLO (issue
  // 26, item 5): refused by its full queue, shed, expired, evicted in flight.
  static void gateway_misses(const RunOutcome::GatewayLost& g, std::vector<std::string>& misses) {
    if (g.rejected > 0) misses.push_back(fmt::format("{} refused by the gateway queue", g.rejected));
    if (g.shed > 0) misses.push_back(fmt::format("{} shed at the gateway", g.shed));
    if (g.expired > 0) misses.push_back(fmt::format("{} expired at the gateway (--request-ttl)", g.expired));
    if (g.evicted > 0) misses.push_back(fmt::format("{} evicted in flight", g.evicted));
  }

  // The targets of a trial: misses that stand whatever the length, and what
  // a longer run must settle (a target still drifting or too close to call).
  void judge_targets(Trial& t, const std::map<std::string, SteadyMeasure>& measures, bool unsteady,
                     std::vector<std::string>& misses, std::vector<std::string>& open) const {
    const auto& m = t.outcome.metrics;
    for (const SloTarget& target : targets_) {
      TargetMeasure tm;
      if (auto it = measures.find(target.metric); it != measures.end()) tm.m = it->second;
      tm.converged = converged(tm.m, target.limit_ms);
      t.measures[target.metric] = tm;
      const std::string name = target.metric.substr(0, target.metric.size() - 3);
      const double value = metric_value(m, target.metric);
      // A miss that still rises only gets worse: it stands.
      if (!met(target, m) && (tm.converged || tm.m.rising))
        misses.push_back(fmt::format("{} {:.1f} ms{}", name, value, tm.converged || unsteady ? "" : " and rising"));
      else if (tm.m.drifting)
        open.push_back(fmt::format("{} {:.1f} ms still drifting", name, value));
      else if (!tm.converged)
        open.push_back(fmt::format("{} {:.1f} ± {:.1f} ms, too close to the limit", name, value, tm.m.half_width_ms));
    }
  }

  // A trial's verdict, and whether it meets the targets. Rejections, drops,
  // saturation and a converged miss fail it whatever its length; a trial too
  // short, not converged, not steady or overloaded by backlog-drift (which a
  // filling batch can fake in a short run) is lengthened, and fails only when it
  // cannot grow longer.
  Trial judge(std::pair<int64_t, double> point, double seconds, RunOutcome outcome,
              const std::map<std::string, SteadyMeasure>& measures) const {
    Trial t;
    t.instances = point.first;
    t.rate = point.second;
    t.seconds = seconds;
    t.requests = fixed_workload_ ? 0 : requests_for(t.rate, seconds);
    t.outcome = std::move(outcome);
    const auto& m = t.outcome.metrics;
    if (fixed_workload_) t.requests = static_cast<int64_t>(metric_value(m, "injected_requests"));
    std::vector<std::string> misses, open;
    const double rejected = metric_value(m, "rejected_requests");
    const double dropped = metric_value(m, "dropped_unservable");
    const double completed = metric_value(m, "completed_requests");
    if (rejected > 0) misses.push_back(fmt::format("{:g} rejected", rejected));
    if (dropped > 0) misses.push_back(fmt::format("{:g} dropped", dropped));
    if (!(completed > 0)) misses.push_back("nothing completed");
    gateway_misses(t.outcome.gateway_lost, misses);
    const Verdict v = t.outcome.steady.verdict;
    const bool unsteady = v == Verdict::Saturated || v == Verdict::NotSteady;
    const bool drift = !unsteady && t.outcome.saturation.saturated();
    // Saturated (fewer starts than arrivals) stands; a TTFT still rising at
    // the end of the arrivals can be the batch filling, so that trial is
    // lengthened like a drifting target (issue 29: a 60 s trial of 3
    // instances called "not steady" whose long runs are steady and miss).
    if (v == Verdict::Saturated) misses.push_back(verdict_name(v));
    judge_targets(t, measures, unsteady, misses, open);
    if (v == Verdict::NotSteady) open.insert(open.begin(), verdict_name(v));
    if (drift) open.insert(open.begin(), "overloaded (" + overloaded(t.outcome.saturation) + ")");
    if (v == Verdict::TooShort) open.insert(open.begin(), "too short");
    const bool wandering =
        std::any_of(t.measures.begin(), t.measures.end(), [](const auto& kv) { return !kv.second.converged; });
    t.verdict = unsteady ? verdict_name(v) : drift ? "overloaded" : wandering ? "not converged"
                                                 : v == Verdict::TooShort ? "too short" : "steady";
    t.pass = misses.empty() && open.empty();
    t.conclusive = !misses.empty() || open.empty() || !can_lengthen(t.rate, seconds);
    if (t.pass) t.why = "meets every target";
    else if (!misses.empty()) t.why = text_join(misses) + (open.empty() ? "" : "; " + text_join(open));
    else t.why = fmt::format("{} after {:g} s of arrivals", text_join(open), seconds);
    return t;
  }

  // The detectors that call the run overloaded (metrics/saturation.hpp).
  static std::string overloaded(const SaturationVerdict& s) {
    std::string out;
    for (const char* name : {"backlog-drift"})
      if (auto it = s.labels.find(name); it != s.labels.end() && it->second == SaturationLevel::Overloaded)
        text::append(out, ", ", std::string(name));
    return out;
  }

  static std::string text_join(const std::vector<std::string>& parts, const char* sep = ", ") {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
    return out;
  }

  void report(const Trial& t) const {
    const std::string load = fixed_workload_ ? "" : fmt::format(" at {:g} req/s", t.rate);
    progress_.line(fmt::format("{} instance(s){}, {} requests: {}", t.instances, load, t.requests,
                               t.pass ? "meets every target" : t.why));
  }

  // Work left, in simulations: `trials` more trials than done so far.
  void expect(size_t trials) const {
    progress_.expect(progress_.done() + trials * static_cast<size_t>(req_.replicates));
  }

  std::string targets_text() const {
    std::vector<std::string> texts;
    for (const auto& t : targets_) texts.push_back(t.text);
    return texts.empty() ? "steady state, no rejections" : text_join(texts);
  }

  // A metric of a trial: "66.08", or with replicates "66.08 ± 3.21".
  std::string cell(const Trial& t, const std::string& metric) const {
    const double v = metric_value(t.outcome.metrics, metric);
    if (req_.replicates == 1) return fmt::format("  {:>14.2f}", v);
    const auto ci = t.ci.find(metric);
    return fmt::format("  {:>22}", fmt::format("{:.2f} ± {:.2f}", v, ci == t.ci.end() ? 0.0 : ci->second));
  }
  std::string head(const std::string& name) const {
    return req_.replicates == 1 ? fmt::format("  {:>14}", name) : fmt::format("  {:>22}", name);
  }

  // Each replicate's own answer: the fewest instances tried at which it meets
  // the targets above the largest count tried where it fails ("<= n" when the
  // count just above that was not tried).
  std::string replicate_answers(int64_t answer) const {
    std::vector<std::string> out;
    for (size_t r = 0; r < static_cast<size_t>(req_.replicates); ++r) {
      int64_t fail = 0, pass = answer;
      for (const auto& [key, t] : trials_)
        if (t.instances < answer && r < t.replicate_pass.size() && !t.replicate_pass[r]) fail = std::max(fail, t.instances);
      for (const auto& [key, t] : trials_)
        if (t.instances > fail && t.instances < pass && r < t.replicate_pass.size() && t.replicate_pass[r])
          pass = t.instances;
      out.push_back(fmt::format("seed {}: {}{}", seed_of(r), pass == fail + 1 ? "" : "<= ", pass));
    }
    return text_join(out);
  }

  std::vector<std::string> columns() const {
    std::vector<std::string> cols{"ttft_p99_ms", "itl_p99_ms", "e2e_p99_ms"};
    for (const auto& t : targets_)
      if (std::find(cols.begin(), cols.end(), t.metric) == cols.end()) cols.push_back(t.metric);
    return cols;
  }

 public:
  void print(std::ostream& out, int64_t answer) const {
    const auto cols = columns();
    const std::string model = base_.pool().model.name.value_or("");
    if (req_.format == "json") return print_json(out, answer, cols);
    out << fmt::format("blis plan: {} {}; targets: {}\n", model, load_text(), targets_text());
    out << setup_line(configuration(answer > 0 ? answer : base_.pool().instances, base_.workload.rate));
    out << trial_rule() << "\n\n";
    if (req_.replicates > 1)
      out << fmt::format("{} replicates per trial (seeds {} to {}); figures are means with 95 % t-intervals\n\n",
                         req_.replicates, seed_of(0), seed_of(static_cast<size_t>(req_.replicates) - 1));
    out << fmt::format("{:>9}  {:>9}  {:<13}", "instances", "arrivals", "verdict");
    for (const auto& c : cols) out << head(c);
    out << fmt::format("  {:>10}  {}\n", "served/s", "meets");
    for (const auto& [key, t] : trials_) {
      out << fmt::format("{:>9}  {:>8g}s  {:<13}", t.instances, t.seconds, t.verdict);
      for (const auto& c : cols) out << cell(t, c);
      out << fmt::format("  {:>10.2f}  {}\n", t.outcome.steady.started_rps, t.pass ? "yes" : "no: " + t.why);
    }
    out << "\n";
    if (answer > 0) return print_answer(out, answer);
    if (!refused_.empty()) {
      out << fmt::format("minimum instances: none up to {} — {}\n", req_.max_instances, refused_);
      return;
    }
    out << fmt::format("minimum instances: none up to {} — the targets are not met by any count tried", req_.max_instances);
    // The best each target reached, to say how far it is.
    for (const auto& target : targets_) {
      double best = INFINITY;
      for (const auto& [key, t] : trials_) best = std::min(best, metric_value(t.outcome.metrics, target.metric));
      out << fmt::format("; best {} {:.1f} ms (target {:g} ms)", target.metric, best, target.limit_ms);
    }
    out << "\n";
  }

 private:
  // How trials are run and judged: the header of the table.
  std::string trial_rule() const {
    if (fixed_workload_)
      return "each trial: the workload as given; the targets judged in its steady state (warm-up and drain cut)";
    const std::string sized =
        duration_ > kFirstDuration && req_.duration.empty()
            ? fmt::format(" ({:g} times a request's {:.1f} s of decoding at a full batch)", kDecodesPerTrial, decode_s_)
            : "";
    return fmt::format("first trials: {:g} s of arrivals{}, each doubled (to {:g} s at most) until its targets can "
                       "be judged in steady state",
                       duration_, sized, kLongestDuration);
  }

  // "key = value" of a configuration's TOML: the value as written (strings
  // quoted), "null" when absent.
  static std::string toml_value(const std::string& config, const std::string& key) {
    const std::string head = "\n" + key + " = ";
    const size_t at = config.find(head);
    if (at == std::string::npos) return "null";
    const size_t from = at + head.size();
    const std::string v = config.substr(from, config.find('\n', from) - from);
    return v.empty() ? "null" : v;
  }

  // The load of the question: a rate, or a workload spec or trace with its own arrivals.
  std::string load_text() const {
    if (base_.workload.spec) return "on the workload spec " + *base_.workload.spec;
    if (base_.workload.trace) return "on the trace " + *base_.workload.trace;
    return fmt::format("at {:g} req/s", base_.workload.rate);
  }

  // The table's line of what shaped the answer besides the question.
  std::string setup_line(const std::string& config) const {
    if (config.empty()) return "";
    auto bare = [&](const char* key) {
      std::string v = toml_value(config, key);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    };
    const std::string arrivals = bare("arrival_process");
    // A spec or trace brings its own lengths and arrivals.
    const std::string workload = fixed_workload_ ? "its own workload and arrivals"
                                                 : fmt::format("{} workload, {} arrivals", bare("workload"),
                                                               arrivals == "null" ? "constant" : arrivals);
    return fmt::format("setup: {} TP {}, {} latency, {}, {} routing, batches of {} requests / {} "
                       "tokens, {} KV blocks; seed {}; blis {}\n",
                       bare("hardware"), bare("tp"), bare("latency_model"), workload, bare("routing_policy"),
                       bare("max_num_running_reqs"),
                       bare("max_num_scheduled_tokens"), bare("total_kv_blocks"), seed_of(0), BLIS_VERSION);
  }

  // The resolved configuration of `instances` at `rate` (defaults and data
  // tables applied) as the TOML `blis run` reads: what the answer is an
  // answer for. "" for a scenario with Lua callbacks, which a TOML cannot hold.
  std::string configuration(int64_t instances, double rate) const {
    if (base_.event_script) return "";
    RunConfig c = trial_config(instances, rate, duration_);
    c.outputs.keep_timed_samples = false;
    c.outputs.keep_distributions = false;
    c.outputs.warn_unsteady = true;
    c.outputs.quiet = false;
    return dump_config(c);
  }

  // The question with every setting that shaped its answer (issue 29): the
  // resolved model, GPU, TP, latency model, workload, arrivals, routing,
  // seeds, the trial rule and the blis version; `config` is configuration().
  std::string question_json(const std::string& config) const {
    auto value = [&](const char* key) { return toml_value(config, key); };
    const std::string arrivals = value("arrival_process");
    std::string out = fmt::format("{{\"model\": {}", go_string(base_.pool().model.name.value_or("")));
    if (!req_.max_rate) out += fmt::format(", \"rate\": {}", go_float(base_.workload.rate));
    else out += fmt::format(", \"instances\": {}", base_.pool().instances);
    out += fmt::format(", \"targets\": {}", go_string(targets_text()));
    for (const char* key : {"hardware", "tp", "latency_model", "workload"}) out += fmt::format(", \"{}\": {}", key, value(key));
    out += fmt::format(", \"arrival_process\": {}", arrivals == "null" ? "\"constant\"" : arrivals);
    for (const char* key : {"routing_policy", "max_num_running_reqs", "max_num_scheduled_tokens", "total_kv_blocks"})
      out += fmt::format(", \"{}\": {}", key, value(key));
    out += fmt::format(", \"seeds\": [{}]", [&] {
      std::string seeds;
      for (size_t r = 0; r < static_cast<size_t>(req_.replicates); ++r) seeds += (r ? ", " : "") + std::to_string(seed_of(r));
      return seeds;
    }());
    out += fmt::format(", \"trials\": {}, \"blis_version\": {}}}", go_string(trial_rule()), go_string(BLIS_VERSION));
    return out;
  }

  // One trial's verdict in JSON: its length, verdict, reason and how each
  // target was measured.
  std::string trial_json(const Trial& t) const {
    std::string out = fmt::format(", \"seconds_of_arrivals\": {}, \"verdict\": {}, \"why\": {}", go_float(t.seconds),
                                  go_string(t.verdict), go_string(t.why));
    if (t.measures.empty()) return out;
    out += ", \"steady_state\": {";
    bool first = true;
    for (const auto& [metric, tm] : t.measures) {
      out += fmt::format("{}{}: {{\"warm_up_s\": {}, \"window_s\": {}, \"ci95_ms\": {}, \"converged\": {}}}",
                         first ? "" : ", ", go_string(metric), go_float(tm.m.warm_up_s), go_float(tm.m.window_s),
                         go_float(tm.m.half_width_ms), tm.converged ? "true" : "false");
      first = false;
    }
    return out + "}";
  }

  // print() under --format json.
  void print_json(std::ostream& out, int64_t answer, const std::vector<std::string>& cols) const {
    const std::string config = configuration(answer > 0 ? answer : base_.pool().instances, base_.workload.rate);
    out << "{\n  \"question\": " << question_json(config) << ",\n";
    out << "  \"seconds_of_arrivals\": " << go_float(duration_) << ",\n  \"trials\": [";
    bool first = true;
    for (const auto& [key, t] : trials_) {
      out << (first ? "\n" : ",\n") << "    {\"instances\": " << t.instances << ", \"requests\": " << t.requests
          << trial_json(t);
      for (const auto& c : cols) out << ", " << go_string(c) << ": " << go_float(metric_value(t.outcome.metrics, c));
      out << ", \"served_rps\": " << go_float(t.outcome.steady.started_rps)
          << ", \"responses_per_sec\": " << go_float(metric_value(t.outcome.metrics, "responses_per_sec"))
          << ", \"meets\": " << (t.pass ? "true" : "false");
      if (req_.replicates > 1) out << ci_json(t, cols);
      out << "}";
      first = false;
    }
    out << "\n  ],\n  \"minimum_instances\": " << (answer > 0 ? std::to_string(answer) : "null");
    if (req_.replicates > 1 && answer > 0) out << ",\n  \"replicate_answers\": " << go_string(replicate_answers(answer));
    // The answer as a configuration `blis run` reproduces (the count tried
    // last without an answer).
    out << ",\n  \"configuration\": " << go_string(config);
    if (answer > 0)
      out << ",\n  \"run_length_check\": " << run_length_json(trials_.at({answer, base_.workload.rate}));
    out << "\n}\n";
  }

  // print()'s last line when `answer` instances meet the targets: the evidence.
  void print_answer(std::ostream& out, int64_t answer) const {
    const Trial& t = trials_.at({answer, base_.workload.rate});
    const int64_t tp = std::max<int64_t>(1, base_.pool().model.tp.value_or(1));
    std::vector<std::string> evidence;
    for (const auto& target : targets_) {
      const auto ci = t.ci.find(target.metric);
      evidence.push_back(fmt::format("{} = {:.1f}{} ms", target.metric, metric_value(t.outcome.metrics, target.metric),
                                     ci == t.ci.end() ? "" : fmt::format(" ± {:.1f}", ci->second)));
    }
    evidence.push_back(req_.replicates > 1 ? fmt::format("steady in all {} replicates", req_.replicates) : "steady");
    if (base_.pool().model.tp) evidence.insert(evidence.begin(), fmt::format("{} GPUs at TP {}", answer * tp, tp));
    out << fmt::format("minimum instances: {} ({})\n", answer, text_join(evidence));
    if (req_.replicates > 1) out << fmt::format("replicates' own answers: {}\n", replicate_answers(answer));
    if (req_.replicates > 1) out << run_length_line(t) << "\n";
  }

  // The interval of a target's figure once run length is counted (with
  // replicates): the replicates' t-interval covers seed noise, not the bias
  // of a run still inside its warm-up. The answer's confirmation, twice as
  // long, measures that bias: a figure converging as 1/length moves from the
  // run twice as long to the limit by as much as it moved from the trial to
  // it. So the interval is centred on the longer run, and its half-width is
  // the longer run's t-interval plus the change between the two.
  struct RunLengthInterval {
    double value = 0, half_width = 0;
  };
  RunLengthInterval run_length_interval(const Trial& t, const std::string& metric) const {
    const Trial& c = *confirmation_;
    const auto ci = c.ci.find(metric);
    const double longer = metric_value(c.outcome.metrics, metric);
    return {longer, (ci == c.ci.end() ? 0.0 : ci->second) +
                        std::abs(longer - metric_value(t.outcome.metrics, metric))};
  }

  // The answer's run-length check as one line of the table (and the report).
  std::string run_length_line(const Trial& t) const {
    if (!confirmation_)
      return fmt::format("run-length check: none — {}",
                         fixed_workload_ ? "the workload is as given" : "the trial is as long as trials get");
    std::vector<std::string> parts;
    for (const auto& target : targets_) {
      const RunLengthInterval i = run_length_interval(t, target.metric);
      const auto ci = confirmation_->ci.find(target.metric);
      parts.push_back(fmt::format("{} = {:.1f}{} ms, so {:.1f} ± {:.1f} ms with the change from {:g} s",
                                  target.metric, i.value,
                                  ci == confirmation_->ci.end() ? "" : fmt::format(" ± {:.1f}", ci->second),
                                  i.value, i.half_width, t.seconds));
    }
    return fmt::format("run-length check: in {:g} s of arrivals {}", confirmation_->seconds,
                       parts.empty() ? std::string(confirmation_->pass ? "steady" : confirmation_->verdict)
                                     : text_join(parts));
  }

  // The run-length check in JSON (null when none ran).
  std::string run_length_json(const Trial& t) const {
    if (!confirmation_) return "null";
    std::string out = fmt::format("{{\"seconds_of_arrivals\": {}, \"verdict\": {}, \"meets\": {}",
                                  go_float(confirmation_->seconds), go_string(confirmation_->verdict),
                                  confirmation_->pass ? "true" : "false");
    for (const auto& target : targets_)
      out += fmt::format(", {}: {}", go_string(target.metric),
                         go_float(metric_value(confirmation_->outcome.metrics, target.metric)));
    if (req_.replicates > 1) {
      out += ", \"ci95\": {";
      for (size_t i = 0; i < targets_.size(); ++i) {
        const auto ci = confirmation_->ci.find(targets_[i].metric);
        out += (i ? ", " : "") + go_string(targets_[i].metric) + ": " +
               go_float(ci == confirmation_->ci.end() ? 0.0 : ci->second);
      }
      out += "}, \"ci95_with_run_length\": {";
      for (size_t i = 0; i < targets_.size(); ++i)
        out += (i ? ", " : "") + go_string(targets_[i].metric) + ": " +
               go_float(run_length_interval(t, targets_[i].metric).half_width);
      out += "}";
    }
    return out + "}";
  }

  void print_rate(std::ostream& out, int64_t n, double rate) const {
    const auto cols = columns();
    const std::string model = base_.pool().model.name.value_or("");
    if (req_.format == "json") {
      const std::string config = configuration(n, rate > 0 ? rate : 1);
      out << "{\n  \"question\": " << question_json(config) << ",\n  \"seconds_of_arrivals\": " << go_float(duration_)
          << ",\n  \"trials\": [";
      bool first = true;
      for (const auto& [key, t] : trials_) {
        out << (first ? "\n" : ",\n") << "    {\"rate\": " << go_float(t.rate) << ", \"requests\": " << t.requests
            << trial_json(t);
        for (const auto& c : cols) out << ", " << go_string(c) << ": " << go_float(metric_value(t.outcome.metrics, c));
        out << ", \"meets\": " << (t.pass ? "true" : "false");
        if (req_.replicates > 1) out << ci_json(t, cols);
        out << "}";
        first = false;
      }
      out << "\n  ],\n  \"max_rate\": " << (rate > 0 ? go_float(rate) : "null")
          << ",\n  \"configuration\": " << go_string(config);
      if (rate > 0) out << ",\n  \"run_length_check\": " << run_length_json(trials_.at({n, rate}));
      out << "\n}\n";
      return;
    }
    out << fmt::format("blis plan: the highest rate {} instance(s) of {} sustain; targets: {}\n", n, model,
                       targets_text());
    out << setup_line(configuration(n, rate > 0 ? rate : 1));
    out << trial_rule() << "\n\n";
    out << fmt::format("{:>10}  {:>9}  {:<13}", "req/s", "arrivals", "verdict");
    for (const auto& c : cols) out << head(c);
    out << "  meets\n";
    std::vector<const Trial*> by_rate;
    for (const auto& [key, t] : trials_) by_rate.push_back(&t);
    std::sort(by_rate.begin(), by_rate.end(), [](const Trial* a, const Trial* b) { return a->rate < b->rate; });
    for (const Trial* t : by_rate) {
      out << fmt::format("{:>10g}  {:>8g}s  {:<13}", t->rate, t->seconds, t->verdict);
      for (const auto& c : cols) out << cell(*t, c);
      out << "  " << (t->pass ? "yes" : "no: " + t->why) << "\n";
    }
    out << "\n";
    if (rate > 0) out << fmt::format("max rate: {:g} req/s on {} instance(s)\n", rate, n);
    else out << "max rate: none — even 1 req/s misses the targets\n";
    if (rate > 0 && req_.replicates > 1) out << run_length_line(trials_.at({n, rate})) << "\n";
  }

  std::string ci_json(const Trial& t, const std::vector<std::string>& cols) const {
    std::string out = fmt::format(", \"replicates\": {}, \"ci95\": {{", req_.replicates);
    for (size_t i = 0; i < cols.size(); ++i) {
      const auto ci = t.ci.find(cols[i]);
      out += (i ? ", " : "") + go_string(cols[i]) + ": " + go_float(ci == t.ci.end() ? 0.0 : ci->second);
    }
    return out + "}";
  }

 public:
  // The report's data: the trials, the targets, the answer.
  PlanReport report_data(int64_t answer) const {
    PlanReport r;
    const std::string model = base_.pool().model.name.value_or("");
    r.by_rate = req_.max_rate;
    r.answer_instances = req_.max_rate ? base_.pool().instances : answer;
    r.answer_rate = rate_answer_;
    if (req_.max_rate) {
      r.title = fmt::format("blis plan: the highest rate {} instance(s) of {} sustain; targets: {}",
                            base_.pool().instances, model, targets_text());
      r.answer = rate_answer_ > 0 ? fmt::format("max rate: {:g} req/s on {} instance(s)", rate_answer_, base_.pool().instances)
                                  : "max rate: none — even 1 req/s misses the targets";
    } else {
      r.title = fmt::format("blis plan: {} {}; targets: {}", model, load_text(), targets_text());
      r.answer = answer > 0 ? fmt::format("minimum instances: {}", answer)
                            : fmt::format("minimum instances: none up to {}", req_.max_instances);
    }
    const bool answered = req_.max_rate ? rate_answer_ > 0 : answer > 0;
    if (answered && req_.replicates > 1)
      r.run_length =
          run_length_line(trials_.at(req_.max_rate ? std::pair{base_.pool().instances, rate_answer_}
                                                   : std::pair{answer, base_.workload.rate}));
    for (const SloTarget& t : targets_) r.targets.push_back({t.metric, t.limit_ms, t.text});
    r.configuration = configuration(answer > 0 ? answer : base_.pool().instances,
                                    req_.max_rate ? (rate_answer_ > 0 ? rate_answer_ : 1) : base_.workload.rate);
    r.setup = setup_line(r.configuration);
    if (!r.setup.empty() && r.setup.back() == '\n') r.setup.pop_back();
    r.trial_rule = trial_rule();
    std::vector<const Trial*> order;
    for (const auto& [key, t] : trials_) order.push_back(&t);
    if (req_.max_rate)
      std::sort(order.begin(), order.end(), [](const Trial* a, const Trial* b) { return a->rate < b->rate; });
    // The answer and its neighbours carry their distributions.
    size_t at = order.size();
    for (size_t i = 0; i < order.size(); ++i)
      if (req_.max_rate ? order[i]->rate == rate_answer_ : order[i]->instances == answer) at = i;
    for (size_t i = 0; i < order.size(); ++i) {
      const Trial& t = *order[i];
      PlanReportTrial p;
      p.instances = t.instances;
      p.rate = t.rate;
      p.verdict = t.verdict;
      p.why = t.why;
      p.pass = t.pass;
      p.ttft_p99 = metric_value(t.outcome.metrics, "ttft_p99_ms");
      p.itl_p99 = metric_value(t.outcome.metrics, "itl_p99_ms");
      p.e2e_p99 = metric_value(t.outcome.metrics, "e2e_p99_ms");
      p.offered_rps = t.outcome.steady.offered_rps;
      p.served_rps = t.outcome.steady.started_rps;
      const bool near = at < order.size() && i + 1 >= at && i <= at + 1;
      if (near) p.cdf = &t.outcome.cdf;
      r.trials.push_back(p);
    }
    return r;
  }

 private:
  const PlanRequest& req_;
  Progress& progress_;
  LogOnce log_once_;  // a warning about the configuration, once, not once per trial
  PdUnit unit_;       // with --search: a count is of P/D units (instances when off)
  double rate_answer_ = 0;
  RunConfig base_;
  std::vector<SloTarget> targets_;
  bool fixed_workload_ = false;
  std::string refused_;        // why no count was tried (capacity_bound), or empty
  double saturated_rate_ = 0;  // one instance's completions per second when saturated
  double duration_ = kFirstDuration;
  double decode_s_ = 0;  // a request's decode time in the capacity probe (0: no probe)
  std::map<std::pair<int64_t, double>, Trial> trials_;  // by (instances, rate): rows in order
  // The answer's run twice as long as its trial (confirmed()); none when no
  // longer run was possible (trials at kLongestDuration, a fixed workload).
  std::optional<Trial> confirmation_;
};

}  // namespace

// "H100=3.0,A100-80=1.8" -> $ per GPU-hour by GPU name (case-insensitive).
std::map<std::string, double> parse_gpu_costs(const std::string& text) {
  std::map<std::string, double> out;
  for (const std::string& raw : text::split(text, ',')) {
    const std::string item = text::trim(raw);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    double v = 0;
    const std::string value = eq == std::string::npos ? "" : text::trim(item.substr(eq + 1));
    const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
    if (eq == std::string::npos || r.ec != std::errc() || r.ptr != value.data() + value.size() || !(v >= 0) ||
        !std::isfinite(v))
      throw InputError("--gpu-cost", fmt::format("'{}': write GPU=dollars-per-GPU-hour, e.g. H100=3.0,A100-80=1.8", item));
    out[text::lower(text::trim(item.substr(0, eq)))] = v;
  }
  return out;
}

namespace {

// One GPU and TP of compare_candidates, at its fewest instances.
struct Candidate {
  std::string gpu;
  int64_t tp = 0, instances = 0;
  double ttft_p99 = 0, tokens_per_s = 0, cost = -1;
  std::string verdict;
};

// compare_candidates' answer as JSON.
void print_candidates_json(std::ostream& out, const std::string& model, const std::vector<Candidate>& rows,
                           const Candidate* best) {
  out << "{\n  \"model\": " << go_string(model) << ",\n  \"candidates\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Candidate& c = rows[i];
    out << (i ? ",\n    " : "\n    ") << "{\"hardware\": " << go_string(c.gpu) << ", \"tp\": " << c.tp
        << ", \"minimum_instances\": " << (c.instances > 0 ? std::to_string(c.instances) : "null")
        << ", \"gpus\": " << c.instances * std::max<int64_t>(1, c.tp) << ", \"dollars_per_hour\": "
        << (c.cost >= 0 ? go_float(c.cost) : "null") << ", \"ttft_p99_ms\": " << go_float(c.ttft_p99) << "}";
  }
  out << "\n  ],\n  \"cheapest\": "
      << (best ? "{\"hardware\": " + go_string(best->gpu) + ", \"tp\": " + std::to_string(best->tp) + "}" : "null")
      << "\n}\n";
}

// compare_candidates' answer as a table.
void print_candidates_table(std::ostream& out, const PlanRequest& request, const std::string& model, double rate,
                            const std::vector<Candidate>& rows, const Candidate* best) {
  out << fmt::format("blis plan: {} at {:g} req/s; targets: {}\n\n", model,
                     rate, request.slo.empty() ? "steady state, no rejections" : request.slo);
  out << fmt::format("{:<10} {:>3}  {:>9}  {:>5}  {:>9}  {:>14}  {:>11}\n", "GPU", "TP", "instances", "GPUs", "$/hour",
                     "$/M out tokens", "ttft_p99_ms");
  for (const Candidate& c : rows) {
    if (c.instances == 0) {
      out << fmt::format("{:<10} {:>3}  {:>9}\n", c.gpu, c.tp, "none");
      continue;
    }
    const double per_m = c.cost >= 0 && c.tokens_per_s > 0 ? c.cost / (c.tokens_per_s * 3600 / 1e6) : -1;
    out << fmt::format("{:<10} {:>3}  {:>9}  {:>5}  {:>9}  {:>14}  {:>11.2f}\n", c.gpu, c.tp, c.instances,
                       c.instances * std::max<int64_t>(1, c.tp), c.cost >= 0 ? fmt::format("{:.2f}", c.cost) : "-",
                       per_m >= 0 ? fmt::format("{:.3f}", per_m) : "-", c.ttft_p99);
  }
  out << "\n";
  if (best)
    out << fmt::format("cheapest: {} instances of {} at TP {} ({} GPUs{})\n", best->instances, best->gpu, best->tp,
                       best->instances * std::max<int64_t>(1, best->tp),
                       best->cost >= 0 ? fmt::format(", ${:.2f}/hour", best->cost) : "");
  else
    out << "cheapest: none of the candidates meets the targets\n";
}

// The answer of `planner` (already searched) for one GPU and TP, and its
// price when the GPU has one.
Candidate candidate_row(const Planner& planner, int64_t instances, const std::string& gpu, int64_t tp,
                        const std::map<std::string, double>& costs) {
  Candidate c;
  c.instances = instances;
  const RunConfig& base = planner.base();
  c.gpu = gpu.empty() ? base.pool().model.hardware.value_or("default") : gpu;
  c.tp = tp;
  if (c.instances > 0) {
    const Trial& t = planner.trial(c.instances);
    c.ttft_p99 = metric_value(t.outcome.metrics, "ttft_p99_ms");
    c.tokens_per_s = metric_value(t.outcome.metrics, "tokens_per_sec");
    c.verdict = t.verdict;
    const auto cost = costs.find(text::lower(c.gpu));
    if (cost != costs.end()) c.cost = cost->second * static_cast<double>(c.instances * std::max<int64_t>(1, tp));
  }
  return c;
}

// Cheapest: by $/hour when every answer has a price, else by GPU count;
// null when none meets the targets.
const Candidate* cheapest(const std::vector<Candidate>& rows) {
  const bool priced = std::all_of(rows.begin(), rows.end(), [](const Candidate& c) { return c.instances == 0 || c.cost >= 0; });
  const Candidate* best = nullptr;
  auto key = [&](const Candidate& c) {
    return priced ? c.cost : static_cast<double>(c.instances * std::max<int64_t>(1, c.tp));
  };
  for (const Candidate& c : rows)
    if (c.instances > 0 && (best == nullptr || key(c) < key(*best))) best = &c;
  return best;
}

// --report for the candidates: the cheapest's planner draws its pages.
void write_candidates_report(const PlanRequest& request, const std::vector<std::unique_ptr<Planner>>& planners,
                             const std::vector<Candidate>& rows, const Candidate* best, const std::string& model,
                             double rate) {
  const size_t b = best ? static_cast<size_t>(best - rows.data()) : 0;
  PlanReport r = planners[b]->report_data(best ? best->instances : 0);
  r.title = fmt::format("blis plan: {} at {:g} req/s; targets: {}", model, rate,
                        request.slo.empty() ? "steady state, no rejections" : request.slo);
  r.answer = best ? fmt::format("cheapest: {} instances of {} at TP {} ({} GPUs{})", best->instances, best->gpu,
                                best->tp, best->instances * std::max<int64_t>(1, best->tp),
                                best->cost >= 0 ? fmt::format(", ${:.2f}/hour", best->cost) : "")
                  : "cheapest: none of the candidates meets the targets";
  for (const Candidate& c : rows)
    r.candidates.push_back({c.tp > 0 ? fmt::format("{} TP {}", c.gpu, c.tp) : c.gpu, c.instances,
                            c.instances * std::max<int64_t>(1, c.tp), c.cost});
  r.cheapest = best ? static_cast<int>(b) : -1;
  write_plan_report(request.report, r);
}

// The fewest instances for each GPU and TP, and the cheapest (false: none
// meets the targets).
bool compare_candidates(const PlanRequest& request, std::ostream& out) {
  const auto costs = parse_gpu_costs(request.gpu_cost);
  const std::vector<std::string> gpus = request.hardware.empty() ? std::vector<std::string>{""} : request.hardware;
  const std::vector<int64_t> tps = request.tp.empty() ? std::vector<int64_t>{0} : request.tp;
  std::vector<Candidate> rows;
  std::vector<std::unique_ptr<Planner>> planners;
  // Each planner keeps a reference to its request: they live as long as it.
  std::deque<PlanRequest> requests;
  Progress progress(request.quiet, "blis plan");
  std::string model;
  double rate = 0;
  for (const std::string& gpu : gpus)
    for (int64_t tp : tps) {
      PlanRequest& one = requests.emplace_back(request);
      one.hardware.clear();
      one.tp.clear();
      if (!gpu.empty()) one.command_line.push_back(Setting{"hardware", gpu, "--hardware"});
      if (tp > 0) one.command_line.push_back(Setting{"tp", std::to_string(tp), "--tp"});
      progress.note(fmt::format("candidate {} TP {}", gpu.empty() ? "(default GPU)" : gpu, tp));
      planners.push_back(std::make_unique<Planner>(one, progress));
      Planner& planner = *planners.back();
      const int64_t instances = planner.find_min_instances();
      progress.finish();
      model = planner.base().pool().model.name.value_or("");
      rate = planner.base().workload.rate;
      rows.push_back(candidate_row(planner, instances, gpu, tp, costs));
    }
  const Candidate* best = cheapest(rows);
  if (!request.report.empty()) write_candidates_report(request, planners, rows, best, model, rate);
  if (request.format == "json") print_candidates_json(out, model, rows, best);
  else print_candidates_table(out, request, model, rate, rows, best);
  return best != nullptr;
}

// One candidate of --policies: its text and the settings it adds.
struct PolicyCandidate {
  std::string label;
  Settings settings;
};

std::vector<PolicyCandidate> parse_policies(const std::string& text) {
  std::vector<PolicyCandidate> out;
  int index = 0;
  for (const std::string& raw : text::split(text, ';')) {
    ++index;
    PolicyCandidate c;
    c.label = text::trim(raw);
    if (c.label.empty()) continue;
    const std::string where = fmt::format("--policies (candidate {})", index);
    std::istringstream words(c.label);
    std::string word;
    while (words >> word) {
      const size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
        throw InputError(where, fmt::format("'{}' is not KEY=VALUE; write run settings such as "
                                            "routing-policy=weighted routing-scorers=queue-depth:1",
                                            word));
      const std::string key = key_of_flag(word.substr(0, eq));
      if (find_setting(key) == nullptr) {
        std::vector<std::string> names;
        for (const SettingDef& d : setting_table()) names.push_back(d.flag().substr(2));
        throw InputError(where, fmt::format("unknown setting '{}'{}", word.substr(0, eq),
                                            text::did_you_mean(word.substr(0, eq), names)));
      }
      c.settings.push_back(Setting{key, word.substr(eq + 1), where, {}});
    }
    out.push_back(std::move(c));
  }
  if (out.size() < 2)
    throw InputError("--policies", "give at least two candidates separated by ';' (one is a plain blis plan)");
  return out;
}

// The fewest instances for each policy candidate, and the fewest of all
// (false: none meets the targets).
bool compare_policies(const PlanRequest& request, std::ostream& out) {
  const std::vector<PolicyCandidate> candidates = parse_policies(request.policies);
  struct Row {
    std::string label;
    int64_t instances = 0;
    double ttft_p99 = 0, e2e_p99 = 0;
    std::string verdict;
  };
  std::vector<Row> rows;
  Progress progress(request.quiet, "blis plan");
  std::string model;
  double rate = 0;
  for (const PolicyCandidate& c : candidates) {
    PlanRequest one = request;
    one.policies.clear();
    if (!request.hardware.empty()) one.command_line.push_back(Setting{"hardware", request.hardware[0], "--hardware"});
    if (!request.tp.empty()) one.command_line.push_back(Setting{"tp", std::to_string(request.tp[0]), "--tp"});
    one.command_line.insert(one.command_line.end(), c.settings.begin(), c.settings.end());
    progress.note(fmt::format("candidate {}", c.label));
    Planner planner(one, progress);
    Row row;
    row.label = c.label;
    row.instances = planner.find_min_instances();
    progress.finish();
    model = planner.base().pool().model.name.value_or("");
    rate = planner.base().workload.rate;
    if (row.instances > 0) {
      const Trial& t = planner.trial(row.instances);
      row.ttft_p99 = metric_value(t.outcome.metrics, "ttft_p99_ms");
      row.e2e_p99 = metric_value(t.outcome.metrics, "e2e_p99_ms");
      row.verdict = t.verdict;
    }
    rows.push_back(row);
  }
  const Row* best = nullptr;
  for (const Row& r : rows)
    if (r.instances > 0 && (best == nullptr || r.instances < best->instances)) best = &r;
  const std::string targets = request.slo.empty() ? "steady state, no rejections" : request.slo;
  if (request.format == "json") {
    out << "{\n  \"model\": " << go_string(model) << ",\n  \"rate\": " << go_float(rate)
        << ",\n  \"targets\": " << go_string(targets) << ",\n  \"candidates\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << (i ? ",\n    " : "\n    ") << "{\"policies\": " << go_string(r.label) << ", \"minimum_instances\": "
          << (r.instances > 0 ? std::to_string(r.instances) : "null") << ", \"ttft_p99_ms\": " << go_float(r.ttft_p99)
          << ", \"e2e_p99_ms\": " << go_float(r.e2e_p99) << "}";
    }
    out << "\n  ],\n  \"fewest\": " << (best ? go_string(best->label) : "null") << "\n}\n";
    return best != nullptr;
  }
  size_t width = 8;
  for (const Row& r : rows) width = std::max(width, r.label.size());
  out << fmt::format("blis plan: {} at {:g} req/s; targets: {}\n\n", model, rate, targets);
  out << fmt::format("{:<{}}  {:>9}  {:>11}  {:>11}  {}\n", "policies", width, "instances", "ttft_p99_ms",
                     "e2e_p99_ms", "verdict");
  for (const Row& r : rows) {
    if (r.instances == 0) {
      out << fmt::format("{:<{}}  {:>9}\n", r.label, width, "none");
      continue;
    }
    out << fmt::format("{:<{}}  {:>9}  {:>11.2f}  {:>11.2f}  {}\n", r.label, width, r.instances, r.ttft_p99,
                       r.e2e_p99, r.verdict);
  }
  out << "\n";
  if (best)
    out << fmt::format("fewest instances: {} with {}\n", best->instances, best->label);
  else
    out << "fewest instances: none of the candidates meets the targets\n";
  return best != nullptr;
}

}  // namespace

void set_count(RunConfig& config, int64_t n, const PdUnit& unit) {
  if (!unit.on()) {
    config.pool().instances = n;
    return;
  }
  config.pd.prefill_instances = n * unit.prefill;
  config.pd.decode_instances = n * unit.decode;
  if (!config.pd.decider) config.pd.decider = "always";
}

struct MinCountSearch::Impl {
  PlanRequest request;  // the planner keeps a reference to it
  Planner planner;
  Impl(const PlanRequest& r, const PdUnit& unit, Progress& progress) : request(r), planner(request, progress, unit) {}
};

MinCountSearch::MinCountSearch(const PlanRequest& request, const PdUnit& unit, Progress& progress)
    : impl_(std::make_unique<Impl>(request, unit, progress)) {}
MinCountSearch::~MinCountSearch() = default;
RunConfig MinCountSearch::probe_config() const { return impl_->planner.capacity_probe(); }
const RunConfig& MinCountSearch::base() const { return impl_->planner.base(); }
int64_t MinCountSearch::run() { return impl_->planner.find_min_instances(); }
const std::vector<MetricField>& MinCountSearch::metrics(int64_t units) const {
  return impl_->planner.trial(units).outcome.metrics;
}
const std::string& MinCountSearch::verdict(int64_t units) const { return impl_->planner.trial(units).verdict; }
std::string MinCountSearch::configuration(int64_t units) const {
  return impl_->planner.answer_configuration(units);
}
PlanReport MinCountSearch::report_data(int64_t units) const { return impl_->planner.report_data(units); }

namespace {

// The search's lists given without --search: one value is that run setting
// (added to the command line), several are refused.
PlanRequest without_search(const PlanRequest& given) {
  if (given.top) throw InputError("--top", "lists the cheapest configurations of --search; add --search");
  if (!given.search_pd.empty())
    throw InputError("--search-pd", "lists the P/D units --search tries; add --search (or give --prefill-instances "
                                    "and --decode-instances to plan one P/D deployment)");
  PlanRequest request = given;
  for (const auto& [values, key, flag] :
       {std::tuple{&given.max_num_seqs, "max_num_running_reqs", "--max-num-seqs"},
        std::tuple{&given.max_num_batched_tokens, "max_num_scheduled_tokens", "--max-num-batched-tokens"}}) {
    if (values->size() > 1)
      throw InputError(flag, "several values are compared by the deployment search: add --search");
    if (values->size() == 1) request.command_line.push_back(Setting{key, values->front(), flag});
  }
  request.max_num_seqs.clear();
  request.max_num_batched_tokens.clear();
  return request;
}

}  // namespace

bool plan(const PlanRequest& given, std::ostream& out) {
  if (given.format != "table" && given.format != "json")
    throw InputError("--format", fmt::format("unknown format '{}'; valid: json, table", given.format));
  // Trials that differ in the fleet alone simulate one workload: generated
  // once (run/workload_reuse.hpp).
  const WorkloadReuse reuse;
  if (given.search) {
    if (!given.report.empty()) check_report_dir(given.report, "--report");
    return search_deployments(given, out);
  }
  const PlanRequest request = without_search(given);
  const bool compare = request.hardware.size() > 1 || request.tp.size() > 1 || !request.gpu_cost.empty();
  if (!request.report.empty()) check_report_dir(request.report, "--report");
  if (compare && request.max_rate)
    throw InputError("--max-rate", "finds one configuration's rate; give one --hardware and one --tp");
  if (!request.policies.empty()) {
    if (compare)
      throw InputError("--policies", "compares policies on one GPU and TP; give one --hardware and one --tp "
                                     "(or compare hardware without --policies)");
    if (request.max_rate) throw InputError("--max-rate", "finds one configuration's rate; leave out --policies");
    if (!request.report.empty()) throw InputError("--report", "is not drawn for a --policies comparison yet");
    return compare_policies(request, out);
  }
  if (compare) return compare_candidates(request, out);
  PlanRequest one = request;
  if (!request.hardware.empty()) one.command_line.push_back(Setting{"hardware", request.hardware[0], "--hardware"});
  if (!request.tp.empty()) one.command_line.push_back(Setting{"tp", std::to_string(request.tp[0]), "--tp"});
  Progress progress(request.quiet, "blis plan");
  Planner planner(one, progress);
  int64_t answer = 0;
  bool found = false;
  if (request.max_rate) {
    found = planner.max_rate(out) > 0;
  } else {
    answer = planner.find_min_instances();
    found = answer > 0;
    progress.finish();
    planner.print(out, answer);
  }
  if (!request.report.empty()) write_plan_report(request.report, planner.report_data(answer));
  return found;
}

}  // namespace blis
