// The facts latency models and KV sizing need: model architectures, GPUs, and
// the defaults/coefficient tables converted from the reference's data into
// blis's own TOML files (core/data, installed as share/blis/data).
#pragma once

#include <blis/config_table.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace blis {

// Architecture fields read from a HuggingFace config.json (spec engine.md §5.7).
struct ModelArch {
  std::string source;                // file it came from, for messages
  std::string model_type;
  std::string hidden_act;
  int64_t num_layers = 0;            // L
  int64_t hidden_size = 0;           // d
  int64_t num_heads = 0;             // H
  int64_t num_kv_heads = 0;          // K (already defaulted to H when absent)
  int64_t intermediate_size = 0;     // F
  int64_t vocab_size = 0;            // V
  double bytes_per_param = 0;        // b
  int64_t num_experts = 0;           // E
  int64_t experts_per_token = 0;     // k
  int64_t moe_intermediate_size = 0; // F_e
  int64_t shared_expert_dim = 0;
  int64_t n_shared_experts = 0;
  // Every (s+1)-th layer is MoE, the others dense (Llama 4); 0 = uniform.
  int64_t interleave_moe_layer_step = 0;
  int64_t intermediate_size_mlp = 0;   // FFN of the dense layers when they differ; 0 = F
  // Stored weight width of a quantised model (quantization_config, else the
  // model name); 0 = not quantised, weights are bytes_per_param wide.
  double weight_bytes_per_param = 0;
  bool tie_word_embeddings = false;
  bool moe_count_missing = false;    // looks MoE but no expert count (§4.2)
  int64_t max_position_embeddings = 0;
  int64_t original_max_position_embeddings = 0;  // from rope_scaling (yarn base)
  bool rope_scaling_present = false;   // non-null
  bool rope_scaling_is_object = false;
  std::string rope_type;
  std::optional<double> rope_factor;   // only when a finite JSON number
  bool rope_factor_present = false;    // rope_scaling has a "factor" key, whatever its value
};

struct HardwareSpec {
  std::string name;
  double tflops_peak = 0;
  double tflops_fp8 = 0;  // dense FP8 peak; 0 = no FP8 tensor cores (or unknown)
  double bw_peak_tbs = 0;
  double mfu_prefill = 0;
  double mfu_decode = 0;
  double memory_gib = 0;
};

struct ModelDefaults {
  std::string gpu;
  int64_t tensor_parallelism = 0;
  std::string vllm_version;
  std::string hf_repo;
};

struct CoefficientEntry {
  std::string id, gpu, vllm_version;
  int64_t tensor_parallelism = 0;
  std::vector<double> alpha, beta;
  int64_t total_kv_blocks = 0;
};

struct PresetWorkload {
  int64_t prefix_tokens = 0;
  int64_t prompt_tokens = 0, prompt_tokens_stdev = 0, prompt_tokens_min = 0, prompt_tokens_max = 0;
  int64_t output_tokens = 0, output_tokens_stdev = 0, output_tokens_min = 0, output_tokens_max = 0;
};

struct GlobalCoefficients {
  std::vector<double> alpha, beta;
};

// Everything under one data directory.
class DataCatalog {
 public:
  // Loads defaults.toml and hardware.toml from `dir`; ConfigError on bad files.
  // Read once per process while the files stay the same (a copy each time).
  static DataCatalog load(const std::string& dir);

  // Reads the reference's defaults.yaml (either version's layout) over these
  // tables, key by key: model defaults, presets, coefficient entries (same
  // model, GPU, TP and vLLM version) and the global coefficients of
  // crossmodel, trained-roofline and trained-physics; what the file does not
  // name stays bundled. ConfigError at file:line:col.
  void apply_reference_defaults(const std::string& path);

  const std::string& dir() const { return dir_; }
  // The model's defaults; under profile set `profile_set`, with the TP that
  // set's [profile-sets.NAME.default-tp] gives the model, if any.
  std::optional<ModelDefaults> defaults_for(const std::string& model, const std::string& profile_set = "") const;
  // First entry equal in id, GPU, TP and vLLM version.
  std::optional<CoefficientEntry> coefficients(const std::string& model, const std::string& gpu,
                                               int64_t tp, const std::string& vllm) const;
  std::optional<PresetWorkload> preset(const std::string& name) const;
  std::vector<std::string> preset_names() const;
  // The coefficients [plugin-defaults.NAME] gives latency model NAME, or null.
  const GlobalCoefficients* plugin_coefficients(const std::string& plugin) const;
  // The default of a setting that names plugins ([settings]): "" if none.
  std::string setting_default(const std::string& key) const;
  // Named bundles of defaults ([profile-sets.NAME], --profile-set NAME): per
  // bundle, setting key -> the value as command-line text.
  using ProfileSet = std::map<std::string, std::string>;
  const std::map<std::string, ProfileSet>& profile_sets() const { return profile_sets_; }
  // Hardware table; `path` overrides the bundled hardware.toml (TOML or the
  // reference's JSON). InputError listing the names if `gpu` is unknown.
  HardwareSpec hardware(const std::string& gpu, const std::string& path = "") const;
  // Everything the tables know, for listings and "did you mean" messages.
  const std::map<std::string, ModelDefaults>& all_defaults() const { return defaults_; }
  const std::vector<CoefficientEntry>& coefficient_entries() const { return entries_; }
  const std::map<std::string, HardwareSpec>& gpus() const { return hardware_; }
  // Short names of the bundled architectures (models/<name>.toml), sorted.
  std::vector<std::string> architecture_names() const;
  // Every model name the tables know (defaults, coefficients), sorted.
  std::vector<std::string> model_names() const;
  // Bundled architecture of a model by its short name (part after '/'), if any.
  std::optional<ModelArch> bundled_model(const std::string& model) const;

 private:
  static DataCatalog read(const std::string& dir);  // load() without its cache

  std::string dir_;
  std::map<std::string, ModelDefaults> defaults_;
  std::vector<CoefficientEntry> entries_;
  std::map<std::string, PresetWorkload> presets_;
  std::map<std::string, GlobalCoefficients> plugin_coefficients_;
  std::map<std::string, std::string> setting_defaults_;
  std::map<std::string, ProfileSet> profile_sets_;
  // Per profile set: lower-cased model -> its default TP there.
  std::map<std::string, std::map<std::string, int64_t>> profile_default_tp_;
  std::map<std::string, HardwareSpec> hardware_;
};

// Parses a HuggingFace config.json (text_config merged over the top level).
ModelArch load_model_config_json(const std::string& path);
// Parses a folder holding config.json (the --model-config-folder flag).
ModelArch load_model_config_folder(const std::string& dir);
// Weight width a quantised model's name announces ("...-w4a16" 0.5, "...-FP8-..."
// 1), 0 if none; used when config.json's quantization_config says nothing.
double weight_bytes_from_model_name(const std::string& model);

// KV blocks that fit on the GPUs (spec engine.md §4.2). Throws InputError with
// the reason when the inputs are invalid or the model does not fit.
// vLLM's default share of GPU memory (--gpu-memory-utilization, spec head §7.4).
inline constexpr double kDefaultGpuMemoryUtilization = 0.9;
// `quantised_weights`: HEAD's formula, which counts a quantised model's weights
// at their stored width (ModelArch::weight_bytes_per_param) and also takes the
// "situ" activation; the seed's counts every weight at bytes_per_param.
// (`adapter_reserved_bytes`: HBM held for LoRA adapter slots, HEAD's static reservation.)
int64_t auto_kv_blocks(const ModelArch& m, const HardwareSpec& hw, int64_t tp, int64_t block_size,
                       double gpu_memory_utilization = kDefaultGpuMemoryUtilization,
                       bool quantised_weights = false, double adapter_reserved_bytes = 0);

// max-model-len from max_position_embeddings and rope scaling (spec engine.md
// §10.2); 0 when the config has none. Warnings go to the log.
int64_t derive_max_model_len(const ModelArch& m);
// The cap of spec cli.md §3.6: a max-model-len needing more blocks than the KV
// cache has becomes total_kv_blocks * block_size (with a warning); 0 stays 0.
int64_t cap_max_model_len(int64_t max_model_len, int64_t total_kv_blocks, int64_t block_size);

// Writes the keys latency-model plugins read ("model.*", "hardware.*", "tp",
// "alpha_coeffs", "beta_coeffs", "block_size"; "dp" when dp > 1,
// "moe_comm_backend" when not empty, "enable_expert_parallel" when true).
void put_latency_config(ConfigTable& cfg, const ModelArch* m, const HardwareSpec* hw, int64_t tp,
                        const std::vector<double>& alpha, const std::vector<double>& beta,
                        int64_t block_size, int64_t dp = 1, const std::string& moe_comm_backend = "",
                        bool expert_parallel = false);

}  // namespace blis
