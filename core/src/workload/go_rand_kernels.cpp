// Variants of GoRand's two hot loops (go_rand_kernels.hpp). SSE2 is the
// baseline of x86-64, so the SSE2 variant needs no check; AVX2 and AVX-512
// code is compiled for its target only inside its own functions and runs
// only when the CPU (and the OS) supports it. Valgrind's CPU has no AVX-512:
// under callgrind the AVX2 variant runs.
#include "workload/go_rand_kernels.hpp"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BLIS_GO_RAND_X86 1
#include <immintrin.h>
#endif

namespace blis::go_rand_kernels {

namespace {

// Bits 48..62 of a value: its Int31 (bits 32..62) shifted down 16.
constexpr uint64_t kTopMask = uint64_t{0x7fff} << 48;

// Wrapping adds, in unsigned arithmetic.
int32_t add_portable(int64_t* dst, const int64_t* src, int n) {
  uint64_t top = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t v = static_cast<uint64_t>(dst[i]) + static_cast<uint64_t>(src[i]);
    dst[i] = static_cast<int64_t>(v);
    top = std::max(top, v & kTopMask);
  }
  return static_cast<int32_t>(top >> 48);
}

#ifdef BLIS_GO_RAND_X86
// The largest 16-bit lane of a vector whose lanes are non-negative.
inline int32_t max_lane16(__m128i m) {
  m = _mm_max_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = _mm_max_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  m = _mm_max_epi16(m, _mm_shufflelo_epi16(m, _MM_SHUFFLE(2, 3, 0, 1)));
  m = _mm_max_epi16(m, _mm_shufflelo_epi16(m, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_extract_epi16(m, 0);
}
#endif

int count_above_portable(const int64_t* v, int n, int32_t max) {
  int above = 0;
  for (int i = 0; i < n; ++i)
    above += static_cast<int32_t>((static_cast<uint64_t>(v[i]) >> 32) & 0x7fffffffU) > max ? 1 : 0;
  return above;
}

#ifdef BLIS_GO_RAND_X86

// The sums' bits 48..62 are kept (other 16-bit lanes zeroed) and maxed by
// 16-bit lanes: non-negative, so the signed max is the unsigned one.
int32_t add_sse2(int64_t* dst, const int64_t* src, int n) {
  const __m128i mask = _mm_set1_epi64x(static_cast<int64_t>(kTopMask));
  __m128i top = _mm_setzero_si128();
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    auto* d = reinterpret_cast<__m128i*>(dst + i);
    const auto* s = reinterpret_cast<const __m128i*>(src + i);
    const __m128i a = _mm_add_epi64(_mm_loadu_si128(d), _mm_loadu_si128(s));
    const __m128i b = _mm_add_epi64(_mm_loadu_si128(d + 1), _mm_loadu_si128(s + 1));
    _mm_storeu_si128(d, a);
    _mm_storeu_si128(d + 1, b);
    top = _mm_max_epi16(top, _mm_max_epi16(_mm_and_si128(a, mask), _mm_and_si128(b, mask)));
  }
  return std::max(max_lane16(top), add_portable(dst + i, src + i, n - i));
}

// The high 32-bit halves of four values, gathered by one shuffle, masked to
// 31 bits (non-negative, so the signed compare is the unsigned one).
int count_above_sse2(const int64_t* v, int n, int32_t max) {
  const __m128i mask = _mm_set1_epi32(0x7fffffff);
  const __m128i limit = _mm_set1_epi32(max);
  __m128i acc = _mm_setzero_si128();  // minus the count, per lane
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const auto* p = reinterpret_cast<const __m128i*>(v + i);
    const __m128 lo = _mm_castsi128_ps(_mm_loadu_si128(p));
    const __m128 hi = _mm_castsi128_ps(_mm_loadu_si128(p + 1));
    const __m128i high = _mm_and_si128(_mm_castps_si128(_mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))), mask);
    acc = _mm_add_epi32(acc, _mm_cmpgt_epi32(high, limit));
  }
  acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(1, 0, 3, 2)));
  acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(2, 3, 0, 1)));
  return -_mm_cvtsi128_si32(acc) + count_above_portable(v + i, n - i, max);
}

__attribute__((target("avx2"))) int32_t add_avx2(int64_t* dst, const int64_t* src, int n) {
  const __m256i mask = _mm256_set1_epi64x(static_cast<int64_t>(kTopMask));
  __m256i top = _mm256_setzero_si256();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    auto* d = reinterpret_cast<__m256i*>(dst + i);
    const auto* s = reinterpret_cast<const __m256i*>(src + i);
    const __m256i a = _mm256_add_epi64(_mm256_loadu_si256(d), _mm256_loadu_si256(s));
    const __m256i b = _mm256_add_epi64(_mm256_loadu_si256(d + 1), _mm256_loadu_si256(s + 1));
    _mm256_storeu_si256(d, a);
    _mm256_storeu_si256(d + 1, b);
    top = _mm256_max_epi16(top, _mm256_max_epi16(_mm256_and_si256(a, mask), _mm256_and_si256(b, mask)));
  }
  const __m128i half = _mm_max_epi16(_mm256_castsi256_si128(top), _mm256_extracti128_si256(top, 1));
  return std::max(max_lane16(half), add_portable(dst + i, src + i, n - i));
}

// As the SSE2 variant, eight values at a time (the in-lane shuffle puts the
// high halves out of order, which a count does not mind).
__attribute__((target("avx2"))) int count_above_avx2(const int64_t* v, int n, int32_t max) {
  const __m256i mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i limit = _mm256_set1_epi32(max);
  __m256i acc = _mm256_setzero_si256();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const auto* p = reinterpret_cast<const __m256i*>(v + i);
    const __m256 lo = _mm256_castsi256_ps(_mm256_loadu_si256(p));
    const __m256 hi = _mm256_castsi256_ps(_mm256_loadu_si256(p + 1));
    const __m256i high =
        _mm256_and_si256(_mm256_castps_si256(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))), mask);
    acc = _mm256_add_epi32(acc, _mm256_cmpgt_epi32(high, limit));
  }
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(1, 0, 3, 2)));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(2, 3, 0, 1)));
  return -_mm_cvtsi128_si32(sum) + count_above_portable(v + i, n - i, max);
}

// Sixteen values at a time: their high halves gathered into one register by
// a two-source permute (odd 32-bit lanes), compared into a 16-bit mask.
__attribute__((target("avx512f"))) int32_t add_avx512(int64_t* dst, const int64_t* src, int n) {
  const __m512i mask = _mm512_set1_epi64(static_cast<int64_t>(kTopMask));
  __m512i top = _mm512_setzero_si512();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i a = _mm512_add_epi64(_mm512_loadu_si512(dst + i), _mm512_loadu_si512(src + i));
    const __m512i b = _mm512_add_epi64(_mm512_loadu_si512(dst + i + 8), _mm512_loadu_si512(src + i + 8));
    _mm512_storeu_si512(dst + i, a);
    _mm512_storeu_si512(dst + i + 8, b);
    // The masked forms: GCC 12's unmasked max reads an undefined vector.
    const __m512i ab = _mm512_mask_max_epu64(a, 0xFF, _mm512_and_si512(a, mask), _mm512_and_si512(b, mask));
    top = _mm512_mask_max_epu64(top, 0xFF, top, ab);
  }
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, top);
  const auto most = static_cast<int32_t>(*std::max_element(lanes, lanes + 8) >> 48);
  return std::max(most, add_portable(dst + i, src + i, n - i));
}

__attribute__((target("avx512f,popcnt"))) int count_above_avx512(const int64_t* v, int n, int32_t max) {
  const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  const __m512i mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i limit = _mm512_set1_epi32(max);
  int above = 0;
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i high =
        _mm512_and_si512(_mm512_permutex2var_epi32(_mm512_loadu_si512(v + i), odd, _mm512_loadu_si512(v + i + 8)), mask);
    above += __builtin_popcount(static_cast<unsigned>(_mm512_cmpgt_epi32_mask(high, limit)));
  }
  return above + count_above_portable(v + i, n - i, max);
}

#endif

std::vector<Kernels> detect() {
  std::vector<Kernels> k{{"portable", add_portable, count_above_portable}};
#ifdef BLIS_GO_RAND_X86
  k.push_back({"sse2", add_sse2, count_above_sse2});
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) k.push_back({"avx2", add_avx2, count_above_avx2});
  if (__builtin_cpu_supports("avx512f")) k.push_back({"avx512", add_avx512, count_above_avx512});
#endif
  return k;
}

}  // namespace

std::span<const Kernels> available() {
  static const std::vector<Kernels> kernels = detect();
  return kernels;
}

const Kernels& best() {
  static const Kernels& k = available().back();
  return k;
}

}  // namespace blis::go_rand_kernels
