// The KV block manager on its own: conservation, prefix hits, LRU reuse,
// transactional failure, and the CPU tier.
#include "catch.hpp"

#include "engine/kv_cache.hpp"

#include <vector>

using namespace blis;

namespace {

std::vector<uint64_t> hashes(uint64_t base, int n) {
  std::vector<uint64_t> h;
  for (int i = 0; i < n; ++i) h.push_back(base * 1000 + static_cast<uint64_t>(i));
  return h;
}

const std::vector<int32_t> kNoHits;

// The blocks of a request whose sequence has the content `h`.
struct Blocks : RequestBlocks {
  explicit Blocks(const std::vector<uint64_t>& h) {
    hashes = h.data();
    num_hashes = static_cast<int64_t>(h.size());
  }
};

}  // namespace

TEST_CASE("blocks are conserved and released last-first", "[kv]") {
  KVCache kv(10, 16);
  auto ha = hashes(1, 4), hb = hashes(2, 4);
  Blocks a(ha), b(hb);
  REQUIRE(kv.allocate(a, kNoHits, 40));  // 3 blocks, 2 full
  CHECK(kv.used_blocks() == 3);
  CHECK(a.tokens == 40);
  REQUIRE(kv.append_in_place(a, 8));  // fills the 3rd block
  CHECK(kv.used_blocks() == 3);
  CHECK_FALSE(kv.append_in_place(a, 1));  // needs a new block
  REQUIRE(kv.allocate(b, kNoHits, 16));
  CHECK(kv.used_blocks() + kv.free_blocks() == kv.total_blocks());
  kv.release(a);
  kv.release(b);
  CHECK(kv.used_blocks() == 0);
}

TEST_CASE("cached prefixes are found, shared and revived from the free list", "[kv]") {
  KVCache kv(10, 16);
  auto h = hashes(7, 4);
  Blocks a(h);
  REQUIRE(kv.allocate(a, kNoHits, 64));
  std::vector<int32_t> hits;
  CHECK(kv.cached_prefix(h.data(), 4, hits) == 4);
  // Shared while a holds them.
  Blocks b(h);
  REQUIRE(kv.allocate(b, hits, 1));
  CHECK(kv.used_blocks() == 5);
  CHECK(kv.hits() == 4);
  kv.release(a);
  kv.release(b);
  // Freed blocks keep their content until reused.
  CHECK(kv.cached_prefix(h.data(), 4, hits) == 4);
  // A different prefix stops the run at the first miss.
  auto other = h;
  other[1] = 99;
  CHECK(kv.cached_prefix(other.data(), 4, hits) == 1);
}

TEST_CASE("reuse takes the least recently freed block first", "[kv]") {
  KVCache kv(4, 16);
  auto h1 = hashes(1, 2), h2 = hashes(2, 2);
  Blocks a(h1), b(h2);
  REQUIRE(kv.allocate(a, kNoHits, 32));
  REQUIRE(kv.allocate(b, kNoHits, 32));
  kv.release(a);  // a's blocks are freed first: least recently freed
  kv.release(b);
  auto h3 = hashes(3, 2);
  Blocks c(h3);
  REQUIRE(kv.allocate(c, kNoHits, 32));  // evicts a's content
  std::vector<int32_t> hits;
  CHECK(kv.cached_prefix(h1.data(), 2, hits) == 0);
  CHECK(kv.cached_prefix(h2.data(), 2, hits) == 2);
}

TEST_CASE("a failed allocation changes nothing", "[kv]") {
  KVCache kv(3, 16);
  auto h = hashes(1, 8);
  Blocks a(h);
  REQUIRE(kv.allocate(a, kNoHits, 40));  // 3 blocks
  const auto ids = kv.block_ids(a);
  CHECK_FALSE(kv.allocate(a, kNoHits, 16));
  CHECK(kv.block_ids(a) == ids);
  CHECK(a.tokens == 40);
  CHECK(kv.used_blocks() == 3);
  kv.release(a);
  CHECK(kv.used_blocks() == 0);
}

TEST_CASE("the CPU tier offloads above the threshold and reloads on failure", "[kv]") {
  KVCache kv(5, 16);
  kv.enable_cpu_tier(CpuTierConfig{10, 0.5, 4.0, 100});
  auto h1 = hashes(1, 2), hh = hashes(9, 2);
  Blocks a(h1), hold(hh);
  REQUIRE(kv.allocate(a, kNoHits, 32));
  REQUIRE(kv.allocate(hold, kNoHits, 32));
  kv.set_clock(5000);
  kv.release(a);  // usage 2/5, not above the threshold: nothing moves
  std::vector<int32_t> hits;
  CHECK(kv.cached_prefix(h1.data(), 2, hits) == 2);
  REQUIRE(kv.allocate(a, hits, 1));  // take them back, plus one block
  kv.release(hold);  // usage 3/5 > 0.5: hold's cached blocks go to the CPU tier
  CHECK(kv.cached_prefix(hh.data(), 2, hits) == 0);
  kv.release(a);
  // After a failed allocation, the reload brings hold's content back.
  kv.set_clock(5500);
  CHECK(kv.reload());
  CHECK(kv.cached_prefix(hh.data(), 2, hits) == 2);
  // 2 transfers of base 100 + ceil(16 / 4) = 104 µs; both within 1 ms of offload: thrashing.
  CHECK(kv.take_transfer_latency() == 208);
  CHECK(kv.take_transfer_latency() == 0);
  CHECK(kv.thrashing_rate() > 0);
  CHECK_FALSE(kv.reload());  // nothing left on the CPU
  CHECK(kv.used_blocks() == 0);
}
