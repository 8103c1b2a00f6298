#include "metrics/session_metrics.hpp"

#include "util/sorted_percentile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace blis {

namespace {

void line(std::string& out, const char* label, const SessionDistribution& d) {
  if (d.count == 0) return;
  out += fmt::format("  {} mean={:.2f} p50={:.2f} p95={:.2f} p99={:.2f} ms (n={})\n", label, d.mean, d.p50, d.p95,
                     d.p99, d.count);
}

}  // namespace

SessionDistribution session_distribution(std::vector<double> values_ms) {
  SessionDistribution d;
  if (values_ms.empty()) return d;
  std::sort(values_ms.begin(), values_ms.end());
  double sum = 0;
  for (double v : values_ms) sum += v;
  d.count = static_cast<int64_t>(values_ms.size());
  d.mean = sum / static_cast<double>(values_ms.size());
  d.p50 = sorted_percentile(values_ms, 50);
  d.p95 = sorted_percentile(values_ms, 95);
  d.p99 = sorted_percentile(values_ms, 99);
  return d;
}

SessionMetrics::Session& SessionMetrics::session(const Request& r) {
  const auto u = static_cast<size_t>(r.spec.user);
  if (u >= sessions_.size()) sessions_.resize(u + 1);
  return sessions_[u];
}

void SessionMetrics::routed(const Request& r) {
  Session& s = session(r);
  if (!s.seen) ++count_;
  s.seen = true;
  if (r.spec.round == 0) {
    s.has_round0 = true;
    s.round0_arrival_ms = static_cast<double>(r.spec.arrival_us) / 1e6 * 1000.0;
  }
}

// Its TTFT (the last, after a restart) and, when it completed, its completion time.
void SessionMetrics::ended(const Request& r, SimTime t, bool completed) {
  if (r.instance < 0) return;  // never reached an instance
  Session& s = session(r);
  if (const int64_t ttft = r.timing.ttft(); ttft >= 0)
    (r.spec.round == 0 ? cold_ms_ : warm_ms_).push_back(static_cast<double>(ttft) / 1000.0);
  if (!completed) return;
  const int64_t e2e = r.timing.e2e();
  const int64_t end = e2e >= 0 ? r.spec.arrival_us + e2e : t;
  s.last_completion_ms = std::max(s.last_completion_ms, static_cast<double>(end) / 1000.0);
}

void SessionMetrics::text_blocks(const ReportScope& scope, std::string& out) const {
  if (!scope.head || count_ == 0) return;
  std::vector<double> durations;
  for (const Session& s : sessions_) {
    if (!s.has_round0) continue;
    const double d = s.last_completion_ms - s.round0_arrival_ms;
    if (d > 0) durations.push_back(d);
  }
  out += session_block(count_, cold_ms_, warm_ms_, std::move(durations));
}

std::string session_block(int64_t count, std::vector<double> cold_ms, std::vector<double> warm_ms,
                          std::vector<double> durations_ms) {
  std::string out = "=== Session Metrics ===\n";
  out += fmt::format("  Sessions: {}\n", count);
  line(out, "TTFT cold (round 0):", session_distribution(std::move(cold_ms)));
  line(out, "TTFT warm (round≥1):", session_distribution(std::move(warm_ms)));
  line(out, "Session duration:   ", session_distribution(std::move(durations_ms)));
  return out;
}

}  // namespace blis
