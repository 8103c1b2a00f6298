// Scenario events on the KV offload tiers and on pools' instances
// (docs/cli.md "Scenario events": `tier`, and `pool=NAME instance=K`): their
// texts, and conservation of requests and KV blocks over random scripts
// that slow and restore tiers while instances fail and come back.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"

#include <blis/errors.hpp>
#include <blis/go_rand.hpp>

#include <fmt/format.h>

#include <memory>
#include <string>

using namespace blis;
using namespace blis::test;

namespace {

ScenarioEvent ev(const std::string& text) { return parse_scenario_event(text, "test"); }

std::string error_of(const std::string& text) {
  try {
    ev(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Requests whose prompts come from a few groups (same tokens: shared
// prefixes of different lengths), so that offloaded blocks come back.
std::vector<WorkloadRequest> grouped(GoRand& rng, int count) {
  std::vector<WorkloadRequest> out;
  int64_t t = 0;
  for (int i = 0; i < count; ++i) {
    t += rng.intn(20000);
    const auto group = static_cast<uint32_t>(rng.intn(4));
    out.push_back(make_request(static_cast<uint64_t>(i), t, 64 + static_cast<int32_t>(rng.intn(700)),
                               1 + static_cast<int32_t>(rng.intn(60)), group * 100000));
  }
  return out;
}

}  // namespace

TEST_CASE("tier and pool= event texts parse, and bad ones are refused with the reason", "[cluster][events]") {
  const ScenarioEvent t = ev("at=2s action=tier tier=2 factor=4 instance=1");
  CHECK(t.action == EventAction::Tier);
  CHECK(t.tier == 2);
  CHECK(t.factor == 4);
  CHECK(t.instance == 1);
  const ScenarioEvent cpu = ev("at=0 action=tier tier=cpu factor=0.5");
  CHECK(cpu.tier == 0);
  CHECK(cpu.instance == -1);  // every instance
  const ScenarioEvent f = ev("at=1s action=fail pool=encode instance=0");
  CHECK(f.pool == "encode");
  CHECK(f.instance == 0);
  CHECK(ev("at=1s action=restore pool=encode instance=1").pool == "encode");

  CHECK(error_of("at=1s action=tier factor=2").find("needs tier=cpu or K") != std::string::npos);
  CHECK(error_of("at=1s action=tier tier=disk factor=2").find("tier=disk is not a tier") !=
        std::string::npos);
  CHECK(error_of("at=1s action=tier tier=0 factor=2").find("tier=0 is not a tier") != std::string::npos);
  CHECK(error_of("at=1s action=tier tier=1").find("needs factor=F") != std::string::npos);
  CHECK(error_of("at=1s action=tier tier=1 factor=0").find("factor=0 is not a slowdown in [0.001, 1000]") !=
        std::string::npos);
  CHECK(error_of("at=1s action=tier tier=1 factor=-2").find("is not a slowdown") != std::string::npos);
  CHECK(error_of("at=1s action=tier tier=1 factor=2 pool=a").find("give instance= too") != std::string::npos);
  CHECK(error_of("at=1s action=rate factor=2 pool=a").find("unknown or unused key 'pool'") !=
        std::string::npos);
}

TEST_CASE("a tier or pool= event the cluster cannot take is refused before the run", "[cluster][events]") {
  auto refusal = [](const char* event, bool offload) {
    ClusterConfig cfg;
    cfg.num_instances = 2;
    cfg.engine.total_kv_blocks = 1000;
    if (offload) {
      auto c = std::make_shared<OffloadChainConfig>();
      c->cpu_blocks = 50;
      c->per_block_bytes = 1000;
      c->tiers.emplace_back();
      cfg.engine.offload = c;
    }
    cfg.events = {ev(event)};
    VectorSource src(evenly_spaced(1000, 3));
    try {
      run_cluster(cfg, src, "blackbox", step_1000_10_5());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(refusal("at=1s action=tier tier=1 factor=2", false).find("has no KV offload tier") !=
        std::string::npos);
  CHECK(refusal("at=1s action=tier tier=2 factor=2 instance=1", true)
            .find("tier 2: instance 1 has 1 secondary tier(s) in --kv-offload-config (tier=1..1)") !=
        std::string::npos);
  // The CPU tier of --kv-offload-config reloads in no time (HEAD's model).
  CHECK(refusal("at=1s action=tier tier=cpu factor=2", true).find("without a transfer time") !=
        std::string::npos);
  CHECK(refusal("at=1s action=tier tier=1 factor=2", true).empty());
  CHECK(refusal("at=1s action=fail pool=gpu instance=0", true).find("no pool 'gpu'; pools are default") !=
        std::string::npos);
  CHECK(refusal("at=1s action=fail pool=default instance=2", true)
            .find("pool 'default' has 2 instance(s); instance=2 is not one of them") != std::string::npos);
}

TEST_CASE("requests and KV blocks are conserved over random scripts that slow tiers and fail instances",
          "[cluster][events][invariant][offload]") {
  GoRand rng(11);
  int64_t slowed = 0, reloaded_runs = 0;
  for (int script = 0; script < 30; ++script) {
    ClusterConfig cfg;
    cfg.num_instances = 1 + static_cast<int32_t>(rng.intn(3));
    cfg.engine.total_kv_blocks = 60 + rng.intn(300);
    cfg.engine.max_running = 1 + rng.intn(16);
    auto chain = std::make_shared<OffloadChainConfig>();
    chain->cpu_blocks = 8 + rng.intn(100);
    chain->per_block_bytes = 1000 + rng.intn(100000);
    chain->prompt_only = rng.intn(2) == 0;
    const int64_t tiers = rng.intn(3);
    for (int64_t k = 0; k < tiers; ++k) {
      OffloadTierParams p;
      p.n_read = 1 + rng.intn(3);
      p.n_write = 1 + rng.intn(3);
      p.base_us = rng.intn(2000);
      p.read_bytes_per_us = static_cast<double>(50 + rng.intn(5000));
      p.write_bytes_per_us = static_cast<double>(50 + rng.intn(5000));
      chain->tiers.push_back(p);
    }
    if (tiers == 0) {  // HEAD's mirror tier: a timed CPU tier and nothing behind it
      chain->tiered = true;
      chain->prompt_only = false;
      chain->reload_us = 1 + rng.intn(500);
    }
    cfg.engine.offload = chain;
    std::string script_text;
    for (int64_t k = 1 + rng.intn(6); k > 0; --k) {
      const int64_t at = rng.intn(900000);
      const int64_t i = rng.intn(cfg.num_instances);
      const std::string where = rng.intn(2) == 0 ? "" : fmt::format(" instance={}", i);
      const std::string tier = tiers == 0 ? "cpu" : std::to_string(1 + rng.intn(tiers));
      static const double kFactors[] = {0.25, 1, 2, 5, 40, 1000};
      std::string text;
      switch (rng.intn(5)) {
        case 0: text = fmt::format("at={} action=fail instance={} requests=reroute", at, i); break;
        case 1: text = fmt::format("at={} action=restore pool=default instance={}", at, i); break;
        default:
          text = fmt::format("at={} action=tier tier={} factor={}{}", at, tier, kFactors[rng.intn(6)], where);
          ++slowed;
          break;
      }
      cfg.events.push_back(ev(text));
      script_text += text + "; ";
    }
    const int count = 40 + static_cast<int>(rng.intn(120));
    VectorSource src(grouped(rng, count));
    INFO("script " << script << ": " << cfg.num_instances << " instance(s), " << cfg.engine.total_kv_blocks
                   << " GPU blocks, " << chain->cpu_blocks << " CPU blocks, " << tiers << " tier(s); "
                   << script_text);
    auto out = run_cluster(cfg, src, "blackbox", step_1000_10_5());
    const InstanceMetrics& c = out.cluster;
    // Every request ends once, and no instance holds a block at the end.
    CHECK(c.completed + c.failed + c.dropped_unservable + out.result.rejected == count);
    CHECK(c.still_queued + c.still_running == 0);
    for (const InstanceMetrics& m : out.result.instances) CHECK(m.final_kv_blocks == 0);
    reloaded_runs += c.cache_hit_rate > 0 ? 1 : 0;
  }
  CHECK(slowed > 20);
  CHECK(reloaded_runs > 10);
}
