// The due scan's variants (engine/due_scan.hpp) find the same members as the
// definition: every position whose due step is at most S, in order. A wrong
// lane or a missed tail member would change which batch members a step
// handles, and so every number a run prints.
#include "catch.hpp"

#include "engine/due_scan.hpp"

#include <blis/go_rand.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace blis;

namespace {

std::vector<uint32_t> due_by_definition(const std::vector<uint64_t>& due, size_t n, uint64_t S) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < n; ++i)
    if (due[i] <= S) out.push_back(static_cast<uint32_t>(i));
  return out;
}

}  // namespace

TEST_CASE("the due scan's variants find every due member, in order", "[engine][due_scan]") {
  const auto variants = due_scan::available();
  REQUIRE(!variants.empty());
  CHECK(std::string(variants[0].name) == "portable");
  CHECK(&due_scan::best() == &variants.back());
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) CHECK(std::string(variants.back().name) == "avx2");
#endif
  GoRand r(11);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t n = static_cast<size_t>(r.intn(70));
    const uint64_t S = 1000 + static_cast<uint64_t>(r.intn(50));
    // Sparse, dense, none and all due; explicit members (0); dues just above
    // and at S; large steps.
    const int density = trial % 5;
    std::vector<uint64_t> due(n);
    for (auto& d : due) {
      const int64_t pick = r.intn(16);
      if (density == 0 || (density == 1 && pick == 0) || (density == 2 && pick < 8)) {
        d = pick % 3 == 0 ? 0 : S - static_cast<uint64_t>(r.intn(3));
      } else {
        d = density == 3 && pick == 1 ? (uint64_t{1} << 62) : S + 1 + static_cast<uint64_t>(r.intn(40));
      }
    }
    const std::vector<uint32_t> want = due_by_definition(due, n, S);
    for (const auto& v : variants) {
      INFO(v.name << " n=" << n << " trial=" << trial);
      std::vector<uint32_t> got(n + 1, 999);
      got.resize(v.collect_due(due.data(), n, S, got.data()));
      REQUIRE(got == want);
    }
  }
}
