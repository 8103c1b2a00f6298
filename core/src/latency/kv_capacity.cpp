// KV capacity (spec engine.md §4.2), max-model-len derivation (§10.2, cli.md
// §3.6) and the configuration handed to latency-model plugins.
#include <blis/errors.hpp>
#include <blis/model_data.hpp>
#include <blis/config_keys.h>

#include "util/arith.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <string>

namespace blis {

namespace {

// spec engine.md §4.2 constants (the memory share is a setting: spec head §7.4).
constexpr double kActivationDenseGiB = 5.5;
constexpr double kActivationMoeGiB = 8.0;
constexpr double kNonTorchTp1GiB = 0.15;
constexpr double kNonTorchTpMultiGiB = 0.6;
constexpr double kGiB = 1073741824.0;  // 2^30

[[noreturn]] void fail(const std::string& what) {
  throw InputError("", what);
}

std::string num(double v) { return fmt::format("{}", v); }

// The fewest GPUs that would hold `shared_gib` (weights and activations,
// which are shared out): each keeps its share of memory less the multi-GPU
// overhead.
std::string fewest_gpus(const HardwareSpec& hw, double gpu_memory_utilization, double shared_gib) {
  const double per_gpu = hw.memory_gib * gpu_memory_utilization - kNonTorchTpMultiGiB;
  if (per_gpu <= 0) return "no number of GPUs holds it at this memory share";
  return "minimum GPUs required per instance: " + std::to_string(static_cast<int64_t>(std::ceil(shared_gib / per_gpu)));
}

// HEAD's formula also takes the "situ" activation.
bool swiglu_family(const std::string& act, bool head) {
  return act.empty() || act == "silu" || act == "swiglu" || act == "geglu" || (head && act == "situ");
}

}  // namespace

int64_t auto_kv_blocks(const ModelArch& m, const HardwareSpec& hw, int64_t tp, int64_t block_size,
                       double gpu_memory_utilization, bool quantised_weights, double adapter_reserved_bytes) {
  // Validation, in the order of spec engine.md §4.2.
  if (tp <= 0) fail("TP must be > 0, got " + std::to_string(tp));
  if (block_size <= 0) fail("block size must be > 0, got " + std::to_string(block_size));
  if (!(std::isfinite(gpu_memory_utilization) && gpu_memory_utilization > 0 && gpu_memory_utilization <= 1))
    fail("GPU memory utilization must be in (0, 1], got " + num(gpu_memory_utilization));
  if (m.num_heads <= 0) fail("num_attention_heads must be > 0, got " + std::to_string(m.num_heads));
  if (m.num_layers <= 0) fail("num_hidden_layers must be > 0, got " + std::to_string(m.num_layers));
  if (m.hidden_size <= 0) fail("hidden_size must be > 0, got " + std::to_string(m.hidden_size));
  if (m.intermediate_size <= 0)
    fail("intermediate_size must be > 0, got " + std::to_string(m.intermediate_size));
  if (m.vocab_size <= 0) fail("vocab_size must be > 0, got " + std::to_string(m.vocab_size));
  const double b = m.bytes_per_param;
  if (!(std::isfinite(b) && b > 0))
    fail("bytes per parameter must be finite and > 0, got " + num(b) + " (unknown dtype?)");
  if (!(std::isfinite(hw.memory_gib) && hw.memory_gib > 0))
    fail("GPU memory (MemoryGiB) must be finite and > 0, got " + num(hw.memory_gib));
  if (m.hidden_size % m.num_heads != 0)
    fail("hidden_size " + std::to_string(m.hidden_size) + " is not divisible by num_attention_heads " +
         std::to_string(m.num_heads));
  if (!swiglu_family(m.hidden_act, quantised_weights))
    fail("unsupported activation \"" + m.hidden_act +
         "\"; only SwiGLU-family activations (silu, swiglu, geglu) are supported");
  int64_t kv_heads = m.num_kv_heads;
  if (kv_heads < 0) fail("num_key_value_heads must be >= 0, got " + std::to_string(kv_heads));
  if (kv_heads == 0) kv_heads = m.num_heads;
  if (kv_heads >= tp && kv_heads % tp != 0)
    fail("num_key_value_heads " + std::to_string(kv_heads) + " is not divisible by TP " +
         std::to_string(tp));
  if (m.moe_count_missing)
    fail("the model looks MoE (n_shared_experts or num_experts_per_tok is set) but its expert "
         "count is missing");

  const int64_t L = m.num_layers, d = m.hidden_size, H = m.num_heads, V = m.vocab_size;
  const int64_t F = m.intermediate_size, K = kv_heads;
  const int64_t d_h = d / H;
  const bool moe = m.num_experts > 1;

  const double kv_per_token = static_cast<double>(L) * 2.0 * static_cast<double>(d_h) *
                              static_cast<double>(K) * b;
  const auto per_block = static_cast<int64_t>(kv_per_token / static_cast<double>(tp) *
                                              static_cast<double>(block_size));
  if (per_block <= 0) fail("per-block KV bytes is " + std::to_string(per_block) + " (expected > 0)");
  const double available_gib = hw.memory_gib * gpu_memory_utilization * static_cast<double>(tp);

  int64_t mlp = 3 * d * F;
  if (moe) {
    const int64_t E = m.num_experts;
    const int64_t f_e = m.moe_intermediate_size > 0 ? m.moe_intermediate_size : F;
    mlp = 3 * d * f_e * E;
    if (m.shared_expert_dim > 0) mlp += 3 * d * m.shared_expert_dim;
    mlp += E * d;  // router
  }
  const int64_t per_layer = d * (d + 2 * K * d_h) + d * d + mlp + 2 * d;
  const int64_t params = V * d + L * per_layer + (m.tie_word_embeddings ? 0 : V * d) + d;
  const double weight_width = quantised_weights && m.weight_bytes_per_param > 0 ? m.weight_bytes_per_param : b;
  const auto weights_bytes = static_cast<int64_t>(static_cast<double>(params) * weight_width);

  const double overhead_gib = static_cast<double>(weights_bytes) / kGiB +
                              (moe ? kActivationMoeGiB : kActivationDenseGiB) +
                              (tp == 1 ? kNonTorchTp1GiB : kNonTorchTpMultiGiB) *
                                  static_cast<double>(tp) +
                              adapter_reserved_bytes / kGiB;
  if (overhead_gib >= available_gib) {
    const std::string fewest = fewest_gpus(hw, gpu_memory_utilization,
                                           static_cast<double>(weights_bytes) / kGiB +
                                               (moe ? kActivationMoeGiB : kActivationDenseGiB));
    fail("model overhead of " + num(overhead_gib) + " GiB does not fit in the available " +
         num(available_gib) + " GiB (" + num(hw.memory_gib) + " GiB x " +
         fmt::format("{:g}", gpu_memory_utilization * 100) + "% x " +
         std::to_string(tp) + " GPUs); " + fewest);
  }
  const auto alloc_bytes = static_cast<int64_t>((available_gib - overhead_gib) * kGiB);
  const int64_t blocks = alloc_bytes / per_block;
  if (blocks <= 0)
    fail("computed 0 blocks (" + std::to_string(alloc_bytes) + " bytes free, " +
         std::to_string(per_block) + " bytes per block)");
  return blocks;
}

int64_t derive_max_model_len(const ModelArch& m) {
  const int64_t base_len = m.max_position_embeddings;
  if (base_len <= 0) return 0;
  // spec engine.md §10.2: gemma3 configs already carry the scaled length.
  if (m.model_type.find("gemma3") != std::string::npos) {
    spdlog::info("--latency-model: rope_scaling ignored for gemma3 (max_position_embeddings is "
                 "already scaled)");
    return base_len;
  }
  if (!m.rope_scaling_present) return base_len;
  if (!m.rope_scaling_is_object) {
    spdlog::warn("--latency-model: rope_scaling in {} is not an object; using "
                 "max_position_embeddings={}",
                 m.source, base_len);
    return base_len;
  }
  auto not_applied = [&](const char* why) {
    if (m.rope_factor_present)
      spdlog::warn("--latency-model: rope_scaling.factor not applied ({}); using "
                   "max_position_embeddings={}",
                   why, base_len);
    return base_len;
  };
  // These types already count the scaling in max_position_embeddings.
  if (m.rope_type == "su" || m.rope_type == "longrope" || m.rope_type == "llama3")
    return not_applied(("rope type " + m.rope_type).c_str());
  if (!m.rope_factor || !(*m.rope_factor > 1.0)) return not_applied("factor missing or <= 1");

  constexpr double kInt64Limit = 9223372036854775808.0;  // 2^63
  int64_t base = base_len;
  if (m.rope_type == "yarn" && m.original_max_position_embeddings > 0) {
    if (static_cast<double>(m.original_max_position_embeddings) >= kInt64Limit)
      return not_applied("original_max_position_embeddings overflows");
    base = m.original_max_position_embeddings;
  }
  const double product = static_cast<double>(base) * *m.rope_factor;
  if (product >= kInt64Limit || product < 0) return not_applied("scaled length overflows");
  const auto scaled = static_cast<int64_t>(product);
  spdlog::info("--latency-model: applying {} rope_scaling factor {:.1f}: {} -> {}", m.rope_type,
               *m.rope_factor, base_len, scaled);
  return scaled;
}

int64_t cap_max_model_len(int64_t max_model_len, int64_t total_kv_blocks, int64_t block_size) {
  if (max_model_len <= 0 || block_size <= 0) return max_model_len;
  const int64_t needed = ceil_div(max_model_len, block_size);
  if (needed <= total_kv_blocks) return max_model_len;
  const int64_t capped = total_kv_blocks * block_size;
  spdlog::warn("--latency-model: max-model-len {} exceeds KV capacity ({} blocks × {} tokens); "
               "capping to {} tokens",
               max_model_len, total_kv_blocks, block_size, capped);
  return capped;
}

void put_latency_config(ConfigTable& cfg, const ModelArch* m, const HardwareSpec* hw, int64_t tp,
                        const std::vector<double>& alpha, const std::vector<double>& beta,
                        int64_t block_size, int64_t dp, const std::string& moe_comm_backend,
                        bool expert_parallel) {
  if (m != nullptr) {
    cfg.set(BLIS_KEY_MODEL_NUM_LAYERS, m->num_layers);
    cfg.set(BLIS_KEY_MODEL_HIDDEN_SIZE, m->hidden_size);
    cfg.set(BLIS_KEY_MODEL_NUM_HEADS, m->num_heads);
    cfg.set(BLIS_KEY_MODEL_NUM_KV_HEADS, m->num_kv_heads);
    cfg.set(BLIS_KEY_MODEL_INTERMEDIATE_SIZE, m->intermediate_size);
    cfg.set(BLIS_KEY_MODEL_VOCAB_SIZE, m->vocab_size);
    cfg.set(BLIS_KEY_MODEL_BYTES_PER_PARAM, m->bytes_per_param);
    cfg.set(BLIS_KEY_MODEL_NUM_EXPERTS, m->num_experts);
    cfg.set(BLIS_KEY_MODEL_EXPERTS_PER_TOKEN, m->experts_per_token);
    cfg.set(BLIS_KEY_MODEL_MOE_INTERMEDIATE_SIZE, m->moe_intermediate_size);
    cfg.set(BLIS_KEY_MODEL_SHARED_EXPERT_DIM, m->shared_expert_dim);
    cfg.set(BLIS_KEY_MODEL_INTERLEAVE_MOE_LAYER_STEP, m->interleave_moe_layer_step);
    cfg.set(BLIS_KEY_MODEL_INTERMEDIATE_SIZE_MLP, m->intermediate_size_mlp);
    cfg.set(BLIS_KEY_MODEL_WEIGHT_BYTES_PER_PARAM, m->weight_bytes_per_param);
  }
  if (hw != nullptr) {
    cfg.set(BLIS_KEY_HARDWARE_NAME, hw->name);
    cfg.set(BLIS_KEY_HARDWARE_TFLOPS_PEAK, hw->tflops_peak);
    cfg.set(BLIS_KEY_HARDWARE_TFLOPS_FP8, hw->tflops_fp8);
    cfg.set(BLIS_KEY_HARDWARE_BW_PEAK_TBS, hw->bw_peak_tbs);
    cfg.set(BLIS_KEY_HARDWARE_MFU_PREFILL, hw->mfu_prefill);
    cfg.set(BLIS_KEY_HARDWARE_MFU_DECODE, hw->mfu_decode);
    cfg.set(BLIS_KEY_HARDWARE_MEMORY_GIB, hw->memory_gib);
  }
  cfg.set(BLIS_KEY_TP, tp);
  cfg.set(BLIS_KEY_BLOCK_SIZE, block_size);
  // Only when asked for: a latency model that does not read them refuses the run.
  if (dp > 1) cfg.set(BLIS_KEY_DP, dp);
  if (!moe_comm_backend.empty()) cfg.set(BLIS_KEY_MOE_COMM_BACKEND, moe_comm_backend);
  if (expert_parallel) cfg.set(BLIS_KEY_ENABLE_EXPERT_PARALLEL, true);
  // No coefficients, no keys: analytical models refuse coefficients.
  if (!alpha.empty()) cfg.set(BLIS_KEY_ALPHA_COEFFS, alpha);
  if (!beta.empty()) cfg.set(BLIS_KEY_BETA_COEFFS, beta);
}

}  // namespace blis
