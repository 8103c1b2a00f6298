// --kv-offload-config: the file read and checked, then sized for the model
// (the KV bytes of one block) into the engine's offload chain settings; or
// HEAD's mirror CPU tier of --kv-cpu-blocks, which is the chain's tiered form.
#pragma once

#include "engine/kv_offload.hpp"

#include <blis/model_data.hpp>
#include <blis/run_config.hpp>

#include <memory>
#include <optional>

namespace blis {

// --kv-cpu-blocks under --kv-cpu-model mirror (HEAD's tier): the chain's
// tiered form. None without either. Errors: ConfigError at the file's
// line, InputError naming the setting.
std::shared_ptr<const OffloadChainConfig> resolve_kv_offload(const RunConfig& config,
                                                             const std::optional<ModelArch>& arch);

}  // namespace blis
