// KeyedLru, the CPU tier's table (engine/keyed_lru.hpp): lookups stay right
// as it grows past its first size and ids are reused, and the list gives the
// oldest entry first, against a std::list + std::unordered_map model.
#include "catch.hpp"
#include "engine/keyed_lru.hpp"
#include "splitmix.hpp"

#include <list>
#include <unordered_map>

using blis::KeyedLru;

TEST_CASE("KeyedLru: find, erase and LRU order agree with a list-and-map model through growth", "[engine][kv]") {
  KeyedLru lru;
  std::list<uint64_t> order;  // listed keys, oldest first
  std::unordered_map<uint64_t, int32_t> refs;
  blis::test::SplitMix rng{11};
  for (int step = 0; step < 20000; ++step) {
    const uint64_t key = rng.below(3000) * 0x9e3779b97f4a7c15ULL;  // spread, with repeats
    const int32_t id = lru.find(key);
    REQUIRE((id != KeyedLru::kNone) == (refs.count(key) == 1));
    const uint64_t op = rng.below(4);
    if (id == KeyedLru::kNone) {
      const int32_t ref = op == 0 ? -1 : 0;  // some unlisted, as pending stores
      const int32_t fresh = lru.insert(key, ref);
      refs[key] = ref;
      if (ref == 0) {
        lru.append(fresh);
        order.push_back(key);
      }
    } else if (op == 0) {  // erase
      lru.erase(id);
      if (refs[key] == 0) order.remove(key);
      refs.erase(key);
    } else if (op == 1 && refs[key] == 0) {  // touch
      lru.unlink(id);
      lru.append(id);
      order.remove(key);
      order.push_back(key);
    } else if (op == 2 && lru.head() != KeyedLru::kNone) {  // evict the oldest
      REQUIRE(lru[lru.head()].key == order.front());
      refs.erase(order.front());
      order.pop_front();
      lru.erase(lru.head());
    }
    REQUIRE(lru.size() == static_cast<int64_t>(refs.size()));
  }
  // The list, walked from the head, is the model's order.
  std::list<uint64_t> walked;
  for (int32_t id = lru.head(); id != KeyedLru::kNone; id = lru[id].next) walked.push_back(lru[id].key);
  CHECK(walked == order);
  CHECK(refs.size() > 64);  // it grew past its first table
  int64_t seen = 0;
  lru.for_each([&](const KeyedLru::Entry& e) {
    ++seen;
    CHECK(refs.count(e.key) == 1);
  });
  CHECK(seen == lru.size());
}
