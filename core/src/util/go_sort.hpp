// Go's sort.Slice (pattern-defeating quicksort, Go 1.19 and later): not
// stable, but deterministic, so elements that compare equal end in the order
// Go leaves them. Where a reference writes a file sorted by sort.Slice with
// ties (BLIS HEAD's results file, by arrival time), the same calls on the
// same input order give the same bytes. `less(i, j)` and `swap(i, j)` act on
// positions of one sequence of n elements, as Go's less and swapper do.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace blis::go_sort {

namespace detail {

enum class Hint { Unknown, Increasing, Decreasing };

template <class Less, class Swap>
struct Sorter {
  Less& less_;
  Swap& swap_;

  bool less(ptrdiff_t i, ptrdiff_t j) { return less_(static_cast<size_t>(i), static_cast<size_t>(j)); }
  void swap(ptrdiff_t i, ptrdiff_t j) { swap_(static_cast<size_t>(i), static_cast<size_t>(j)); }

  void insertion(ptrdiff_t a, ptrdiff_t b) {
    for (ptrdiff_t i = a + 1; i < b; ++i)
      for (ptrdiff_t j = i; j > a && less(j, j - 1); --j) swap(j, j - 1);
  }

  void sift_down(ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t first) {
    ptrdiff_t root = lo;
    for (;;) {
      ptrdiff_t child = 2 * root + 1;
      if (child >= hi) return;
      if (child + 1 < hi && less(first + child, first + child + 1)) ++child;
      if (!less(first + root, first + child)) return;
      swap(first + root, first + child);
      root = child;
    }
  }

  void heap(ptrdiff_t a, ptrdiff_t b) {
    const ptrdiff_t first = a, hi = b - a;
    for (ptrdiff_t i = (hi - 1) / 2; i >= 0; --i) sift_down(i, hi, first);
    for (ptrdiff_t i = hi - 1; i >= 0; --i) {
      swap(first, first + i);
      sift_down(0, i, first);
    }
  }

  // Returns the pivot's final position and whether nothing had to move.
  ptrdiff_t partition(ptrdiff_t a, ptrdiff_t b, ptrdiff_t pivot, bool& already) {
    swap(a, pivot);
    ptrdiff_t i = a + 1, j = b - 1;
    while (i <= j && less(i, a)) ++i;
    while (i <= j && !less(j, a)) --j;
    if (i > j) {
      swap(j, a);
      already = true;
      return j;
    }
    swap(i, j);
    ++i;
    --j;
    for (;;) {
      while (i <= j && less(i, a)) ++i;
      while (i <= j && !less(j, a)) --j;
      if (i > j) break;
      swap(i, j);
      ++i;
      --j;
    }
    swap(j, a);
    already = false;
    return j;
  }

  ptrdiff_t partition_equal(ptrdiff_t a, ptrdiff_t b, ptrdiff_t pivot) {
    swap(a, pivot);
    ptrdiff_t i = a + 1, j = b - 1;
    for (;;) {
      while (i <= j && !less(a, i)) ++i;
      while (i <= j && less(a, j)) --j;
      if (i > j) break;
      swap(i, j);
      ++i;
      --j;
    }
    return i;
  }

  bool partial_insertion(ptrdiff_t a, ptrdiff_t b) {
    constexpr int kMaxSteps = 5;
    constexpr ptrdiff_t kShortestShifting = 50;
    ptrdiff_t i = a + 1;
    for (int step = 0; step < kMaxSteps; ++step) {
      while (i < b && !less(i, i - 1)) ++i;
      if (i == b) return true;
      if (b - a < kShortestShifting) return false;
      swap(i, i - 1);
      if (i - a >= 2)
        for (ptrdiff_t j = i - 1; j >= 1; --j) {
          if (!less(j, j - 1)) break;
          swap(j, j - 1);
        }
      if (b - i >= 2)
        for (ptrdiff_t j = i + 1; j < b; ++j) {
          if (!less(j, j - 1)) break;
          swap(j, j - 1);
        }
    }
    return false;
  }

  void break_patterns(ptrdiff_t a, ptrdiff_t b) {
    const ptrdiff_t length = b - a;
    if (length < 8) return;
    uint64_t random = static_cast<uint64_t>(length);  // xorshift, seeded by the length
    const uint64_t modulus = uint64_t{1} << std::bit_width(static_cast<uint64_t>(length));
    for (ptrdiff_t idx = a + (length / 4) * 2 - 1; idx <= a + (length / 4) * 2 + 1; ++idx) {
      random ^= random << 13;
      random ^= random >> 17;
      random ^= random << 5;
      auto other = static_cast<ptrdiff_t>(random & (modulus - 1));
      if (other >= length) other -= length;
      swap(idx, a + other);
    }
  }

  ptrdiff_t order2_median(ptrdiff_t x, ptrdiff_t y, ptrdiff_t z, int& swaps) {
    auto order = [&](ptrdiff_t& p, ptrdiff_t& q) {
      if (less(q, p)) {
        ++swaps;
        const ptrdiff_t t = p;
        p = q;
        q = t;
      }
    };
    order(x, y);
    order(y, z);
    order(x, y);
    return y;
  }

  ptrdiff_t choose_pivot(ptrdiff_t a, ptrdiff_t b, Hint& hint) {
    constexpr ptrdiff_t kShortestNinther = 50;
    constexpr int kMaxSwaps = 4 * 3;
    const ptrdiff_t l = b - a;
    int swaps = 0;
    ptrdiff_t i = a + l / 4 * 1, j = a + l / 4 * 2, k = a + l / 4 * 3;
    if (l >= 8) {
      if (l >= kShortestNinther) {
        i = order2_median(i - 1, i, i + 1, swaps);
        j = order2_median(j - 1, j, j + 1, swaps);
        k = order2_median(k - 1, k, k + 1, swaps);
      }
      j = order2_median(i, j, k, swaps);
    }
    hint = swaps == 0 ? Hint::Increasing : swaps == kMaxSwaps ? Hint::Decreasing : Hint::Unknown;
    return j;
  }

  void reverse(ptrdiff_t a, ptrdiff_t b) {
    for (ptrdiff_t i = a, j = b - 1; i < j; ++i, --j) swap(i, j);
  }

  void pdq(ptrdiff_t a, ptrdiff_t b, int limit) {
    constexpr ptrdiff_t kMaxInsertion = 12;
    bool was_balanced = true, was_partitioned = true;
    for (;;) {
      const ptrdiff_t length = b - a;
      if (length <= kMaxInsertion) {
        insertion(a, b);
        return;
      }
      if (limit == 0) {
        heap(a, b);
        return;
      }
      if (!was_balanced) {
        break_patterns(a, b);
        --limit;
      }
      Hint hint = Hint::Unknown;
      ptrdiff_t pivot = choose_pivot(a, b, hint);
      if (hint == Hint::Decreasing) {
        reverse(a, b);
        pivot = (b - 1) - (pivot - a);
        hint = Hint::Increasing;
      }
      if (was_balanced && was_partitioned && hint == Hint::Increasing && partial_insertion(a, b)) return;
      if (a > 0 && !less(a - 1, pivot)) {
        a = partition_equal(a, b, pivot);
        continue;
      }
      bool already = false;
      const ptrdiff_t mid = partition(a, b, pivot, already);
      was_partitioned = already;
      const ptrdiff_t left = mid - a, right = b - mid;
      const ptrdiff_t balance = length / 8;
      if (left < right) {
        was_balanced = left >= balance;
        pdq(a, mid, limit);
        a = mid + 1;
      } else {
        was_balanced = right >= balance;
        pdq(mid + 1, b, limit);
        b = mid;
      }
    }
  }
};

}  // namespace detail

// sort.Slice over positions 0..n-1.
template <class Less, class Swap>
void slice(size_t n, Less less, Swap swap) {
  detail::Sorter<Less, Swap> s{less, swap};
  s.pdq(0, static_cast<ptrdiff_t>(n), static_cast<int>(std::bit_width(n)));
}

}  // namespace blis::go_sort
