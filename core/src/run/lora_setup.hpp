// LoRA adapters of a run (docs/lora.md): the --lora-config file and the
// --lora-* flags into one checked LoraConfig, and the workload's references
// to its adapters checked against it.
#pragma once

#include "engine/lora.hpp"

#include <blis/run_config.hpp>
#include <blis/workload.hpp>

#include <memory>

namespace blis {

// The adapters of `c`: null when nothing about LoRA is given. Every error is
// an InputError naming the flag or the file position.
std::shared_ptr<const LoraConfig> resolve_lora(const RunConfig& c);

// Every adapter a client or cohort of `spec` names is declared (and its base
// model, when declared, is the client's model); `where` names the spec.
void check_adapter_references(const LoraConfig* lora, const WorkloadSpec& spec, const std::string& where);

}  // namespace blis
