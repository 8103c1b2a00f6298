#include "plan/slo_targets.hpp"

#include "util/compact_text.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace blis {
namespace {

constexpr const char* kForms =
    "write targets as METRIC_STAT<VALUE, comma-separated: METRIC ttft, tpot, itl or e2e with STAT mean, p50, "
    "p90, p95, p99 or p99.9 (or scheduling_delay_p99), VALUE with a unit us, ms or s (ms if none), e.g. "
    "\"ttft_p99<500ms,tpot_p99<40ms,e2e_p99<20s\"";

}  // namespace

namespace {

// One target, "ttft_p99<500ms".
SloTarget parse_target(const std::string& item, const std::string& where) {
  SloTarget t;
  t.text = item;
  const auto op = item.find('<');
  if (op == std::string::npos) throw InputError(where, fmt::format("'{}' has no '<'; {}", item, kForms));
  const std::string name = text::lower(text::trim(item.substr(0, op)));
  std::string value = text::trim(item.substr(op + 1));
  if (!value.empty() && value[0] == '=') t.inclusive = true, value = text::trim(value.substr(1));
  const bool known = name == "scheduling_delay_p99" || [&] {
    for (const char* m : {"ttft_", "tpot_", "itl_", "e2e_"})
      for (const char* s : {"mean", "p50", "p90", "p95", "p99", "p99.9"})
        if (name == std::string(m) + s) return true;
    return false;
  }();
  if (!known) throw InputError(where, fmt::format("unknown metric '{}' in '{}'; {}", name, item, kForms));
  t.metric = name + "_ms";
  double scale = 1;
  for (const auto& [unit, s] : {std::pair{"us", 1e-3}, std::pair{"ms", 1.0}, std::pair{"s", 1e3}})
    if (text::ends_with(value, unit)) {
      value = value.substr(0, value.size() - std::string(unit).size());
      scale = s;
      break;
    }
  double v = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size() || !std::isfinite(v) || v <= 0)
    throw InputError(where, fmt::format("'{}': the limit must be a positive number with a unit; {}", item, kForms));
  t.limit_ms = v * scale;
  return t;
}

}  // namespace

std::vector<SloTarget> parse_slo_targets(const std::string& text, const std::string& where) {
  std::vector<SloTarget> out;
  for (const std::string& raw : compact::items(text, ',', where)) {
    const std::string item = text::trim(raw);
    if (item.empty()) continue;
    const SloTarget t = parse_target(item, where);
    for (const SloTarget& o : out)
      if (o.metric == t.metric)
        throw InputError(where, fmt::format("'{}' and '{}' both limit {}; give each metric one target", o.text,
                                            t.text, t.metric.substr(0, t.metric.size() - 3)));
    out.push_back(t);
  }
  if (out.empty()) throw InputError(where, std::string("no target given; ") + kForms);
  return out;
}

double metric_value(const std::vector<MetricField>& metrics, const std::string& name) {
  for (const MetricField& f : metrics)
    if (f.name == name) return f.value;
  return std::nan("");
}

bool met(const SloTarget& t, const std::vector<MetricField>& metrics) {
  const double v = metric_value(metrics, t.metric);
  return std::isfinite(v) && (t.inclusive ? v <= t.limit_ms : v < t.limit_ms);
}

}  // namespace blis
