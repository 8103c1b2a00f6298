// Workloads: where requests come from. Every source yields requests in arrival
// order, lazily, so memory stays proportional to requests in flight.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blis {

inline constexpr int64_t kNoHorizon = std::numeric_limits<int64_t>::max();
inline constexpr int32_t kMaxTokenId = 128000;

// One generated request, before it enters the simulator.
struct WorkloadRequest {
  uint64_t id = 0;              // n of "request_n", in arrival order
  int64_t arrival_us = 0;
  int32_t input_tokens = 0;     // shared prefix included
  int32_t output_tokens = 0;    // the oracle output length the engine will produce
  int32_t max_output_tokens = 0;  // the client's budget (0 = none)
  int32_t slo_class = 0;        // blis_slo_class
  std::string tenant_id;
  std::string model;
  // Chained content hashes (block_hash.hpp) of every complete block of the
  // sequence input ++ output: (input_tokens + output_tokens) / block_size
  // entries. The first input_tokens / block_size cover the prompt only.
  std::vector<uint64_t> block_hashes;
};

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  // Fills `out` with the next request; false once the workload is exhausted.
  virtual bool next(WorkloadRequest& out) = 0;
};

// ---- Workload spec (the reference's "v2" schema; spec workload.md §5-§6) ----

struct DistSpec {
  std::string type;                      // gaussian, exponential, pareto_lognormal, constant, empirical
  std::map<std::string, double> params;  // sorted keys: deterministic
};

struct ArrivalSpec {
  std::string process = "poisson";       // constant, poisson, gamma, weibull
  std::optional<double> cv;
};

struct ClientSpec {
  std::string id;
  std::string tenant_id;
  std::string slo_class;
  std::string model;
  double rate_fraction = 0;
  ArrivalSpec arrival;
  DistSpec input_distribution;
  DistSpec output_distribution;
  std::string prefix_group;
  int64_t prefix_length = 0;
  bool streaming = false;
};

struct WorkloadSpec {
  std::string version = "2";
  int64_t seed = 0;
  std::string category;
  double aggregate_rate = 0;
  int64_t num_requests = 0;
  int64_t horizon = 0;
  std::vector<ClientSpec> clients;
};

// Parameters of the default distribution workload (CLI flags; spec workload.md §2-§3).
struct DistributionWorkload {
  double rate = 1.0;
  int64_t num_requests = 100;
  int64_t prefix_tokens = 0;
  int64_t prompt_mean = 512, prompt_stdev = 256, prompt_min = 2, prompt_max = 7000;
  int64_t output_mean = 512, output_stdev = 256, output_min = 2, output_max = 7000;
};

// Synthesises the one-client spec of the distribution workload (and presets).
WorkloadSpec synthesize_distribution_spec(const DistributionWorkload& w, int64_t seed);

// Validates a spec (throws InputError naming the field).
void validate_workload_spec(const WorkloadSpec& spec);

// Generator over a spec: seed partitioning, per-client streams and the merge
// of spec workload.md §6-§7. `max_requests` 0 = unlimited; `horizon` bounds
// arrival times (exclusive).
std::unique_ptr<WorkloadSource> make_spec_workload(const WorkloadSpec& spec, int64_t horizon,
                                                   int64_t max_requests, int32_t block_size);

// Exact trace replay: CSV with header arrival_time_us,input_tokens,output_tokens
// and optional prefix_group, prefix_tokens, slo_class, tenant_id columns.
std::unique_ptr<WorkloadSource> make_trace_workload(const std::string& path, int64_t horizon,
                                                    int64_t max_requests, int32_t block_size,
                                                    int64_t seed);

}  // namespace blis
