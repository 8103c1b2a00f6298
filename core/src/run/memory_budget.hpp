// The run's memory pre-flight (issue 12): what a run will hold at least, set
// against what the process may use, checked before anything is allocated.
#pragma once

#include "run/resolve.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace blis {

// Bytes a run holds at least: every instance's KV cache bookkeeping (sized
// up front) and the records kept of every request it may inject.
struct MemoryEstimate {
  int64_t kv_bytes = 0;        // all pools
  int64_t instances = 0;
  int64_t request_bytes = 0;
  int64_t requests = 0;        // the requests counted (0 = unbounded, not counted)
  int64_t total() const;
};

MemoryEstimate estimate_memory(const ResolvedRun& r);

// "21.3 GiB", "512 MiB", "200 B".
std::string format_bytes(int64_t bytes);

// The most this process may use: physical memory, capped by a cgroup limit
// and RLIMIT_AS / RLIMIT_DATA when set.
int64_t memory_available();

// Throws InputError (naming the setting that dominates) when the estimate
// exceeds --memory-limit, or by default the memory available.
void check_memory(const ResolvedRun& r);

}  // namespace blis
