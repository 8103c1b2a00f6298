// Trained-physics latency model: roofline basis functions per operation
// (projections, attention, FFN split into MoE and dense layers, KV traffic,
// weight loading, TP all-reduce, MoE dispatch) combined with globally fitted
// coefficients and fixed per-layer, per-request and per-step overheads
// (spec head.md §1.2–§1.4).
#include <blis/plugin.hpp>
#include <blis/config_keys.h>

#include "../common/latency_common.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace lc = blis::latency_common;

// KV cache elements are 2 bytes whatever the model's dtype (spec head.md §1.2).
constexpr double kKvBytes = 2.0;
constexpr size_t kBetaSlots = 11;
// Beta slots by meaning (spec head.md §1.1).
enum Beta : size_t {
  kPrefillCompute = 0, kDecodeCompute = 1, kWeights = 2, kTpAllReduce = 3, kPerLayer = 4,
  kPerRequest = 5, kPerStep = 6, kPerInterleavedMoeLayer = 7, kPrefillKv = 8, kDecodeKv = 9,
  kMoeDispatch = 10
};

// How a MoE layer moves tokens between the GPUs of a data-parallel group:
// all-gather/reduce-scatter of every token's hidden state, or all-to-all of
// the routed (top-k) tokens only.
enum class CommFamily { AllGather, AllToAll };

CommFamily comm_family(const std::string& backend) {
  if (backend.empty() || backend == "allgather_reducescatter" || backend == "naive")
    return CommFamily::AllGather;
  for (const char* name :
       {"pplx", "deepep_high_throughput", "deepep_low_latency", "mori", "flashinfer_all2allv"})
    if (backend == name) return CommFamily::AllToAll;
  throw blis::sdk::ConfigError(
      "unknown moe_comm_backend '" + backend +
      "'; valid: naive, allgather_reducescatter (the default), pplx, deepep_high_throughput, "
      "deepep_low_latency, mori, flashinfer_all2allv");
}

double non_negative(const blis::sdk::Context& ctx, const char* key) {
  const double v = ctx.f64_or(key, 0);
  if (!(std::isfinite(v) && v >= 0))
    throw blis::sdk::ConfigError(std::string(key) + " must be a finite number >= 0, got " + lc::show(v));
  return v;
}

class TrainedPhysics {
 public:
  explicit TrainedPhysics(blis::sdk::Context& ctx)
      : alpha_(lc::coefficients(ctx, BLIS_KEY_ALPHA_COEFFS, 3)) {
    const std::vector<double> beta = lc::coefficients(ctx, BLIS_KEY_BETA_COEFFS, 7);
    std::copy_n(beta.begin(), std::min(beta.size(), kBetaSlots), beta_.begin());
    // Without an 11th value the dispatch term is corrected like the all-reduce.
    if (beta.size() < kBetaSlots) beta_[kMoeDispatch] = beta_[kTpAllReduce];
    prefill_split_ = beta.size() >= 9;
    decode_split_ = beta.size() >= 10;

    const auto shape = lc::AttentionShape::read(ctx);
    const int64_t tp = shape.tp, heads = shape.heads, kv_heads = shape.kv_heads;
    const int64_t ffn = lc::positive_int(ctx, BLIS_KEY_MODEL_INTERMEDIATE_SIZE);
    if (heads % tp != 0)
      throw blis::sdk::ConfigError("model.num_heads (" + lc::show(heads) +
                                   ") must be divisible by tp (" + lc::show(tp) + ")");
    if (kv_heads % tp != 0)
      throw blis::sdk::ConfigError("model.num_kv_heads (" + lc::show(kv_heads) +
                                   ") must be divisible by tp (" + lc::show(tp) + ")");
    const double tflops = lc::positive_finite(ctx, BLIS_KEY_HARDWARE_TFLOPS_PEAK);
    const double tflops_fp8 = non_negative(ctx, BLIS_KEY_HARDWARE_TFLOPS_FP8);
    const double bw = lc::positive_finite(ctx, BLIS_KEY_HARDWARE_BW_PEAK_TBS);
    activation_bytes_ = lc::positive_finite(ctx, BLIS_KEY_MODEL_BYTES_PER_PARAM);
    const double quantised = non_negative(ctx, BLIS_KEY_MODEL_WEIGHT_BYTES_PER_PARAM);

    const int64_t experts = ctx.i64_or(BLIS_KEY_MODEL_NUM_EXPERTS, 0);
    const int64_t top_k = ctx.i64_or(BLIS_KEY_MODEL_EXPERTS_PER_TOKEN, 0);
    if (experts > 1 && top_k <= 0)
      throw blis::sdk::ConfigError("model.num_experts is " + lc::show(experts) +
                                   " but model.experts_per_token is " + lc::show(top_k) +
                                   "; a MoE model needs it > 0");
    const int64_t interleave = ctx.i64_or(BLIS_KEY_MODEL_INTERLEAVE_MOE_LAYER_STEP, 0);
    const int64_t expert_ffn = ctx.i64_or(BLIS_KEY_MODEL_MOE_INTERMEDIATE_SIZE, 0);
    const int64_t dense_ffn = ctx.i64_or(BLIS_KEY_MODEL_INTERMEDIATE_SIZE_MLP, 0);
    const int64_t shared_ffn = ctx.i64_or(BLIS_KEY_MODEL_SHARED_EXPERT_DIM, 0);
    if (shared_ffn < 0)
      throw blis::sdk::ConfigError("model.shared_expert_dim must be >= 0, got " + lc::show(shared_ffn));

    moe_ = experts >= 2;
    const int64_t dp = ctx.i64_or(BLIS_KEY_DP, 1);
    if (dp < 1) throw blis::sdk::ConfigError("dp must be >= 1, got " + lc::show(dp));
    if (dp > 1 && !moe_)
      throw blis::sdk::ConfigError("dp " + lc::show(dp) +
                                   " needs a MoE model (data parallelism is modelled for the "
                                   "expert layers only)");
    comm_ = comm_family(ctx.str_or(BLIS_KEY_MOE_COMM_BACKEND, ""));
    // Expert parallelism changes where whole experts live, not the bytes or
    // FLOPs per GPU of the flattened TP·DP group: no step-time term reads it.
    // vLLM refuses it on a dense model, and so does this model.
    if (ctx.boolean_or(BLIS_KEY_ENABLE_EXPERT_PARALLEL, false) && !moe_)
      throw blis::sdk::ConfigError("enable_expert_parallel needs a MoE model (this one has no experts); vLLM "
                                   "refuses --enable-expert-parallel on a dense model");

    // Integer head dimension: config.json's head_dim is not used (spec head.md §1.2).
    const int64_t d_h = shape.hidden / heads;
    int64_t moe_layers = 0, dense_layers = shape.layers;
    if (moe_) {
      moe_layers = interleave > 0 ? shape.layers / (interleave + 1) : shape.layers;
      dense_layers = shape.layers - moe_layers;
    }
    interleaved_ = moe_ && interleave > 0;

    layers_ = static_cast<double>(shape.layers);
    moe_layers_ = static_cast<double>(moe_layers);
    dense_layers_ = static_cast<double>(dense_layers);
    d_ = static_cast<double>(shape.hidden);
    d_h_ = static_cast<double>(d_h);
    d_kv_ = static_cast<double>(kv_heads * d_h);
    f_moe_ = static_cast<double>(expert_ffn > 0 ? expert_ffn : ffn);
    f_dense_ = static_cast<double>(dense_ffn > 0 ? dense_ffn : ffn);
    f_shared_ = static_cast<double>(shared_ffn);
    experts_ = static_cast<double>(experts);
    k_eff_ = static_cast<double>(std::max<int64_t>(1, top_k));
    tp_ = static_cast<double>(tp);
    dp_ = static_cast<double>(dp);
    tpdp_ = tp_ * dp_;
    group_ = moe_ ? tpdp_ : tp_;
    heads_per_gpu_ = static_cast<double>(heads) / tp_;
    weight_bytes_ = quantised > 0 ? quantised : activation_bytes_;
    // One-byte weights run on the FP8 tensor cores when the GPU has them.
    flops_per_us_ = (weight_bytes_ == 1.0 && tflops_fp8 > 0 ? tflops_fp8 : tflops) * 1e6;
    bytes_per_us_ = bw * 1e6;
    weight_time_ = weight_bytes_per_gpu() / bytes_per_us_;
  }

  double step_time(const blis_step_batch& batch) const {
    if (batch.count == 0) return 1;
    // Every member counts, stalled ones included (spec head.md §1.3): a decode
    // member is one token of work even in a step that gave it none.
    lc::TrainedSums sums;
    for (int64_t i = 0; i < batch.count; ++i) {
      const blis_batch_entry& e = blis::sdk::entry_at(batch, i);
      sums.add(e, heads_per_gpu_, d_h_);
    }
    return priced(sums.t_pf, sums.t_dc, sums.ctx_sum, sums.attn, batch.count);
  }

  // The plain decodes given by their number and their sum of progress: the
  // decode sums above are of integers, exact in doubles (and so independent
  // of order) while the context sum stays below 2^53; the other members go
  // through the same code in the same order.
  std::optional<double> decode_step_time(const blis_decode_batch& b) const {
    lc::TrainedSums sums;
    lc::for_each_other(b, [&](const blis_batch_entry& e) {
      sums.add(e, heads_per_gpu_, d_h_);
    });
    if (!sums.add_plain_decodes(b)) return std::nullopt;
    const int64_t count = b.count + b.others_count;
    if (count == 0) return step_time(blis_step_batch{sizeof(blis_step_batch), sizeof(blis_batch_entry), b.now_us, 0, nullptr});
    return priced(sums.t_pf, sums.t_dc, sums.ctx_sum, sums.attn, count);
  }

 private:
  double priced(double t_pf, double t_dc, double ctx_sum, double attn, int64_t count) const {
    const double L = layers_, d = d_, d_kv = d_kv_, d_h = d_h_;

    double pf_compute = 0, pf_kv = 0, dc_compute = 0, dc_kv = 0;
    if (t_pf > 0) {
      const double proj = L * 2 * t_pf * d * (2 * d + 2 * d_kv) / tpdp_;
      pf_compute = (proj + L * attn / dp_ + ffn_flops(t_pf)) / flops_per_us_;
      pf_kv = L * 2 * (d_kv / tpdp_) * t_pf * kKvBytes / bytes_per_us_;
    }
    if (t_dc > 0) {
      const double proj = L * 2 * t_dc * d * (2 * d + 2 * d_kv) / tpdp_;
      const double dc_attn = L * 4 * heads_per_gpu_ * ctx_sum * d_h / dp_;
      dc_compute = (proj + dc_attn + ffn_flops(t_dc)) / flops_per_us_;
      dc_kv = L * 2 * (d_kv / tpdp_) * kKvBytes * (ctx_sum + t_dc) / bytes_per_us_;
    }

    const double tokens = t_pf + t_dc;
    double tp_comm = 0, moe_dispatch = 0;
    if (tp_ > 1) {
      tp_comm = all_reduce(L, tokens) / dp_ + all_reduce(dense_layers_, tokens) / dp_;
      // Expert layers all-reduce over TP too, unless data parallelism turns
      // that into a dispatch/combine.
      if (moe_ && moe_layers_ > 0 && dp_ == 1) tp_comm += all_reduce(moe_layers_, tokens);
    }
    if (moe_ && dp_ > 1) moe_dispatch = dispatch(tokens) * moe_layers_;

    const auto& b = beta_;
    const double prefill = prefill_split_ ? b[kPrefillCompute] * pf_compute + b[kPrefillKv] * pf_kv
                                          : b[kPrefillCompute] * std::max(pf_compute, pf_kv);
    const double decode = decode_split_ ? b[kDecodeCompute] * dc_compute + b[kDecodeKv] * dc_kv
                                        : b[kDecodeCompute] * std::max(dc_compute, dc_kv);
    // Summed left to right in this order (spec head.md §1.3).
    const double step = prefill + decode + b[kWeights] * weight_time_ + b[kTpAllReduce] * tp_comm +
                        b[kMoeDispatch] * moe_dispatch + b[kPerLayer] * L +
                        b[kPerRequest] * static_cast<double>(count) + b[kPerStep] +
                        b[kPerInterleavedMoeLayer] * (interleaved_ ? 1.0 : 0.0) * moe_layers_;
    return lc::at_least_one(lc::trunc_ticks(step));
  }

 public:
  // α0 is a constant per request, independent of the prompt length.
  double queueing_time(const blis_request_view&) const { return lc::trunc_ticks(alpha_[0]); }
  double output_token_time() const { return lc::trunc_ticks(alpha_[2]); }
  double post_decode_overhead() const { return lc::trunc_ticks(alpha_[1]); }

 private:
  // FFN FLOPs of n tokens over all layers. Experts are spread evenly over the
  // MoE group, so the busiest GPU computes n·k/G routed tokens; shared experts
  // and dense FFNs see every token, sharded like the projections.
  double ffn_flops(double n) const {
    const double d = d_;
    double flops = 0;
    if (moe_layers_ > 0) {
      flops += moe_layers_ * (n * k_eff_ / group_) * 6 * d * f_moe_;
      if (f_shared_ > 0) flops += moe_layers_ * n * 6 * d * f_shared_ / tpdp_;
    }
    if (dense_layers_ > 0) flops += dense_layers_ * n * 6 * d * f_dense_ / tpdp_;
    return flops;
  }

  // Weights read once per step: attention, then E/G full-expert equivalents
  // per MoE layer, shared experts and dense FFNs (sharded over TP: DP ranks
  // hold copies).
  double weight_bytes_per_gpu() const {
    const double d = d_, w = weight_bytes_;
    const double attention = layers_ * d * (2 * d + 2 * d_kv_) * w / tp_;
    double ffn = 0;
    if (moe_layers_ > 0) {
      ffn += moe_layers_ * (experts_ / group_) * 3 * d * f_moe_ * w;
      if (f_shared_ > 0) ffn += moe_layers_ * 3 * d * f_shared_ * w / tp_;
    }
    if (dense_layers_ > 0) ffn += dense_layers_ * 3 * d * f_dense_ * w / tp_;
    return attention + ffn;
  }

  // Ring all-reduce of the hidden states of `tokens` tokens, `units` times.
  double all_reduce(double units, double tokens) const {
    const double share = (tp_ - 1) / tp_;
    return units * tokens * d_ * activation_bytes_ * 2.0 * share / bytes_per_us_;
  }

  // One MoE layer's dispatch and combine over the data-parallel group.
  double dispatch(double tokens) const {
    const double per_rank = tokens / dp_;
    if (comm_ == CommFamily::AllToAll) {
      // Only the routed copies travel: k per token, to and from the others.
      const double routed = per_rank * k_eff_ * (group_ - 1) / group_ * 2;
      return routed * d_ * activation_bytes_ / bytes_per_us_;
    }
    return per_rank * (group_ - 1) / group_ * 2 * d_ * activation_bytes_ / bytes_per_us_;
  }

  std::vector<double> alpha_;
  std::array<double, kBetaSlots> beta_{};
  bool prefill_split_ = false, decode_split_ = false, moe_ = false, interleaved_ = false;
  CommFamily comm_ = CommFamily::AllGather;
  double layers_ = 0, moe_layers_ = 0, dense_layers_ = 0, d_ = 0, d_h_ = 0, d_kv_ = 0;
  double f_moe_ = 0, f_dense_ = 0, f_shared_ = 0, experts_ = 0, k_eff_ = 1;
  double tp_ = 1, dp_ = 1, tpdp_ = 1, group_ = 1, heads_per_gpu_ = 0;
  double activation_bytes_ = 0, weight_bytes_ = 0, flops_per_us_ = 0, bytes_per_us_ = 0;
  double weight_time_ = 0;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::latency_model<TrainedPhysics>(
    "trained-physics", "1.0.0",
    "Roofline basis per operation (MoE, interleaved layers, TP all-reduce, FP8) with fitted corrections",
    BLIS_NEED_MODEL | BLIS_NEED_HARDWARE))
