// Flow control at the gateway at setup (docs/gateway.md): the --flow-control
// settings checked and turned into the cluster's gateway configuration.
#pragma once

#include "cluster/gateway_config.hpp"
#include "cluster/tenant_budget.hpp"
#include "workload/slo_class.hpp"

#include <blis/run_config.hpp>

namespace blis {

// Off unless --flow-control; HEAD's warnings for settings that do nothing.
GatewayConfig gateway_config(const RunConfig& config);

// --slo-priorities over GIE's defaults (read and checked when given:
// config/list_settings.hpp).
workload::SloPriorities slo_priorities(const RunConfig& config);

// --tenant-budgets, as given.
TenantBudgetConfig tenant_budgets(const RunConfig& config);

}  // namespace blis
