#include "metrics/steady_window.hpp"

#include "metrics/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

namespace blis {

double student_t975(int64_t df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return 0;
  return df <= 30 ? table[df - 1] : 1.96;
}

void TimedSampleProbe::on_completed(Request& r, SimTime) {
  if (!enabled_) return;
  const int64_t ttft = r.timing.ttft(), e2e = r.timing.e2e();
  if (ttft < 0 || e2e < 0) return;
  const int64_t at = r.spec.arrival_us;
  s_.ttft.push_back({at, ttft, 1});
  s_.e2e.push_back({at, e2e, 1});
  if (r.spec.output_tokens > 1) s_.tpot.push_back({at, std::llround(r.timing.itl_avg()), 1});
}

namespace {

// The statistic (ms) of the values [from, to) of `w`, in any order (a
// percentile reorders them).
double statistic(WeightedValues& w, size_t from, size_t to, double stat) {
  if (stat >= 0) return percentile_unsorted(w, from, to, stat, 1000);
  WeightedValues part(w.begin() + static_cast<std::ptrdiff_t>(from),
                      w.begin() + static_cast<std::ptrdiff_t>(to));
  normalize(part);
  return summarize(part, 1000).mean;
}

// The values of the samples in the window, grouped by batch in time order
// (a counting sort: the order within a batch is irrelevant to its
// statistic); batch b holds values [edge[b], edge[b + 1]).
struct Batched {
  WeightedValues values;
  std::vector<size_t> edge = std::vector<size_t>(kSteadyBatches + 1, 0);
};

constexpr size_t kOut = kSteadyBatches;  // a sample outside the window

// A sample's batch is the last b whose start is at or before it (as the
// comparisons of a walk over the samples sorted by time put it), kOut
// outside the window. Samples come in runs of rising times (an instance's
// steps): the last sample's batch is tried first.
class BatchOf {
 public:
  BatchOf(double from, double width) {
    for (size_t b = 0; b <= kSteadyBatches; ++b) start_[b] = from + width * static_cast<double>(b);
  }
  size_t operator()(int64_t time) {
    const auto at = static_cast<double>(time);
    if (start_[last_] <= at && at < start_[last_ + 1]) return last_;
    if (at < start_[0] || at >= start_[kOut]) return kOut;
    last_ = static_cast<size_t>(std::upper_bound(start_.begin(), start_.end(), at) - start_.begin() - 1);
    return last_;
  }

 private:
  std::array<double, kSteadyBatches + 1> start_{};
  size_t last_ = 0;
};

Batched batch(const std::vector<TimedSample>& v, double from, double width) {
  BatchOf batch_of(from, width);
  std::vector<uint8_t> of(v.size());
  std::array<size_t, kSteadyBatches + 1> count{};
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t b = batch_of(v[i].at);
    of[i] = static_cast<uint8_t>(b);
    ++count[b];
  }
  Batched out;
  for (size_t b = 0; b < kSteadyBatches; ++b) out.edge[b + 1] = out.edge[b] + count[b];
  out.values.resize(out.edge[kSteadyBatches]);
  std::vector<size_t> next(out.edge.begin(), out.edge.end() - 1);
  for (size_t i = 0; i < v.size(); ++i)
    if (of[i] != kOut) out.values[next[of[i]]++] = {v[i].value, v[i].weight};
  return out;
}

// The samples of each batch as a weight per value, when every value lies
// within a span small beside their number (an inter-token latency is a
// step's time: a few thousand distinct µs over a million steps). A
// percentile is then a walk over the weights, and the window's weights are
// the sum of its batches'.
struct Counted {
  int64_t lo = 0;
  size_t span = 0;
  std::vector<int64_t> weight;  // batch b's at [b * span, (b + 1) * span)
  std::array<size_t, kSteadyBatches> samples{};
  double of_batch(size_t b, double stat) const {
    return percentile_of_counts(&weight[b * span], span, lo, stat, 1000);
  }
  double from_batch(size_t first, double stat) const {
    std::vector<int64_t> window(weight.begin() + static_cast<std::ptrdiff_t>(first * span),
                                weight.begin() + static_cast<std::ptrdiff_t>((first + 1) * span));
    for (size_t b = first + 1; b < kSteadyBatches; ++b)
      for (size_t i = 0; i < span; ++i) window[i] += weight[b * span + i];
    return percentile_of_counts(window.data(), span, lo, stat, 1000);
  }
};

// `v` and the steps of `parts` counted, when their values span little.
std::optional<Counted> count_by_value(const std::vector<TimedSample>& v, const std::vector<TimedSteps>& parts,
                                      double from, double width) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  size_t n = v.size();
  for (const TimedSample& x : v) lo = std::min(lo, x.value), hi = std::max(hi, x.value);
  for (const TimedSteps& p : parts) lo = std::min(lo, p.lo), hi = std::max(hi, p.hi), n += p.steps;
  if (hi < lo) return std::nullopt;
  constexpr uint64_t kMaxSpan = uint64_t{1} << 16;
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (span > kMaxSpan || span * kSteadyBatches > 2 * n) return std::nullopt;
  Counted out;
  out.lo = lo;
  out.span = static_cast<size_t>(span);
  out.weight.assign(out.span * kSteadyBatches, 0);
  BatchOf batch_of(from, width);
  auto add = [&](int64_t at, int64_t value, int64_t weight) {
    const size_t b = batch_of(at);
    if (b == kOut) return;
    ++out.samples[b];
    out.weight[b * out.span + static_cast<size_t>(value - lo)] += weight;
  };
  for (const TimedSample& x : v) add(x.at, x.value, x.weight);
  for (const TimedSteps& p : parts) for_each_timed_step(p, add);
  return out;
}

// Batches MSER keeps at least: with fewer, two or three close values at the
// end of a steady series score best by chance.
constexpr size_t kFewestKept = 5;

// MSER's truncation of `series`: the d minimising the squared deviations of
// series[d..] over (n - d)^2, keeping at least kFewestKept batches.
size_t mser(const std::vector<double>& series) {
  const size_t n = series.size();
  size_t best = 0;
  double best_score = INFINITY;
  for (size_t d = 0; d + kFewestKept <= n; ++d) {
    double sum = 0;
    for (size_t i = d; i < n; ++i) sum += series[i];
    const double mean = sum / static_cast<double>(n - d);
    double sq = 0;
    for (size_t i = d; i < n; ++i) sq += (series[i] - mean) * (series[i] - mean);
    const double score = sq / (static_cast<double>(n - d) * static_cast<double>(n - d));
    if (score < best_score) best_score = score, best = d;
  }
  return best;
}

// Does series[from..] still move: its least-squares slope, over the batches
// it spans, changes it by more than 5 % of its mean and more than twice the
// slope's standard error.
bool moving(const std::vector<double>& series, size_t from) {
  const size_t n = series.size() - from;
  if (n < 3) return false;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < n; ++i) sx += static_cast<double>(i), sy += series[from + i];
  const double mx = sx / static_cast<double>(n), my = sy / static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(i) - mx;
    sxx += dx * dx;
    sxy += dx * (series[from + i] - my);
  }
  const double slope = sxy / sxx;
  double rss = 0;
  for (size_t i = 0; i < n; ++i) {
    const double e = series[from + i] - (my + slope * (static_cast<double>(i) - mx));
    rss += e * e;
  }
  const double se = std::sqrt(rss / static_cast<double>(n - 2) / sxx);
  const double change = std::abs(slope) * static_cast<double>(n);
  return change > 0.05 * std::abs(my) && std::abs(slope) > 2 * se;
}

const std::vector<TimedSample>* family_of(const TimedSamples& s, const std::string& family) {
  if (family == "ttft") return &s.ttft;
  if (family == "e2e") return &s.e2e;
  if (family == "tpot") return &s.tpot;
  if (family == "itl") return &s.itl;
  return nullptr;
}

// Mean E2E of the completed requests, µs.
double mean_e2e(const TimedSamples& s) {
  double sum = 0;
  for (const TimedSample& x : s.e2e) sum += static_cast<double>(x.value);
  return s.e2e.empty() ? 0 : sum / static_cast<double>(s.e2e.size());
}

}  // namespace

std::vector<TimedSample> itl_samples(const TimedSamples& s) {
  std::vector<TimedSample> out = s.itl;
  for (const TimedSteps& p : s.itl_steps)
    for_each_timed_step(p, [&](int64_t at, int64_t value, int64_t weight) {
      out.push_back({at, value, weight});
    });
  return out;
}

SteadyMeasure measure_steady(const TimedSamples& s, const std::string& family, double stat) {
  SteadyMeasure m;
  const std::vector<TimedSample>* found = family_of(s, family);
  // The inter-token latencies of instances' steps, read in place (TimedSteps).
  static const std::vector<TimedSteps> kNoSteps;
  const std::vector<TimedSteps>& parts = family == "itl" ? s.itl_steps : kNoSteps;
  const bool none = std::all_of(parts.begin(), parts.end(), [](const TimedSteps& p) { return p.hi < p.lo; });
  if (found == nullptr || (found->empty() && none) || s.empty()) return m;
  // The span measured: the arrival window; for requests keyed by arrival,
  // without the last mean E2E (at most half the window).
  const double from = static_cast<double>(s.first_arrival);
  double to = static_cast<double>(s.last_arrival) + 1;
  if (family != "itl") to -= std::min(mean_e2e(s), (to - from) / 2);
  const double width = (to - from) / kSteadyBatches;
  // A percentile of values in a small span: by counting (the same order
  // statistics as selecting them, so the same figures).
  const std::optional<Counted> counted =
      stat >= 0 ? count_by_value(*found, parts, from, width) : std::nullopt;
  Batched batched;
  if (!counted && parts.empty()) {
    batched = batch(*found, from, width);
  } else if (!counted) {
    batched = batch(itl_samples(s), from, width);  // `found` is s.itl
  }
  WeightedValues& v = batched.values;
  const std::vector<size_t>& edge = batched.edge;
  std::vector<double> series;
  std::vector<int> batch_of;  // the batch of each point of the series (empty batches have none)
  for (int b = 0; b < kSteadyBatches; ++b) {
    const auto u = static_cast<size_t>(b);
    if (counted ? counted->samples[u] == 0 : edge[u] == edge[u + 1]) continue;
    series.push_back(counted ? counted->of_batch(u, stat) : statistic(v, edge[u], edge[u + 1], stat));
    batch_of.push_back(b);
  }
  if (series.size() < kFewestKept) return m;
  // A truncation in the second half is a drift when the second half still
  // moves; otherwise it is MSER's end effect, and the second half is kept.
  size_t d = mser(series);
  if (d > series.size() / 2) {
    m.drifting = moving(series, series.size() / 2);
    if (!m.drifting) d = series.size() / 2;
  }
  const int first = batch_of[d];
  m.measured = true;
  m.warm_up_s = width * first / 1e6;
  m.window_s = width * (kSteadyBatches - first) / 1e6;
  m.value_ms = counted ? counted->from_batch(static_cast<size_t>(first), stat)
                       : statistic(v, edge[static_cast<size_t>(first)], edge[kSteadyBatches], stat);
  const size_t half = series.size() / 2;
  double early = 0, late = 0;
  for (size_t j = 0; j < series.size(); ++j) (j < half ? early : late) += series[j];
  m.rising = late / static_cast<double>(series.size() - half) > early / static_cast<double>(half);
  // The batch-means interval over the batches kept.
  const double k = static_cast<double>(series.size() - d);
  double sum = 0, sq = 0;
  for (size_t j = d; j < series.size(); ++j) sum += series[j];
  const double mean = sum / k;
  for (size_t j = d; j < series.size(); ++j) sq += (series[j] - mean) * (series[j] - mean);
  m.half_width_ms = k > 1 ? student_t975(static_cast<int64_t>(k) - 1) * std::sqrt(sq / (k - 1)) / std::sqrt(k) : 0;
  return m;
}

}  // namespace blis
