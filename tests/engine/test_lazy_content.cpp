// Lazy request content in the engine (docs/design/performance.md "Lazy
// request content"): views make the input blocks without storing them, the
// pool completes the content when the instance schedules the request, and
// released content buffers go to spares, not to the slot.
#include "catch.hpp"
#include "engine/request.hpp"

#include <blis/block_hash.hpp>

#include <cstdint>
#include <vector>

namespace {

// Input 100 tokens, output 30, blocks of 16: 8 blocks, 6 of them input, 2
// shareable.
void lazy_spec(blis::Request& r, uint64_t seed) {
  r.spec.input_tokens = 100;
  r.spec.output_tokens = 30;
  r.spec.block_hashes = {11, 22};
  r.spec.shareable_blocks = 2;
  r.spec.own_content = seed;
}

std::vector<uint64_t> expected(uint64_t seed, int64_t blocks) {
  std::vector<uint64_t> out = {11, 22};
  for (int64_t k = 2; k < blocks; ++k) out.push_back(blis::own_block_hash(out.back(), seed, k));
  return out;
}

}  // namespace

TEST_CASE("lazy content: views make input blocks, scheduling makes all, release keeps none", "[engine][kv]") {
  blis::RequestPool pool;
  const uint32_t a = pool.acquire();
  lazy_spec(pool[a], 77);
  const blis_request_view v = blis::request_view(pool[a], 16, pool);
  REQUIRE(v.num_blocks == 6);
  CHECK(std::vector<uint64_t>(v.block_hashes, v.block_hashes + 6) == expected(77, 6));
  CHECK(pool[a].spec.block_hashes.size() == 2);  // nothing stored
  // A second request's view, then the first one's again: the same content.
  const uint32_t b = pool.acquire();
  lazy_spec(pool[b], 78);
  const blis_request_view w = blis::request_view(pool[b], 16, pool);
  CHECK(std::vector<uint64_t>(w.block_hashes, w.block_hashes + 6) == expected(78, 6));
  const blis_request_view again = blis::request_view(pool[a], 16, pool);
  CHECK(std::vector<uint64_t>(again.block_hashes, again.block_hashes + 6) == expected(77, 6));

  pool.complete_content(pool[a], 16);
  CHECK(pool[a].spec.block_hashes == expected(77, 8));
  pool.complete_content(pool[a], 16);  // idempotent
  CHECK(pool[a].spec.block_hashes == expected(77, 8));
  // Complete content is what views read from then on.
  CHECK(blis::request_view(pool[a], 16, pool).block_hashes == pool[a].spec.block_hashes.data());

  // The released buffer is a spare: the slot's next request holds nothing,
  // and the next completion reuses the buffer.
  const uint64_t* buffer = pool[a].spec.block_hashes.data();
  pool.release(a);
  const uint32_t c = pool.acquire();
  CHECK(c == a);
  CHECK(pool[c].spec.block_hashes.capacity() == 0);
  pool.complete_content(pool[b], 16);
  CHECK(pool[b].spec.block_hashes.data() == buffer);
  CHECK(pool[b].spec.block_hashes == expected(78, 8));
}

TEST_CASE("eager content is read in place and kept by the slot", "[engine][kv]") {
  blis::RequestPool pool;
  const uint32_t a = pool.acquire();
  pool[a].spec.input_tokens = 40;
  pool[a].spec.output_tokens = 8;
  pool[a].spec.block_hashes = {1, 2, 3};
  CHECK(blis::request_view(pool[a], 16, pool).block_hashes == pool[a].spec.block_hashes.data());
  pool.complete_content(pool[a], 16);
  CHECK(pool[a].spec.block_hashes == std::vector<uint64_t>{1, 2, 3});
  pool.release(a);
  CHECK(pool[pool.acquire()].spec.block_hashes.capacity() >= 3);
}

TEST_CASE("lazy content: the views of a dozen requests in turn, then their scheduling in another order",
          "[engine][kv]") {
  // More requests than the pool keeps scratches for: some input blocks are
  // copied from a scratch, the others made again; all come out the same.
  blis::RequestPool pool;
  std::vector<uint32_t> slots;
  for (uint64_t seed = 100; seed < 112; ++seed) {
    const uint32_t s = pool.acquire();
    lazy_spec(pool[s], seed);
    slots.push_back(s);
    const blis_request_view v = blis::request_view(pool[s], 16, pool);
    REQUIRE(std::vector<uint64_t>(v.block_hashes, v.block_hashes + 6) == expected(seed, 6));
  }
  // The earlier views of the last few requests stay valid meanwhile.
  const blis_request_view last = blis::request_view(pool[slots.back()], 16, pool);
  const blis_request_view before = blis::request_view(pool[slots[slots.size() - 2]], 16, pool);
  CHECK(std::vector<uint64_t>(last.block_hashes, last.block_hashes + 6) == expected(111, 6));
  CHECK(std::vector<uint64_t>(before.block_hashes, before.block_hashes + 6) == expected(110, 6));
  for (size_t k = slots.size(); k-- > 0;) {
    pool.complete_content(pool[slots[k]], 16);
    CHECK(pool[slots[k]].spec.block_hashes == expected(100 + k, 8));
  }
}
