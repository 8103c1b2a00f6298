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

workload::SloPriorities slo_priorities(const RunConfig& config) {
  workload::SloPriorities out;
  if (config.policies.slo_priorities)
    for (const auto& [slo, priority] : config.policies.slo_priorities->value)
      out.of[static_cast<size_t>(slo)] = static_cast<int>(priority);
  return out;
}

TenantBudgetConfig tenant_budgets(const RunConfig& config) {
  return config.policies.tenant_budgets ? config.policies.tenant_budgets->value : TenantBudgetConfig{};
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
  if (g.slo_targets)
    for (const auto& [slo, us] : g.slo_targets->value) out.slo_target_us[static_cast<size_t>(slo)] = us;
  if (g.saturation_detector == "never")
    spdlog::warn("--flow-control with saturation detector 'never' holds nothing; use utilization or concurrency "
                 "to gate dispatch");
  return out;
}

}  // namespace blis
