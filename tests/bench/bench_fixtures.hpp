// Inputs shared by the routing benchmarks.
#pragma once

#include <blis/plugin.h>

#include <vector>

namespace blis::bench {

// `n` instances with varied, deterministic loads.
inline std::vector<blis_instance_snapshot> varied_snapshots(int n) {
  std::vector<blis_instance_snapshot> snaps(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    snaps[i].index = i;
    snaps[i].queue_depth = (i * 7) % 5;
    snaps[i].batch_size = (i * 3) % 8;
    snaps[i].in_flight = i % 4;
    snaps[i].total_kv_blocks = 1000;
    snaps[i].free_kv_blocks = 1000 - 37 * i;
  }
  return snaps;
}

}  // namespace blis::bench
