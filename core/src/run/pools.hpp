// Heterogeneous pools (RunConfig::pool_specs): each pool's text applied over
// the run's configuration and resolved on its own, so a pool's model,
// hardware, TP, latency model, KV and batching settings are checked and
// defaulted exactly as a one-pool run's are.
#pragma once

#include "run/resolve.hpp"

#include <string>
#include <vector>

namespace blis {

struct ResolvedPool {
  std::string name;
  int64_t count = 0;
  double cost_per_hour = 0;  // $ per instance-hour
  LifecycleSettings lifecycle;  // its own lifecycle keys (min, max, delays), for run/fleet_config.cpp
  std::string lifecycle_text;   // how they were written ("" = none)
  std::string role;          // P/D role (run/pd_setup.cpp): "prefill", "decode", "mixed", or "" (no P/D)
  ResolvedRun run;           // the run's configuration with this pool's settings
};

// Empty when the configuration has no pool specs. InputError naming the pool
// text for unknown keys, keys that are not per-pool settings, bad values.
std::vector<ResolvedPool> resolve_pools(const RunConfig& config, RunContext& ctx);

}  // namespace blis
