// util/go_sort.hpp against Go itself: the order Go 1.19's sort.Slice leaves
// elements in, ties included, for keys with many ties (BLIS HEAD's results
// file sorts its requests by arrival this way). The expected permutations
// were printed by Go 1.19 (Debian bookworm) for the same keys.
#include "catch.hpp"

#include "util/go_sort.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace {

struct Case {
  int n;
  std::vector<int> order;  // original positions, in the order Go leaves them
};

const std::vector<Case> kGo = {
    {10, {9, 4, 2, 5, 6, 7, 1, 0, 3, 8}},
    {13, {9, 4, 5, 10, 2, 6, 7, 1, 11, 12, 0, 8, 3}},
    {60, {54, 24, 46, 55, 9,  21, 48, 16, 49, 4,  13, 53, 36, 10, 5, 33, 35, 26, 25, 2,
          56, 50, 38, 23, 20, 18, 17, 27, 28, 6,  7,  31, 11, 58, 1, 30, 32, 12, 14, 39,
          40, 41, 47, 43, 44, 51, 45, 42, 15, 59, 57, 34, 29, 52, 8, 3,  19, 37, 0,  22}},
    {300,
     {251, 126, 174, 297, 95,  237, 84,  170, 226, 9,   247, 295, 294, 75,  70,  160, 46,  158, 157, 290,
      184, 228, 24,  94,  106, 152, 188, 217, 112, 142, 286, 115, 282, 138, 279, 136, 203, 116, 209, 211,
      55,  54,  121, 122, 186, 266, 21,  124, 48,  49,  210, 268, 128, 119, 271, 273, 276, 258, 257, 131,
      255, 194, 114, 148, 149, 108, 66,  288, 16,  69,  161, 71,  72,  105, 223, 13,  76,  99,  164, 296,
      244, 243, 96,  83,  171, 178, 4,   298, 229, 91,  267, 208, 2,   227, 5,   181, 82,  10,  293, 77,
      100, 101, 248, 219, 291, 249, 250, 159, 183, 109, 110, 185, 25,  26,  254, 61,  256, 56,  118, 53,
      192, 287, 261, 285, 263, 125, 175, 33,  35,  36,  132, 23,  89,  207, 38,  197, 269, 137, 127, 50,
      140, 141, 259, 143, 120, 191, 146, 147, 28,  27,  213, 187, 63,  277, 64,  20,  65,  18,  17,  107,
      218, 98,  162, 182, 246, 165, 234, 167, 168, 169, 7,   6,   232, 173, 92,  150, 97,  177, 172, 1,
      180, 11,  12,  14,  30,  31,  32,  278, 39,  189, 274, 145, 40,  193, 272, 195, 41,  135, 43,  44,
      200, 265, 264, 47,  262, 205, 206, 58,  130, 129, 253, 74,  81,  239, 236, 86,  230, 88,  104, 103,
      90,  221, 222, 85,  134, 225, 179, 93,  166, 111, 156, 231, 87,  233, 215, 15,  284, 176, 280, 113,
      240, 34,  242, 212, 80,  245, 79,  78,  151, 275, 68,  67,  190, 196, 62,  60,  59,  133, 57,  42,
      260, 51,  45,  224, 153, 199, 238, 281, 198, 52,  270, 123, 139, 144, 252, 73,  0,   37,  117, 241,
      204, 202, 201, 283, 214, 154, 155, 29,  22,  289, 19,  235, 292, 216, 163, 220, 8,   3,   102, 299}},
};

}  // namespace

TEST_CASE("go_sort::slice leaves ties where Go's sort.Slice does", "[unit][go]") {
  for (const Case& c : kGo) {
    // Keys 0..6 from a 64-bit LCG, as the Go program drew them.
    std::vector<std::pair<int64_t, int>> xs;
    uint64_t s = 12345;
    for (int i = 0; i < c.n; ++i) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      xs.emplace_back(static_cast<int64_t>(s >> 33) % 7, i);
    }
    blis::go_sort::slice(
        xs.size(), [&](size_t i, size_t j) { return xs[i].first < xs[j].first; },
        [&](size_t i, size_t j) { std::swap(xs[i], xs[j]); });
    std::vector<int> got;
    for (const auto& x : xs) got.push_back(x.second);
    INFO("n = " << c.n);
    CHECK(got == c.order);
  }
}
