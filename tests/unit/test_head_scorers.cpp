// The routing scorers of the reference's later snapshot (spec head §7.1),
// loaded from the staged .so files through the real plugin loader, against
// the formulas and the worked example of that section.
#include "catch.hpp"

#include <blis/config_table.hpp>
#include <blis/plugin.h>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

class Scorer {
 public:
  explicit Scorer(const std::string& name)
      : lib_(blis::open_plugin_library(std::string(BLIS_TEST_STAGE) + "/lib/blis/plugins/libblis-scorer-" +
                                       name + ".so")) {
    blis::register_library(reg_, lib_);
    needs_ = reg_.scorers.find(name)->needs;
    const blis::ConfigTable cfg;
    scorer_ = reg_.scorers.create(name, blis::CreateArgs{&cfg, 42});
  }
  blis::RoutingScorer* operator->() { return scorer_.get(); }
  uint32_t needs() const { return needs_; }

 private:
  std::shared_ptr<blis::LoadedLibrary> lib_;
  blis::Registries reg_;
  std::unique_ptr<blis::RoutingScorer> scorer_;
  uint32_t needs_ = 0;
};

struct Snap {
  int32_t queue = 0, batch = 0, in_flight = 0;
  int64_t cached = -1;
  int32_t index = -1;  // -1: its position
};

// A snapshot followed by bytes a plugin must skip (index by snapshot_size).
struct Grown {
  blis_instance_snapshot s;
  double appended[2] = {-7, -7};
};

struct Decision {
  std::vector<uint64_t> hashes{11, 12, 13, 14};
  blis_request_view request{};
  std::vector<Grown> instances;

  explicit Decision(const std::vector<Snap>& snaps) {
    for (size_t i = 0; i < snaps.size(); ++i) {
      Grown g{};
      g.s.index = snaps[i].index >= 0 ? snaps[i].index : static_cast<int32_t>(i);
      g.s.queue_depth = snaps[i].queue;
      g.s.batch_size = snaps[i].batch;
      g.s.in_flight = snaps[i].in_flight;
      g.s.total_kv_blocks = g.s.free_kv_blocks = 1000;
      g.s.cached_blocks = snaps[i].cached;
      g.appended[0] = g.appended[1] = -7;
      instances.push_back(g);
    }
    request.struct_size = sizeof request;
    request.block_size = 16;
    request.input_tokens = 64;
    request.block_hashes = hashes.data();
    request.num_blocks = 4;
    request.slo_class_name = "";
    request.tenant_id = "";
  }
  blis_route_input input() const {
    return blis_route_input{sizeof(blis_route_input), sizeof(Grown), 0, &request, &instances[0].s,
                            static_cast<int64_t>(instances.size())};
  }
};

std::vector<double> score(Scorer& s, const Decision& d) {
  std::vector<double> out(d.instances.size() + 1, std::numeric_limits<double>::quiet_NaN());
  s->score(d.input(), out.data());
  CHECK(std::isnan(out.back()));  // nothing written past count
  out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("active-requests: (max in flight - own) / max, idle instances score 1", "[routing][plugin]") {
  Scorer s("active-requests");
  CHECK(s.needs() == (BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS));  // no cache signal, no request
  CHECK(score(s, Decision({{0, 0, 0}, {0, 0, 2}, {0, 0, 4}, {0, 0, 1}})) ==
        std::vector<double>{1.0, 0.5, 0.0, 0.75});
  CHECK(score(s, Decision({{3, 3, 0}, {0, 0, 0}})) == std::vector<double>{1.0, 1.0});
  CHECK(score(s, Decision({{0, 0, 5}, {0, 0, 5}})) == std::vector<double>{0.0, 0.0});
}

TEST_CASE("running-requests: min-max of the batch size, the smallest scores 1", "[routing][plugin]") {
  Scorer s("running-requests");
  CHECK(score(s, Decision({{9, 3, 0}, {0, 1, 0}, {0, 5, 9}})) == std::vector<double>{0.5, 1.0, 0.0});
  CHECK(score(s, Decision({{1, 2, 0}, {7, 2, 3}})) == std::vector<double>{1.0, 1.0});
}

TEST_CASE("load-aware: 0.5 for an empty queue, 0.5 x (1 - min(q, 128) / 128) otherwise", "[routing][plugin]") {
  Scorer s("load-aware");
  CHECK(score(s, Decision({{0, 9, 9}, {64, 0, 0}, {32, 0, 0}, {128, 0, 0}, {500, 0, 0}, {1, 0, 0}})) ==
        std::vector<double>{0.5, 0.25, 0.375, 0.0, 0.0, 0.5 * (1.0 - 1.0 / 128.0)});
}

TEST_CASE("vllm-dp: min-max of 4 x queue depth + batch size", "[routing][plugin]") {
  Scorer s("vllm-dp");
  // raw 4, 2, 10: lo 2, hi 10.
  CHECK(score(s, Decision({{1, 0, 7}, {0, 2, 0}, {2, 2, 0}})) == std::vector<double>{0.75, 1.0, 0.0});
  // raw 4 and 4: all 1.
  CHECK(score(s, Decision({{1, 0, 0}, {0, 4, 0}})) == std::vector<double>{1.0, 1.0});
}

TEST_CASE("precise-prefix-cache: min-max ascending over the cached leading blocks", "[routing][plugin]") {
  Scorer s("precise-prefix-cache");
  CHECK(s.needs() == BLIS_NEED_PREFIX_CACHE);
  CHECK_FALSE(s->observes());
  CHECK(score(s, Decision({{0, 0, 0, 0}, {0, 0, 0, 2}, {0, 0, 0, 4}, {0, 0, 0, 1}})) ==
        std::vector<double>{0.0, 0.5, 1.0, 0.25});
  SECTION("equal prefixes, none cached, or no cache query: all 1") {
    CHECK(score(s, Decision({{0, 0, 0, 3}, {0, 0, 0, 3}})) == std::vector<double>{1.0, 1.0});
    CHECK(score(s, Decision({{0, 0, 0, 0}, {0, 0, 0, 0}})) == std::vector<double>{1.0, 1.0});
    CHECK(score(s, Decision({{0, 0, 0, -1}, {0, 0, 0, -1}})) == std::vector<double>{1.0, 1.0});
  }
}

TEST_CASE("no-hit-lru: cold requests go to the least recently chosen instance", "[routing][plugin]") {
  Scorer s("no-hit-lru");
  CHECK(s.needs() == BLIS_NEED_PREFIX_CACHE);
  REQUIRE(s->observes());
  const Decision cold({{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}});  // A, B, C
  SECTION("the worked example: LRU = [B] gives A 1.0, C 0.5, B 0.0") {
    CHECK(score(s, cold) == std::vector<double>{1.0, 0.5, 0.0});  // empty LRU: snapshot order
    s->observe(cold.input(), 1);                                   // B chosen
    CHECK(score(s, cold) == std::vector<double>{1.0, 0.0, 0.5});
    s->observe(cold.input(), 0);  // then A: LRU = [A, B]
    CHECK(score(s, cold) == std::vector<double>{0.0, 0.5, 1.0});
  }
  SECTION("a warm request scores 0.5 everywhere and leaves the LRU alone") {
    const Decision warm({{0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 0}});
    CHECK(score(s, warm) == std::vector<double>{0.5, 0.5, 0.5});
    s->observe(warm.input(), 1);
    CHECK(score(s, cold) == std::vector<double>{1.0, 0.5, 0.0});
  }
  SECTION("instances that left the snapshot are forgotten; one instance scores 1") {
    s->observe(cold.input(), 2);  // LRU = [C]
    const Decision two({{0, 0, 0, 0, 0}, {0, 0, 0, 0, 1}});
    CHECK(score(s, two) == std::vector<double>{1.0, 0.0});  // C pruned: A, B in snapshot order
    CHECK(score(s, Decision({{0, 0, 0, 0, 2}})) == std::vector<double>{1.0});
    CHECK(score(s, cold) == std::vector<double>{1.0, 0.5, 0.0});  // C stays forgotten
  }
}
