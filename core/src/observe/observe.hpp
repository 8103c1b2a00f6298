// `blis observe` (BLIS HEAD's command): a workload sent to a real
// OpenAI-compatible server at its arrival times, each request timed as the
// client sees it, and the result a TraceV2 that `blis replay` and `blis
// calibrate` read (docs/calibration.md).
#pragma once

#include "observe/http_client.hpp"
#include "workload/trace_v2.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blis {
class WorkloadSource;
}

namespace blis::observation {

struct Options {
  ServerUrl server;
  std::string model;        // the name the server serves (the requests' "model")
  std::string api_key;      // sent as a bearer token when not empty
  std::string api_format = "completions";  // or chat
  int max_concurrency = 256;
  int64_t warmup_requests = 0;  // the first requests sent, left out of the trace
  bool no_streaming = false;
  bool record_itl = false;      // streams every request and keeps each chunk's time
  bool unconstrained = false;   // no max_tokens (chat) / the largest (completions), no min_tokens
  int timeout_s = 300;
  // The server runs this many times faster than real time (blis serve
  // --time-scale): requests are sent that much sooner, and every time
  // recorded is scaled back, so the trace reads as a real-time observation.
  double time_scale = 1;
  int32_t block_size = 16;      // of the workload's content hashes
  uint64_t seed = 42;           // the request ids' and own tokens' stream
  // HEAD's --prewarm-duration: this long (server time, so divided by
  // time_scale on the wall) of small fixed requests at low concurrency before
  // the workload, recorded nowhere.
  int64_t prewarm_us = 0;
  // HEAD's --scrape-kv-metrics: the server's /metrics (or kv_metrics_url)
  // read before and after the workload, for the trace's observed_kv_metrics.
  bool scrape_kv_metrics = false;
  std::string kv_metrics_url;
  std::string vllm_commit;
  // Set from another thread (SIGINT/SIGTERM): no new request is sent; those
  // under way finish and the trace is written.
  const std::atomic<bool>* stop = nullptr;
};

struct Observation {
  std::vector<workload::TraceRecord> records;  // by request id (dispatch order)
  std::vector<workload::ItlRecord> itl;         // with record_itl
  double wall_seconds = 0;                      // first send to last answer
  double tokens_per_word = 1;                   // the server's, as measured
  std::optional<workload::ObservedKvMetrics> kv_metrics;  // with scrape_kv_metrics, when derived
};

// Sends `source`'s requests, their follow-ups included (closed-loop users),
// and times them. Progress goes to the log.
Observation run_observation(WorkloadSource& source, const Options& options);

// HEAD's summary of an observation: "=== Simulation Metrics ===" and the
// JSON of its metrics (client-side TTFT, E2E, ITL with record_itl).
// `members` (",\n  \"name\": value" each) go at the end of the JSON.
std::string observation_metrics(const Observation& o, const std::string& members = "");

// The ITL CSV (request_id,chunk_index,timestamp_us) that calibrate's --itl-data reads.
std::string itl_csv(const std::vector<workload::ItlRecord>& itl);

// The words of a prompt of about `tokens` tokens for a server whose
// tokenizer makes `tokens_per_word` tokens of each: word i comes from the
// content block holding token i * tokens_per_word, so requests that share
// blocks (a prefix) share the text over them. `own` seeds the words past the
// blocks given.
std::string prompt_text(const std::vector<uint64_t>& block_hashes, int32_t block_size, int64_t tokens,
                        double tokens_per_word, uint64_t own);

}  // namespace blis::observation
