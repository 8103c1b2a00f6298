// PackedSamples (metrics/packed_samples.hpp): the run's samples in half
// their width where exact. Against a plain vector on random values: close
// values (the narrow path), values far apart and at the type's ends (the
// chunk's wide fallback), rewrites and additions at random places, and the
// memory it saves.
#include "catch.hpp"
#include "splitmix.hpp"

#include "metrics/packed_samples.hpp"

#include <cstdint>
#include <limits>
#include <vector>

using namespace blis;
using blis::test::SplitMix;

namespace {

// A value near `center` (within ±spread), or one anywhere in Wide's range
// with probability 1/far_one_in (0: never).
template <class Wide>
Wide draw(SplitMix& rng, Wide center, uint64_t spread, uint64_t far_one_in) {
  if (far_one_in > 0 && rng.below(far_one_in) == 0) {
    switch (rng.below(3)) {
      case 0: return std::numeric_limits<Wide>::min();
      case 1: return std::numeric_limits<Wide>::max();
      default: return static_cast<Wide>(rng.next());
    }
  }
  const auto offset = static_cast<int64_t>(rng.below(2 * spread + 1)) - static_cast<int64_t>(spread);
  return static_cast<Wide>(static_cast<int64_t>(center) + offset);
}

template <class Store, class Wide>
void check_same(const Store& s, const std::vector<Wide>& plain) {
  REQUIRE(s.size() == plain.size());
  bool same = true;
  for (size_t i = 0; i < plain.size(); ++i) same = same && s[i] == plain[i];
  CHECK(same);
  CHECK(s.values() == plain);
  std::vector<Wide> iterated(s.begin(), s.end());
  CHECK(iterated == plain);
}

template <class Store, class Wide>
void random_case(uint64_t seed, Wide center, uint64_t spread, uint64_t far_one_in, size_t n) {
  SplitMix rng{seed};
  Store s;
  std::vector<Wide> plain;
  for (size_t i = 0; i < n; ++i) {
    const Wide v = draw<Wide>(rng, center, spread, far_one_in);
    s.push_back(v);
    plain.push_back(v);
    // Now and then a rewrite or an addition somewhere already written.
    if (rng.below(8) == 0) {
      const size_t k = rng.below(plain.size());
      const Wide w = draw<Wide>(rng, center, spread, far_one_in);
      s.set(k, w);
      plain[k] = w;
    }
    if (rng.below(8) == 0) {
      const size_t k = rng.below(plain.size());
      const Wide d = static_cast<Wide>(static_cast<int64_t>(rng.below(7)) - 3);
      s.add(k, d);
      plain[k] = static_cast<Wide>(static_cast<std::make_unsigned_t<Wide>>(plain[k]) +
                                   static_cast<std::make_unsigned_t<Wide>>(d));
    }
  }
  check_same(s, plain);
}

}  // namespace

TEST_CASE("packed samples read back as a plain vector: close values, in the narrow form", "[metrics]") {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    random_case<SampleStore, int64_t>(seed, int64_t{45'000'000'000}, 1'000'000'000, 0, 20'000);
    random_case<CountStore, int32_t>(seed, 0, 100, 0, 20'000);
  }
  // Every chunk stayed narrow: 4 bytes a sample (plus the last chunk's slack).
  SampleStore s;
  for (int64_t i = 0; i < 100'000; ++i) s.push_back(int64_t{1} << 40 | i);
  CHECK(s.bytes() < 100'000 * 4 + 2 * SampleStore::kChunk * 4);
}

TEST_CASE("packed samples read back as a plain vector: far values fall back to the wide form", "[metrics]") {
  for (uint64_t seed = 11; seed <= 15; ++seed) {
    random_case<SampleStore, int64_t>(seed, 0, 3'000'000'000, 0, 20'000);  // differences past 2^31
    random_case<SampleStore, int64_t>(seed, 1000, 1000, 500, 20'000);       // the type's ends now and then
    random_case<CountStore, int32_t>(seed, 0, 40'000, 0, 20'000);
    random_case<CountStore, int32_t>(seed, 0, 10, 300, 20'000);
  }
  // One far value widens its own chunk only.
  SampleStore s;
  const size_t n = 4 * SampleStore::kChunk;
  for (size_t i = 0; i < n; ++i) s.push_back(i == SampleStore::kChunk + 7 ? INT64_MIN : static_cast<int64_t>(i));
  CHECK(s[SampleStore::kChunk + 7] == INT64_MIN);
  CHECK(s[n - 1] == static_cast<int64_t>(n - 1));
  CHECK(s.bytes() < 3 * SampleStore::kChunk * 4 + SampleStore::kChunk * 8 + 1024);
}

TEST_CASE("packed samples: an empty store, and appending one store to another", "[metrics]") {
  SampleStore a, b;
  CHECK(a.empty());
  CHECK(a.values().empty());
  CHECK(a.begin() == a.end());
  std::vector<int64_t> plain;
  SplitMix rng{99};
  for (int i = 0; i < 5000; ++i) {
    const int64_t v = draw<int64_t>(rng, 0, 1'000'000, 50);
    (i < 3000 ? a : b).push_back(v);
    plain.push_back(v);
  }
  a.append(b);
  check_same(a, plain);
}

TEST_CASE("packed samples read chunk by chunk give every value in order, narrow and wide chunks alike",
          "[metrics]") {
  // The inter-token latencies are read this way, three stores side by side.
  blis::test::SplitMix rng{41};
  blis::SampleStore s;
  std::vector<int64_t> want;
  for (size_t i = 0; i < 3 * blis::SampleStore::kChunk + 17; ++i) {
    // The second chunk turns wide halfway.
    const bool far = i == blis::SampleStore::kChunk + 2000;
    const int64_t v = far ? int64_t{1} << 40 : static_cast<int64_t>(rng.below(100000));
    s.push_back(v);
    want.push_back(v);
  }
  std::vector<int64_t> got, chunk(blis::SampleStore::kChunk);
  REQUIRE(s.chunks() == 4);
  for (size_t k = 0; k < s.chunks(); ++k) {
    const size_t n = s.chunk_values(k, chunk.data());
    REQUIRE(n == (k < 3 ? blis::SampleStore::kChunk : 17));
    got.insert(got.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
  }
  REQUIRE(got == want);
}

TEST_CASE("packed samples: growing with zeros in bulk equals pushing them one by one", "[metrics]") {
  // grow_to() appends zeros a chunk's part at a time: into narrow chunks,
  // into wide ones, into a chunk whose first value is far from 0 (so that a
  // zero does not fit its narrow form), and across chunks.
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SplitMix rng{seed};
    CountStore s;
    std::vector<int32_t> plain;
    for (int round = 0; round < 12; ++round) {
      const size_t values = rng.below(3000);
      const int32_t center = rng.below(3) == 0 ? 2'000'000'000 : 0;
      for (size_t i = 0; i < values; ++i) {
        const auto v = draw<int32_t>(rng, center, 100, seed % 3 == 0 ? 50 : 0);
        s.push_back(v);
        plain.push_back(v);
      }
      const size_t to = plain.size() + rng.below(round % 4 == 0 ? 9000 : 700);
      s.grow_to(to);
      while (plain.size() < to) plain.push_back(0);
      s.grow_to(to / 2);  // never shrinks
      if (rng.below(2) == 0 && !plain.empty()) {
        const size_t k = rng.below(plain.size());
        s.add(k, -1);
        plain[k] = static_cast<int32_t>(static_cast<uint32_t>(plain[k]) - 1U);
      }
    }
    check_same(s, plain);
  }
}
