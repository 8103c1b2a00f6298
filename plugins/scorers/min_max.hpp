// The min-max normalisation several built-in scorers share (spec head §7.1):
// a load signal where less is better, mapped to (max - x) / (max - min), and
// 1.0 everywhere when every instance has the same value.
#pragma once

#include <blis/plugin.hpp>

#include <cstdint>
#include <limits>

namespace blis::scorers {

// `signal(snapshot)` returns an int64_t; lower is better.
template <class Signal>
void min_max_lowest_best(const blis_route_input& input, double* scores, Signal signal) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  for (int64_t i = 0; i < input.count; ++i) {
    const int64_t x = signal(blis::sdk::instance_at(input, i));
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  for (int64_t i = 0; i < input.count; ++i) {
    if (hi == lo) {
      scores[i] = 1.0;
      continue;
    }
    const int64_t x = signal(blis::sdk::instance_at(input, i));
    scores[i] = static_cast<double>(hi - x) / static_cast<double>(hi - lo);
  }
}

}  // namespace blis::scorers
