// Prefill/decode disaggregation at setup (spec head §5.1; docs/disaggregation.md):
// the P/D flags checked and turned into pools, then into the cluster's P/D
// configuration and the pools' routers.
#pragma once

#include "cluster/cluster.hpp"
#include "run/pools.hpp"

#include <blis/run_config.hpp>

#include <vector>

namespace blis {

// `config` itself without P/D pools; with them, a copy whose pool specs are
// the P/D pools in role order: prefill, decode, prefill-decode (those with
// instances), each with its role's own TP, GPU, latency model and max model
// length. InputError for a topology or setting that cannot work.
// With --pool entries that have role keys, `config` itself, checked.
RunConfig with_pd_pools(const RunConfig& config);

// Whether the run has P/D pools: from the P/D flags or pools with roles.
bool pd_configured(const RunConfig& config);

// The cluster's P/D roles, decider and link, and the pools' own routers.
// `pools` resolved from with_pd_pools(); nothing without P/D pools.
void setup_pd(const RunConfig& config, const std::vector<ResolvedPool>& pools, const ResolvedRun& r, RunContext& ctx,
              ClusterConfig& cc, ClusterPolicies& policies);

}  // namespace blis
