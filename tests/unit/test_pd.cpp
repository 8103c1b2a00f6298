// P/D disaggregation's pieces (spec head §5): the deciders, the KV size on
// the wire and the transfer link, with the worked numbers of spec head §5.3.
#include "catch.hpp"

#include "cluster/pd.hpp"

#include <algorithm>
#include <vector>

using namespace blis;

namespace {

// Qwen3-14B: L 40, d 5120, H 40, K 8, bfloat16.
double qwen3_14b_bytes_per_token(int64_t tp) { return pd_kv_bytes_per_token(40, 5120, 40, 8, 2.0, tp); }

// 25 GB/s and 0.05 ms, as the flags' defaults give them.
constexpr double kBandwidth = 25.0 * 1000;  // bytes per µs
constexpr double kBase = 0.05 * 1000;       // µs

SimTime at_of(const std::vector<KvTransferLink::Done>& done, uint64_t id) {
  for (const auto& d : done)
    if (d.id == id) return d.at;
  return -1;
}

// Runs the link's checks until every transfer is done.
void drain(KvTransferLink& link, std::vector<KvTransferLink::Done>& done) {
  for (SimTime t = link.next_check(); t != kForever; t = link.next_check()) link.advance(t, done);
}

}  // namespace

TEST_CASE("the deciders: never, always, prefix-threshold (spec head §5.2)", "[cluster][pd]") {
  PdDecider d{};
  REQUIRE(parse_pd_decider("never", d));
  CHECK(d == PdDecider::Never);
  REQUIRE(parse_pd_decider("prefix-threshold", d));
  CHECK(d == PdDecider::PrefixThreshold);
  CHECK_FALSE(parse_pd_decider("sometimes", d));
  CHECK_FALSE(pd_disaggregate(PdDecider::Never, 16, 1000, 0, 16));
  CHECK(pd_disaggregate(PdDecider::Always, 16, 1000, 62, 16));
  // The spec's example: I = 1000, D holds 40 blocks: 1000 - 640 = 360 > 16.
  CHECK(pd_disaggregate(PdDecider::PrefixThreshold, 16, 1000, 40, 16));
  // 62 blocks cached: 1000 - 992 = 8 <= 16, served where it is.
  CHECK_FALSE(pd_disaggregate(PdDecider::PrefixThreshold, 16, 1000, 62, 16));
  CHECK_FALSE(pd_disaggregate(PdDecider::PrefixThreshold, 8, 1000, 62, 16));  // 8 is not > 8
  CHECK(pd_disaggregate(PdDecider::PrefixThreshold, 7, 1000, 62, 16));
  CHECK_FALSE(pd_disaggregate(PdDecider::PrefixThreshold, 16, 0, 0, 16));     // no input
  CHECK_FALSE(pd_disaggregate(PdDecider::PrefixThreshold, 16, 1000, -1, 16)); // no cache query
}

TEST_CASE("KV bytes per token of Qwen3-14B: 163,840 at TP 1 (spec head §5.3)", "[cluster][pd]") {
  CHECK(qwen3_14b_bytes_per_token(1) == 163840.0);
  CHECK(qwen3_14b_bytes_per_token(2) == 81920.0);
  // 1000 input tokens: 63 blocks of 16 → 165,150,720 bytes.
  CHECK(63 * 16 * qwen3_14b_bytes_per_token(1) == 165150720.0);
}

TEST_CASE("one transfer takes ceil(base + bytes / bandwidth): 6657 µs (spec head §5.3)", "[cluster][pd]") {
  const double bytes = 63 * 16 * qwen3_14b_bytes_per_token(1);
  for (bool contention : {false, true}) {
    KvTransferLink link(kBandwidth, kBase, contention);
    std::vector<KvTransferLink::Done> done;
    link.start(7, bytes, 1000, done);
    drain(link, done);
    REQUIRE(done.size() == 1);
    CHECK(done[0].id == 7);
    CHECK(done[0].at == 1000 + 6657);
  }
}

TEST_CASE("two transfers sharing the link from the same start take 13263 µs each (spec head §5.3)",
          "[cluster][pd]") {
  const double bytes = 63 * 16 * qwen3_14b_bytes_per_token(1);
  KvTransferLink link(kBandwidth, kBase, true);
  std::vector<KvTransferLink::Done> done;
  link.start(1, bytes, 0, done);
  link.start(2, bytes, 0, done);
  CHECK(link.peak() == 2);
  CHECK(link.mean_depth() == 1.5);  // the first saw itself, the second two
  drain(link, done);
  REQUIRE(done.size() == 2);
  CHECK(at_of(done, 1) == 13263);
  CHECK(at_of(done, 2) == 13263);
  CHECK(link.active() == 0);
}

// docs/differences.md: the reference divides the bandwidth at a transfer's
// start and keeps that share (A alone: 6657 µs even after B starts; B at
// half: 13263 µs from its start, 16263). Shares follow the transfers on the
// link: A alone for 3000 µs, both at half until A is through at 10212.06, B
// alone again.
TEST_CASE("the fair share follows the transfers on the link, not the count at each start", "[cluster][pd]") {
  const double bytes = 63 * 16 * qwen3_14b_bytes_per_token(1);
  KvTransferLink link(kBandwidth, kBase, true);
  std::vector<KvTransferLink::Done> done;
  link.start(1, bytes, 0, done);
  CHECK(link.next_check() == 6607);
  link.start(2, bytes, 3000, done);
  CHECK(done.empty());
  CHECK(link.next_check() == 10213);
  drain(link, done);
  CHECK(at_of(done, 1) == 10263);
  CHECK(at_of(done, 2) == 13263);
  // Without contention each has the whole link.
  KvTransferLink free_link(kBandwidth, kBase, false);
  std::vector<KvTransferLink::Done> d2;
  free_link.start(1, bytes, 0, d2);
  free_link.start(2, bytes, 3000, d2);
  CHECK(at_of(d2, 1) == 6657);
  CHECK(at_of(d2, 2) == 3000 + 6657);
}

TEST_CASE("a transfer of nothing still takes a µs; the base latency alone otherwise", "[cluster][pd]") {
  KvTransferLink zero(kBandwidth, 0, false);
  std::vector<KvTransferLink::Done> done;
  zero.start(1, 0, 5, done);
  CHECK(done.at(0).at == 6);
  KvTransferLink shared(kBandwidth, 0, true);
  done.clear();
  shared.start(1, 0, 5, done);
  drain(shared, done);
  CHECK(done.at(0).at == 6);
}

TEST_CASE("an abandoned transfer gives its share of the link back at once", "[cluster][pd][events]") {
  // 1,000 bytes/µs, no base latency: two transfers of 1,000,000 bytes from
  // 0 would both end at 2000; the second abandoned at 1000 leaves the first
  // 500,000 bytes at the whole bandwidth: through at 1500.
  KvTransferLink link(1000, 0, true);
  std::vector<KvTransferLink::Done> done;
  link.start(1, 1e6, 0, done);
  link.start(2, 1e6, 0, done);
  CHECK(link.next_check() == 2000);
  link.cancel(2, 1000, done);
  CHECK(done.empty());
  CHECK(link.active() == 1);
  CHECK(link.next_check() == 1500);
  link.advance(1500, done);
  REQUIRE(done.size() == 1);
  CHECK(done[0].id == 1);
  CHECK(done[0].at == 1500);
  CHECK(link.next_check() == kForever);
  // Without contention there is nothing to give back.
  KvTransferLink free_link(1000, 0, false);
  std::vector<KvTransferLink::Done> d2;
  free_link.start(1, 1e6, 0, d2);
  free_link.cancel(1, 10, d2);
  CHECK(d2.size() == 1);
}
