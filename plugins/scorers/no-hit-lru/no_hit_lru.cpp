// no-hit-lru routing scorer: spreads requests that no instance has cached
// anything of ("cold") over the instances least recently given a cold
// request, and stays neutral on the rest (spec head §7.1).
#include <blis/plugin.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

class NoHitLru {
 public:
  explicit NoHitLru(blis::sdk::Context&) {}

  void score(const blis_route_input& input, double* scores) {
    const int64_t n = input.count;
    if (n <= 0) return;
    if (!cold(input)) {
      std::fill(scores, scores + n, 0.5);  // warm: neutral, the LRU untouched
      return;
    }
    if (n == 1) {
      scores[0] = 1.0;
      return;
    }
    // Forget instances no longer offered, then rank: the instances never
    // given a cold request first (snapshot order), then the LRU from least to
    // most recent. score = 1 - rank / (n - 1).
    lru_.erase(std::remove_if(lru_.begin(), lru_.end(),
                              [&](int32_t index) { return position(input, index) < 0; }),
               lru_.end());
    int64_t rank = 0;
    const double last = static_cast<double>(n - 1);
    for (int64_t i = 0; i < n; ++i)
      if (std::find(lru_.begin(), lru_.end(), blis::sdk::instance_at(input, i).index) == lru_.end())
        scores[i] = 1.0 - static_cast<double>(rank++) / last;
    for (auto it = lru_.rbegin(); it != lru_.rend(); ++it)
      scores[position(input, *it)] = 1.0 - static_cast<double>(rank++) / last;
  }

  // A cold request's instance becomes the most recent.
  void observe(const blis_route_input& input, int64_t chosen) {
    if (chosen < 0 || chosen >= input.count || !cold(input)) return;
    const int32_t index = blis::sdk::instance_at(input, chosen).index;
    lru_.erase(std::remove(lru_.begin(), lru_.end(), index), lru_.end());
    lru_.insert(lru_.begin(), index);
  }

 private:
  // No instance holds a single block of the request.
  static bool cold(const blis_route_input& input) {
    if (input.snapshot_size < kCachedBlocksEnd) return true;
    for (int64_t i = 0; i < input.count; ++i)
      if (blis::sdk::instance_at(input, i).cached_blocks >= 1) return false;
    return true;
  }
  static int64_t position(const blis_route_input& input, int32_t index) {
    for (int64_t i = 0; i < input.count; ++i)
      if (blis::sdk::instance_at(input, i).index == index) return i;
    return -1;
  }

  static constexpr uint32_t kCachedBlocksEnd =
      offsetof(blis_instance_snapshot, cached_blocks) + sizeof(int64_t);
  std::vector<int32_t> lru_;  // instance indexes, most recent first
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<NoHitLru>(
    "no-hit-lru", "1.0.0",
    "Requests no instance has cached go to the least recently chosen instance; others score 0.5",
    BLIS_NEED_PREFIX_CACHE))
