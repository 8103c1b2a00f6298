// The KV-cache hit rate of an observation (observe/kv_metrics.hpp).
#include "observe/kv_metrics.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>

namespace blis::observation {

namespace {

constexpr const char* kTieredHits = "vllm:kv_offload_tiering_block_hits";
constexpr const char* kTieredQueries = "vllm:kv_offload_tiering_block_queries";
constexpr const char* kTieredRead = "vllm:kv_offload_tiering_read_time";
constexpr const char* kTieredWrite = "vllm:kv_offload_tiering_write_time";
constexpr const char* kGpuHits = "vllm:gpu_prefix_cache_hits";
constexpr const char* kGpuQueries = "vllm:gpu_prefix_cache_queries";
constexpr const char* kGpuHitRate = "vllm:gpu_prefix_cache_hit_rate";
constexpr const char* kV1Hits = "vllm:prefix_cache_hits";
constexpr const char* kV1Queries = "vllm:prefix_cache_queries";
constexpr const char* kGpuSource = "gpu-prefix-cache-fallback";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool parse_value(std::string_view text, double& out) {
  if (text == "+Inf" || text == "Inf") return out = HUGE_VAL, true;
  if (text == "-Inf") return out = -HUGE_VAL, true;
  if (text == "NaN") return out = NAN, true;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

struct Delta {
  double value = 0;
  std::string error;
};

// end - start of a family (absent at the start: 0 then).
Delta delta(const std::map<std::string, double>& start, const std::map<std::string, double>& end,
            const std::string& name) {
  const auto s = start.find(name);
  const auto e = end.find(name);
  const double a = s == start.end() ? 0 : s->second, b = e == end.end() ? 0 : e->second;
  if (b - a < 0)
    return {0, fmt::format("counter {} went backwards over the measured window (start={:.0f} end={:.0f}, likely a "
                           "server restart); cannot derive a windowed hit-rate",
                           name, a, b)};
  return {b - a, ""};
}

Derived counters(const std::map<std::string, double>& start, const std::map<std::string, double>& end,
                 const std::string& hits_name, const std::string& queries_name, const char* source,
                 const std::string& vllm_commit) {
  const Delta q = delta(start, end, queries_name);
  if (!q.error.empty()) return {std::nullopt, q.error};
  const Delta h = delta(start, end, hits_name);
  if (!h.error.empty()) return {std::nullopt, h.error};
  if (q.value <= 0)
    return {std::nullopt, fmt::format("{} shows zero queries over the measured window; cannot derive a hit-rate",
                                      queries_name)};
  if (h.value > q.value)
    return {std::nullopt, fmt::format("{} ({:.0f}) exceeds {} ({:.0f}) over the window (a hit-rate above 1); "
                                      "refusing to record it",
                                      hits_name, h.value, queries_name, q.value)};
  workload::ObservedKvMetrics m;
  m.source = source;
  m.hit_rate = h.value / q.value;
  m.block_hits = std::llround(h.value);  // counters: never negative
  m.block_queries = std::llround(q.value);
  m.vllm_commit = vllm_commit;
  return {m, ""};
}

}  // namespace

std::map<std::string, double> parse_prometheus(const std::string& text) {
  std::map<std::string, double> sums;
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const size_t brace = line.find('{'), space = line.find_first_of(" \t");
    std::string_view name, rest;
    if (brace != std::string_view::npos && (space == std::string_view::npos || brace < space)) {
      const size_t close = line.find('}', brace);
      if (close == std::string_view::npos) continue;
      name = line.substr(0, brace);
      rest = trim(line.substr(close + 1));
    } else {
      if (space == std::string_view::npos) continue;
      name = line.substr(0, space);
      rest = trim(line.substr(space));
    }
    const std::string_view value = rest.substr(0, rest.find_first_of(" \t"));
    double v = 0;
    if (value.empty() || !parse_value(value, v)) continue;
    if (name.size() > 6 && name.substr(name.size() - 6) == "_total") name.remove_suffix(6);
    sums[std::string(name)] += v;
  }
  return sums;
}

Scrape scrape_metrics(const ServerUrl& server, const std::string& url, const std::string& api_key, int timeout_s) {
  ServerUrl at = server;
  std::string path = "/metrics";
  std::string shown = "http://" + server.host + ":" + server.port + server.base_path + path;
  if (!url.empty()) {
    at = parse_server_url(url, "--kv-metrics-url");
    path.clear();
    shown = url;
  }
  Headers headers;
  if (!api_key.empty()) headers.emplace_back("Authorization", "Bearer " + api_key);
  const HttpOutcome out = http_exchange(at, "GET", path, headers, "", timeout_s, nullptr);
  if (!out.sent) return {{}, fmt::format("GET {}: {}", shown, out.error)};
  if (out.status != 200) return {{}, fmt::format("GET {}: HTTP {}", shown, out.status)};
  return {parse_prometheus(out.body), ""};
}

Derived derive_hit_rate(const std::map<std::string, double>& start, const std::map<std::string, double>& end,
                        const std::string& vllm_commit) {
  if (end.count(kTieredQueries) != 0) {
    Derived d = counters(start, end, kTieredHits, kTieredQueries, "tiered", vllm_commit);
    if (d.metrics) {
      d.metrics->read_time_total = delta(start, end, kTieredRead).value;
      d.metrics->write_time_total = delta(start, end, kTieredWrite).value;
    }
    return d;
  }
  if (end.count(kGpuQueries) != 0) return counters(start, end, kGpuHits, kGpuQueries, kGpuSource, vllm_commit);
  if (end.count(kV1Queries) != 0) return counters(start, end, kV1Hits, kV1Queries, kGpuSource, vllm_commit);
  if (const auto g = end.find(kGpuHitRate); g != end.end()) {
    workload::ObservedKvMetrics m;
    m.source = kGpuSource;
    m.hit_rate = g->second;
    m.vllm_commit = vllm_commit;
    return {m, ""};
  }
  return {std::nullopt, fmt::format("no recognized KV cache counters found in /metrics (looked for {}, {} and {})",
                                    kTieredQueries, kGpuQueries, kV1Queries)};
}

}  // namespace blis::observation
