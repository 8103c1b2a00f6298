// Statistics exactly as the reference computes them (spec engine §6.2):
// ascending sort, sequential mean, linear interpolation between closest ranks.
#pragma once

#include "metrics/packed_samples.hpp"

#include <cstdint>
#include <utility>
#include <deque>
#include <vector>

namespace blis {

// Values with multiplicities, sorted by value (inter-token latencies).
using WeightedValues = std::vector<std::pair<int64_t, int64_t>>;

// Sorts and merges equal values.
void normalize(WeightedValues& v);
// normalize() of v and `part` together when both are normalized already, in
// linear time (a merge of the two sorted runs).
void merge_normalized(WeightedValues& v, const WeightedValues& part);

struct Summary {
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  int64_t count = 0;
};

// Statistics of plain samples (reordered in place: sorted, or only around
// the percentiles' ranks), divided by `scale` (1000 for milliseconds, 1 for
// raw ticks).
Summary summarize(std::vector<int64_t>& values, double scale);
// The same of a copy (values stay as they are). Summaries of several
// vectors made in turn hold one copy at a time.
Summary summarize_copy(const SampleStore& values, double scale);
Summary summarize(const WeightedValues& sorted, double scale);
// The `p`-th percentile (0..100, e.g. 99.9) of `sorted`, interpolated between
// closest ranks as the summaries' are; 0 when empty.
double percentile_of(const WeightedValues& sorted, double p, double scale);
// percentile_of() of values[from, to) normalized, without sorting them: the
// order statistics at its ranks are selected by weight (values[from, to)
// reordered). Linear in expectation.
double percentile_unsorted(WeightedValues& values, size_t from, size_t to, double p, double scale);
// percentile_of() of the values lo, lo + 1, ... counted weight[0], weight[1],
// ... times (weight[0, width)).
double percentile_of_counts(const int64_t* weight, size_t width, int64_t lo, double p, double scale);

}  // namespace blis
