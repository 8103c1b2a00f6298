// Workload reuse across the configurations of a sweep, a search or a plan
// (issue 31, item 7). Configurations that differ only in the fleet (instance
// counts, policies, batching) simulate the same requests: while a
// WorkloadReuse is open, the first of them generates the workload once and
// keeps it, and the others replay it request by request. A replayed request
// is a copy of the generated one, field for field, so every run prints what
// it would print alone (tests/unit/test_workload_reuse.cpp).
#pragma once

#include "run/resolve.hpp"

#include <blis/scenario_events.hpp>
#include <blis/workload.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace blis {

// Opens the reuse for its lifetime (scopes nest; the kept workloads go when
// the last one closes). Thread-safe: the farm's threads share the workloads.
class WorkloadReuse {
 public:
  WorkloadReuse();
  ~WorkloadReuse();
  WorkloadReuse(const WorkloadReuse&) = delete;
  WorkloadReuse& operator=(const WorkloadReuse&) = delete;
};

// The most requests a workload may have to be kept; at most kReuseKept
// workloads of kReuseTotalRequests requests in all are kept, the oldest
// dropped first (a sweep varies its last key fastest, so the configurations
// that share a workload come together).
inline constexpr int64_t kReuseMaxRequests = 200'000;
inline constexpr int64_t kReuseTotalRequests = 1'000'000;
inline constexpr size_t kReuseKept = 64;

// The key of the run's workload when it can be reused: an open-loop
// distribution or preset workload of at most kReuseMaxRequests requests,
// with no scenario events or code that could change its rate as it runs.
// Empty when it cannot.
std::string workload_reuse_key(const ResolvedRun& r, const std::vector<ScenarioEvent>& events, bool has_code);

// The run's workload: a replay of the kept one when a WorkloadReuse is open
// and the run's key allows it, else make_workload(r, events).
std::unique_ptr<WorkloadSource> reusable_workload(const ResolvedRun& r,
                                                  const std::vector<ScenarioEvent>& events, bool has_code);

// How many workloads were generated and replayed since the process started
// (what the tests check).
struct WorkloadReuseCounts {
  int64_t generated = 0, replayed = 0;
};
WorkloadReuseCounts workload_reuse_counts();

}  // namespace blis
