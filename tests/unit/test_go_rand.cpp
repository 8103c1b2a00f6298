// Go math/rand port: the test vectors of spec workload §7.1 and §7.2.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "blis/go_rand.hpp"
#include "catch.hpp"
#include "workload/go_rand_kernels.hpp"

using blis::GoRand;

TEST_CASE("GoRand Int63 matches Go for seed 42", "[workload][go_rand]") {
  GoRand r(42);
  const std::vector<int64_t> expected = {3440579354231278675, 608747136543856411,
                                         5571782338101878760, 1926012586526624009,
                                         404153945743547657};
  for (const int64_t e : expected) CHECK(r.int63() == e);
  GoRand r2(42);
  int64_t v = 0;
  for (int i = 0; i < 1000; ++i) v = r2.int63();
  CHECK(v == 1027943892744365279);
}

TEST_CASE("GoRand Float64 matches Go for seed 42", "[workload][go_rand]") {
  GoRand r(42);
  CHECK(r.float64() == 0.37302836104663262);
  CHECK(r.float64() == 0.06600049679351791);
  CHECK(r.float64() == 0.60409385155864204);
  CHECK(r.float64() == 0.20881870305465913);
  CHECK(r.float64() == 0.043818458599374305);
}

TEST_CASE("GoRand NormFloat64 matches Go for seed 42", "[workload][go_rand]") {
  GoRand r(42);
  CHECK(r.norm_float64() == 1.5536305584564762);
  CHECK(r.norm_float64() == 0.12525608682704692);
  CHECK(r.norm_float64() == -0.49437481277048279);
  CHECK(r.norm_float64() == 1.2440150150762053);
  CHECK(r.norm_float64() == 0.13197848427107051);
}

TEST_CASE("GoRand ExpFloat64 matches Go for seed 42", "[workload][go_rand]") {
  GoRand r(42);
  CHECK(r.exp_float64() == 0.49573841490239784);
  CHECK(r.exp_float64() == 0.13054718375896252);
  CHECK(r.exp_float64() == 0.1532334522090758);
  CHECK(r.exp_float64() == 0.3384463626094486);
  CHECK(r.exp_float64() == 0.11596423879404183);
}

TEST_CASE("GoRand Intn(128000) matches Go for seed 42", "[workload][go_rand]") {
  GoRand r(42);
  const std::vector<int64_t> expected = {48305, 38987, 1668, 50750, 19423};
  for (const int64_t e : expected) CHECK(r.intn(128000) == e);
  GoRand r31(42);
  CHECK(r31.int31n(128000) == 48305);
}

TEST_CASE("GoRand derived integer draws follow Go's definitions", "[workload][go_rand]") {
  GoRand a(42), b(42);
  const int64_t first = a.int63();
  CHECK(b.int31() == static_cast<int32_t>(first >> 32));
  const int64_t second = a.int63();
  CHECK(b.uint32() == static_cast<uint32_t>(second >> 31));
  const uint64_t third = a.uint64();
  CHECK(static_cast<uint64_t>(b.int63()) == (third & 0x7fffffffffffffffULL));
  // Powers of two mask instead of rejecting.
  const int64_t fourth = a.int63();
  CHECK(b.intn(1024) == (static_cast<int32_t>(fourth >> 32) & 1023));
  const int64_t fifth = a.int63();
  CHECK(b.int63n(int64_t{1} << 40) == (fifth & ((int64_t{1} << 40) - 1)));
  // Bounds above 2^31-1 go through Int63n.
  GoRand c(7), d(7);
  CHECK(c.intn(int64_t{1} << 33) == d.int63n(int64_t{1} << 33));
  CHECK_THROWS(c.intn(0));
  CHECK_THROWS(c.int63n(-1));
}

TEST_CASE("GoRand seeding reduces the seed modulo 2^31-1", "[workload][go_rand]") {
  const std::vector<int64_t> zero = {8717895732742165505, 2259404117704393152, 6050128673802995827};
  GoRand s0(0), s89(89482311);
  for (const int64_t e : zero) {
    CHECK(s0.int63() == e);
    CHECK(s89.int63() == e);
  }
  GoRand neg(-7);
  CHECK(neg.int63() == 747107023976529931);
  CHECK(neg.int63() == 7084732931963018726);
  GoRand a(42), b(42 + 2147483647LL);
  for (int i = 0; i < 100; ++i) CHECK(a.uint64() == b.uint64());
}

TEST_CASE("fnv1a64 and derive_seed partition the master seed", "[workload][go_rand]") {
  CHECK(static_cast<uint64_t>(blis::fnv1a64("workload-gen")) == 0x623e21a6896fc55fULL);
  CHECK(blis::fnv1a64("workload-gen") == 7079132663427089759);
  CHECK(blis::fnv1a64("router") == -6855704586828942012);
  CHECK(static_cast<uint64_t>(blis::fnv1a64("")) == 14695981039346656037ULL);
  CHECK(blis::derive_seed(42, "workload") == 42);
  CHECK(blis::derive_seed(42, "workload-gen") == 7079132663427089781);
  CHECK(blis::derive_seed(42, "router") == (42 ^ -6855704586828942012));
  // Effective residue of the workload-gen seed.
  CHECK(7079132663427089781 % 2147483647 == 1307314371);

  GoRand w(blis::derive_seed(42, "workload-gen"));
  CHECK(w.int63() == 8021973113318348621);
  CHECK(w.int63() == 8992864799868832677);
  CHECK(w.int63() == 4436493985809465938);
  GoRand w2(blis::derive_seed(42, "workload-gen"));
  const std::vector<int64_t> ids = {113163, 118499, 119750, 122608, 81772};
  for (const int64_t e : ids) CHECK(w2.intn(128000) == e);
}

TEST_CASE("skip_int31n advances the stream exactly as the draws it skips", "[workload][go_rand]") {
  // 2^30 + 1 rejects about half of the values (more than one value per
  // draw); 128000 is the token-id bound; 1024 is a power of two (no
  // rejection); counts cross the register's batches of 273 and 607 slots.
  for (const int32_t bound : {128000, (1 << 30) + 1, 1024, 7}) {
    for (const int64_t count : {0, 1, 5, 272, 273, 274, 607, 1000, 5000}) {
      GoRand drawn(1234 + count), skipped(1234 + count);
      drawn.int63();  // start inside a batch
      skipped.int63();
      for (int64_t i = 0; i < count; ++i) drawn.int31n(bound);
      skipped.skip_int31n(bound, count);
      for (int i = 0; i < 700; ++i) REQUIRE(drawn.uint64() == skipped.uint64());
    }
  }
  GoRand r(1);
  CHECK_THROWS(r.skip_int31n(0, 3));
}

TEST_CASE("skip_int31n matches int31n over many bounds and runs of skips", "[workload][go_rand]") {
  // Runs of skips of random lengths on one generator, so skips start and end
  // anywhere in the register's three batches (273, 61 and 273 slots).
  GoRand pick(99);
  for (int trial = 0; trial < 200; ++trial) {
    int32_t bound = 0;
    switch (trial % 5) {
      case 0: bound = 128000; break;
      case 1: bound = (1 << 30) + 1; break;  // about half the values rejected
      case 2: bound = 1 << (trial % 31); break;
      case 3: bound = 0x7fffffff; break;  // rejects only an Int31 of 2^31 - 1
      default: bound = 1 + pick.int31n(0x7ffffffe); break;
    }
    GoRand drawn(trial), skipped(trial);
    for (int run = 0; run < 12; ++run) {
      const int64_t count = pick.int31n(run % 3 == 0 ? 2000 : 700);
      for (int64_t i = 0; i < count; ++i) drawn.int31n(bound);
      skipped.skip_int31n(bound, count);
      REQUIRE(drawn.int63() == skipped.int63());
    }
  }
}

TEST_CASE("GoRand's kernel variants agree with the portable one", "[workload][go_rand]") {
  namespace k = blis::go_rand_kernels;
  const auto variants = k::available();
  REQUIRE(!variants.empty());
  CHECK(std::string(variants[0].name) == "portable");
  CHECK(&k::best() == &variants.back());
#if defined(__x86_64__)
  // The widest variant the CPU runs is the one used.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) CHECK(std::string(variants.back().name) == "avx512");
  else if (__builtin_cpu_supports("avx2")) CHECK(std::string(variants.back().name) == "avx2");
#endif
  GoRand r(5);
  std::vector<int64_t> values(80), dst(80), want(80);
  for (int trial = 0; trial < 300; ++trial) {
    for (auto& v : values) v = static_cast<int64_t>(r.uint64());
    // Values whose Int31 is exactly max, and max at both ends.
    const int32_t max = trial % 3 == 0 ? 0 : trial % 3 == 1 ? 0x7fffffff : r.int31();
    values[static_cast<size_t>(trial % 80)] = (static_cast<int64_t>(max) << 32) | (trial & 1 ? INT64_MIN : 0);
    for (int n = 0; n <= 80; n += 1 + trial % 7) {
      const int offset = trial % 3;
      const int len = std::max(0, n - offset);
      const int expected = variants[0].count_above(values.data() + offset, len, max);
      for (auto& v : dst) v = static_cast<int64_t>(r.uint64());
      want = dst;
      const int32_t want_top = variants[0].add(want.data() + offset, values.data(), len);
      // The top bits returned, by definition: the largest Int31 >> 16 of the sums.
      int32_t top = 0;
      for (int i = 0; i < len; ++i) {
        const auto sum = static_cast<uint64_t>(want[static_cast<size_t>(offset) + static_cast<size_t>(i)]);
        top = std::max(top, static_cast<int32_t>((sum >> 48) & 0x7fff));
      }
      REQUIRE(want_top == top);
      for (const auto& variant : variants) {
        INFO(variant.name << " n=" << len << " max=" << max);
        REQUIRE(variant.count_above(values.data() + offset, len, max) == expected);
        std::vector<int64_t> got = dst;
        REQUIRE(variant.add(got.data() + offset, values.data(), len) == want_top);
        REQUIRE(got == want);
      }
    }
  }
  // The portable count itself, by definition.
  const std::vector<int64_t> fixed = {0, -1, (int64_t{5} << 32), INT64_MIN | (int64_t{5} << 32), INT64_MAX};
  CHECK(variants[0].count_above(fixed.data(), 5, 4) == 4);
  CHECK(variants[0].count_above(fixed.data(), 5, 5) == 2);
  CHECK(variants[0].count_above(fixed.data(), 5, 0x7fffffff) == 0);
}
