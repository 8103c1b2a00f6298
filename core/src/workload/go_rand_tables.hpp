// Go math/rand's constant tables (spec workload §7.1); definitions, with Go's
// BSD-3-Clause notice, in go_rand_tables.cpp.
#pragma once

#include <cstdint>

namespace blis::go_rand_tables {

extern const int64_t kRngCooked[607];  // seeding whitener (Go rng.go)
extern const uint32_t kKn[128];        // normal ziggurat (Go normal.go)
extern const float kWn[128];
extern const float kFn[128];
extern const uint32_t kKe[256];  // exponential ziggurat (Go exp.go)
extern const float kWe[256];
extern const float kFe[256];

}  // namespace blis::go_rand_tables
