// Raw metrics of one instance, collected as the simulation runs. Nothing is
// stored per token: inter-token latencies are step-level values with
// multiplicities, so percentiles stay exact in memory proportional to steps.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace blis {

// One line of the per-request results file.
struct RequestRecord {
  uint64_t id = 0;
  int64_t arrival_us = 0;
  int32_t input_tokens = 0, output_tokens = 0;
  int64_t ttft = -1, e2e = -1, scheduling_delay = -1;
  double itl_avg = 0;
  int32_t slo_class = 0;
  int32_t instance = -1;
  bool length_capped = false;
  std::string tenant_id, model;
};

// What priority-inversion counting needs of a completed request.
struct CompletionSample {
  int64_t arrival_us;
  uint64_t id;
  int64_t e2e;
  int32_t slo_class;
};

struct InstanceMetrics {
  int64_t completed = 0, still_queued = 0, still_running = 0;
  int64_t dropped_unservable = 0, length_capped = 0;
  int64_t preemptions = 0, kv_allocation_failures = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t end_time = 0;
  int64_t peak_kv_blocks = 0;
  int64_t final_kv_blocks = 0;  // still held when the run ended
  double cache_hit_rate = 0, kv_thrashing_rate = 0;

  // Latency samples in µs, with the SLO class of each.
  std::vector<int64_t> ttft, e2e, scheduling_delay;
  std::vector<int8_t> ttft_slo, e2e_slo;

  // Inter-token latencies: per step its standard value (Δ + α_o) and a
  // difference array counting completed requests' runs over steps; gaps that
  // are not one step (after a stall or a preemption) are kept individually.
  std::vector<int64_t> step_itl;
  std::vector<int32_t> run_delta;
  std::vector<int64_t> extra_itls;
  // Already weighted (value, count) pairs, e.g. merged from instances.
  std::vector<std::pair<int64_t, int64_t>> itl_weighted;

  // Wait-queue depth summed over steps (for HOL blocking detection).
  int64_t wait_depth_sum = 0;
  int64_t steps = 0;

  bool keep_records = false;
  std::vector<RequestRecord> records;
  bool keep_completions = false;
  std::vector<CompletionSample> completions;
};

}  // namespace blis
