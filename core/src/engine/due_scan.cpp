// Variants of the due scan (due_scan.hpp). The AVX2 code is compiled for its
// target only inside its own function and runs only when the CPU supports
// it; valgrind's CPU has AVX2, so callgrind counts that variant.
#include "engine/due_scan.hpp"

#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BLIS_DUE_SCAN_X86 1
#include <immintrin.h>
#endif

namespace blis::due_scan {

namespace {

// Positions i.. of n onto out[k..], without a branch per member; the new k.
size_t collect_from(const uint64_t* due, size_t i, size_t n, uint64_t S, uint32_t* out, size_t k) {
  for (; i < n; ++i) {
    out[k] = static_cast<uint32_t>(i);
    k += due[i] <= S ? 1 : 0;
  }
  return k;
}

size_t collect_due_portable(const uint64_t* due, size_t n, uint64_t S, uint32_t* out) {
  return collect_from(due, 0, n, S, out, 0);
}

#ifdef BLIS_DUE_SCAN_X86

// Lanes of four dues compared with S (signed: dues are below 2^63); a mask
// bit is set for each member not due.
__attribute__((target("avx2"))) inline int not_due_mask(const uint64_t* due, __m256i s) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(due));
  return _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(v, s)));
}

// Sixteen at a time; a block with members due gives their positions from
// its mask's clear bits.
__attribute__((target("avx2"))) size_t collect_due_avx2(const uint64_t* due, size_t n, uint64_t S,
                                                        uint32_t* out) {
  const __m256i s = _mm256_set1_epi64x(static_cast<int64_t>(S));
  size_t k = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    const unsigned m = static_cast<unsigned>(not_due_mask(due + i, s)) |
                       static_cast<unsigned>(not_due_mask(due + i + 4, s)) << 4 |
                       static_cast<unsigned>(not_due_mask(due + i + 8, s)) << 8 |
                       static_cast<unsigned>(not_due_mask(due + i + 12, s)) << 12;
    for (unsigned bits = ~m & 0xFFFFU; bits != 0; bits &= bits - 1)
      out[k++] = static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctz(bits)));
  }
  return collect_from(due, i, n, S, out, k);
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
