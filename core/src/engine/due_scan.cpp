// Variants of the due scan (due_scan.hpp). The AVX2 code is compiled for its
// target only inside its own function and runs only when the CPU supports
// it; valgrind's CPU has AVX2, so callgrind counts that variant.
#include "engine/due_scan.hpp"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BLIS_DUE_SCAN_X86 1
#include <immintrin.h>
#endif

namespace blis::due_scan {

namespace {

// Positions i.. of n onto out[k..], without a branch per member; the new k.
// *after becomes the least of itself and the dues above S.
size_t collect_from(const uint64_t* due, size_t i, size_t n, uint64_t S, uint32_t* out, size_t k,
                    uint64_t* after) {
  uint64_t least = *after;
  for (; i < n; ++i) {
    out[k] = static_cast<uint32_t>(i);
    const bool is_due = due[i] <= S;
    k += is_due ? 1 : 0;
    least = std::min(least, is_due ? kNoneAfter : due[i]);
  }
  *after = least;
  return k;
}

size_t collect_due_portable(const uint64_t* due, size_t n, uint64_t S, uint32_t* out, uint64_t* after) {
  *after = kNoneAfter;
  return collect_from(due, 0, n, S, out, 0, after);
}

#ifdef BLIS_DUE_SCAN_X86

// Lanes of four dues compared with S (signed: dues are below 2^63); a mask
// bit is set for each member not due, and `least` keeps the least due
// above S in each lane.
__attribute__((target("avx2"))) inline int not_due_mask(const uint64_t* due, __m256i s, __m256i& least) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(due));
  const __m256i above = _mm256_cmpgt_epi64(v, s);
  const __m256i lower = _mm256_and_si256(above, _mm256_cmpgt_epi64(least, v));
  least = _mm256_blendv_epi8(least, v, lower);
  return _mm256_movemask_pd(_mm256_castsi256_pd(above));
}

// Sixteen at a time; a block with members due gives their positions from
// its mask's clear bits.
__attribute__((target("avx2"))) size_t collect_due_avx2(const uint64_t* due, size_t n, uint64_t S,
                                                        uint32_t* out, uint64_t* after) {
  const __m256i s = _mm256_set1_epi64x(static_cast<int64_t>(S));
  __m256i least = _mm256_set1_epi64x(static_cast<int64_t>(kNoneAfter));
  size_t k = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    const unsigned m = static_cast<unsigned>(not_due_mask(due + i, s, least)) |
                       static_cast<unsigned>(not_due_mask(due + i + 4, s, least)) << 4 |
                       static_cast<unsigned>(not_due_mask(due + i + 8, s, least)) << 8 |
                       static_cast<unsigned>(not_due_mask(due + i + 12, s, least)) << 12;
    for (unsigned bits = ~m & 0xFFFFU; bits != 0; bits &= bits - 1)
      out[k++] = static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctz(bits)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), least);
  *after = std::min(std::min(lanes[0], lanes[1]), std::min(lanes[2], lanes[3]));
  return collect_from(due, i, n, S, out, k, after);
}

#endif

std::vector<Kernel> detect() {
  std::vector<Kernel> k{{"portable", collect_due_portable}};
#ifdef BLIS_DUE_SCAN_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) k.push_back({"avx2", collect_due_avx2});
#endif
  return k;
}

}  // namespace

std::span<const Kernel> available() {
  static const std::vector<Kernel> kernels = detect();
  return kernels;
}

const Kernel& best() {
  static const Kernel& k = available().back();
  return k;
}

}  // namespace blis::due_scan
