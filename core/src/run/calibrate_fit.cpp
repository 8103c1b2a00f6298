// `blis calibrate --fit` (blis/trace.hpp): fits the latency model's
// coefficients (blackbox, trained-physics) or the KV block count to an
// observed TraceV2 by simulation in the loop. Every candidate replays the
// trace's exact request sequence in-process (run.cpp's replay, without its
// files); the loss is the mean squared log error of per-request TTFT, E2E and
// mean ITL over the first 70 % of the completed requests by send time; the last 30 %
// are held out and only scored. Nelder-Mead over log-multipliers of the
// starting coefficients (a coefficient that starts at 0 stays 0), a bracketed
// grid then golden-section search for the KV blocks. Deterministic: the same
// trace and settings give byte-identical output (docs/calibration.md "Fit").
#include <blis/errors.hpp>
#include <blis/run.hpp>
#include <blis/settings.hpp>
#include <blis/trace.hpp>

#include "run/resolve.hpp"
#include "run/simulate.hpp"
#include "util/log_once.hpp"
#include "util/output_file.hpp"
#include "workload/trace_v2.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace blis {

namespace {

constexpr double kTrainFraction = 0.7;
constexpr size_t kMinRequests = 10;  // 7 fitted, 3 held out
constexpr double kMissingPenalty = 25;  // a fitted request the candidate does not complete

// One observed request: its times (µs, from its send) and its place in time.
struct Observed {
  int64_t id = 0;
  int64_t send = 0;
  double ttft = 0, e2e = 0, itl = 0;  // itl: 0 when it has a single token
  bool has_ttft = true;               // streamed (or simulated): its first chunk is its first token
};

struct Errors {
  double ttft_mean = 0, e2e_mean = 0, ttft_p99 = 0, e2e_p99 = 0, itl_mean = 0;
  size_t missing = 0;
};

std::string hex64(uint64_t v) { return fmt::format("{:016x}", v); }

// FNV-1a over both files' bytes: the trace's identity in the provenance.
uint64_t fnv1a(const std::string& path, uint64_t h) {
  std::ifstream in(path, std::ios::binary);
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ULL;
    }
    if (!in) break;
  }
  return h;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (rank - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double pct(double sim, double real) { return real > 0 ? 100.0 * std::fabs(sim - real) / real : 0.0; }

std::string number_list(const std::vector<double>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// The trace's requests, the replay's settings and the scoring.
class Fitter {
 public:
  Fitter(const FitRequest& req, const workload::TraceV2& trace) : req_(req) {
    base_ = req.command_line;
    const int64_t warm = req.warmup_requests == -1 ? trace.header.warm_up_requests : req.warmup_requests;
    rtt_us_ = req.network_rtt_us == -1 ? trace.header.measured_rtt_ms * 1000 : static_cast<double>(req.network_rtt_us);
    for (const workload::TraceRecord& r : trace.records) {
      if (r.status != "ok" || r.request_id < warm || r.first_chunk_time_us <= 0 ||
          r.last_chunk_time_us < r.first_chunk_time_us || r.first_chunk_time_us < r.send_time_us)
        continue;
      Observed o;
      o.id = r.request_id;
      o.send = workload::injection_time(r);
      o.ttft = static_cast<double>(r.first_chunk_time_us - r.send_time_us);
      o.e2e = static_cast<double>(r.last_chunk_time_us - r.send_time_us);
      // A real answer that was not streamed arrives in one chunk: its first
      // chunk is not its first token.
      o.has_ttft = r.streaming || r.first_chunk_time_us < r.last_chunk_time_us;
      if (r.output_tokens > 1 && o.has_ttft) o.itl = (o.e2e - o.ttft) / static_cast<double>(r.output_tokens - 1);
      observed_.push_back(o);
    }
    std::stable_sort(observed_.begin(), observed_.end(),
                     [](const Observed& a, const Observed& b) { return a.send < b.send; });
    if (observed_.empty())
      throw InputError(req.trace_data, "no completed requests past the warm-up: nothing to fit");
    if (observed_.size() < kMinRequests)
      throw InputError(req.trace_data, fmt::format("{} completed requests past the warm-up; --fit needs at least {} "
                                                   "(70 % fitted, 30 % held out)",
                                                   observed_.size(), kMinRequests));
    train_ = static_cast<size_t>(std::ceil(kTrainFraction * static_cast<double>(observed_.size())));
    train_ = std::min(train_, observed_.size() - 3);
  }

  size_t train_count() const { return train_; }
  size_t heldout_count() const { return observed_.size() - train_; }
  size_t evaluations() const { return evaluations_; }

  // The configuration of one candidate: the run settings, then the candidate's.
  RunConfig config(const Settings& extra) const {
    Settings s = base_;
    for (const Setting& e : extra) s.push_back(e);
    RunConfig c = build_config({&s});
    c.replay = RunConfig::Replay{req_.trace_header, req_.trace_data, std::string("(calibrate --fit)"), "replayed"};
    return c;
  }

  // Simulates a candidate; its SimResults by request id.
  std::map<int64_t, workload::SimResult> simulate_candidate(const Settings& extra) {
    ++evaluations_;
    const RunOutcome outcome = simulate(config(extra));
    std::map<int64_t, workload::SimResult> by_id;
    for (const workload::SimResult& s : outcome.sim_results) by_id[s.request_id] = s;
    return by_id;
  }

  // Mean squared log error of TTFT, E2E and mean ITL over the fitted requests.
  double loss(const std::map<int64_t, workload::SimResult>& sim) const {
    double sum = 0;
    for (size_t i = 0; i < train_; ++i) {
      const Observed& o = observed_[i];
      const auto it = sim.find(o.id);
      if (it == sim.end()) {
        sum += kMissingPenalty;
        continue;
      }
      const double lt =
          o.has_ttft ? std::log(std::max(it->second.ttft_us + rtt_us_, 1.0) / std::max(o.ttft, 1.0)) : 0.0;
      const double le = std::log(std::max(it->second.e2e_us + rtt_us_, 1.0) / std::max(o.e2e, 1.0));
      const double li = o.itl > 0 && it->second.itl_mean_us > 0 ? std::log(it->second.itl_mean_us / o.itl) : 0.0;
      sum += lt * lt + le * le + li * li;
    }
    return sum / static_cast<double>(train_);
  }

  // The errors of the workload-level statistics over the fitted (train) or held-out requests.
  Errors errors(const std::map<int64_t, workload::SimResult>& sim, bool heldout) const {
    std::vector<double> rt, st, re, se;
    double ri = 0, si = 0;
    Errors e;
    const size_t from = heldout ? train_ : 0, to = heldout ? observed_.size() : train_;
    for (size_t i = from; i < to; ++i) {
      const Observed& o = observed_[i];
      const auto it = sim.find(o.id);
      if (it == sim.end()) {
        ++e.missing;
        continue;
      }
      if (o.has_ttft) {
        rt.push_back(o.ttft);
        st.push_back(it->second.ttft_us + rtt_us_);
      }
      re.push_back(o.e2e);
      se.push_back(it->second.e2e_us + rtt_us_);
      if (o.itl > 0) {
        ri += o.itl;
        si += it->second.itl_mean_us;
      }
    }
    if (re.empty()) return e;
    auto mean = [](const std::vector<double>& v) {
      return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    e.ttft_mean = pct(mean(st), mean(rt));
    e.e2e_mean = pct(mean(se), mean(re));
    e.ttft_p99 = rt.empty() ? 0.0 : pct(percentile(st, 99), percentile(rt, 99));
    e.e2e_p99 = pct(percentile(se, 99), percentile(re, 99));
    e.itl_mean = pct(si, ri);
    return e;
  }

 private:
  const FitRequest& req_;
  Settings base_;
  std::vector<Observed> observed_;
  size_t train_ = 0;
  double rtt_us_ = 0;
  size_t evaluations_ = 0;
};

// Nelder-Mead (reflection 1, expansion 2, contraction 1/2, shrink 1/2) from
// x0 with steps `step` along each axis; stops when the simplex's values
// agree to 1e-6 relative, or after max_evals.
struct Minimum {
  std::vector<double> x;
  double f = 0;
};
template <class F>
Minimum nelder_mead(F&& f, const std::vector<double>& x0, double step, size_t max_evals, size_t& evals) {
  const size_t n = x0.size();
  std::vector<std::vector<double>> pts(n + 1, x0);
  std::vector<double> vals(n + 1);
  for (size_t i = 0; i < n; ++i) pts[i + 1][i] += step;
  for (size_t i = 0; i <= n; ++i) vals[i] = f(pts[i]);
  evals = n + 1;
  std::vector<size_t> order(n + 1);
  auto sort = [&] {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return vals[a] < vals[b]; });
  };
  auto along = [&](const std::vector<double>& c, const std::vector<double>& w, double t) {
    std::vector<double> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = c[i] + t * (w[i] - c[i]);
    return p;
  };
  while (evals < max_evals) {
    sort();
    const size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (vals[worst] - vals[best] <= 1e-6 * (std::fabs(vals[best]) + 1e-12)) break;
    std::vector<double> c(n, 0.0);
    for (size_t k = 0; k < n; ++k)
      for (size_t i = 0; i < n; ++i) c[i] += pts[order[k]][i] / static_cast<double>(n);
    const std::vector<double> xr = along(c, pts[worst], -1.0);
    const double fr = f(xr);
    ++evals;
    if (fr < vals[best]) {
      const std::vector<double> xe = along(c, pts[worst], -2.0);
      const double fe = f(xe);
      ++evals;
      if (fe < fr) pts[worst] = xe, vals[worst] = fe;
      else pts[worst] = xr, vals[worst] = fr;
      continue;
    }
    if (fr < vals[second]) {
      pts[worst] = xr, vals[worst] = fr;
      continue;
    }
    const bool outside = fr < vals[worst];
    const std::vector<double> xc = along(c, outside ? xr : pts[worst], 0.5);
    const double fc = f(xc);
    ++evals;
    if (fc < (outside ? fr : vals[worst])) {
      pts[worst] = xc, vals[worst] = fc;
      continue;
    }
    for (size_t k = 1; k <= n; ++k) {
      const size_t j = order[k];
      pts[j] = along(pts[best], pts[j], 0.5);
      vals[j] = f(pts[j]);
      ++evals;
    }
  }
  sort();
  return {pts[order.front()], vals[order.front()]};
}

nlohmann::ordered_json errors_json(const Errors& e) {
  nlohmann::ordered_json j;
  j["ttft_mean_error_pct"] = e.ttft_mean;
  j["e2e_mean_error_pct"] = e.e2e_mean;
  j["ttft_p99_error_pct"] = e.ttft_p99;
  j["e2e_p99_error_pct"] = e.e2e_p99;
  j["itl_mean_error_pct"] = e.itl_mean;
  if (e.missing > 0) j["not_completed"] = e.missing;
  return j;
}

// The fitted file: the resolved model, latency, KV-cache, batching and
// cluster sections of --dump-config, under provenance comments.
std::string fitted_file(const RunConfig& fitted, const std::vector<std::string>& provenance) {
  std::string dump = dump_config(fitted);
  std::istringstream in(dump);
  std::string line, out;
  for (const std::string& p : provenance) out.append(fmt::format("# {}\n", p));
  out += "# `blis run THIS_FILE` (with a workload) predicts with the fitted model.\n";
  bool keep = false;
  static const std::vector<std::string> kKept = {"model", "latency", "kv-cache", "batching", "cluster"};
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') {
      keep = false;
      for (const std::string& k : kKept)
        if (line == fmt::format("[{}]", k) || line.rfind(fmt::format("[{}.", k), 0) == 0) keep = true;
      if (keep) out += "\n";
    }
    if (keep && !line.empty()) out.append(line).append("\n");
  }
  return out;
}

// What a fit found, and where it started.
struct Fit {
  std::vector<double> alpha0, beta0, alpha, beta;
  int64_t blocks0 = 0, blocks = 0;
  double start_loss = 0, final_loss = 0;
  std::string method;
  std::vector<std::string> names;  // the fitted parameters
  Errors start_heldout, heldout, train;

  // A candidate's settings. Every coefficient candidate keeps the start's KV
  // blocks: given coefficients would otherwise turn the table's count into
  // the computed one.
  Settings coefficients(const std::vector<double>& a, const std::vector<double>& b) const {
    Settings s{Setting{"alpha_coeffs", number_list(a), "--fit"}, Setting{"beta_coeffs", number_list(b), "--fit"}};
    if (blocks0 > 0) s.push_back(Setting{"total_kv_blocks", std::to_string(blocks0), "--fit"});
    return s;
  }
  static Settings kv_blocks(int64_t n) { return Settings{Setting{"total_kv_blocks", std::to_string(n), "--fit"}}; }
};

void check_request(const FitRequest& req) {
  if (req.kind != "blackbox" && req.kind != "trained-physics" && req.kind != "kv-blocks")
    throw InputError("--fit", "unknown fit '" + req.kind + "'; use blackbox, trained-physics or kv-blocks");
  if (req.format != "table" && req.format != "json")
    throw InputError("--format", "unknown format '" + req.format + "' for calibrate --fit; use table or json");
  if (req.network_rtt_us < -1) throw InputError("--network-rtt-us", "must be >= 0");
  if (req.warmup_requests < -1) throw InputError("--warmup-requests", "must be >= 0");
  if (req.max_evaluations < 10) throw InputError("--fit-max-evals", "must be >= 10");
  if (!req.output.empty()) check_writable(req.output, "--fit-output");
}

// The request with the fitted latency model chosen (a coefficient fit), or
// refused when the run settings name another one.
FitRequest with_latency_model(const FitRequest& req) {
  FitRequest r = req;
  if (req.kind == "kv-blocks") return r;
  bool given = false;
  for (const Setting& s : r.command_line) {
    if (s.flag != "latency_model") continue;
    given = true;
    if (s.value != req.kind)
      throw InputError(s.where, "--fit " + req.kind + " fits the " + req.kind + " latency model; this says '" +
                                    s.value + "'");
  }
  if (!given) r.command_line.push_back(Setting{"latency_model", req.kind, "--fit"});
  return r;
}

// Nelder-Mead over log-multipliers of the nonzero starting coefficients
// (blackbox: each; trained-physics: each alpha, one for all of beta),
// restarted from its best point with a fresh simplex while that still
// improves the loss (a collapsed simplex stops early otherwise).
void fit_coefficients(Fitter& fitter, const FitRequest& req, Fit& fit) {
  if (fit.alpha0.empty() || fit.beta0.empty())
    throw InputError("--fit", req.kind + " resolved no coefficients to start from: give --alpha-coeffs and "
                                         "--beta-coeffs (the starting point)");
  struct Param {
    bool is_alpha;
    size_t index;  // trained-physics' beta: SIZE_MAX = all
  };
  std::vector<Param> params;
  for (size_t i = 0; i < fit.alpha0.size(); ++i)
    if (fit.alpha0[i] != 0) params.push_back({true, i}), fit.names.push_back(fmt::format("alpha{}", i));
  if (req.kind == "blackbox") {
    for (size_t i = 0; i < fit.beta0.size(); ++i)
      if (fit.beta0[i] != 0) params.push_back({false, i}), fit.names.push_back(fmt::format("beta{}", i));
  } else {
    params.push_back({false, SIZE_MAX});
    fit.names.push_back("beta (all, one scale)");
  }
  auto apply = [&](const std::vector<double>& x, std::vector<double>& a, std::vector<double>& b) {
    a = fit.alpha0;
    b = fit.beta0;
    for (size_t k = 0; k < params.size(); ++k) {
      const double m = std::exp(std::clamp(x[k], -4.0, 4.0));
      if (params[k].is_alpha) a[params[k].index] *= m;
      else if (params[k].index == SIZE_MAX)
        for (double& v : b) v *= m;
      else
        b[params[k].index] *= m;
    }
  };
  auto f = [&](const std::vector<double>& x) {
    std::vector<double> a, b;
    apply(x, a, b);
    return fitter.loss(fitter.simulate_candidate(fit.coefficients(a, b)));
  };
  const auto budget = static_cast<size_t>(req.max_evaluations);
  Minimum m{std::vector<double>(params.size(), 0.0), fit.start_loss};
  size_t used = 0;
  for (int round = 0; round < 6 && used < budget; ++round) {
    size_t evals = 0;
    const Minimum next = nelder_mead(f, m.x, round == 0 ? 0.25 : 0.1, budget - used, evals);
    used += evals;
    const bool better = next.f < m.f * (1 - 1e-3);
    if (next.f <= m.f) m = next;
    if (!better) break;
  }
  apply(m.x, fit.alpha, fit.beta);
  fit.final_loss = m.f;
  fit.method = "Nelder-Mead over log-multipliers of the starting coefficients, restarted from its best point";
}

// A geometric grid of 25 counts from the least any request needs to four
// times the start, then golden-section between the best count's neighbours.
void fit_kv_blocks(Fitter& fitter, const workload::TraceV2& trace, int64_t block_size, Fit& fit) {
  int64_t need = 1;
  for (const workload::TraceRecord& rec : trace.records)
    need = std::max(need, (rec.input_tokens + rec.prefix_length + rec.output_tokens + block_size - 1) / block_size + 1);
  const int64_t lo = need, hi = std::max<int64_t>(need + 1, 4 * std::max<int64_t>(fit.blocks0, need));
  std::map<int64_t, double> seen;
  auto f = [&](int64_t n) {
    if (const auto it = seen.find(n); it != seen.end()) return it->second;
    return seen[n] = fitter.loss(fitter.simulate_candidate(Fit::kv_blocks(n)));
  };
  constexpr int kGrid = 24;
  std::vector<int64_t> grid;
  for (int i = 0; i <= kGrid; ++i) {
    const double ratio = static_cast<double>(hi) / static_cast<double>(lo);
    const auto n = static_cast<int64_t>(std::llround(static_cast<double>(lo) * std::pow(ratio, i / double(kGrid))));
    if (grid.empty() || n > grid.back()) grid.push_back(n);
  }
  size_t best = 0;
  for (size_t i = 0; i < grid.size(); ++i)
    if (f(grid[i]) < f(grid[best])) best = i;  // ties keep the smallest count
  int64_t a = grid[best == 0 ? 0 : best - 1], b = grid[std::min(best + 1, grid.size() - 1)];
  while (b - a > 2 && static_cast<double>(b - a) > 0.005 * static_cast<double>(a)) {
    const auto step = static_cast<int64_t>(std::llround(0.381966 * static_cast<double>(b - a)));
    if (f(a + step) <= f(b - step)) b = b - step;
    else a = a + step;
  }
  fit.blocks = grid[best];
  for (const auto& [n, v] : seen)
    if (n >= a && n <= b && v < seen[fit.blocks]) fit.blocks = n;
  fit.final_loss = seen[fit.blocks];
  fit.names.push_back("total_kv_blocks");
  fit.method = "grid of 25 block counts (geometric) then golden-section search";
  // A trace that never fills the cache leaves the loss flat above its working
  // set: without a clear gain the start's count stays.
  if (fit.final_loss >= fit.start_loss * (1 - 1e-2)) {
    fit.blocks = fit.blocks0;
    fit.final_loss = fit.start_loss;
    fit.method += "; no count fits 1 % better than the start's, which stays";
  }
}

nlohmann::ordered_json fit_json(const FitRequest& req, const workload::TraceV2& trace, const Fitter& fitter,
                                const Fit& fit, const std::string& latency_model, const std::string& hash) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json c;
  c["latency_model"] = latency_model;
  c["alpha_coeffs"] = fit.alpha;
  c["beta_coeffs"] = fit.beta;
  c["total_kv_blocks"] = fit.blocks;
  j["coefficients"] = c;
  j["heldout"] = errors_json(fit.heldout);
  nlohmann::ordered_json f;
  f["kind"] = req.kind;
  f["method"] = fit.method;
  f["parameters"] = fit.names;
  f["loss"] = "mean squared log error of per-request TTFT, E2E and mean ITL";
  f["split"] = "time: the first 70 % of the completed requests by send time fitted, the rest held out";
  f["fitted_requests"] = fitter.train_count();
  f["heldout_requests"] = fitter.heldout_count();
  f["simulations"] = fitter.evaluations();
  f["start_loss"] = fit.start_loss;
  f["final_loss"] = fit.final_loss;
  f["start_coefficients"] = {
      {"alpha_coeffs", fit.alpha0}, {"beta_coeffs", fit.beta0}, {"total_kv_blocks", fit.blocks0}};
  f["start_heldout"] = errors_json(fit.start_heldout);
  f["fitted_error"] = errors_json(fit.train);
  f["trace_fnv1a64"] = hash;
  f["server_type"] = trace.header.server_type;
  f["server_model"] = trace.header.server_model;
  if (!req.output.empty()) f["output"] = req.output;
  j["fit"] = f;
  return j;
}

void print_table(std::ostream& out, const FitRequest& req, const workload::TraceV2& trace, const Fitter& fitter,
                 const Fit& fit) {
  out << fmt::format("Fit {} to {} ({} {}): {} requests fitted, {} held out (time split)\n", req.kind,
                     req.trace_data, trace.header.server_type.empty() ? "server ?" : trace.header.server_type,
                     trace.header.server_model, fitter.train_count(), fitter.heldout_count());
  out << fmt::format("{}: {} simulations, loss {:.6f} -> {:.6f}\n\n", fit.method, fitter.evaluations(),
                     fit.start_loss, fit.final_loss);
  out << fmt::format("{:<18}{:>22}{:>22}\n", "coefficient", "start", "fitted");
  if (req.kind != "kv-blocks") {
    for (size_t i = 0; i < fit.alpha.size(); ++i)
      out << fmt::format("{:<18}{:>22.6f}{:>22.6f}\n", fmt::format("alpha{}", i), fit.alpha0[i], fit.alpha[i]);
    for (size_t i = 0; i < fit.beta.size(); ++i)
      out << fmt::format("{:<18}{:>22.6f}{:>22.6f}\n", fmt::format("beta{}", i), fit.beta0[i], fit.beta[i]);
  } else {
    out << fmt::format("{:<18}{:>22}{:>22}\n", "total_kv_blocks", fit.blocks0, fit.blocks);
  }
  out << fmt::format("\n{:<24}{:>12}{:>12}\n", "held-out error (%)", "start", "fitted");
  const std::pair<const char*, double Errors::*> rows[] = {{"TTFT mean", &Errors::ttft_mean},
                                                           {"TTFT p99", &Errors::ttft_p99},
                                                           {"E2E mean", &Errors::e2e_mean},
                                                           {"E2E p99", &Errors::e2e_p99},
                                                           {"ITL mean", &Errors::itl_mean}};
  for (const auto& [name, field] : rows)
    out << fmt::format("{:<24}{:>12.2f}{:>12.2f}\n", name, fit.start_heldout.*field, fit.heldout.*field);
  if (!req.output.empty()) out << "\nFitted model written to " << req.output << "\n";
}

std::vector<std::string> provenance(const FitRequest& req, const workload::TraceV2& trace, const Fitter& fitter,
                                    const Fit& fit, const std::string& hash) {
  const std::string server = trace.header.server_type.empty() && trace.header.server_model.empty()
                                 ? std::string("(none in the header)")
                                 : trace.header.server_type + " " + trace.header.server_model;
  const Errors& h = fit.heldout;
  return {"Fitted by blis calibrate --fit " + req.kind + " (" + fit.method + ").",
          "Trace: " + req.trace_header + ", " + req.trace_data + " (fnv1a64 " + hash + "), mode " +
              trace.header.mode + ", server " + server + ".",
          fmt::format("Sample: {} completed requests past the warm-up; the first {} by send time fitted, the last {} "
                      "held out.",
                      fitter.train_count() + fitter.heldout_count(), fitter.train_count(), fitter.heldout_count()),
          fmt::format("Held-out error: TTFT mean {:.2f} %, p99 {:.2f} %; E2E mean {:.2f} %, p99 {:.2f} %; ITL mean "
                      "{:.2f} %.",
                      h.ttft_mean, h.ttft_p99, h.e2e_mean, h.e2e_p99, h.itl_mean)};
}

}  // namespace

void calibrate_fit(const FitRequest& req, std::ostream& out) {
  check_request(req);
  const LogOnce log_once;  // a warning about the model, once, not once per candidate
  const std::clock_t cpu0 = std::clock();
  const workload::TraceV2 trace = workload::load_trace_v2(req.trace_header, req.trace_data);
  const FitRequest r = with_latency_model(req);
  Fitter fitter(r, trace);

  // The starting point: what the run settings resolve to.
  const RunConfig start_config = fitter.config({});
  set_log_level(start_config.outputs.log_level);
  RunContext ctx = RunContext::open(start_config);
  const ResolvedRun resolved = resolve(start_config, ctx);
  Fit fit;
  fit.alpha0 = fit.alpha = resolved.alpha;
  fit.beta0 = fit.beta = resolved.beta;
  fit.blocks0 = fit.blocks = resolved.config.pool().engine.total_kv_blocks.value_or(0);
  const bool coefficients = req.kind != "kv-blocks";

  // The settings' warnings came with resolve(); a replay's own (its steady
  // state, ...) say nothing about the fit.
  const spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(std::max(level, spdlog::level::err));
  const auto start_sim = fitter.simulate_candidate(coefficients ? Settings{} : Fit::kv_blocks(fit.blocks0));
  fit.start_loss = fit.final_loss = fitter.loss(start_sim);
  fit.start_heldout = fitter.errors(start_sim, true);
  if (coefficients) fit_coefficients(fitter, req, fit);
  else fit_kv_blocks(fitter, trace, resolved.config.pool().engine.block_size, fit);
  const Settings fitted = coefficients ? fit.coefficients(fit.alpha, fit.beta) : Fit::kv_blocks(fit.blocks);
  const auto final_sim = fitter.simulate_candidate(fitted);
  spdlog::set_level(level);
  fit.heldout = fitter.errors(final_sim, true);
  fit.train = fitter.errors(final_sim, false);
  const double cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;

  const std::string hash = hex64(fnv1a(req.trace_data, fnv1a(req.trace_header, 1469598103934665603ULL)));
  if (!req.output.empty()) {
    Settings settings = r.command_line;
    for (const Setting& s : fitted) settings.push_back(s);
    write_output(req.output, fitted_file(build_config({&settings}), provenance(req, trace, fitter, fit, hash)), out);
  }
  if (req.format == "json") out << fit_json(req, trace, fitter, fit, resolved.latency_model, hash).dump(2) << "\n";
  else print_table(out, req, trace, fitter, fit);
  out << std::flush;
  std::cerr << fmt::format("calibrate --fit: {} simulations, {:.2f} s CPU\n", fitter.evaluations(), cpu_s);
}

}  // namespace blis
