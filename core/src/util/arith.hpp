// Integer arithmetic the simulator repeats: one definition each.
#pragma once

#include <cstdint>

namespace blis {

// ⌈a / b⌉ for a >= 0, b > 0 (blocks needed for a tokens of b per block).
constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace blis
