// Arrival (inter-arrival time) and length samplers of the workload generator
// (spec workload §6.10, §6.11). Every draw comes from the caller's GoRand, in
// exactly the reference's order, so a client's stream is reproduced draw for
// draw.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "blis/go_rand.hpp"
#include "blis/workload.hpp"

namespace blis::workload {

// Go's float64 -> int64 conversion on x86-64: truncation toward zero, and the
// "integer indefinite" value INT64_MIN for NaN and anything out of range
// (spec workload §6.11, §12.17).
int64_t go_trunc(double x);

// Go's math.Max / math.Min: NaN wins, otherwise the larger / smaller value.
double go_max(double a, double b);
double go_min(double a, double b);

// Weibull shape k whose coefficient of variation is `cv` (bisection,
// spec workload §6.10). `converged` reports whether the tolerance was met.
double weibull_shape_from_cv(double cv, bool* converged = nullptr);

// Gamma(alpha, theta) variate, Marsaglia-Tsang with the alpha < 1 boost.
double sample_gamma(GoRand& rng, double alpha, double theta);

class ArrivalSampler {
 public:
  // `rate` in requests per microsecond. `where` names the client in warnings.
  ArrivalSampler(const ArrivalSpec& spec, double rate, const std::string& where);
  // Next inter-arrival time in microseconds, always >= 1.
  int64_t next(GoRand& rng) const;

 private:
  enum class Kind { kConstant, kPoisson, kGamma, kWeibull };
  Kind kind_ = Kind::kPoisson;
  double rate_ = 0;
  int64_t constant_iat_ = 1;
  double alpha_ = 0, theta_ = 0;  // gamma
  double shape_ = 0, scale_ = 0;  // weibull k, lambda
};

class LengthSampler {
 public:
  // Builds the sampler; throws InputError naming `where` (e.g.
  // "clients[0].input_distribution") when a required parameter is missing or
  // an empirical distribution has no usable bins.
  LengthSampler(const DistSpec& spec, const std::string& where);
  // One length (may draw nothing). Values not representable as int64 give 1.
  int64_t sample(GoRand& rng) const;

 private:
  enum class Kind { kGaussian, kExponential, kParetoLognormal, kConstant, kEmpirical };
  Kind kind_ = Kind::kConstant;
  // gaussian
  double mean_ = 0, std_dev_ = 0;
  int64_t min_ = 0, max_ = 0;
  // exponential uses mean_; constant uses min_ as the value
  // pareto_lognormal
  double alpha_ = 0, xm_ = 0, mu_ = 0, sigma_ = 0, mix_weight_ = 0;
  // empirical: (value, cumulative probability), ascending
  std::vector<std::pair<int64_t, double>> bins_;
};

}  // namespace blis::workload
