// LoRA adapters of a run (docs/lora.md): the --lora-config file and the
// --lora-* flags into one checked LoraConfig, and the workload's references
// to its adapters checked against it.
#pragma once

#include "engine/lora.hpp"
#include "workload/trace_v2.hpp"

#include <blis/run_config.hpp>
#include <blis/workload.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blis {

// The adapters of `c`: null when nothing about LoRA is given. Every error is
// an InputError naming the flag or the file position.
std::shared_ptr<const LoraConfig> resolve_lora(const RunConfig& c);

// Every adapter a client or cohort of `spec` names is declared (and its base
// model, when declared, is the client's model); `where` names the spec.
void check_adapter_references(const LoraConfig* lora, const WorkloadSpec& spec, const std::string& where);

// With adapters declared, every adapter a replayed trace's row names is one
// of them (and its base model, when declared, is the row's model); the error
// names `data_path` and the row's line. Without --lora-config, a trace's
// adapters are not simulated (its requests run on the base model).
void check_trace_adapters(const LoraConfig* lora, const std::vector<workload::TraceRecord>& records,
                          const std::string& data_path);

}  // namespace blis
