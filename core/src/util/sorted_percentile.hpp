// The percentile of sorted doubles, interpolated between closest ranks (the
// reference's rule for its session and calibration figures): one definition.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace blis {

// The `p`-th percentile (0..100) of `sorted` (ascending); 0 when empty.
inline double sorted_percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  if (sorted.size() == 1) return sorted[0];
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<size_t>(std::floor(rank));
  const auto upper = static_cast<size_t>(std::ceil(rank));
  if (lower == upper) return sorted[lower];
  const double frac = rank - static_cast<double>(lower);
  return sorted[lower] + frac * (sorted[upper] - sorted[lower]);
}

}  // namespace blis
