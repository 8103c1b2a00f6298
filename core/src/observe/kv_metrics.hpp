// `blis observe --scrape-kv-metrics` (HEAD's): the server's Prometheus
// /metrics read before and after the measured workload, and the KV-cache hit
// rate over that window for the trace header's observed_kv_metrics block.
#pragma once

#include "observe/http_client.hpp"
#include "workload/trace_v2.hpp"

#include <map>
#include <optional>
#include <string>

namespace blis::observation {

// Prometheus text as family -> value summed over the family's label series;
// a `_total` suffix is folded into the family's name. Comments, blank lines,
// timestamps after the value and lines whose value is not a number are
// skipped.
std::map<std::string, double> parse_prometheus(const std::string& text);

// GETs the metrics page (`url`, or the server's /metrics when empty) and
// parses it; an error message instead when it cannot be read.
struct Scrape {
  std::map<std::string, double> samples;
  std::string error;  // empty: scraped
};
Scrape scrape_metrics(const ServerUrl& server, const std::string& url, const std::string& api_key, int timeout_s);

// The hit rate over the window between two scrapes. The counter families, in
// order: vLLM's offload tiering (vllm:kv_offload_tiering_block_hits and
// _block_queries; source "tiered"), then the GPU prefix cache
// (vllm:gpu_prefix_cache_hits and _queries, or vLLM V1's
// vllm:prefix_cache_hits and _queries, which blis serve serves; source
// "gpu-prefix-cache-fallback"), then the vllm:gpu_prefix_cache_hit_rate
// gauge. An error message when no family is there, a counter went backwards
// (a server restart), nothing was queried, or hits exceed queries.
struct Derived {
  std::optional<workload::ObservedKvMetrics> metrics;
  std::string error;
};
Derived derive_hit_rate(const std::map<std::string, double>& start, const std::map<std::string, double>& end,
                        const std::string& vllm_commit);

}  // namespace blis::observation
