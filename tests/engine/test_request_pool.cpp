// The request pool's memory (docs/design/performance.md "Memory"): slots in
// chunks, reused last released first; once drained, chunks whose requests
// all left are given back, and their slots neither crash nor match an event
// left for a request that was in them. And the Labels requests name their
// tenant and model with.
#include "catch.hpp"
#include "engine/request.hpp"

#include <blis/label.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

TEST_CASE("request pool: drained chunks are given back and made again with fresh incarnations", "[engine]") {
  blis::RequestPool pool;
  std::vector<uint32_t> slots;
  for (int i = 0; i < 3000; ++i) slots.push_back(pool.acquire());  // three chunks, the last in part
  for (uint32_t s = 0; s < 3000; ++s) CHECK(slots[s] == s);
  REQUIRE(pool.in_use() == 3000);
  CHECK(pool.chunks_held() == 3);
  // Every slot of the first chunk (0..1023) holds a request with a
  // timeout-like event naming (slot, incarnation).
  std::vector<uint32_t> incarnation(3000);
  for (uint32_t s = 0; s < 3000; ++s) {
    pool[s].spec.id = s;
    incarnation[s] = pool[s].incarnation;
  }
  pool.drain();
  for (uint32_t s = 0; s < 1024; ++s) pool.release(s);  // the first chunk empties: given back
  for (uint32_t s = 1024; s < 1030; ++s) pool.release(s);
  CHECK(pool.in_use() == 1970);
  CHECK(pool.chunks_held() == 2);
  const blis::Request& gone = pool[5];
  CHECK(gone.state == blis::RequestState::Free);
  CHECK(gone.incarnation != incarnation[5]);
  CHECK(pool[2000].spec.id == 2000);  // the other chunks keep their requests
  CHECK(pool[2000].state == blis::RequestState::Pipeline);

  // Arrivals after all: last released first, as before; the chunk given back
  // is made again, and no slot's incarnation is one an old event names.
  std::set<uint32_t> again;
  for (int i = 0; i < 1030; ++i) again.insert(pool.acquire());
  CHECK(again.size() == 1030);
  CHECK(pool.chunks_held() == 3);
  CHECK(*again.begin() == 0);
  CHECK(*again.rbegin() == 1029);
  for (uint32_t s = 0; s < 1030; ++s) {
    CHECK(pool[s].state == blis::RequestState::Pipeline);
    CHECK(pool[s].slot == s);
    CHECK(pool[s].incarnation != incarnation[s]);
  }
  // Not draining any more: a chunk that empties stays.
  for (uint32_t s = 0; s < 1024; ++s) pool.release(s);
  pool[0].spec.id = 99;  // a slot of a chunk kept, not the placeholder of one given back
  CHECK(pool[0].spec.id == 99);
  CHECK(pool.chunks_held() == 3);
  CHECK(pool.capacity() == 3000);
}

TEST_CASE("labels: one entry per text, compared by text", "[workload]") {
  const blis::Label a("tenant-a"), b(std::string("tenant-a")), c("tenant-b"), none;
  CHECK(a == b);
  CHECK(&a.str() == &b.str());  // the same entry of the table
  CHECK_FALSE(a == c);
  CHECK(a == "tenant-a");
  CHECK(a == std::string("tenant-a"));
  CHECK(none.empty());
  CHECK(none == blis::Label(""));
  CHECK(std::string(none.c_str()).empty());
  blis::Label d = c;
  d.clear();
  CHECK(d == none);
  CHECK(c.str() == "tenant-b");
}
