#include "run/gateway_setup.hpp"

#include "util/text.hpp"
#include "workload/slo_class.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <charconv>
#include <optional>
#include <string>
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
    if (eq == std::string::npos) throw InputError(where, fmt::format("invalid pair '{}' (expected {})", pair, form));
    out.emplace_back(text::trim(pair.substr(0, eq)), text::trim(pair.substr(eq + 1)));
  }
  return out;
}

// "class=µs,...": each a known class (not the default one) and a target > 0.
std::array<int64_t, 6> slo_targets(const std::string& text, const std::string& where) {
  std::array<int64_t, 6> out{};
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
      throw InputError(where, fmt::format("unknown SLO class '{}' in '{}'; valid: critical, standard, sheddable, "
                                          "batch, background",
                                          name, pair));
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc{} || p != value.data() + value.size() || v <= 0)
      throw InputError(where, fmt::format("the target of '{}' must be a positive integer (µs), got '{}'", name, value));
    out[static_cast<size_t>(*slo)] = v;
    start = end + 1;
  }
  return out;
}

}  // namespace

workload::SloPriorities slo_priorities(const RunConfig& config) {
  workload::SloPriorities out;
  if (!config.policies.slo_priorities) return out;
  const std::string where = config.where("slo_priorities");
  for (const auto& [name, value] : pairs(*config.policies.slo_priorities, where, "class=priority")) {
    const std::optional<int> slo = workload::slo_class_from_name(name);
    if (name.empty() || !slo)
      throw InputError(where, fmt::format("unknown SLO class '{}'; valid: critical, standard, sheddable, batch, "
                                          "background",
                                          name));
    int v = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc{} || p != value.data() + value.size() || v < -100 || v > 100)
      throw InputError(where, fmt::format("the priority of '{}' must be an integer in [-100, 100], got '{}'", name,
                                          value));
    out.of[static_cast<size_t>(*slo)] = v;
  }
  return out;
}

TenantBudgetConfig tenant_budgets(const RunConfig& config) {
  TenantBudgetConfig out;
  if (!config.policies.tenant_budgets) return out;
  const std::string where = config.where("tenant_budgets");
  for (const auto& [tenant, value] : pairs(*config.policies.tenant_budgets, where, "tenant=fraction")) {
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

GatewayConfig gateway_config(const RunConfig& config) {
  const GatewaySettings& g = config.gateway;
  GatewayConfig out;
  auto given = [&](const char* key) { return config.origins.count(key) > 0; };
  if (!g.flow_control) {
    for (const char* key : {"request_ttl", "queue_shedding", "shedding_policy", "in_flight_eviction"})
      if (given(key)) spdlog::warn("{} has no effect without --flow-control", config.where(key));
    return out;
  }
  out.enabled = true;
  out.shedding = g.queue_shedding;
  if (!g.queue_shedding && given("shedding_policy"))
    spdlog::warn("{} has no effect without --queue-shedding", config.where("shedding_policy"));
  out.eviction = g.in_flight_eviction;
  out.max_depth = g.max_queue_depth;
  out.per_band_capacity = g.per_band_capacity;
  out.usage_limit = g.usage_limit_threshold;
  out.ttl = g.request_ttl;
  out.tick = g.dispatch_tick_interval > 0 ? g.dispatch_tick_interval : 1000;
  if (g.slo_targets) out.slo_target_us = slo_targets(*g.slo_targets, config.where("slo_targets"));
  if (g.saturation_detector == "never")
    spdlog::warn("--flow-control with saturation detector 'never' holds nothing; use utilization or concurrency "
                 "to gate dispatch");
  return out;
}

}  // namespace blis
