// LoRA adapters (engine/lora.hpp): HEAD's cost terms and the resident slots'
// LRU with pins.
#include "catch.hpp"

#include "engine/lora.hpp"

#include <blis/policies.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace blis;

namespace {

std::shared_ptr<LoraConfig> config(int64_t capacity) {
  auto c = std::make_shared<LoraConfig>();
  c->capacity = capacity;
  c->adapters = {{Label("a"), 8, ""}, {Label("b"), 16, ""}, {Label("c"), 32, ""}};
  return c;
}

}  // namespace

TEST_CASE("lora: load latency, step factor and HBM reservation are HEAD's formulas", "[lora]") {
  const auto c = config(2);
  // 1500 + ceil(8 x 2e6 / 2e6)
  CHECK(c->load_latency_us(Label("a")) == 1508.0);
  CHECK(c->load_latency_us(Label("")) == 0.0);
  CHECK(c->load_latency_us(Label("nope")) == 0.0);
  CHECK(c->step_factor(0, 0) == 1.0);
  CHECK(c->step_factor(2, 16) == 1.0 + 0.035 * 2);
  // Out of the tiers: the nearest (24 is as near 16 as 32: the lower).
  CHECK(c->step_factor(1, 24) == 1.0 + 0.035);
  CHECK(c->step_factor(1, 64) == 1.0 + 0.06);
  CHECK(c->step_factor(1, 1) == 1.0 + 0.02);
  CHECK(c->reserved_bytes() == 2 * 2.0e6 * 32);
  CHECK(c->problem().empty());
}

TEST_CASE("lora: bad registries are refused with HEAD's reasons", "[lora]") {
  auto c = config(0);
  CHECK(c->problem().find("adapter_capacity must be > 0") != std::string::npos);
  c = config(1);
  c->adapters[1].rank = 0;
  CHECK(c->problem().find("\"b\": rank must be > 0") != std::string::npos);
  c = config(1);
  c->adapters[2].id = Label("a");
  CHECK(c->problem().find("duplicate adapter id \"a\"") != std::string::npos);
  c = config(1);
  c->load_bandwidth_bytes_us = 0;
  CHECK(c->problem().find("load_bandwidth_bytes_us") != std::string::npos);
}

TEST_CASE("lora: the resident slots evict the least recently used unpinned adapter at load start", "[lora]") {
  LoraSlots s(config(2));
  CHECK(s.start_load(Label("a"), 0) == 1508);
  CHECK(s.loading());
  s.finish_load();
  CHECK(s.resident(Label("a")));
  s.start_load(Label("b"), 0);
  s.finish_load();
  s.touch(Label("a"));  // b is now the least recently used
  s.pin(Label("a"));
  s.start_load(Label("c"), 0);  // evicts b at once, before the load completes
  CHECK_FALSE(s.resident(Label("b")));
  s.finish_load();
  CHECK(s.resident_ids() == std::vector<Label>{Label("a"), Label("c")});
  s.pin(Label("c"));
  CHECK(s.start_load(Label("b"), 0) == -1);  // every slot pinned: no load
  CHECK_FALSE(s.loading());
  s.unpin(Label("a"));
  CHECK(s.start_load(Label("b"), 0) > 0);  // a goes, though c is more recent
  s.finish_load();
  CHECK(s.resident_ids() == std::vector<Label>{Label("c"), Label("b")});
  CHECK(s.events().at("a").loads == 1);
  CHECK(s.events().at("a").evictions == 1);
  CHECK(s.events().at("b").loads == 2);
  CHECK(s.events().at("b").evictions == 1);
}

namespace {

// Records what it was asked and answers the last candidate (most recent).
class RecordingEviction final : public AdapterEviction {
 public:
  size_t choose(const blis_adapter_eviction_input& in) override {
    asked.emplace_back(in.loading);
    for (uint64_t i = 0; i < in.count; ++i) asked.back() += std::string(" ") + in.candidates[i];
    instance = in.instance;
    now_us = in.now_us;
    return static_cast<size_t>(in.count - 1);
  }
  std::vector<std::string> asked;
  int32_t instance = -1;
  int64_t now_us = -1;
};

}  // namespace

TEST_CASE("lora: an eviction policy chooses among the unpinned adapters, least recently used first", "[lora]") {
  auto c = config(3);
  c->adapters.push_back({Label("d"), 8, ""});
  auto policy = std::make_shared<RecordingEviction>();
  c->eviction = policy;
  LoraSlots s(c, 5);
  for (const char* id : {"a", "b", "c"}) {
    s.start_load(Label(id), 0);
    s.finish_load();
  }
  s.pin(Label("b"));
  s.start_load(Label("d"), 777);  // a and c may leave: c, the more recent, does
  CHECK(policy->asked == std::vector<std::string>{"d a c"});
  CHECK(policy->instance == 5);
  CHECK(policy->now_us == 777);
  s.finish_load();
  CHECK(s.resident_ids() == std::vector<Label>{Label("a"), Label("b"), Label("d")});
  CHECK(s.events().at("c").evictions == 1);
  // One candidate only: no choice, the policy is not asked.
  s.pin(Label("d"));
  s.start_load(Label("c"), 900);
  CHECK(policy->asked.size() == 1);
  s.finish_load();
  CHECK(s.resident_ids() == std::vector<Label>{Label("b"), Label("d"), Label("c")});
}
