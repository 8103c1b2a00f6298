// splitmix64 for tests that draw random inputs: a fixed, portable stream, so
// a failing draw replays exactly from its seed.
#pragma once

#include <cstdint>
#include <vector>

namespace blis::test {

struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  uint64_t below(uint64_t n) { return next() % n; }
};

}  // namespace blis::test
