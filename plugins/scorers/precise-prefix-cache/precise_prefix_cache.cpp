// precise-prefix-cache routing scorer: how much of the request's input each
// instance's KV cache really holds, as the host reports it through the
// snapshots' cached_blocks (spec head §7.1, §7.2). Unlike prefix-affinity it
// keeps no index of its own: it sees evictions, preemptions and everything
// the instances cached, at the freshness --cache-signal-delay allows.
#include <blis/plugin.hpp>

#include <cstdint>
#include <limits>

namespace {

class PrecisePrefixCache {
 public:
  explicit PrecisePrefixCache(blis::sdk::Context&) {}

  // Min-max ascending: the instance holding the longest prefix scores 1, the
  // shortest 0; every instance scores 1 when they all hold the same (none
  // included) or when the host made no cache query (cached_blocks -1).
  void score(const blis_route_input& input, double* scores) const {
    const bool queried = input.snapshot_size >= kCachedBlocksEnd && input.request != nullptr;
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = std::numeric_limits<int64_t>::min();
    for (int64_t i = 0; queried && i < input.count; ++i) {
      const int64_t c = blis::sdk::instance_at(input, i).cached_blocks;
      if (c < lo) lo = c;
      if (c > hi) hi = c;
    }
    for (int64_t i = 0; i < input.count; ++i) {
      if (!queried || hi == lo || lo < 0) {
        scores[i] = 1.0;
        continue;
      }
      const int64_t c = blis::sdk::instance_at(input, i).cached_blocks;
      scores[i] = static_cast<double>(c - lo) / static_cast<double>(hi - lo);
    }
  }

 private:
  // A host older than ABI 1.2 passes shorter snapshots without the field.
  static constexpr uint32_t kCachedBlocksEnd =
      offsetof(blis_instance_snapshot, cached_blocks) + sizeof(int64_t);
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<PrecisePrefixCache>(
    "precise-prefix-cache", "1.0.0",
    "Min-max normalised leading input blocks held in each instance's KV cache; the longest scores 1",
    BLIS_NEED_PREFIX_CACHE))
