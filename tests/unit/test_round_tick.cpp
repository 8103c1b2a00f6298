// The latency models' rounding of step times (latency_common.hpp's
// round_tick) is std::round's, bit for bit: a tick off in one step time moves
// every later event of its instance.
#include "catch.hpp"
#include "splitmix.hpp"

#include "../plugins/latency/common/latency_common.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

TEST_CASE("round_tick rounds as std::round, halves away from zero included", "[unit]") {
  auto same = [](double x) {
    INFO("x = " << x);
    REQUIRE(std::bit_cast<uint64_t>(blis::latency_common::round_tick(x)) ==
            std::bit_cast<uint64_t>(std::round(x)));
  };
  for (double x :
       {0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 4503599627370495.5, 0x1p52, 0x1p52 + 1,
        0x1p63, 1e300, -1e300, std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::denorm_min(), 12345.5, 12345.499999999998, 12345.500000000002})
    same(x);
  REQUIRE(std::isnan(blis::latency_common::round_tick(std::numeric_limits<double>::quiet_NaN())));
  // Step times in µs: every half tick, and positive doubles of every exponent (sign bit clear).
  for (int64_t k = 0; k < 200000; ++k) same(static_cast<double>(k) + 0.5);
  blis::test::SplitMix rng{5};
  for (int i = 0; i < 200000; ++i) same(std::bit_cast<double>(rng.next() >> 1));
  for (int i = 0; i < 200000; ++i) same(static_cast<double>(rng.below(1u << 30)) / 64.0);
}
