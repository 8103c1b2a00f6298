// An online simulation (blis serve, src/serve/): a RunConfig resolved and
// assembled as `blis run` does it — latency models, KV, batch limits, pools,
// admission and routing — without a workload: requests come from
// ClusterSimulation::inject as clients send them, and their tokens go to a
// LiveSink (cluster/live_tap.hpp) one by one.
#pragma once

#include "cluster/cluster.hpp"
#include "run/pools.hpp"
#include "run/resolve.hpp"

#include <blis/run_config.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blis {

struct LiveRun {
  RunContext ctx;
  ResolvedRun r;
  ClusterConfig cc;
  std::vector<ConfigTable> latency_cfgs;
  std::vector<ResolvedPool> pools;
  ConfigTable autoscaler_cfg;
  std::unique_ptr<WorkloadSource> none;  // the workload of the simulation: empty
  std::unique_ptr<ClusterSimulation> sim;

  LiveRun(RunContext c, ResolvedRun rr) : ctx(std::move(c)), r(std::move(rr)) {}
};

// Every latency model prices its steps member by member (no implicit
// decode, which announces no token), so that `sink` hears of every token
// when its step is priced. The horizon is lifted: an online run lasts until
// it is stopped.
std::unique_ptr<LiveRun> open_live_run(const RunConfig& config, LiveSink& sink);

}  // namespace blis
