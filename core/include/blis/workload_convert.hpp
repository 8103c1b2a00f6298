// Workload specs built from other inputs and written back as YAML: what
// `blis convert` and `blis compose` print (spec cli.md §4-§5, spec workload
// §8.1, §9.1-§9.2), and what `blis run --workload traces` generates from.
#pragma once

#include <blis/workload.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace blis {

// The reference's legacy request-trace CSV, converted lossily (spec workload
// §8.1): one constant-arrival client whose lengths are the trace's mean
// lengths, at the trace's average rate. Rows arriving after `horizon` (µs,
// when > 0) end the file. ConfigError naming the file and row.
WorkloadSpec csv_trace_to_spec(const std::string& path, int64_t horizon);

// One client per chunk of a ServeGen directory, at 1 req/s in total (spec
// workload §9.1: the reference's placeholder rate).
WorkloadSpec servegen_to_spec(const std::string& dir);

// The inference_perf section of a workload-spec file expanded into clients
// (spec workload §5.12); only version, seed, category, clients and
// aggregate_rate are kept.
WorkloadSpec inference_perf_to_spec(const std::string& path);

// Specs merged into one (spec workload §9.2): clients concatenated, each
// client's rate fraction weighted by its spec's share of the summed rate.
WorkloadSpec compose_specs(const std::vector<WorkloadSpec>& specs);

// The spec as YAML that load_workload_spec reads back: keys in schema order,
// 4-space indentation, empty optional fields omitted, numbers as Go's %g
// prints them (spec workload §9.1).
std::string workload_spec_yaml(const WorkloadSpec& spec);

}  // namespace blis
