// What the gateway's flow control (cluster/gateway.hpp) is asked to do: the
// settings of --flow-control and its companions (docs/gateway.md), apart
// from the part so that ClusterConfig can hold them.
#pragma once

#include <blis/kernel.hpp>
#include <blis/policies.hpp>

#include <array>
#include <cstdint>
#include <memory>

namespace blis {

struct GatewayConfig {
  bool enabled = false;  // --flow-control; everything below is read only when set
  // --dispatch-order: a plugin of the dispatch-order kind, created for the
  // run (never null when enabled).
  std::shared_ptr<DispatchOrder> order;
  // --saturation-detector: a plugin of the saturation-detector kind, created
  // for the run (never null when enabled).
  std::shared_ptr<SaturationDetector> detector;
  // --fairness-policy: a plugin of the fairness-policy kind, created for the
  // run (never null when enabled).
  std::shared_ptr<FairnessPolicy> fairness;
  // --shedding-policy: a plugin of the shedding-policy kind, created for the
  // run with --queue-shedding (else null).
  std::shared_ptr<SheddingPolicy> shedding_policy;
  bool shedding = false;         // --queue-shedding
  bool eviction = false;         // --in-flight-eviction
  int64_t max_depth = 0;         // --max-gateway-queue-depth, 0 = unlimited
  int64_t per_band_capacity = 0; // 0 = unlimited
  double usage_limit = 1.0;      // --usage-limit-threshold, in (0, 1]
  SimTime ttl = 0;               // --request-ttl, µs; 0 = none
  SimTime tick = 1000;           // --dispatch-tick-interval, µs
  // --slo-targets: each SLO class's (blis_slo_class) TTFT target, µs; 0 =
  // none. The dispatch order reads them (config keys slo_target_us.CLASS).
  std::array<int64_t, 6> slo_target_us{};
};

// The gateway's counts at the end of a run (HEAD's "Gateway ..." lines).
struct GatewayCounts {
  int64_t depth = 0;     // still queued at the gateway when the run stopped
  int64_t shed = 0;      // evicted from a full queue by a more urgent request
  int64_t rejected = 0;  // refused by a full queue (or band)
  int64_t expired = 0;   // waited longer than --request-ttl
  int64_t evicted = 0;   // taken off an instance for a non-sheddable request (--in-flight-eviction)
};

}  // namespace blis
