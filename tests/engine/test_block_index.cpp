// The prefix index (engine/block_index.hpp) starts small and doubles up to
// the size its bound needs. Whatever its size, it must answer as a map of the
// keys it holds: a key lost or duplicated in a move would change which
// prompts hit the cache, and so every number of a run with prefix caching.
#include "catch.hpp"

#include "engine/block_index.hpp"

#include <blis/go_rand.hpp>

#include <cstdint>
#include <unordered_map>
#include <vector>

using namespace blis;

TEST_CASE("the block index grows as keys come and answers as a map of the keys it holds", "[engine]") {
  for (const int64_t bound : {int64_t{1}, int64_t{100}, int64_t{5000}, int64_t{70000}}) {
    BlockIndex index(bound);
    std::vector<uint64_t> key_of(static_cast<size_t>(bound));  // by id
    std::unordered_map<uint64_t, int32_t> want;
    std::vector<int32_t> free_ids(static_cast<size_t>(bound));
    for (int32_t id = 0; id < bound; ++id) free_ids[static_cast<size_t>(id)] = id;
    auto keys = [&](int32_t id) { return key_of[static_cast<size_t>(id)]; };
    GoRand rng(bound);
    // Fill to the bound (every doubling), then churn, then drain.
    for (int round = 0; round < 3; ++round) {
      const int64_t ops = round == 1 ? bound * 4 : bound;
      for (int64_t op = 0; op < ops; ++op) {
        const bool insert = round == 0 || (round == 1 && (free_ids.empty() ? false : rng.int63n(2) == 0));
        if (insert && !free_ids.empty()) {
          const int32_t id = free_ids.back();
          free_ids.pop_back();
          // Small keys: the same tags and home slots often collide.
          const uint64_t key = static_cast<uint64_t>(rng.int63n(bound * 3 + 1));
          if (want.count(key) != 0) {
            free_ids.push_back(id);
            continue;
          }
          key_of[static_cast<size_t>(id)] = key;
          index.put(key, id, keys);
          want[key] = id;
        } else if (!want.empty()) {
          const auto victim = want.begin();
          index.erase(victim->first, keys);
          free_ids.push_back(victim->second);
          want.erase(victim);
        }
      }
      for (const auto& [key, id] : want) REQUIRE(index.find(key, keys) == id);
      for (uint64_t key = 0; key < static_cast<uint64_t>(bound) * 3 + 1; key += 7)
        if (want.count(key) == 0) REQUIRE(index.find(key, keys) == -1);
    }
  }
}
