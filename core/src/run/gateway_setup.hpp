// Flow control at the gateway at setup (docs/gateway.md): the --flow-control
// settings checked and turned into the cluster's gateway configuration.
#pragma once

#include "cluster/gateway_config.hpp"
#include "cluster/tenant_budget.hpp"
#include "workload/slo_class.hpp"

#include <blis/run_config.hpp>

namespace blis {

// Off unless --flow-control; InputError (naming the setting) for a target of
// an unknown SLO class; HEAD's warnings for settings that do nothing.
GatewayConfig gateway_config(const RunConfig& config);

// --slo-priorities over GIE's defaults: InputError (naming the setting) for
// an unknown class or a priority outside [-100, 100] (HEAD's range).
workload::SloPriorities slo_priorities(const RunConfig& config);

// --tenant-budgets: InputError for an empty tenant, a repeated one or a
// fraction outside [0, 1].
TenantBudgetConfig tenant_budgets(const RunConfig& config);

}  // namespace blis
