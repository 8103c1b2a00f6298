// TraceV2 (BLIS HEAD's trace format): a YAML header and a CSV of one row per
// request, written by `blis run --trace-output PREFIX` (PREFIX.yaml,
// PREFIX.csv) and read by `blis replay` and `blis calibrate`. The columns,
// their order, the optional columns and the number formats are HEAD's, so
// traces move between BLIS HEAD and blis both ways (docs/cli.md "Traces").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace blis::workload {

// Per-class goodput targets of the header (ms; 0 = none).
struct TraceSloTargets {
  double ttft_ms = 0;
  double itl_ms = 0;
  double e2e_ms = 0;
};

// The real server's KV-cache hit rate over an observation (blis observe
// --scrape-kv-metrics): HEAD's observed_kv_metrics block, written by observe,
// kept as read. Counts are the deltas of the server's counters over the
// measured window; the read and write times are 0 when not scraped.
struct ObservedKvMetrics {
  std::string source;  // tiered, or gpu-prefix-cache-fallback
  double hit_rate = 0;
  int64_t block_hits = 0, block_queries = 0;
  double read_time_total = 0, write_time_total = 0;
  std::string vllm_commit;
};

struct TraceHeader {
  int64_t version = 3;
  std::string time_unit = "microseconds";
  std::string created_at;
  std::string mode;  // real (observed), generated (a run), replayed (a replay)
  int64_t warm_up_requests = 0;
  std::optional<int64_t> workload_seed;
  std::string workload_spec;
  std::string session_context_growth;
  std::string server_type, server_model;  // server.type, server.model (an observation's)
  bool network = false;        // a network block is written even without a measured RTT
  double measured_rtt_ms = 0;  // network.measured_rtt_ms
  std::map<std::string, TraceSloTargets> goodput_slo_targets;
  bool has_kv_offload = false;  // a kv_offload block was present (replay refuses it)
  std::optional<ObservedKvMetrics> observed_kv_metrics;
  std::string where;            // the header file, for messages
};

struct TraceRecord {
  int64_t request_id = 0;
  std::string client_id, tenant_id, slo_class;
  int64_t vllm_priority = 0;
  std::string session_id;
  int64_t round_index = 0;
  std::string prefix_group;
  int64_t prefix_length = 0;
  bool streaming = false;
  int64_t input_tokens = 0;  // without the shared prefix
  int64_t output_tokens = 0;
  int64_t text_tokens = 0, image_tokens = 0, audio_tokens = 0, video_tokens = 0;
  double reason_ratio = 0;
  std::string model;
  int64_t deadline_us = 0;
  int64_t slo_target_us = 0;
  int64_t server_input_tokens = 0;
  int64_t arrival_time_us = 0, send_time_us = 0, first_chunk_time_us = 0, last_chunk_time_us = 0;
  int64_t num_chunks = 0;
  std::string status, error_message, finish_reason;
  std::string x_request_id, adapter;
  int64_t think_time_us = 0;
  int64_t line = 0;  // its line in the CSV (reading only)
};

struct TraceV2 {
  TraceHeader header;
  std::vector<TraceRecord> records;
};

// Reads both files; an unknown header key, a malformed row or a value HEAD
// refuses is an InputError naming the file and line.
TraceV2 load_trace_v2(const std::string& header_path, const std::string& data_path);

// The two files' texts, byte for byte what HEAD writes for the same header
// and records.
std::string trace_header_yaml(const TraceHeader& header);
std::string trace_data_csv(const TraceHeader& header, const std::vector<TraceRecord>& records);

// Go's strconv.FormatFloat(x, 'f', -1, 64) and (x, 'g', -1, 64).
std::string go_float_f(double x);
std::string go_float_g(double x);

// ---- blis calibrate (HEAD's comparison report) ----

struct SimResult {
  int64_t request_id = 0;
  double ttft_us = 0;
  double e2e_us = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::string slo_class;
  std::string model;
  double itl_mean_us = 0;
};

// The SimResult JSON of `blis replay --results-path` (HEAD's layout).
std::string sim_results_json(const std::vector<SimResult>& results);
// Reads it back; errors name the file.
std::vector<SimResult> load_sim_results(const std::string& path);

struct ItlRecord {
  int64_t request_id = 0;
  int64_t chunk_index = 0;
  int64_t timestamp_us = 0;
};
std::vector<ItlRecord> load_itl(const std::string& path);

struct CalibrationInput {
  int64_t warm_up_requests = 0;
  int64_t network_rtt_us = 0;
  double bandwidth_mbps = 0;
  double ttft_mape_threshold = 0.15;
};

// The calibration report (HEAD's JSON, indented as Go's MarshalIndent) and
// the summary lines HEAD logs; throws InputError when nothing matches.
struct CalibrationOutcome {
  std::string report_json;
  std::vector<std::string> log_lines;
};
CalibrationOutcome calibrate_report(const TraceV2& trace, const std::vector<SimResult>& sim,
                                    const std::vector<ItlRecord>& itl, const CalibrationInput& in,
                                    const std::string& sim_where);

}  // namespace blis::workload

#include <memory>

namespace blis {
class WorkloadSource;
}

namespace blis::workload {

// When a TraceV2 row is sent to the simulator: its send time, or its
// arrival time when it has none (HEAD's injection time).
inline int64_t injection_time(const TraceRecord& r) { return r.send_time_us > 0 ? r.send_time_us : r.arrival_time_us; }

// `blis replay`'s workload: the trace's requests exactly, each as request
// "request_<request_id>" at its injection time, with its lengths (the shared
// prefix of its group in front of input_tokens), class, tenant, model and
// deadline. Token content comes from a Go stream seeded with `seed`: the
// groups' prefixes first, then each row's input and output, as HEAD draws.
std::unique_ptr<WorkloadSource> make_trace_v2_workload(std::shared_ptr<const TraceV2> trace, int32_t block_size,
                                                       int64_t seed);

}  // namespace blis::workload
