// --kv-offload-config: the file read and checked, then sized for the model
// (the KV bytes of one block) into the engine's offload chain settings.
#pragma once

#include "engine/kv_offload.hpp"

#include <blis/model_data.hpp>
#include <blis/run_config.hpp>

#include <memory>
#include <optional>

namespace blis {

// None without --kv-offload-config. Errors: ConfigError at the file's
// line, InputError naming the setting.
std::shared_ptr<const OffloadChainConfig> resolve_kv_offload(const RunConfig& config,
                                                             const std::optional<ModelArch>& arch);

}  // namespace blis
