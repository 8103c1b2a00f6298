// A bit-exact port of Go's math/rand (v1) generator and its derived draws,
// which the reference uses for every random number. Same seed, same stream.
#pragma once

#include <cstdint>
#include <string_view>

namespace blis {

class GoRand {
 public:
  explicit GoRand(int64_t seed);
  // The seed as the generator uses it (Go reduces it modulo 2^31 - 1): two
  // seeds with the same state_seed give the same stream.
  static int32_t state_seed(int64_t seed);

  uint64_t uint64();
  int64_t int63();
  int32_t int31();
  uint32_t uint32();
  // Go's Intn for 0 < n <= 2^31-1 (Int31n rejection method); larger n uses Int63n.
  int64_t intn(int64_t n);
  int64_t int63n(int64_t n);
  int32_t int31n(int32_t n);
  // Advances the stream exactly as `count` calls of int31n(n) would, without
  // computing their values (0 < n; count >= 0): token ids nobody keeps.
  void skip_int31n(int32_t n, int64_t count);
  double float64();       // [0, 1)
  double norm_float64();  // standard normal, ziggurat
  double exp_float64();   // exponential with rate 1, ziggurat

 private:
  static constexpr int kLen = 607;
  static constexpr int kTap = 273;
  // Go panics on a bound <= 0; we throw std::invalid_argument.
  [[noreturn]] static void bad_bound(int64_t n);
  // Advances the register by up to kTap steps at once (see go_rand.cpp).
  void refill();
  // The lagged-Fibonacci register. Go updates one slot per draw, walking the
  // feed index down; we update a batch of slots ahead of use and then hand
  // out the updated slots in the same order, so the outputs are identical.
  int64_t vec_[kLen];
  int pos_;   // vec_[pos_ - 1] is the next output, already updated
  int stop_;  // first slot of the current batch: refill when pos_ reaches it
  // The largest Int31 >> 16 of the current batch's values: skip_int31n()
  // counts rejections only in a batch that may have one.
  int32_t top_ = 0;
};

// The integer draws are defined inline: token ids are drawn about a thousand
// times per request, so a call across translation units would dominate.

inline uint64_t GoRand::uint64() {
  if (pos_ == stop_) refill();
  return static_cast<uint64_t>(vec_[--pos_]);
}

inline int64_t GoRand::int63() { return static_cast<int64_t>(uint64() & 0x7fffffffffffffffULL); }

inline int32_t GoRand::int31() { return static_cast<int32_t>(int63() >> 32); }

inline uint32_t GoRand::uint32() { return static_cast<uint32_t>(int63() >> 31); }

inline int32_t GoRand::int31n(int32_t n) {
  if (n <= 0) bad_bound(n);
  if ((n & (n - 1)) == 0) return int31() & (n - 1);
  const int32_t max =
      static_cast<int32_t>(0x7fffffffU - (0x80000000U % static_cast<uint32_t>(n)));
  int32_t v = int31();
  while (v > max) v = int31();
  return v % n;
}

inline int64_t GoRand::intn(int64_t n) {
  if (n <= 0) bad_bound(n);
  if (n <= 0x7fffffff) return int31n(static_cast<int32_t>(n));
  return int63n(n);
}

// 64-bit FNV-1a of a name, reinterpreted as signed.
int64_t fnv1a64(std::string_view name);

// Seed of a named sub-stream: the seed itself for "workload", else
// seed XOR fnv1a64(name).
int64_t derive_seed(int64_t seed, std::string_view name);

}  // namespace blis
