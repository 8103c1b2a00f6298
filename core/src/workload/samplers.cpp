// Arrival and length samplers (spec workload §6.10, §6.11). Arithmetic is
// written in the reference's operation order; the project compiles with
// -ffp-contract=off so no multiply-add is fused.
#include "workload/samplers.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "blis/errors.hpp"

namespace blis::workload {

namespace {

constexpr double kSmallestSubnormal = 4.9406564584124654e-324;  // Go's math.SmallestNonzeroFloat64

double require_param(const DistSpec& spec, const char* name, const std::string& where) {
  const auto it = spec.params.find(name);
  if (it == spec.params.end()) {
    throw InputError(where + ".params." + name,
                     "missing required parameter of the " + spec.type + " distribution");
  }
  return it->second;
}

// Leading optionally signed decimal integer of an empirical bin key; trailing
// characters are ignored ("12abc" -> 12, "100.5" -> 100; spec workload §5.5).
bool parse_bin_key(const std::string& key, int64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (i < key.size() && (key[i] == '+' || key[i] == '-')) negative = key[i++] == '-';
  const size_t digits_start = i;
  // Accumulate as a negative number so INT64_MIN parses too.
  int64_t value = 0;
  for (; i < key.size() && key[i] >= '0' && key[i] <= '9'; ++i) {
    const int digit = key[i] - '0';
    if (value < (std::numeric_limits<int64_t>::min() + digit) / 10) return false;  // overflow
    value = value * 10 - digit;
  }
  if (i == digits_start) return false;
  if (!negative) {
    if (value == std::numeric_limits<int64_t>::min()) return false;
    value = -value;
  }
  *out = value;
  return true;
}

// n = trunc(round(v)); values < 1 (including the INT64_MIN of unrepresentable
// values) become 1.
int64_t round_floor1(double v) { return std::max<int64_t>(1, go_trunc(std::round(v))); }

}  // namespace

int64_t go_trunc(double x) {
  // [-2^63, 2^63) is exactly the range cvttsd2si converts; NaN fails both tests.
  if (x >= -9223372036854775808.0 && x < 9223372036854775808.0) return static_cast<int64_t>(x);
  return std::numeric_limits<int64_t>::min();
}

double go_max(double a, double b) {
  if (std::isinf(a) && a > 0) return a;
  if (std::isinf(b) && b > 0) return b;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;  // +0 beats -0
  return a > b ? a : b;
}

double go_min(double a, double b) {
  if (std::isinf(a) && a < 0) return a;
  if (std::isinf(b) && b < 0) return b;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;  // -0 beats +0
  return a < b ? a : b;
}

double weibull_shape_from_cv(double cv, bool* converged) {
  // spec workload §6.10: CV of Weibull(k) is sqrt(G(1+2/k)/G(1+1/k)^2 - 1),
  // decreasing in k; bisect on [0.1, 100] for at most 100 steps.
  double lo = 0.1, hi = 100.0;
  for (int iter = 0; iter < 100; ++iter) {
    const double mid = (lo + hi) / 2;
    const double g1 = std::tgamma(1 + 1 / mid);
    const double g2 = std::tgamma(1 + 2 / mid);
    const double cv_mid = std::sqrt(g2 / (g1 * g1) - 1);
    if (std::fabs(cv_mid - cv) < 0.001) {
      if (converged) *converged = true;
      return mid;
    }
    if (cv_mid > cv) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  if (converged) *converged = false;
  return (lo + hi) / 2;
}

double sample_gamma(GoRand& rng, double alpha, double theta) {
  if (alpha < 1) {
    // Ahrens-Dieter boost; the uniform is drawn before the recursive draw.
    const double u = rng.float64();
    return sample_gamma(rng, alpha + 1, theta) * std::pow(u, 1 / alpha);
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x, v;
    do {
      x = rng.norm_float64();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rng.float64();
    if (u < 1 - 0.0331 * (x * x) * (x * x)) return d * v * theta;
    if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v * theta;
  }
}

ArrivalSampler::ArrivalSampler(const ArrivalSpec& spec, double rate, const std::string& where) {
  rate_ = go_max(rate, 1e-15);
  double cv = spec.cv.value_or(1.0);
  if (cv <= 0) cv = 1.0;
  if (spec.process == "constant") {
    kind_ = Kind::kConstant;
    constant_iat_ = std::max<int64_t>(1, go_trunc(1.0 / rate_));
  } else if (spec.process == "gamma") {
    // Only a cohort's cv escapes validation; NaN would make the reference's
    // rejection loop spin forever.
    if (std::isnan(cv)) throw InputError(where + ".arrival.cv", "a NaN cv can never yield a gamma arrival");
    alpha_ = 1 / (cv * cv);
    const double mean = 1 / rate_;
    theta_ = mean * cv * cv;
    if (alpha_ < 0.01) {
      spdlog::warn("{}: gamma arrival cv {} > 10 is too bursty to sample; using poisson arrivals",
                   where, cv);
      kind_ = Kind::kPoisson;
    } else {
      kind_ = Kind::kGamma;
    }
  } else if (spec.process == "weibull") {
    kind_ = Kind::kWeibull;
    bool converged = true;
    shape_ = weibull_shape_from_cv(cv, &converged);
    if (!converged) {
      spdlog::warn("{}: weibull shape for cv {} did not converge; using k = {}", where, cv, shape_);
    }
    scale_ = (1 / rate_) / std::tgamma(1 + 1 / shape_);
  } else {
    kind_ = Kind::kPoisson;  // validation admits only the four processes
  }
}

int64_t ArrivalSampler::next(GoRand& rng) const {
  switch (kind_) {
    case Kind::kConstant:
      return constant_iat_;
    case Kind::kPoisson:
      return std::max<int64_t>(1, go_trunc(rng.exp_float64() / rate_));
    case Kind::kGamma:
      return std::max<int64_t>(1, go_trunc(sample_gamma(rng, alpha_, theta_)));
    case Kind::kWeibull: {
      double u = rng.float64();
      if (u == 0) u = kSmallestSubnormal;
      return std::max<int64_t>(1, go_trunc(scale_ * std::pow(-std::log(u), 1 / shape_)));
    }
  }
  return 1;
}

LengthSampler::LengthSampler(const DistSpec& spec, const std::string& where) {
  if (spec.type == "gaussian") {
    kind_ = Kind::kGaussian;
    mean_ = require_param(spec, "mean", where);
    std_dev_ = require_param(spec, "std_dev", where);
    min_ = go_trunc(require_param(spec, "min", where));
    max_ = go_trunc(require_param(spec, "max", where));
  } else if (spec.type == "exponential") {
    kind_ = Kind::kExponential;
    mean_ = require_param(spec, "mean", where);
  } else if (spec.type == "pareto_lognormal") {
    kind_ = Kind::kParetoLognormal;
    alpha_ = require_param(spec, "alpha", where);
    xm_ = require_param(spec, "xm", where);
    mu_ = require_param(spec, "mu", where);
    sigma_ = require_param(spec, "sigma", where);
    mix_weight_ = require_param(spec, "mix_weight", where);
  } else if (spec.type == "constant") {
    kind_ = Kind::kConstant;
    min_ = std::max<int64_t>(1, go_trunc(require_param(spec, "value", where)));
  } else if (spec.type == "empirical") {
    kind_ = Kind::kEmpirical;
    if (spec.params.empty()) {
      throw InputError(where + ".params", "empirical distribution has no bins");
    }
    // (value, weight) sorted by value; equal values stay adjacent, which
    // samples the same as one bin holding their summed weight.
    std::vector<std::pair<int64_t, double>> raw;
    double total = 0;
    for (const auto& [key, weight] : spec.params) {
      int64_t value = 0;
      if (!parse_bin_key(key, &value)) {
        throw InputError(where + ".params." + key,
                         "empirical bin key is not an integer token count");
      }
      raw.emplace_back(value, weight);
    }
    std::stable_sort(raw.begin(), raw.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    // All weights, even those <= 0 (spec workload §6.11), summed in ascending
    // token-count order as the reference does: the keys' text order ("100"
    // before "20") could round the total differently.
    for (const auto& bin : raw) total += bin.second;
    double cum = 0;
    for (const auto& [value, weight] : raw) {
      if (!(weight > 0)) continue;
      cum += weight / total;
      bins_.emplace_back(value, cum);
    }
    if (!bins_.empty()) bins_.back().second = 1.0;
  } else {
    throw InputError(where + ".type", "unknown distribution type '" + spec.type + "'");
  }
}

int64_t LengthSampler::sample(GoRand& rng) const {
  switch (kind_) {
    case Kind::kGaussian: {
      if (min_ == max_) return min_;  // no draw, no floor (spec workload §6.11)
      const double v = rng.norm_float64() * std_dev_ + mean_;
      const double c = go_min(static_cast<double>(max_), go_max(static_cast<double>(min_), v));
      return round_floor1(c);
    }
    case Kind::kExponential:
      return round_floor1(rng.exp_float64() * mean_);
    case Kind::kParetoLognormal: {
      const double p = rng.float64();
      double v;
      if (p < mix_weight_) {
        double u = rng.float64();
        if (u == 0) u = kSmallestSubnormal;
        v = xm_ / std::pow(u, 1 / alpha_);
      } else {
        v = std::exp(mu_ + sigma_ * rng.norm_float64());
      }
      if (!std::isfinite(v)) return 1;
      return round_floor1(v);
    }
    case Kind::kConstant:
      return min_;
    case Kind::kEmpirical: {
      if (bins_.empty()) return 1;
      if (bins_.size() == 1) return bins_.front().first;
      const double u = rng.float64();
      const auto it = std::lower_bound(bins_.begin(), bins_.end(), u,
                                       [](const auto& bin, double x) { return bin.second < x; });
      return it == bins_.end() ? bins_.back().first : it->first;
    }
  }
  return 1;
}

}  // namespace blis::workload
