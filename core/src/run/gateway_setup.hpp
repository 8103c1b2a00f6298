// Flow control at the gateway at setup (docs/gateway.md): the --flow-control
// settings checked and turned into the cluster's gateway configuration.
#pragma once

#include "cluster/gateway_config.hpp"

#include <blis/run_config.hpp>

namespace blis {

// Off unless --flow-control; InputError (naming the setting) for a target of
// an unknown SLO class; HEAD's warnings for settings that do nothing.
GatewayConfig gateway_config(const RunConfig& config);

}  // namespace blis
