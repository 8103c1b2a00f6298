// The offload chain of --kv-offload-config (engine/kv_offload.hpp) on its
// own: block conservation in the CPU tier (every block counted once, the
// evictable ones exactly those in the LRU list, never above capacity) and
// in the GPU cache under random admissions, mirrors, releases and
// transfers; pinned blocks come back once their writes land; the transfer
// station's completion times.
#include "catch.hpp"

#include "engine/kv_offload.hpp"

#include <blis/go_rand.hpp>
#include <blis/policies.hpp>

#include <memory>

#include <vector>

using namespace blis;

namespace {

std::vector<uint64_t> sequence(uint64_t group, int64_t blocks) {
  std::vector<uint64_t> h;
  for (int64_t k = 0; k < blocks; ++k) h.push_back(group * 1000003 + static_cast<uint64_t>(k) * 7 + 1);
  return h;
}

}  // namespace

TEST_CASE("the transfer station serves reads first and completes in time order", "[offload]") {
  OffloadTierParams p;
  p.n_read = 1;
  p.n_write = 1;
  p.base_us = 10;
  p.read_bytes_per_us = 100;
  p.write_bytes_per_us = 50;
  TransferStation st({p});
  const int64_t w1 = st.submit(0, TransferStation::kWrite, 1000, 0);  // 10 + 20: done at 30
  const int64_t w2 = st.submit(0, TransferStation::kWrite, 1000, 0);  // the read server takes it: done at 30
  const int64_t r1 = st.submit(0, TransferStation::kRead, 1000, 5);   // waits for a server: 30 + 10 + 10
  std::vector<int64_t> done;
  st.poll(29, done);
  CHECK(done.empty());
  st.poll(30, done);
  CHECK(done == std::vector<int64_t>{w1, w2});
  done.clear();
  st.poll(49, done);
  CHECK(done.empty());
  st.poll(50, done);
  CHECK(done == std::vector<int64_t>{r1});
}

TEST_CASE("a slowed tier's transfers take the factor times as long from the slowdown on",
          "[offload][events]") {
  OffloadTierParams p;
  p.n_read = 1;
  p.n_write = 1;
  p.base_us = 10;
  p.read_bytes_per_us = 100;
  p.write_bytes_per_us = 50;
  TransferStation st({p, p});
  const int64_t r1 = st.submit(0, TransferStation::kRead, 1000, 0);   // 10 + 10: done at 20
  const int64_t w1 = st.submit(0, TransferStation::kWrite, 1000, 0);  // 10 + 20: done at 30
  const int64_t q1 = st.submit(0, TransferStation::kRead, 1000, 0);   // queued behind both
  st.set_slowdown(0, 3);  // those in service keep their times; the queued one starts slowed
  const int64_t other = st.submit(1, TransferStation::kRead, 1000, 0);  // tier 1 is not slowed: 20
  std::vector<int64_t> done;
  st.poll(20, done);
  CHECK(done == std::vector<int64_t>{r1, other});
  done.clear();
  st.poll(30, done);
  CHECK(done == std::vector<int64_t>{w1});
  done.clear();
  st.poll(79, done);  // q1 started at 20: 3 x 20 µs
  CHECK(done.empty());
  st.poll(80, done);
  CHECK(done == std::vector<int64_t>{q1});
  done.clear();
  st.set_slowdown(0, 0.25);  // ceil(20 / 4)
  const int64_t fast = st.submit(0, TransferStation::kRead, 1000, 100);
  st.set_slowdown(0, 1);  // restored: 20
  const int64_t back = st.submit(0, TransferStation::kRead, 1000, 100);
  st.poll(104, done);
  CHECK(done.empty());
  st.poll(105, done);
  CHECK(done == std::vector<int64_t>{fast});
  st.poll(120, done);
  CHECK(done == std::vector<int64_t>{fast, back});
}

TEST_CASE("KV blocks are conserved across the GPU, CPU and secondary tiers", "[offload][invariant]") {
  GoRand rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int32_t B = 16;
    const int64_t gpu_blocks = 8 + rng.intn(120);
    KVCache kv(gpu_blocks, B);
    OffloadChainConfig cfg;
    cfg.cpu_blocks = 1 + rng.intn(60);
    cfg.per_block_bytes = 1 + rng.intn(100000);
    cfg.prompt_only = rng.intn(2) == 0;
    for (int64_t t = rng.intn(3); t > 0; --t) {
      OffloadTierParams p;
      p.n_read = 1 + rng.intn(3);
      p.n_write = 1 + rng.intn(3);
      p.base_us = rng.intn(500);
      p.read_bytes_per_us = static_cast<double>(1 + rng.intn(5000));
      p.write_bytes_per_us = static_cast<double>(1 + rng.intn(5000));
      cfg.tiers.push_back(p);
    }
    OffloadChain chain(kv, cfg);
    struct Held {
      std::vector<uint64_t> hashes;
      RequestBlocks kv;
      int64_t input = 0;
    };
    std::vector<Held> running;
    running.reserve(64);
    int64_t now = 0;
    uint64_t next_id = 1;
    for (int op = 0; op < 400; ++op) {
      now += rng.intn(3000);
      chain.set_clock(now);
      chain.poll_deferred();
      const int64_t what = rng.intn(3);
      if (what == 0 && running.size() < 60) {
        Held h;
        h.input = 1 + rng.intn(6 * B);
        h.hashes = sequence(static_cast<uint64_t>(rng.intn(5)), (h.input + B - 1) / B + 2);
        running.push_back(std::move(h));
        Held& r = running.back();
        r.kv.hashes = r.hashes.data();
        r.kv.num_hashes = static_cast<int64_t>(r.hashes.size());
        std::vector<int32_t> hits;
        const int64_t max_hits = std::min<int64_t>((r.input - 1) / B, r.kv.num_hashes);
        const int64_t c = kv.cached_prefix(r.kv.hashes, max_hits, hits);
        const auto a = chain.admit(next_id++, r.kv, r.kv.hashes, std::min(r.input / B, r.kv.num_hashes), hits,
                                   r.input - c * B);
        if (a != OffloadChain::Admit::Ok) running.pop_back();
      } else if (what == 1 && !running.empty()) {
        const size_t k = static_cast<size_t>(rng.intn(static_cast<int64_t>(running.size())));
        kv.release(running[k].kv, rng.intn(2) == 0 ? KVCache::Release::Done : KVCache::Release::MayReturn);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        for (Held& r : running) r.kv.hashes = r.hashes.data();
      } else {
        for (const Held& r : running) chain.mirror(r.kv, r.input);
      }
      REQUIRE(chain.conserved());
      int64_t held = 0;
      for (const Held& r : running) held += r.kv.count;
      CHECK(kv.used_blocks() <= held);
      CHECK(kv.used_blocks() + kv.free_blocks() == gpu_blocks);
    }
    for (Held& r : running) kv.release(r.kv);
    CHECK(kv.used_blocks() == 0);
    // Every transfer lands; pins drop; the CPU tier is all evictable again.
    chain.set_clock(now + (int64_t{1} << 40));
    CHECK(chain.transfers_in_flight() == 0);
    CHECK(chain.conserved());
    CHECK(chain.cpu_evictable() == chain.cpu_used());
    CHECK(chain.cpu_used() <= chain.cpu_capacity());
  }
}

TEST_CASE("HEAD's mirror tier: stores every full block, evicts least recently used, charges each reload",
          "[offload][head]") {
  // --kv-cpu-blocks under --kv-cpu-model mirror (sim/kv/tiered.go): the
  // chain's tiered form. 8 GPU blocks of 16 tokens, a CPU tier of 6.
  const int32_t B = 16;
  KVCache kv(8, B);
  OffloadChainConfig cfg;
  cfg.cpu_blocks = 6;
  cfg.per_block_bytes = 1;
  cfg.prompt_only = false;
  cfg.tiered = true;
  cfg.reload_us = 7;  // base latency + ceil(16 / bandwidth)
  OffloadChain chain(kv, cfg);
  auto admit = [&](uint64_t id, std::vector<uint64_t>& h, RequestBlocks& r, int64_t input) {
    r.hashes = h.data();
    r.num_hashes = static_cast<int64_t>(h.size());
    std::vector<int32_t> hits;
    const int64_t c = kv.cached_prefix(r.hashes, std::min<int64_t>((input - 1) / B, r.num_hashes), hits);
    return chain.admit(id, r, r.hashes, std::min(input / B, r.num_hashes), hits, input - c * B);
  };
  std::vector<uint64_t> ha = sequence(1, 3), hb = sequence(2, 3), hc = sequence(3, 8);
  RequestBlocks a, b, c;
  REQUIRE(admit(1, ha, a, 3 * B) == OffloadChain::Admit::Ok);
  REQUIRE(admit(2, hb, b, 3 * B) == OffloadChain::Admit::Ok);
  chain.mirror(a, 3 * B);
  chain.mirror(b, 3 * B);
  chain.mirror(a, 3 * B);  // held already: only its recency
  CHECK(chain.cpu_used() == 6);
  CHECK(chain.thrashing_rate() == 0.0);
  kv.release(a, KVCache::Release::Done);
  kv.release(b, KVCache::Release::Done);
  // C takes every GPU block: A's and B's content is left only in the CPU tier.
  REQUIRE(admit(3, hc, c, 8 * B) == OffloadChain::Admit::Ok);
  kv.release(c, KVCache::Release::Done);
  CHECK(chain.take_transfer_latency() == 0);
  // A comes back: its three blocks are reloaded into free GPU blocks, each
  // charged to the step, and then hit as cached content.
  RequestBlocks a2;
  const int64_t hits_before = kv.hits();
  REQUIRE(admit(4, ha, a2, 3 * B + 1) == OffloadChain::Admit::Ok);
  CHECK(chain.take_transfer_latency() == 3 * 7);
  CHECK(chain.take_transfer_latency() == 0);
  CHECK(kv.hits() - hits_before == 3);
  // Mirroring C's eight blocks into a tier of six evicts eight of the
  // fourteen stored: the thrashing rate is evictions over blocks stored.
  RequestBlocks c2;
  kv.release(a2, KVCache::Release::Done);
  REQUIRE(admit(5, hc, c2, 8 * B) == OffloadChain::Admit::Ok);
  chain.mirror(c2, 8 * B);
  CHECK(chain.thrashing_rate() == Approx(8.0 / 14.0));
  CHECK(chain.conserved());
}

TEST_CASE("a CPU reload never takes the GPU blocks of the prompt's own cached prefix", "[offload][head]") {
  // docs/differences.md row 55. 8 GPU blocks of 16 tokens, a CPU tier of 8.
  const int32_t B = 16;
  KVCache kv(8, B);
  OffloadChainConfig cfg;
  cfg.cpu_blocks = 8;
  cfg.per_block_bytes = 1;
  OffloadChain chain(kv, cfg);
  auto admit = [&](uint64_t id, std::vector<uint64_t>& h, RequestBlocks& r, int64_t input) {
    r.hashes = h.data();
    r.num_hashes = static_cast<int64_t>(h.size());
    std::vector<int32_t> hits;
    const int64_t c = kv.cached_prefix(r.hashes, std::min<int64_t>((input - 1) / B, r.num_hashes), hits);
    return chain.admit(id, r, r.hashes, std::min(input / B, r.num_hashes), hits, input - c * B);
  };
  std::vector<uint64_t> ha = sequence(1, 6), hc = sequence(2, 5);
  RequestBlocks a, c, a2;
  REQUIRE(admit(1, ha, a, 6 * B) == OffloadChain::Admit::Ok);
  chain.mirror(a, 6 * B);
  kv.release(a, KVCache::Release::Done);
  // C's five blocks take the two never used and A's last three: A's first
  // three stay cached on the GPU, free, least recently freed; the rest of A
  // is only in the CPU tier.
  REQUIRE(admit(2, hc, c, 5 * B) == OffloadChain::Admit::Ok);
  kv.release(c, KVCache::Release::Done);
  REQUIRE(kv.cached_prefix_length(ha.data(), 6) == 3);
  // A comes back: its blocks 3-5 are reloaded into C's free blocks, not
  // into the ones holding its blocks 0-2 (HEAD reuses those first and then
  // counts blocks whose content it overwrote as hits): all six hit.
  const int64_t hits_before = kv.hits();
  REQUIRE(admit(3, ha, a2, 6 * B + 1) == OffloadChain::Admit::Ok);
  CHECK(kv.hits() - hits_before == 6);
  CHECK(a2.count == 7);
  CHECK(chain.own_blocks_kept() > 0);
  kv.release(a2, KVCache::Release::Done);
  CHECK(kv.cached_prefix_length(ha.data(), 6) == 6);
  CHECK(chain.conserved());
}

namespace {

// Records the candidates of each call and answers the newest of them.
class NewestOfOldest final : public OffloadEviction {
 public:
  size_t choose(const blis_offload_eviction_input& in) override {
    std::vector<uint64_t> hashes;
    for (uint64_t i = 0; i < in.count; ++i) hashes.push_back(in.candidates[i].hash);
    calls.push_back(hashes);
    capacity = in.capacity_blocks;
    return static_cast<size_t>(in.count - 1);
  }
  std::vector<std::vector<uint64_t>> calls;
  int64_t capacity = 0;
};

}  // namespace

TEST_CASE("an offload eviction policy chooses among the least recently used CPU blocks, at most 8",
          "[offload][plugin]") {
  const int32_t B = 16;
  KVCache kv(16, B);
  OffloadChainConfig cfg;
  cfg.cpu_blocks = 6;
  cfg.per_block_bytes = 1;
  cfg.prompt_only = false;
  cfg.tiered = true;
  auto policy = std::make_shared<NewestOfOldest>();
  cfg.eviction = policy;
  OffloadChain chain(kv, cfg);
  auto admit = [&](uint64_t id, std::vector<uint64_t>& h, RequestBlocks& r, int64_t input) {
    r.hashes = h.data();
    r.num_hashes = static_cast<int64_t>(h.size());
    std::vector<int32_t> hits;
    const int64_t c = kv.cached_prefix(r.hashes, std::min<int64_t>((input - 1) / B, r.num_hashes), hits);
    return chain.admit(id, r, r.hashes, std::min(input / B, r.num_hashes), hits, input - c * B);
  };
  std::vector<uint64_t> ha = sequence(1, 3), hb = sequence(2, 3), hc = sequence(3, 8);
  RequestBlocks a, b, c;
  REQUIRE(admit(1, ha, a, 3 * B) == OffloadChain::Admit::Ok);
  REQUIRE(admit(2, hb, b, 3 * B) == OffloadChain::Admit::Ok);
  chain.mirror(a, 3 * B);
  chain.mirror(b, 3 * B);
  chain.mirror(a, 3 * B);  // A's blocks are now the most recent
  CHECK(policy->calls.empty());
  REQUIRE(admit(3, hc, c, 8 * B) == OffloadChain::Admit::Ok);
  chain.mirror(c, 8 * B);  // eight stores into a full tier of six: eight evictions
  REQUIRE(policy->calls.size() == 8);
  CHECK(policy->calls[0] == std::vector<uint64_t>{hb[0], hb[1], hb[2], ha[0], ha[1], ha[2]});
  CHECK(policy->capacity == 6);
  // The first eviction took A's last block, not B's first (lru's choice).
  CHECK(policy->calls[1] == std::vector<uint64_t>{hb[0], hb[1], hb[2], ha[0], ha[1], hc[0]});
  CHECK(chain.cpu_used() == 6);
  CHECK(chain.thrashing_rate() == Approx(8.0 / 14.0));
  CHECK(chain.conserved());
}
