#include "config/list_settings.hpp"

#include "metrics/fitness.hpp"
#include "metrics/goodput.hpp"
#include "metrics/saturation.hpp"
#include "util/text.hpp"
#include "workload/slo_class.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

namespace blis {
namespace {

// The pairs of "name=value,name=value" (spaces around each part ignored).
std::vector<std::pair<std::string, std::string>> pairs(const std::string& text, const std::string& where,
                                                       const char* form) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& piece : text::split(text, ',')) {
    const std::string pair = text::trim(piece);
    const size_t eq = pair.find('=');
    if (eq == std::string::npos)
      throw InputError(where, fmt::format("invalid pair '{}' (expected {})", pair, form));
    out.emplace_back(text::trim(pair.substr(0, eq)), text::trim(pair.substr(eq + 1)));
  }
  return out;
}

}  // namespace

TenantBudgetList parse_tenant_budgets(const std::string& text, const RecordPlace& place) {
  const std::string& where = place.where;
  TenantBudgetList out;
  for (const auto& [tenant, value] : pairs(text, where, "tenant=fraction")) {
    if (tenant.empty()) throw InputError(where, "a budget without a tenant (expected tenant=fraction)");
    for (const auto& [seen, f] : out)
      if (seen == tenant) throw InputError(where, fmt::format("tenant '{}' has two budgets", tenant));
    double v = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc{} || p != value.data() + value.size() || !(v >= 0 && v <= 1))
      throw InputError(where, fmt::format("the budget of tenant '{}' must be a fraction in [0, 1], got '{}'",
                                          tenant, value));
    out.emplace_back(tenant, v);
  }
  return out;
}

SloClassValues parse_slo_priorities(const std::string& text, const RecordPlace& place) {
  const std::string& where = place.where;
  SloClassValues out;
  for (const auto& [name, value] : pairs(text, where, "class=priority")) {
    const std::optional<int> slo = workload::slo_class_from_name(name);
    if (name.empty() || !slo)
      throw InputError(where,
                       fmt::format("unknown SLO class '{}'; valid: critical, standard, sheddable, batch, "
                                   "background",
                                   name));
    int v = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc{} || p != value.data() + value.size() || v < -100 || v > 100)
      throw InputError(where, fmt::format("the priority of '{}' must be an integer in [-100, 100], got '{}'",
                                          name, value));
    out.emplace_back(*slo, v);
  }
  return out;
}

SloClassValues parse_gateway_slo_targets(const std::string& text, const RecordPlace& place) {
  const std::string& where = place.where;
  SloClassValues out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string pair = text::trim(text.substr(start, end - start));
    const size_t eq = pair.find('=');
    if (eq == std::string::npos)
      throw InputError(where, fmt::format("invalid pair '{}' (expected class=µs)", pair));
    const std::string name = text::trim(pair.substr(0, eq));
    const std::string value = text::trim(pair.substr(eq + 1));
    const std::optional<int> slo = workload::slo_class_from_name(name);
    if (name.empty() || !slo)
      throw InputError(where,
                       fmt::format("unknown SLO class '{}' in '{}'; valid: critical, standard, sheddable, "
                                   "batch, background",
                                   name, pair));
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc{} || p != value.data() + value.size() || v <= 0)
      throw InputError(
          where, fmt::format("the target of '{}' must be a positive integer (µs), got '{}'", name, value));
    out.emplace_back(*slo, v);
    start = end + 1;
  }
  return out;
}

SloClassMs parse_slo_durations(const std::string& text, const RecordPlace& place) {
  SloTargetMap targets;
  parse_slo_flag(text, 0, place.where, targets);
  SloClassMs out;
  for (const auto& [slo, t] : targets) out[slo] = t.ttft_ms;
  return out;
}

std::vector<std::string> parse_detectors(const std::string& text, const RecordPlace& place) {
  return parse_detector_list(text, place.where);
}

std::map<std::string, double> parse_fitness(const std::string& text, const RecordPlace& place) {
  return parse_fitness_weights(text, place.where);
}

ShardSpec parse_shard(const std::string& text, const RecordPlace& place) {
  const auto slash = text.find('/');
  int64_t i = -1, n = 0;
  try {
    if (slash != std::string::npos) {
      size_t a = 0, b = 0;
      i = std::stoll(text.substr(0, slash), &a);
      n = std::stoll(text.substr(slash + 1), &b);
      if (a != slash || b != text.size() - slash - 1) n = 0;
    }
  } catch (const std::exception&) {
    n = 0;
  }
  if (n < 1 || i < 0 || i >= n)
    throw InputError(place.where, fmt::format("'{}' is not a shard: write I/N with 0 <= I < N, e.g. 0/4 "
                                              "(Slurm: $SLURM_ARRAY_TASK_ID/4 with --array=0-3)",
                                              text));
  return {i, n};
}

std::optional<int64_t> parse_bytes(const std::string& text) {
  const std::string s = text::trim(text);
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || !std::isfinite(v) || v <= 0) return std::nullopt;
  const std::string unit = text::lower(text::trim(std::string(r.ptr, s.data() + s.size())));
  struct Unit {
    const char* name;
    double factor;
  };
  static const Unit units[] = {{"", 1},
                               {"b", 1},
                               {"k", 1024},
                               {"kib", 1024},
                               {"kb", 1e3},
                               {"m", 1048576},
                               {"mib", 1048576},
                               {"mb", 1e6},
                               {"g", 1073741824},
                               {"gib", 1073741824},
                               {"gb", 1e9},
                               {"t", 1099511627776.0},
                               {"tib", 1099511627776.0},
                               {"tb", 1e12}};
  for (const Unit& u : units) {
    if (unit != u.name) continue;
    const double bytes = v * u.factor;
    if (bytes >= 9.2e18) return std::nullopt;
    return static_cast<int64_t>(bytes);
  }
  return std::nullopt;
}

int64_t parse_memory_limit(const std::string& text, const RecordPlace& place) {
  auto v = parse_bytes(text);
  if (!v)
    throw InputError(place.where,
                     fmt::format("invalid value '{}': expected a size such as 16GiB, 512MiB or bytes", text));
  return *v;
}

}  // namespace blis
