// The two loops GoRand spends its time in when token ids are skipped
// (GoRand::refill, GoRand::skip_int31n), in variants for the instruction
// sets a CPU may have. Every variant computes exactly the same result; the
// fastest the CPU runs is picked once, at first use.
#pragma once

#include <cstdint>
#include <span>

namespace blis::go_rand_kernels {

// dst[i] += src[i] for i < n, wrapping modulo 2^64 (n >= 0; the ranges do
// not overlap): a batch of the lagged-Fibonacci register's update. Returns
// the largest bits 48..62 of the new dst values (their Int31 >> 16; 0 for
// n == 0): while it is below max >> 16, no Int31 of the batch is above max.
using AddFn = int32_t (*)(int64_t* dst, const int64_t* src, int n);
// How many of v[0..n) have an Int31 value (bits 32..62) above max, for
// 0 <= max <= 2^31 - 1: the values Int31n(bound) rejects.
using CountAboveFn = int (*)(const int64_t* v, int n, int32_t max);

struct Kernels {
  const char* name;  // "portable", "sse2", "avx2", "avx512"
  AddFn add;
  CountAboveFn count_above;
};

// The variants this CPU can run, the portable C++ one first.
std::span<const Kernels> available();
// The last of available(): the one GoRand uses.
const Kernels& best();

}  // namespace blis::go_rand_kernels
