// Summary statistics (spec engine §6.2): the reference sorts, sums in
// ascending order and interpolates between the closest ranks. summarize()
// selects only the ranks it needs when the sum is exact anyway; both must
// give the same doubles.
#include "catch.hpp"
#include "splitmix.hpp"

#include "metrics/stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace blis;
using blis::test::SplitMix;

namespace {

// The reference's way, written out.
Summary by_sorting(std::vector<int64_t> v, double scale) {
  Summary s;
  s.count = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (int64_t x : v) sum += static_cast<double>(x);
  s.mean = sum / static_cast<double>(s.count) / scale;
  auto pct = [&](double p) {
    const double rank = p / 100 * static_cast<double>(s.count - 1);
    const auto lo = static_cast<size_t>(std::floor(rank)), hi = static_cast<size_t>(std::ceil(rank));
    const double a = static_cast<double>(v[lo]) / scale;
    if (lo == hi) return a;
    return a + static_cast<double>(v[hi] - v[lo]) * (rank - static_cast<double>(lo)) / scale;
  };
  s.p50 = pct(50);
  s.p90 = pct(90);
  s.p95 = pct(95);
  s.p99 = pct(99);
  return s;
}

bool same(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

}  // namespace

TEST_CASE("summaries from selected ranks equal those from a full sort, bit for bit", "[unit][metrics]") {
  SplitMix rng{2026};
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t n = trial < 20 ? static_cast<size_t>(trial) : 1 + rng.below(trial % 7 == 0 ? 20000 : 300);
    const int kind = static_cast<int>(rng.below(5));
    std::vector<int64_t> v(n);
    for (auto& x : v) {
      switch (kind) {
        case 0: x = static_cast<int64_t>(rng.below(50)); break;  // many ties
        case 1: x = static_cast<int64_t>(rng.below(1000000000)); break;
        case 2: x = static_cast<int64_t>(rng.below(2000)) - 1000; break;  // negatives: the sorting path
        case 3: x = static_cast<int64_t>(rng.below(uint64_t{1} << 52)); break;  // sums beyond 2^53
        default: x = static_cast<int64_t>(rng.below(100000)) * 1000 + 7; break;
      }
    }
    const double scale = trial % 2 == 0 ? 1000.0 : 1.0;
    INFO("trial " << trial << " n " << n << " kind " << kind);
    const Summary want = by_sorting(v, scale);
    std::vector<int64_t> work = v;
    const Summary got = summarize(work, scale);
    CHECK(got.count == want.count);
    CHECK(same(got.mean, want.mean));
    CHECK(same(got.p50, want.p50));
    CHECK(same(got.p90, want.p90));
    CHECK(same(got.p95, want.p95));
    CHECK(same(got.p99, want.p99));
    std::sort(work.begin(), work.end());
    std::sort(v.begin(), v.end());
    CHECK(work == v);  // reordered, never changed
  }
}

TEST_CASE("merge_normalized of two normalized runs equals normalize of them together", "[unit][metrics]") {
  // Random multisets with repeats and zero counts: the linear merge (the
  // instances' inter-token latencies merged one after another) gives what
  // sorting everything did.
  blis::test::SplitMix rng{5};
  for (int trial = 0; trial < 200; ++trial) {
    blis::WeightedValues a, b;
    const auto fill = [&](blis::WeightedValues& v) {
      const uint64_t n = rng.below(60);
      for (uint64_t i = 0; i < n; ++i)
        v.emplace_back(static_cast<int64_t>(rng.below(40)), static_cast<int64_t>(rng.below(4)));
      blis::normalize(v);
    };
    fill(a);
    fill(b);
    blis::WeightedValues together = a;
    together.insert(together.end(), b.begin(), b.end());
    blis::normalize(together);
    blis::merge_normalized(a, b);
    REQUIRE(a == together);
  }
}

namespace {

// What normalize() must make of v: sorted by value, zero weights dropped,
// equal values merged.
blis::WeightedValues sorted_and_merged(blis::WeightedValues v) {
  std::sort(v.begin(), v.end());
  blis::WeightedValues merged;
  for (const auto& e : v) {
    if (e.second == 0) continue;
    if (!merged.empty() && merged.back().first == e.first)
      merged.back().second += e.second;
    else
      merged.push_back(e);
  }
  return merged;
}

}  // namespace

TEST_CASE("normalize of large vectors (a radix sort) equals sorting and merging", "[unit][metrics]") {
  // Sizes past the radix threshold, values narrow and wide, negative too.
  blis::test::SplitMix rng{17};
  for (const uint64_t range : {uint64_t{50}, uint64_t{1} << 20, uint64_t{1} << 40, ~uint64_t{0}}) {
    blis::WeightedValues v;
    for (int i = 0; i < 5000; ++i) {
      const uint64_t r = range == ~uint64_t{0} ? rng.next() : rng.below(range);
      const int64_t value = range == ~uint64_t{0} ? static_cast<int64_t>(r) : static_cast<int64_t>(r) - 7;
      v.emplace_back(value, static_cast<int64_t>(rng.below(3)));
    }
    const blis::WeightedValues merged = sorted_and_merged(v);
    blis::normalize(v);
    REQUIRE(v == merged);
  }
}

TEST_CASE("normalize by counting (positive weights, a narrow span) equals sorting and merging",
          "[unit][metrics]") {
  // Spans within and past the counting bound, at int64's ends too.
  blis::test::SplitMix rng{23};
  for (const uint64_t range : {uint64_t{50}, uint64_t{9000}, uint64_t{1} << 20}) {
    for (const int64_t base : {int64_t{-7}, std::numeric_limits<int64_t>::min() + 5,
                               std::numeric_limits<int64_t>::max() - static_cast<int64_t>(range)}) {
      blis::WeightedValues v;
      for (int i = 0; i < 5000; ++i)
        v.emplace_back(base + static_cast<int64_t>(rng.below(range)), 1 + static_cast<int64_t>(rng.below(3)));
      const blis::WeightedValues merged = sorted_and_merged(v);
      blis::normalize(v);
      REQUIRE(v == merged);
    }
  }
}

TEST_CASE("percentiles selected by weight from unsorted values equal those of the sorted, merged values",
          "[unit][metrics]") {
  // Few distinct values (long runs of equal ones), many, negative ones, zero
  // weights, a single value; every percentile the plan and reports use, and
  // the ranks between.
  blis::test::SplitMix rng{29};
  // Small vectors are selected by a quickselect, large ones (2048 entries
  // and more) through a histogram of the values' span: up to int64's whole.
  for (const uint64_t range : {uint64_t{1}, uint64_t{4}, uint64_t{300}, uint64_t{1} << 30, ~uint64_t{0}}) {
    for (const int size : {1, 2, 7, 100, 3000, 20000}) {
      blis::WeightedValues v;
      for (int i = 0; i < size; ++i) {
        const int64_t value = range == ~uint64_t{0} ? static_cast<int64_t>(rng.next())
                                                    : static_cast<int64_t>(rng.below(range)) - 2;
        v.emplace_back(value, static_cast<int64_t>(rng.below(4)));
      }
      v.emplace_back(static_cast<int64_t>(rng.below(range)), 1);  // at least one counts
      blis::WeightedValues sorted = v;
      blis::normalize(sorted);
      for (const double p : {0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0, 33.3}) {
        blis::WeightedValues work = v;
        // Only [1, size] of a padded copy: the rest stays untouched.
        work.insert(work.begin(), {-99, 5});
        work.emplace_back(99'999, 5);
        const double got = blis::percentile_unsorted(work, 1, work.size() - 1, p, 1000);
        REQUIRE(std::bit_cast<uint64_t>(got) ==
                std::bit_cast<uint64_t>(blis::percentile_of(sorted, p, 1000)));
        REQUIRE(work.front() == std::pair<int64_t, int64_t>{-99, 5});
        REQUIRE(work.back() == std::pair<int64_t, int64_t>{99'999, 5});
      }
    }
  }
  blis::WeightedValues none{{5, 0}, {7, 0}};
  REQUIRE(blis::percentile_unsorted(none, 0, 2, 99, 1000) == 0);
}
