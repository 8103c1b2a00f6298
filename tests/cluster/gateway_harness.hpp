// What the gateway's tests share: the built-in gateway policies from the
// registry (plugins/saturation/, plugins/dispatch/, plugins/fairness/,
// plugins/shedding/), and the order in which
// a run's requests completed.
#pragma once

#include "../engine/engine_harness.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace blis::test {

// A built-in saturation detector with the detectors' settings.
inline std::shared_ptr<SaturationDetector> detector(const std::string& name, int64_t max_concurrency = 100,
                                                    double queue_depth_threshold = 5) {
  ConfigTable c;
  c.set("max_concurrency", max_concurrency);
  c.set("queue_depth_threshold", queue_depth_threshold);
  return builtin_registries().saturation.create(name, CreateArgs{&c, 42});
}

// A built-in dispatch order; with `target_us` > 0, SLO class `target_class`'s
// TTFT target (slo-deadline's).
inline std::shared_ptr<DispatchOrder> order(const std::string& name, const std::string& target_class = "",
                                            int64_t target_us = 0) {
  ConfigTable c;
  if (target_us > 0) c.set("slo_target_us." + target_class, target_us);
  return builtin_registries().dispatch.create(name, CreateArgs{&c, 42});
}

// A built-in fairness policy.
inline std::shared_ptr<FairnessPolicy> fairness(const std::string& name) {
  ConfigTable c;
  return builtin_registries().fairness.create(name, CreateArgs{&c, 42});
}

// A built-in shedding policy.
inline std::shared_ptr<SheddingPolicy> shedding(const std::string& name) {
  ConfigTable c;
  return builtin_registries().shedding.create(name, CreateArgs{&c, 42});
}

// Ids in the order they completed (evicted requests have records too: left out).
inline std::vector<uint64_t> completion_order(const RunOutcome& out) {
  std::vector<RequestRecord> recs = out.cluster.records;
  std::sort(recs.begin(), recs.end(), [](const RequestRecord& a, const RequestRecord& b) {
    return a.arrival_us + a.e2e < b.arrival_us + b.e2e;
  });
  std::vector<uint64_t> ids;
  ids.reserve(recs.size());
  for (const RequestRecord& r : recs)
    if (!r.evicted) ids.push_back(r.id);
  return ids;
}

}  // namespace blis::test
