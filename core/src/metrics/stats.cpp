#include "metrics/stats.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

namespace blis {

namespace {

// Sorts by value alone (equal values are merged next, whatever their
// order): a least-significant-digit radix sort over the bits in which the
// values differ, 11 bits a pass, stable, for the large vectors of a run's
// steps; std::sort below a few hundred.
void sort_by_value(WeightedValues& v) {
  if (v.size() < 512) {
    std::sort(v.begin(), v.end());
    return;
  }
  // Keys as unsigned with the sign bit flipped, so that they order as the values.
  const auto key = [](int64_t x) { return static_cast<uint64_t>(x) ^ (uint64_t{1} << 63); };
  uint64_t lo = ~uint64_t{0}, hi = 0;
  for (const auto& e : v) {
    lo = std::min(lo, key(e.first));
    hi = std::max(hi, key(e.first));
  }
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  WeightedValues tmp(v.size());
  std::vector<size_t> count(kBuckets);
  const uint64_t span = hi - lo;
  for (int shift = 0; shift < 64 && (span >> shift) != 0; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (const auto& e : v) ++count[((key(e.first) - lo) >> shift) & (kBuckets - 1)];
    size_t at = 0;
    for (size_t& c : count) {
      const size_t n = c;
      c = at;
      at += n;
    }
    for (const auto& e : v) tmp[count[((key(e.first) - lo) >> shift) & (kBuckets - 1)]++] = e;
    v.swap(tmp);
  }
}

// normalize() by counting, when the values span a few times their number
// at most and every weight is positive (then a value's weights sum to a
// positive count, and the values with one come out ascending): one pass to
// add the weights up, one over the span. The counters are the thread's,
// kept zero between calls (the pass over the span clears what it reads), so
// a call clears no memory of its own. False, `v` unchanged, otherwise.
bool normalize_by_counting(WeightedValues& v) {
  if (v.size() < 512) return false;
  int64_t lo = v.front().first, hi = lo;
  for (const auto& [value, weight] : v) {
    if (weight <= 0) return false;
    lo = std::min(lo, value);
    hi = std::max(hi, value);
  }
  const auto span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  // A run's inter-token latencies span a few times their number (a step's
  // time in µs): the pass over the span costs less than two radix passes.
  if (span > 8 * v.size() || span >= (uint64_t{1} << 20)) return false;
  thread_local std::vector<int64_t> count;
  if (count.size() <= span) count.resize(span + 1, 0);
  for (const auto& [value, weight] : v)
    count[static_cast<uint64_t>(value) - static_cast<uint64_t>(lo)] += weight;
  size_t out = 0;
  const auto emit = [&](uint64_t k) {
    if (count[k] != 0) {
      v[out++] = {static_cast<int64_t>(static_cast<uint64_t>(lo) + k), count[k]};
      count[k] = 0;
    }
  };
  // Most counters are zero: eight at a time are skipped when all are.
  uint64_t k = 0;
  for (; k + 8 <= span + 1; k += 8) {
    const int64_t* c = count.data() + k;
    if ((c[0] | c[1] | c[2] | c[3] | c[4] | c[5] | c[6] | c[7]) == 0) continue;
    for (uint64_t j = k; j < k + 8; ++j) emit(j);
  }
  for (; k <= span; ++k) emit(k);
  v.resize(out);
  return true;
}

}  // namespace

void normalize(WeightedValues& v) {
  if (normalize_by_counting(v)) return;
  if (!std::is_sorted(v.begin(), v.end())) sort_by_value(v);
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].second == 0) continue;
    if (out > 0 && v[out - 1].first == v[i].first)
      v[out - 1].second += v[i].second;
    else
      v[out++] = v[i];
  }
  v.resize(out);
}

void merge_normalized(WeightedValues& v, const WeightedValues& part) {
  const auto mid = static_cast<std::ptrdiff_t>(v.size());
  v.insert(v.end(), part.begin(), part.end());
  std::inplace_merge(v.begin(), v.begin() + mid, v.end());
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].second == 0) continue;
    if (out > 0 && v[out - 1].first == v[i].first) v[out - 1].second += v[i].second;
    else v[out++] = v[i];
  }
  v.resize(out);
}

namespace {

// The value at sorted position k.
struct Cursor {
  const WeightedValues& v;
  int64_t at(int64_t k) const {
    for (const auto& [value, count] : v) {
      if (k < count) return value;
      k -= count;
    }
    return v.back().first;
  }
};

template <class At>
double percentile(int64_t n, double p, double scale, At at) {
  if (n == 0) return 0;
  const double rank = p / 100 * static_cast<double>(n - 1);
  const int64_t lo = static_cast<int64_t>(std::floor(rank));
  const int64_t hi = static_cast<int64_t>(std::ceil(rank));
  const int64_t vlo = at(lo);
  if (lo == hi) return static_cast<double>(vlo) / scale;
  const int64_t vhi = at(hi);
  return static_cast<double>(vlo) / scale +
         static_cast<double>(vhi - vlo) * (rank - static_cast<double>(lo)) / scale;
}

}  // namespace

Summary summarize_copy(const SampleStore& values, double scale) {
  std::vector<int64_t> copy = values.values();
  return summarize(copy, scale);
}

Summary summarize(std::vector<int64_t>& values, double scale) {
  Summary s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  // The sequential sum over the ascending values is exact, so equal to the
  // integer sum, when the values are not negative and their total stays
  // within 2^53 (every partial sum is then an integer below it). Then the
  // percentiles need only the order statistics at their ranks, selected
  // from left to right; otherwise everything is sorted.
  bool exact = true;
  int64_t total = 0;
  for (int64_t v : values) {
    if (v < 0 || __builtin_add_overflow(total, v, &total)) {
      exact = false;
      break;
    }
  }
  exact = exact && total <= (int64_t{1} << 53);
  double sum = 0;
  if (exact) {
    sum = static_cast<double>(total);
    constexpr double kPs[] = {50, 90, 95, 99};
    int64_t ranks[8];
    int count = 0;
    for (double p : kPs) {
      const double rank = p / 100 * static_cast<double>(s.count - 1);
      ranks[count++] = static_cast<int64_t>(std::floor(rank));
      ranks[count++] = static_cast<int64_t>(std::ceil(rank));
    }
    std::sort(ranks, ranks + count);
    int64_t start = 0;
    for (int i = 0; i < count; ++i) {
      if (ranks[i] < start) continue;  // selected already
      std::nth_element(values.begin() + start, values.begin() + ranks[i], values.end());
      start = ranks[i] + 1;
    }
  } else {
    std::sort(values.begin(), values.end());
    for (int64_t v : values) sum += static_cast<double>(v);
  }
  s.mean = sum / static_cast<double>(s.count) / scale;
  auto at = [&](int64_t k) { return values[static_cast<size_t>(k)]; };
  s.p50 = percentile(s.count, 50, scale, at);
  s.p90 = percentile(s.count, 90, scale, at);
  s.p95 = percentile(s.count, 95, scale, at);
  s.p99 = percentile(s.count, 99, scale, at);
  return s;
}

double percentile_of(const WeightedValues& sorted, double p, double scale) {
  int64_t n = 0;
  for (const auto& vc : sorted) n += vc.second;
  Cursor cur{sorted};
  return percentile(n, p, scale, [&](int64_t k) { return cur.at(k); });
}

namespace {

// The value at weighted rank k (0-based) of v[lo, hi), which holds more than
// k in weight, and the weight of the values up to it: a quickselect by
// value with a three-way partition (reorders v[lo, hi)).
std::pair<int64_t, int64_t> select_weighted(WeightedValues& v, size_t lo, size_t hi, int64_t k) {
  int64_t passed = 0;  // weight below v[lo, hi)
  for (;;) {
    const int64_t a = v[lo].first, b = v[lo + (hi - lo) / 2].first, c = v[hi - 1].first;
    const int64_t pivot = std::max(std::min(a, b), std::min(std::max(a, b), c));
    size_t lt = lo, i = lo, gt = hi;
    int64_t below = 0, equal = 0;
    while (i < gt) {
      const int64_t x = v[i].first;
      if (x < pivot) {
        below += v[i].second;
        std::swap(v[lt++], v[i++]);
      } else if (x > pivot) {
        std::swap(v[i], v[--gt]);
      } else {
        equal += v[i++].second;
      }
    }
    if (k < below) {
      hi = lt;
    } else if (k < below + equal) {
      return {pivot, passed + below + equal};
    } else {
      k -= below + equal;
      passed += below + equal;
      lo = gt;
    }
  }
}

// The values at weighted ranks k1 and k2 (k1 or k1 + 1) of v[from, to), when it holds more
// than k2 in weight: a histogram of 4096 buckets over the values' span finds
// the buckets holding the ranks, and only the entries of those are sorted.
// Linear, for the large vectors (a quickselect moves every entry several
// times).
std::pair<int64_t, int64_t> select_by_histogram(const WeightedValues& v, size_t from, size_t to, int64_t k1,
                                                int64_t k2) {
  constexpr int kBits = 12;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = from; i < to; ++i) lo = std::min(lo, v[i].first), hi = std::max(hi, v[i].first);
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  const int shift = std::max(0, static_cast<int>(std::bit_width(span)) - kBits);
  auto bucket = [&](int64_t x) { return (static_cast<uint64_t>(x) - static_cast<uint64_t>(lo)) >> shift; };
  std::array<int64_t, size_t{1} << kBits> weight{};
  for (size_t i = from; i < to; ++i) weight[bucket(v[i].first)] += v[i].second;
  // The buckets of the two ranks, and the weight below each.
  uint64_t b1 = 0;
  int64_t below1 = 0;
  while (below1 + weight[b1] <= k1) below1 += weight[b1++];
  uint64_t b2 = b1;
  int64_t below2 = below1;
  while (below2 + weight[b2] <= k2) below2 += weight[b2++];
  WeightedValues picked;
  for (size_t i = from; i < to; ++i) {
    const uint64_t b = bucket(v[i].first);
    if ((b == b1 || b == b2) && v[i].second > 0) picked.push_back(v[i]);
  }
  std::sort(picked.begin(), picked.end());
  // Walk b1's entries, then b2's: k2 is k1 or k1 + 1, so no weight lies
  // between them.
  std::pair<int64_t, int64_t> out{0, 0};
  int64_t at = below1;
  bool found1 = false;
  for (const auto& [value, w] : picked) {
    if (!found1 && k1 < at + w) out.first = value, found1 = true;
    if (k2 < at + w) {
      out.second = value;
      break;
    }
    at += w;
  }
  return out;
}

}  // namespace

double percentile_unsorted(WeightedValues& values, size_t from, size_t to, double p, double scale) {
  int64_t n = 0;
  for (size_t i = from; i < to; ++i) n += values[i].second;
  if (n == 0) return 0;
  const double rank = p / 100 * static_cast<double>(n - 1);
  const auto k1 = static_cast<int64_t>(std::floor(rank)), k2 = static_cast<int64_t>(std::ceil(rank));
  // percentile() asks for rank k1, then for k2 when it differs.
  std::pair<int64_t, int64_t> at{0, 0};
  if (to - from >= 2048) {
    at = select_by_histogram(values, from, to, k1, k2);
  } else {
    int64_t upto = 0;
    std::tie(at.first, upto) = select_weighted(values, from, to, k1);
    at.second = at.first;
    if (k2 >= upto) {
      // The least value above the first that counts.
      at.second = INT64_MAX;
      for (size_t i = from; i < to; ++i)
        if (values[i].first > at.first && values[i].second > 0)
          at.second = std::min(at.second, values[i].first);
    }
  }
  return percentile(n, p, scale, [&](int64_t k) { return k == k1 ? at.first : at.second; });
}

double percentile_of_counts(const int64_t* weight, size_t width, int64_t lo, double p, double scale) {
  int64_t n = 0;
  for (size_t i = 0; i < width; ++i) n += weight[i];
  // The value at rank k: the first whose weight, with those below it, passes k.
  return percentile(n, p, scale, [&](int64_t k) {
    int64_t below = 0;
    size_t i = 0;
    while (below + weight[i] <= k) below += weight[i++];
    return lo + static_cast<int64_t>(i);
  });
}

Summary summarize(const WeightedValues& sorted, double scale) {
  Summary s;
  int64_t n = 0;
  // Integer sums are exact; the reference's sequential double sum of these
  // integers is exact too while it stays below 2^53.
  long double sum = 0;
  for (const auto& [v, c] : sorted) {
    n += c;
    sum += static_cast<long double>(v) * static_cast<long double>(c);
  }
  s.count = n;
  if (n == 0) return s;
  s.mean = static_cast<double>(sum) / static_cast<double>(n) / scale;
  Cursor cur{sorted};
  auto at = [&](int64_t k) { return cur.at(k); };
  s.p50 = percentile(n, 50, scale, at);
  s.p90 = percentile(n, 90, scale, at);
  s.p95 = percentile(n, 95, scale, at);
  s.p99 = percentile(n, 99, scale, at);
  return s;
}

}  // namespace blis
