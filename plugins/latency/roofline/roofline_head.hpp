// The roofline as BLIS HEAD (f90a1e3a) computes it, chosen with the plugin key
// `form = "head"` (the `head` profile set gives it): the seed's formulas
// (roofline.cpp) with HEAD's changes:
// - a step's time is truncated to whole µs (the seed rounds);
// - weights are read at their quantised width (model.weight_bytes_per_param),
//   KV and activations at the compute width;
// - an FP8 model (1 byte per weight) on a GPU with FP8 tensor cores computes
//   at hardware.tflops_fp8;
// - a MoE model loads per step only the experts the step's tokens are expected
//   to touch, N·(1 − ((N − k)/N)^B) for B new tokens, and interleaved models
//   (model.interleave_moe_layer_step) have dense layers of their own width
//   (model.intermediate_size_mlp).
// Sums are taken in HEAD's order, so that the truncation meets the same doubles.
#pragma once

#include <blis/plugin.hpp>
#include <blis/config_keys.h>

#include "../common/latency_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace blis::roofline {

class HeadForm {
 public:
  // `d`..`bytes` as the seed form reads them; the rest from the context.
  HeadForm(blis::sdk::Context& ctx, double tp, double layers, double d, double heads, double kv_heads,
           double ffn, double bytes, int64_t experts, int64_t top_k, int64_t expert_ffn, double tflops,
           double bw, double mfu_prefill, double mfu_decode)
      : tp_(tp), layers_(layers), d_(d), heads_(heads), kv_heads_(kv_heads), bytes_(bytes),
        mfu_prefill_(mfu_prefill), mfu_decode_(mfu_decode), peak_bw_(bw * 1e12) {
    const double quantised = ctx.f64_or(BLIS_KEY_MODEL_WEIGHT_BYTES_PER_PARAM, 0);
    if (!(std::isfinite(quantised) && quantised >= 0))
      throw blis::sdk::ConfigError("model.weight_bytes_per_param must be a finite number >= 0");
    weight_bytes_ = quantised > 0 ? quantised : bytes;
    const double fp8 = ctx.f64_or(BLIS_KEY_HARDWARE_TFLOPS_FP8, 0);
    peak_flops_ = (weight_bytes_ == 1.0 && fp8 > 0 ? fp8 : tflops) * 1e12;
    d_h_ = d_ / heads_;
    d_kv_ = kv_heads_ * d_h_;
    ffn_ = ffn > 0 ? ffn : 4 * d_;
    moe_ = experts >= 2;
    experts_ = static_cast<double>(experts);
    top_k_ = static_cast<double>(top_k);
    const int64_t step = ctx.i64_or(BLIS_KEY_MODEL_INTERLEAVE_MOE_LAYER_STEP, 0);
    const auto l = static_cast<int64_t>(layers);
    moe_layers_ = !moe_ ? 0 : step > 0 ? static_cast<double>(l / (step + 1)) : layers;
    dense_layers_ = layers - moe_layers_;
    ffn_moe_ = expert_ffn > 0 ? static_cast<double>(expert_ffn) : ffn_;
    const int64_t dense_ffn = ctx.i64_or(BLIS_KEY_MODEL_INTERMEDIATE_SIZE_MLP, 0);
    ffn_dense_ = dense_ffn > 0 ? static_cast<double>(dense_ffn) : ffn_;
  }

  // Truncated µs, at least 1 (the host floors a step to 1 tick too).
  double step_time(const blis_step_batch& batch) const {
    double compute = 0, dynamic = 0;
    int64_t new_tokens = 0;
    bool any = false;
    blis::latency_common::for_each_scheduled(batch, [&](const blis_batch_entry& e) {
      if (e.phase != BLIS_PHASE_PREFILL) return;
      any = true;
      const double s = static_cast<double>(e.progress), n = static_cast<double>(e.new_tokens);
      compute += flops(s, n) / tp_ / (peak_flops_ * mfu_prefill_);
      const Bytes m = memory(s, n, true);
      dynamic += (m.total - m.weights) / tp_;
      new_tokens += e.new_tokens;
    });
    blis::latency_common::for_each_scheduled(batch, [&](const blis_batch_entry& e) {
      if (e.phase != BLIS_PHASE_DECODE) return;
      any = true;
      const double s = static_cast<double>(e.progress);
      compute += flops(s, 1) / tp_ / (peak_flops_ * mfu_decode_);
      const Bytes m = memory(s, 1, true);
      dynamic += (m.total - m.weights) / tp_;
      new_tokens += 1;
    });
    if (!any) return 1;
    const double weights = memory(0, static_cast<double>(new_tokens), false).weights / tp_;
    const double seconds = std::max(compute, (weights + dynamic) / peak_bw_);
    const double us = seconds * 1e6;
    if (std::isnan(us) || us >= 9.2233720368547758e18) return 9.2233720368547758e18;
    return std::max(1.0, std::trunc(us));
  }

 private:
  struct Bytes {
    double weights = 0, total = 0;
  };

  double flops(double s, double n) const {
    double gemm = (2 * n * (d_ * d_ + 2 * d_ * d_kv_) + 2 * n * d_ * d_) * layers_;
    const double c = n > 1 ? s + (n - 1) / 2.0 : s;
    gemm += (4 * heads_ * n * c * d_h_) * layers_;
    const double sram = (5 * heads_ * n * c + 2 * n * d_) * layers_;
    if (moe_layers_ > 0) gemm += 2 * n * (kMatrices * d_ * ffn_moe_) * top_k_ * moe_layers_;
    if (dense_layers_ > 0) gemm += 2 * n * (kMatrices * d_ * ffn_dense_) * dense_layers_;
    return gemm + sram;
  }

  Bytes memory(double s, double n, bool kv) const {
    const double attention = d_ * (d_ + 2 * d_kv_) + d_ * d_;
    double moe = 0, dense = 0;
    if (moe_layers_ > 0) {
      const double touched = experts_ * (1.0 - std::pow((experts_ - top_k_) / experts_, n));
      moe = kMatrices * d_ * ffn_moe_ * touched * moe_layers_;
    }
    if (dense_layers_ > 0) dense = kMatrices * d_ * ffn_dense_ * dense_layers_;
    Bytes b;
    b.weights = (attention * layers_ + (moe + dense)) * weight_bytes_;
    double growth = 0, access = 0;
    if (kv) {
      const double per_token = 2 * layers_ * kv_heads_ * d_h_ * bytes_;
      growth = per_token * n;
      access = per_token * s;
    }
    const double activations = layers_ * d_ * bytes_ * n;
    b.total = b.weights + growth + access + activations;
    return b;
  }

  static constexpr double kMatrices = 2;
  double tp_, layers_, d_, heads_, kv_heads_, bytes_;
  double mfu_prefill_, mfu_decode_, peak_bw_;
  double weight_bytes_ = 0, peak_flops_ = 0, d_h_ = 0, d_kv_ = 0, ffn_ = 0;
  bool moe_ = false;
  double experts_ = 0, top_k_ = 0, moe_layers_ = 0, dense_layers_ = 0, ffn_moe_ = 0, ffn_dense_ = 0;
};

}  // namespace blis::roofline
