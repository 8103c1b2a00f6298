// blis::sdk::LruHashSet (sdk/include/blis/lru_hash_set.hpp): anonymous
// entries behave exactly as that many new hashes that never recur.
#include <blis/lru_hash_set.hpp>

#include <cstdint>
#include <vector>

#include "catch.hpp"

using blis::sdk::LruHashSet;

TEST_CASE("LruHashSet: add_anonymous(k) is k touches of hashes that never recur", "[routing]") {
  // The reference set touches k fresh hashes (never used again) where the
  // other adds k anonymous entries; both touch the same shared keys in
  // between (a small pool, so hits, misses and evictions all happen). After
  // every operation they agree on the size and on every shared key.
  for (const uint32_t capacity : {1u, 3u, 17u, 100u, 1000u}) {
    LruHashSet ref, anon;
    uint64_t x = capacity, fresh = 1ULL << 63;
    std::vector<uint64_t> pool;
    for (int i = 0; i < 150; ++i) pool.push_back(0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(i + 1));
    for (int op = 0; op < 4000; ++op) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      if ((x >> 60) < 5) {
        const uint64_t k = (x >> 20) % (capacity < 20 ? 5 : 80);  // 0 included, runs past the capacity too
        for (uint64_t i = 0; i < k; ++i) ref.touch(fresh++, capacity);
        anon.add_anonymous(k, capacity);
      } else {
        const uint64_t key = pool[(x >> 24) % pool.size()];
        ref.touch(key, capacity);
        anon.touch(key, capacity);
      }
      REQUIRE(ref.size() == anon.size());
      if (op % 16 == 0 || capacity < 20)
        for (const uint64_t key : pool) REQUIRE(ref.contains(key) == anon.contains(key));
    }
    // An anonymous entry is never found.
    CHECK_FALSE(anon.contains(fresh - 1));
  }
}

TEST_CASE("LruHashSet: anonymous runs merge and give their room back in order", "[routing]") {
  LruHashSet s;
  s.touch(1, 5);
  s.add_anonymous(2, 5);
  s.add_anonymous(1, 5);  // joins the run at the tail
  s.touch(2, 5);          // 1, [3 anonymous], 2
  CHECK(s.size() == 5);
  s.touch(3, 5);  // evicts 1
  CHECK_FALSE(s.contains(1));
  s.touch(4, 5);  // evicts one anonymous entry
  s.touch(5, 5);
  s.touch(6, 5);  // the run is gone: [2, 3, 4, 5, 6]
  CHECK(s.size() == 5);
  for (const uint64_t k : {2, 3, 4, 5, 6}) CHECK(s.contains(k));
  s.add_anonymous(7, 5);  // more than the capacity: only anonymous entries are left
  CHECK(s.size() == 5);
  for (const uint64_t k : {2, 3, 4, 5, 6}) CHECK_FALSE(s.contains(k));
  s.touch(2, 5);
  CHECK(s.contains(2));
  CHECK(s.size() == 5);
  CHECK(s.bytes() > 0);
}
