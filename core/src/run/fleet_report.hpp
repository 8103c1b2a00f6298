// The pools' part of a run's report (metrics/observer.hpp): what each pool
// used, over the run's duration or, when instances came and went
// (run/fleet_config.hpp), over the time each was provisioned; with node
// pools, the nodes; with an autoscaler, its actions.
#pragma once

#include "cluster/cluster.hpp"
#include "metrics/observer.hpp"
#include "run/pools.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace blis {

// What the pools block says of each pool.
struct PoolLine {
  std::string name, model, hardware, latency_model;
  int64_t count = 0;
  int32_t tp = 1;
  double cost_per_hour = 0;
};

// A run with a fleet: "=== Autoscaler ===" (with an autoscaler) and
// "=== Pools ===" blocks, "fleet" as the last member of --format json.
// `cc` and `result` outlive it.
class FleetReport : public ReportPart {
 public:
  FleetReport(std::vector<PoolLine> pools, const ClusterConfig& cc, const ClusterResult& result)
      : pools_(std::move(pools)), cc_(&cc), result_(&result) {}
  void text_blocks(const ReportScope& s, std::string& out) const override;
  void table_lines(const ReportScope& s, TablePlace place, std::string& out) const override;
  void json_members(const ReportScope& s, JsonPlace place, std::string& out) const override;

 private:
  std::vector<PoolLine> pools_;
  const ClusterConfig* cc_;
  const ClusterResult* result_;
};

// A run with pools and no fleet: "=== Pools ===", each instance provisioned
// for the whole run. `pools` and `result` outlive it.
class PoolsReport : public ReportPart {
 public:
  PoolsReport(const std::vector<ResolvedPool>& pools, const ClusterResult& result)
      : pools_(&pools), result_(&result) {}
  void text_blocks(const ReportScope& s, std::string& out) const override;
  void table_lines(const ReportScope& s, TablePlace place, std::string& out) const override;

 private:
  const std::vector<ResolvedPool>* pools_;
  const ClusterResult* result_;
};

}  // namespace blis
