// `blis plan --search` (plan/search.hpp): screen every setting of the space
// with one capacity probe, then verify the cheapest and the Pareto frontier
// with the steady-state search of `blis plan`. docs/planning.md, "The
// cheapest deployment".
#include "plan/search.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include "plan/min_count.hpp"
#include "plan/slo_targets.hpp"
#include "report/report.hpp"
#include "run/farm.hpp"
#include "run/simulate.hpp"
#include "util/json_format.hpp"
#include "util/log_once.hpp"
#include "util/progress.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <memory>

namespace blis {
namespace {

constexpr int64_t kDefaultTop = 5;
constexpr int64_t kLargestPdSide = 64;
// Plan's capacity bound: fewer than rate / (kBoundSlack x capacity) units
// cannot sustain the rate (plan.cpp, capacity_bound).
constexpr double kBoundSlack = 1.25;
// Settings verified at most, per configuration listed (--top): the walk in
// order of cost stops earlier when no setting left can be cheaper.
constexpr int64_t kVerifiedPerListed = 4;
// The screen's probe: each instance of a unit sent this many full batches
// (--max-num-seqs) at once, at least kFewestProbeRequests. The steps a probe
// takes are then about the same whatever the batch limit (2,000 requests at
// once, plan's bound's probe, take 8 times as many steps at 32 as at 256).
constexpr int64_t kProbeBatches = 8;
constexpr int64_t kFewestProbeRequests = 100;

// One point of the space: a GPU, a TP, batch limits and P/D or not ("" and
// 0: the run's own value).
struct SearchPoint {
  std::string gpu, seqs, tokens;
  int64_t tp = 0;
  PdUnit unit;
};

// A point screened: its probe's figures, resolved settings and the counts
// the bound allows.
struct Screened {
  SearchPoint point;
  std::string gpu, seqs, tokens;  // resolved
  int64_t tp = 1;
  int64_t gpus_per_unit = 1;
  int64_t max_units = 0;            // --max-instances in units
  double capacity = 0;              // requests/s one unit completes saturated
  double out_tokens = 0;            // output tokens per request
  double user_tps = 0;              // tokens/s per user at a full batch (1 / mean ITL)
  double price = 1;                 // $ per GPU-hour, or 1 to count GPUs
  int64_t bound = 0, estimate = 0;  // units: fewer cannot sustain the rate; rate / capacity
  bool fits() const { return capacity > 0 && bound <= max_units; }
  double cost(int64_t units) const { return static_cast<double>(units * gpus_per_unit) * price; }
  double est_tps_per_gpu(double rate) const {
    return rate * out_tokens / static_cast<double>(std::max<int64_t>(1, estimate * gpus_per_unit));
  }
};

// A point verified by the steady-state search.
struct Verified {
  size_t screened = 0;  // index into the screened points
  int64_t units = 0;    // 0: none up to --max-instances
  int64_t gpus = 0;
  double cost = 0, tps_per_gpu = 0, user_tps = 0;
  std::vector<std::pair<std::string, double>> figures;  // the targets' metrics (or ttft_p99_ms)
  std::string verdict, configuration;
};

std::string pd_label(const PdUnit& u) {
  return u.on() ? fmt::format("{}:{}", u.prefill, u.decode) : "co-located";
}

// "colocated,1:1,1:2" -> the P/D modes, in the order given.
std::vector<PdUnit> parse_pd(const std::string& text) {
  std::vector<PdUnit> out;
  if (text::trim(text).empty()) return {PdUnit{}};
  for (const std::string& raw : text::split(text, ',')) {
    const std::string item = text::lower(text::trim(raw));
    PdUnit u;
    const size_t colon = item.find(':');
    if (item != "colocated" && item != "co-located") {
      auto side = [&](const std::string& s, int64_t& v) {
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        return r.ec == std::errc() && r.ptr == s.data() + s.size() && v >= 1 && v <= kLargestPdSide;
      };
      if (colon == std::string::npos || !side(item.substr(0, colon), u.prefill) ||
          !side(item.substr(colon + 1), u.decode))
        throw InputError("--search-pd",
                         fmt::format("'{}': write colocated or PREFILL:DECODE instances per unit, "
                                     "whole numbers 1 to {}, e.g. colocated,1:1,1:2",
                                     text::trim(raw), kLargestPdSide));
    }
    for (const PdUnit& seen : out)
      if (seen.prefill == u.prefill && seen.decode == u.decode)
        throw InputError("--search-pd", fmt::format("'{}' is listed twice", text::trim(raw)));
    out.push_back(u);
  }
  return out;
}

// Run settings the search sets itself, or that would change what a count
// means: refused rather than silently overridden.
void refuse_fixed_settings(const PlanRequest& r) {
  if (r.max_rate) throw InputError("--max-rate", "finds one configuration's rate; leave out --search");
  if (!r.policies.empty())
    throw InputError("--policies", "compares policies at one setting; run --search with one policy");
  for (const Setting& s : r.command_line) {
    static const char* const refused[] = {
        "prefill_instances", "decode_instances", "prefill_decode_instances", "prefill_tp",
        "decode_tp",         "prefill_hardware", "decode_hardware",          "pools",
        "workload_spec",     "workload_trace"};
    for (const char* key : refused)
      if (s.flag == key)
        throw InputError(
            s.where.empty() ? "--search" : s.where,
            key == std::string("workload_spec") || key == std::string("workload_trace")
                ? "--search screens settings by their capacity at the plan's --rate: give --rate "
                  "and a distribution or preset workload"
                : "--search chooses the P/D split, GPU and TP of every pool itself: leave this out "
                  "and list the P/D units with --search-pd (colocated,1:1,1:2)");
  }
}

// The space, GPU-major, in the order the lists were given.
std::vector<SearchPoint> space_of(const PlanRequest& r) {
  const auto or_one = [](const std::vector<std::string>& v) {
    return v.empty() ? std::vector<std::string>{""} : v;
  };
  const std::vector<int64_t> tps = r.tp.empty() ? std::vector<int64_t>{0} : r.tp;
  std::vector<SearchPoint> out;
  for (const std::string& gpu : or_one(r.hardware))
    for (int64_t tp : tps)
      for (const std::string& seqs : or_one(r.max_num_seqs))
        for (const std::string& tokens : or_one(r.max_num_batched_tokens))
          for (const PdUnit& unit : parse_pd(r.search_pd)) out.push_back({gpu, seqs, tokens, tp, unit});
  return out;
}

// The plan request of one point: the user's with the point's settings.
PlanRequest request_of(const PlanRequest& r, const SearchPoint& p) {
  PlanRequest one = r;
  one.search = false;
  one.hardware.clear(), one.tp.clear(), one.max_num_seqs.clear(), one.max_num_batched_tokens.clear();
  one.search_pd.clear(), one.report.clear();
  one.gpu_cost.clear();
  if (!p.gpu.empty()) one.command_line.push_back(Setting{"hardware", p.gpu, "--hardware"});
  if (p.tp > 0) one.command_line.push_back(Setting{"tp", std::to_string(p.tp), "--tp"});
  if (!p.seqs.empty()) one.command_line.push_back(Setting{"max_num_running_reqs", p.seqs, "--max-num-seqs"});
  if (!p.tokens.empty())
    one.command_line.push_back(Setting{"max_num_scheduled_tokens", p.tokens, "--max-num-batched-tokens"});
  one.max_instances = std::max<int64_t>(1, r.max_instances / p.unit.instances());
  return one;
}

// "key = value" of a configuration's TOML, unquoted; "" when absent.
std::string toml_text(const std::string& config, const std::string& key) {
  const std::string head = "\n" + key + " = ";
  const size_t at = config.find(head);
  if (at == std::string::npos) return "";
  const size_t from = at + head.size();
  std::string v = config.substr(from, config.find('\n', from) - from);
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

class DeploymentSearch {
 public:
  DeploymentSearch(const PlanRequest& request, Progress& progress)
      : req_(request), progress_(progress), start_(std::chrono::steady_clock::now()) {
    top_ = request.top.value_or(kDefaultTop);
    if (top_ < 1 || top_ > 100)
      throw InputError("--top", fmt::format("must be between 1 and 100, got {}", top_));
    refuse_fixed_settings(request);
    if (!request.slo.empty()) targets_ = parse_slo_targets(request.slo, "--slo");
    prices_ = parse_gpu_costs(request.gpu_cost);
    for (const SearchPoint& p : space_of(request)) {
      requests_.push_back(std::make_unique<PlanRequest>(request_of(request, p)));
      searches_.push_back(std::make_unique<MinCountSearch>(*requests_.back(), p.unit, progress));
      screened_.push_back(describe(p, *searches_.back()));
    }
    rate_ = searches_.front()->base().workload.rate;
  }

  // Screens every point, verifies the cheapest and the frontier; true when
  // a configuration meets the targets.
  bool run() {
    screen();
    verify_cheapest();
    verify_frontier();
    progress_.finish();
    rank();
    return !top_rows_.empty();
  }

  void print(std::ostream& out) const {
    if (req_.format == "json")
      print_json(out);
    else
      print_table(out);
  }

  void write_report() const;

 private:
  // The point's resolved settings and price (the probe comes later).
  Screened describe(const SearchPoint& p, const MinCountSearch& search) const {
    Screened s;
    s.point = p;
    const std::string config = search.configuration(1);
    s.gpu = toml_text(config, "hardware");
    const std::string tp = toml_text(config, "tp");
    s.tp = std::max<int64_t>(1, tp.empty() ? 1 : std::stoll(tp));
    s.seqs = toml_text(config, "max_num_running_reqs");
    s.tokens = toml_text(config, "max_num_scheduled_tokens");
    s.gpus_per_unit = s.tp * p.unit.instances();
    s.max_units = std::max<int64_t>(1, req_.max_instances / p.unit.instances());
    if (!prices_.empty()) {
      const auto it = prices_.find(text::lower(s.gpu));
      if (it == prices_.end())
        throw InputError("--gpu-cost",
                         fmt::format("has no price for {}; give one for every GPU searched", s.gpu));
      s.price = it->second;
    }
    return s;
  }

  // One capacity probe per point, --jobs at a time; each point's bound and
  // estimate follow from the plan's rate.
  void screen() {
    std::vector<RunConfig> probes;
    probes.reserve(searches_.size());
    for (size_t i = 0; i < searches_.size(); ++i) {
      probes.push_back(searches_[i]->probe_config());
      const Screened& s = screened_[i];
      const int64_t seqs = s.seqs.empty() ? 0 : std::stoll(s.seqs);
      probes.back().workload.num_requests =
          std::max(kFewestProbeRequests, kProbeBatches * seqs) * s.point.unit.instances();
    }
    progress_.expect(probes.size());
    const FarmFailure failure =
        simulation_farm().run(probes, req_.jobs, [&](size_t i, RunOutcome& o, double) {
          Screened& s = screened_[i];
          const double completed = metric_value(o.metrics, "completed_requests");
          s.capacity = metric_value(o.metrics, "responses_per_sec");
          s.out_tokens = completed > 0 ? metric_value(o.metrics, "total_output_tokens") / completed : 0;
          const double itl = metric_value(o.metrics, "itl_mean_ms");
          s.user_tps = itl > 0 ? 1000 / itl : 0;
          progress_.tick(fmt::format("probe {}: {:.3g} req/s", label(s), s.capacity));
        });
    if (failure) std::rethrow_exception(failure->second);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    for (Screened& s : screened_) {
      if (!(s.capacity > 0)) continue;
      s.bound = std::max<int64_t>(
          1, static_cast<int64_t>(std::min(1e15, std::floor(rate_ / (kBoundSlack * s.capacity)))));
      s.estimate = std::max<int64_t>(1, static_cast<int64_t>(std::min(1e15, std::ceil(rate_ / s.capacity))));
    }
    // Wall time is not the simulation's: it goes to stderr only.
    progress_.finish();
    progress_.note(
        fmt::format("screened {} settings ({} configurations with their counts) in {:.2f} s: {:.0f} "
                    "settings/min, {:.0f} configurations/min",
                    screened_.size(), configurations(), seconds,
                    seconds > 0 ? static_cast<double>(screened_.size()) * 60 / seconds : 0.0,
                    seconds > 0 ? static_cast<double>(configurations()) * 60 / seconds : 0.0));
  }

  // Every count of every point, each judged by the bound.
  int64_t configurations() const {
    int64_t n = 0;
    for (const Screened& s : screened_) n += s.max_units;
    return n;
  }

  std::string label(const Screened& s) const {
    return fmt::format("{} TP {}, max-num-seqs {}, max-num-batched-tokens {}, {}", s.gpu, s.tp, s.seqs,
                       s.tokens, pd_label(s.point.unit));
  }

  // The points the bound allows, by estimated cost (ties: the space's order).
  std::vector<size_t> by_estimated_cost() const {
    std::vector<size_t> order;
    for (size_t i = 0; i < screened_.size(); ++i)
      if (screened_[i].fits()) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return screened_[a].cost(screened_[a].estimate) < screened_[b].cost(screened_[b].estimate);
    });
    return order;
  }

  bool is_verified(size_t i) const {
    return std::any_of(verified_.begin(), verified_.end(),
                       [&](const Verified& v) { return v.screened == i; });
  }

  // The top-th cheapest verified cost (infinite while fewer pass).
  double listed_cost_limit() const {
    std::vector<double> costs;
    for (const Verified& v : verified_)
      if (v.units > 0) costs.push_back(v.cost);
    if (costs.size() < static_cast<size_t>(top_)) return INFINITY;
    std::sort(costs.begin(), costs.end());
    return costs[static_cast<size_t>(top_) - 1];
  }

  // Verifies points in order of estimated cost until no point left can make
  // the top list (its bound costs at least the top-th verified cost), or
  // the budget is spent.
  void verify_cheapest() {
    const std::vector<size_t> order = by_estimated_cost();
    const size_t budget = static_cast<size_t>(kVerifiedPerListed * top_);
    for (size_t k = 0; k < order.size(); ++k) {
      const Screened& s = screened_[order[k]];
      if (s.cost(s.bound) >= listed_cost_limit()) {
        exhaustive_ = true;
        break;
      }
      if (verified_.size() >= budget) {
        unverified_from_ = s.cost(s.bound);
        break;
      }
      verify(order[k]);
    }
    if (unverified_from_ < 0) exhaustive_ = true;
  }

  // The screen's Pareto frontier (estimated tokens/s per GPU against tokens/s
  // per user at a full batch), verified too: up to --top points of it.
  void verify_frontier() {
    std::vector<size_t> front;
    const std::vector<size_t> order = by_estimated_cost();
    for (size_t i : order) {
      const Screened& a = screened_[i];
      bool dominated = false;
      for (size_t j : order) {
        const Screened& b = screened_[j];
        if (j != i && b.est_tps_per_gpu(rate_) >= a.est_tps_per_gpu(rate_) && b.user_tps >= a.user_tps &&
            (b.est_tps_per_gpu(rate_) > a.est_tps_per_gpu(rate_) || b.user_tps > a.user_tps))
          dominated = true;
      }
      if (!dominated) front.push_back(i);
    }
    int64_t done = 0;
    for (size_t i : front)
      if (done < top_ && !is_verified(i)) verify(i), ++done;
  }

  void verify(size_t i) {
    const Screened& s = screened_[i];
    progress_.note(fmt::format("verifying {} in steady state (bound {} {})", label(s), s.bound,
                               s.point.unit.on() ? "units" : "instances"));
    MinCountSearch& search = *searches_[i];
    Verified v;
    v.screened = i;
    v.units = search.run();
    progress_.finish();
    if (v.units > 0) {
      const auto& m = search.metrics(v.units);
      v.gpus = v.units * s.gpus_per_unit;
      v.cost = s.cost(v.units);
      const double completed = metric_value(m, "completed_requests");
      const double out_tokens = completed > 0 ? metric_value(m, "total_output_tokens") / completed : 0;
      v.tps_per_gpu = rate_ * out_tokens / static_cast<double>(v.gpus);
      const double itl = metric_value(m, "itl_mean_ms");
      v.user_tps = itl > 0 ? 1000 / itl : 0;
      for (const std::string& metric : figure_metrics())
        v.figures.emplace_back(metric, metric_value(m, metric));
      v.verdict = search.verdict(v.units);
      v.configuration = search.configuration(v.units);
    }
    verified_.push_back(std::move(v));
  }

  std::vector<std::string> figure_metrics() const {
    std::vector<std::string> out;
    for (const SloTarget& t : targets_)
      if (std::find(out.begin(), out.end(), t.metric) == out.end()) out.push_back(t.metric);
    if (out.empty()) out.push_back("ttft_p99_ms");
    return out;
  }

  // The top list (cheapest, then fewest GPUs, then the most tokens/s per
  // user, then the space's order) and
  // the verified Pareto frontier (by tokens/s per user).
  void rank() {
    for (size_t i = 0; i < verified_.size(); ++i)
      if (verified_[i].units > 0) top_rows_.push_back(i);
    std::stable_sort(top_rows_.begin(), top_rows_.end(), [&](size_t a, size_t b) {
      const Verified &x = verified_[a], &y = verified_[b];
      if (x.cost != y.cost) return x.cost < y.cost;
      if (x.gpus != y.gpus) return x.gpus < y.gpus;
      if (x.user_tps != y.user_tps) return x.user_tps > y.user_tps;  // as cheap: the faster for its users
      return x.screened < y.screened;
    });
    for (size_t i : top_rows_) {
      const Verified& a = verified_[i];
      // Dominated: another is at least as good in both and better in one,
      // or the same point listed earlier (cheaper, or first in the space).
      const bool dominated = std::any_of(top_rows_.begin(), top_rows_.end(), [&](size_t j) {
        const Verified& b = verified_[j];
        const bool same = b.tps_per_gpu == a.tps_per_gpu && b.user_tps == a.user_tps;
        return same ? j != i && std::find(top_rows_.begin(), top_rows_.end(), j) <
                                    std::find(top_rows_.begin(), top_rows_.end(), i)
                    : b.tps_per_gpu >= a.tps_per_gpu && b.user_tps >= a.user_tps;
      });
      if (!dominated) frontier_rows_.push_back(i);
    }
    std::stable_sort(frontier_rows_.begin(), frontier_rows_.end(),
                     [&](size_t a, size_t b) { return verified_[a].user_tps < verified_[b].user_tps; });
    if (top_rows_.size() > static_cast<size_t>(top_)) top_rows_.resize(static_cast<size_t>(top_));
  }

  bool priced() const { return !prices_.empty(); }

  std::string targets_text() const { return req_.slo.empty() ? "steady state, no rejections" : req_.slo; }

  std::string model() const { return searches_.front()->base().pool().model.name.value_or(""); }

  std::string title() const {
    return fmt::format("blis plan --search: {} at {:g} req/s; targets: {}", model(), rate_, targets_text());
  }

  std::string instances_text(const Verified& v) const {
    const PdUnit& u = screened_[v.screened].point.unit;
    return u.on() ? fmt::format("{}P+{}D", v.units * u.prefill, v.units * u.decode) : std::to_string(v.units);
  }

  std::string answer_line() const {
    if (top_rows_.empty()) return "best: none of the configurations screened meets the targets";
    const Verified& v = verified_[top_rows_.front()];
    const Screened& s = screened_[v.screened];
    return fmt::format("best: {} instance{} of {} ({} GPUs{})", instances_text(v),
                       v.units * s.point.unit.instances() == 1 ? "" : "s", label(s), v.gpus,
                       priced() ? fmt::format(", ${:.2f}/hour", v.cost) : "");
  }

  // What was screened and how far the verification went.
  std::string screen_line() const {
    size_t fits = 0;
    for (const Screened& s : screened_) fits += s.fits() ? 1 : 0;
    return fmt::format(
        "screened: {} settings by a capacity probe each ({} configurations with counts up to "
        "--max-instances {}); {} can sustain the rate; {} verified in steady state",
        screened_.size(), configurations(), req_.max_instances, fits, verified_.size());
  }

  std::string completeness_line() const {
    if (exhaustive_)
      return fmt::format(
          "the top {} is exact: every setting not verified costs, by its capacity bound, at least "
          "as much ({}) as the last of them",
          top_, priced() ? "$/hour" : "GPUs");
    const bool best_exact = !top_rows_.empty() && verified_[top_rows_.front()].cost <= unverified_from_;
    return fmt::format(
        "verification stopped after {} settings: settings whose bound costs {} or more were "
        "not verified{}",
        verified_.size(),
        priced() ? fmt::format("${:.2f}/hour", unverified_from_) : fmt::format("{:g} GPUs", unverified_from_),
        best_exact ? "; none of them can be cheaper than the best" : "");
  }

  std::string space_line() const {
    auto list = [](const std::vector<std::string>& v) {
      return v.empty() ? std::string("(run's)") : fmt::format("{}", fmt::join(v, ","));
    };
    std::vector<std::string> tps;
    for (int64_t tp : req_.tp) tps.push_back(std::to_string(tp));
    std::vector<std::string> pd;
    for (const PdUnit& u : parse_pd(req_.search_pd)) pd.push_back(pd_label(u));
    return fmt::format(
        "space: hardware {} x tp {} x max-num-seqs {} x max-num-batched-tokens {} x P/D {} = {} "
        "settings; cost by {}",
        list(req_.hardware), list(tps), list(req_.max_num_seqs), list(req_.max_num_batched_tokens),
        fmt::join(pd, ","), screened_.size(), priced() ? "--gpu-cost ($/hour)" : "GPU count");
  }

  void print_rows(std::ostream& out, const std::vector<size_t>& rows) const {
    const auto metrics = figure_metrics();
    out << fmt::format("{:>4}  {:<10} {:>3}  {:>12}  {:>22}  {:<10}  {:>9}  {:>5}  {:>9}  {:>9}  {:>10}",
                       "rank", "GPU", "TP", "max-num-seqs", "max-num-batched-tokens", "P/D", "instances",
                       "GPUs", "$/hour", "tok/s/GPU", "tok/s/user");
    for (const std::string& m : metrics) out << fmt::format("  {:>12}", m);
    out << "  verdict\n";
    for (size_t i : rows) {
      const Verified& v = verified_[i];
      const Screened& s = screened_[v.screened];
      const auto at = std::find(top_rows_.begin(), top_rows_.end(), i);
      out << fmt::format(
          "{:>4}  {:<10} {:>3}  {:>12}  {:>22}  {:<10}  {:>9}  {:>5}  {:>9}  {:>9.1f}  {:>10.1f}",
          at == top_rows_.end() ? std::string("-") : std::to_string(at - top_rows_.begin() + 1), s.gpu, s.tp,
          s.seqs, s.tokens, pd_label(s.point.unit), instances_text(v), v.gpus,
          priced() ? fmt::format("{:.2f}", v.cost) : "-", v.tps_per_gpu, v.user_tps);
      for (const auto& [m, value] : v.figures) out << fmt::format("  {:>12.2f}", value);
      out << "  " << v.verdict << "\n";
    }
  }

  void print_table(std::ostream& out) const {
    out << title() << "\n" << space_line() << "\n" << screen_line() << "\n" << completeness_line() << "\n\n";
    out << fmt::format("top {} (the cheapest verified, {}):\n", top_, priced() ? "by $/hour" : "by GPUs");
    print_rows(out, top_rows_);
    out << "\nPareto frontier (tokens/s per GPU against tokens/s per user, verified):\n";
    print_rows(out, frontier_rows_);
    out << "\n" << answer_line() << "\n";
  }

  std::string point_json(const Screened& s) const {
    return fmt::format(
        "\"hardware\": {}, \"tp\": {}, \"max_num_seqs\": {}, \"max_num_batched_tokens\": {}, \"pd\": {}",
        go_string(s.gpu), s.tp, s.seqs.empty() ? "null" : s.seqs, s.tokens.empty() ? "null" : s.tokens,
        go_string(pd_label(s.point.unit)));
  }

  std::string verified_json(const Verified& v) const {
    const Screened& s = screened_[v.screened];
    std::string out = fmt::format("{{{}", point_json(s));
    if (v.units == 0) return out + ", \"minimum_instances\": null}";
    out += fmt::format(
        ", \"minimum_instances\": {}, \"prefill_instances\": {}, \"decode_instances\": {}, \"gpus\": "
        "{}, \"dollars_per_hour\": {}, \"tokens_per_s_per_gpu\": {}, \"tokens_per_s_per_user\": {}",
        v.units * s.point.unit.instances(), v.units * s.point.unit.prefill, v.units * s.point.unit.decode,
        v.gpus, priced() ? go_float(v.cost) : "null", go_float(v.tps_per_gpu), go_float(v.user_tps));
    for (const auto& [m, value] : v.figures) out += fmt::format(", {}: {}", go_string(m), go_float(value));
    return out + fmt::format(", \"verdict\": {}, \"configuration\": {}}}", go_string(v.verdict),
                             go_string(v.configuration));
  }

  std::string rows_json(const std::vector<size_t>& rows) const {
    std::string out = "[";
    for (size_t k = 0; k < rows.size(); ++k)
      out += (k ? ",\n    " : "\n    ") + verified_json(verified_[rows[k]]);
    return out + (rows.empty() ? "]" : "\n  ]");
  }

  void print_json(std::ostream& out) const {
    std::vector<std::string> pd;
    for (const PdUnit& u : parse_pd(req_.search_pd)) pd.push_back(go_string(pd_label(u)));
    out << "{\n  \"question\": {\"model\": " << go_string(model()) << ", \"rate\": " << go_float(rate_)
        << ", \"targets\": " << go_string(targets_text()) << ", \"pd\": ["
        << fmt::format("{}", fmt::join(pd, ", "))
        << "], \"cost\": " << go_string(priced() ? "dollars per hour (--gpu-cost)" : "GPUs")
        << ", \"gpu_cost\": " << go_string(req_.gpu_cost) << ", \"top\": " << top_
        << ", \"max_instances\": " << req_.max_instances << ", \"replicates\": " << req_.replicates
        << ", \"screen\": "
        << go_string(
               "one probe per setting: one instance or P/D unit sent 2000 requests per "
               "instance at once; capacity = its completions per second; bound = "
               "floor(rate / (1.25 capacity)), estimate = ceil(rate / capacity)")
        << ", \"blis_version\": " << go_string(BLIS_VERSION) << "},\n";
    out << "  \"configurations_screened\": " << configurations() << ",\n  \"screened\": [";
    for (size_t i = 0; i < screened_.size(); ++i) {
      const Screened& s = screened_[i];
      out << (i ? ",\n    {" : "\n    {") << point_json(s) << ", \"capacity_rps\": " << go_float(s.capacity)
          << ", \"tokens_per_s_per_user_full_batch\": " << go_float(s.user_tps)
          << ", \"bound_units\": " << s.bound << ", \"estimated_units\": " << s.estimate
          << ", \"gpus_per_unit\": " << s.gpus_per_unit << ", \"fits\": " << (s.fits() ? "true" : "false")
          << ", \"verified\": " << (is_verified(i) ? "true" : "false") << "}";
    }
    out << "\n  ],\n  \"exhaustive\": " << (exhaustive_ ? "true" : "false")
        << ",\n  \"top\": " << rows_json(top_rows_) << ",\n  \"frontier\": " << rows_json(frontier_rows_)
        << ",\n  \"best\": " << (top_rows_.empty() ? "null" : verified_json(verified_[top_rows_.front()]))
        << "\n}\n";
  }

  const PlanRequest& req_;
  Progress& progress_;
  std::chrono::steady_clock::time_point
      start_;  // of the screen (its settings read, its probes run): stderr only
  int64_t top_ = kDefaultTop;
  std::vector<SloTarget> targets_;
  std::map<std::string, double> prices_;
  double rate_ = 0;
  std::vector<std::unique_ptr<PlanRequest>> requests_;  // each search keeps a reference to its request
  std::vector<std::unique_ptr<MinCountSearch>> searches_;
  std::vector<Screened> screened_;
  std::vector<Verified> verified_;
  std::vector<size_t> top_rows_, frontier_rows_;  // into verified_
  bool exhaustive_ = false;
  double unverified_from_ = -1;  // the bound cost from which settings were left unverified
};

void DeploymentSearch::write_report() const {
  if (req_.report.empty()) return;
  const Verified* best = top_rows_.empty() ? nullptr : &verified_[top_rows_.front()];
  PlanReport r = best ? searches_[best->screened]->report_data(best->units) : searches_[0]->report_data(0);
  r.title = title();
  r.answer = answer_line();
  PlanReportSearch& s = r.search;
  s.on = true;
  s.lines = {space_line(), screen_line(), completeness_line()};
  for (const Screened& x : screened_)
    if (x.fits() && x.user_tps > 0) s.screened.emplace_back(x.user_tps, x.est_tps_per_gpu(rate_));
  for (const Verified& v : verified_)
    if (v.units > 0) s.verified.emplace_back(v.user_tps, v.tps_per_gpu);
  for (size_t i : frontier_rows_) {
    const Verified& v = verified_[i];
    s.frontier.emplace_back(v.user_tps, v.tps_per_gpu);
    const Screened& x = screened_[v.screened];
    s.frontier_labels.push_back(
        fmt::format("{} TP{} {}/{} {}", x.gpu, x.tp, x.seqs, x.tokens, pd_label(x.point.unit)));
  }
  if (best) s.best = {best->user_tps, best->tps_per_gpu};
  auto rows = [&](const std::vector<size_t>& which) {
    std::vector<std::vector<std::string>> out;
    for (size_t i : which) {
      const Verified& v = verified_[i];
      const Screened& x = screened_[v.screened];
      out.push_back({x.gpu, std::to_string(x.tp), x.seqs, x.tokens, pd_label(x.point.unit), instances_text(v),
                     std::to_string(v.gpus), priced() ? fmt::format("{:.2f}", v.cost) : "-",
                     fmt::format("{:.1f}", v.tps_per_gpu), fmt::format("{:.1f}", v.user_tps), v.verdict});
    }
    return out;
  };
  s.header = {"GPU",       "TP",         "max-num-seqs", "max-num-batched-tokens",
              "P/D",       "instances",  "GPUs",         "$/hour",
              "tok/s/GPU", "tok/s/user", "verdict"};
  s.top = rows(top_rows_);
  s.frontier_rows = rows(frontier_rows_);
  write_plan_report(req_.report, r);
}

}  // namespace

bool search_deployments(const PlanRequest& request, std::ostream& out) {
  const LogOnce log_once;  // a warning about the model, once for the whole search
  Progress progress(request.quiet, "blis plan --search");
  DeploymentSearch search(request, progress);
  const bool found = search.run();
  search.write_report();
  search.print(out);
  return found;
}

}  // namespace blis
