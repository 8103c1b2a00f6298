// Roofline latency model: a step takes the larger of its compute time and its
// memory-traffic time, from the model architecture and the GPU's peak figures
// (spec engine.md §5.3). The default backend.
#include <blis/plugin.hpp>
#include <blis/config_keys.h>

#include "../common/latency_common.hpp"
#include "roofline_head.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace lc = blis::latency_common;

// spec engine.md §5.3: the MLP is costed as two matrices.
constexpr double kMlpMatrices = 2;

class Roofline {
 public:
  explicit Roofline(blis::sdk::Context& ctx) {
    const auto shape = lc::AttentionShape::read(ctx);
    tp_ = static_cast<double>(shape.tp);
    layers_ = static_cast<double>(shape.layers);
    d_ = static_cast<double>(shape.hidden);
    heads_ = static_cast<double>(shape.heads);
    kv_heads_ = static_cast<double>(shape.kv_heads);
    const int64_t ffn = ctx.i64_or(BLIS_KEY_MODEL_INTERMEDIATE_SIZE, 0);
    bytes_ = lc::positive_finite(ctx, BLIS_KEY_MODEL_BYTES_PER_PARAM);

    const int64_t experts = ctx.i64_or(BLIS_KEY_MODEL_NUM_EXPERTS, 0);
    const int64_t top_k = ctx.i64_or(BLIS_KEY_MODEL_EXPERTS_PER_TOKEN, 0);
    const int64_t expert_ffn = ctx.i64_or(BLIS_KEY_MODEL_MOE_INTERMEDIATE_SIZE, 0);
    const int64_t shared_ffn = ctx.i64_or(BLIS_KEY_MODEL_SHARED_EXPERT_DIM, 0);
    if (experts < 0)
      throw blis::sdk::ConfigError("model.num_experts must be >= 0, got " + lc::show(experts));
    if (experts > 1 && (top_k <= 0 || top_k > experts))
      throw blis::sdk::ConfigError("model.experts_per_token must be in 1.." + lc::show(experts) +
                                   " for a MoE model, got " + lc::show(top_k));
    if (experts == 0 && top_k != 0)
      throw blis::sdk::ConfigError("model.experts_per_token is " + lc::show(top_k) +
                                   " but the model has no experts");
    if (expert_ffn < 0)
      throw blis::sdk::ConfigError("model.moe_intermediate_size must be >= 0, got " +
                                   lc::show(expert_ffn));
    if (shared_ffn < 0)
      throw blis::sdk::ConfigError("model.shared_expert_dim must be >= 0, got " +
                                   lc::show(shared_ffn));

    const double tflops = lc::positive_finite(ctx, BLIS_KEY_HARDWARE_TFLOPS_PEAK);
    const double bw = lc::positive_finite(ctx, BLIS_KEY_HARDWARE_BW_PEAK_TBS);
    mfu_prefill_ = lc::positive_finite(ctx, BLIS_KEY_HARDWARE_MFU_PREFILL);
    mfu_decode_ = lc::positive_finite(ctx, BLIS_KEY_HARDWARE_MFU_DECODE);
    const double memory = ctx.f64_or(BLIS_KEY_HARDWARE_MEMORY_GIB, 0);
    if (memory != 0 && !(std::isfinite(memory) && memory > 0))
      throw blis::sdk::ConfigError("hardware.memory_gib must be a finite number > 0, got " +
                                   lc::show(memory));

    // The host hands roofline no coefficients; a missing key means zeros.
    alpha_ = lc::LinearAlpha(ctx.has(BLIS_KEY_ALPHA_COEFFS) ? lc::coefficients(ctx, BLIS_KEY_ALPHA_COEFFS, 3)
                                                      : std::vector<double>{0, 0, 0});

    // Quirk Q8 kept: d_h = d / H even when config.json says otherwise.
    d_h_ = d_ / heads_;
    d_kv_ = kv_heads_ * d_h_;
    const double f = ffn > 0 ? static_cast<double>(ffn) : 4 * d_;
    moe_ = experts > 1;
    experts_ = static_cast<double>(experts);
    top_k_ = static_cast<double>(top_k);
    d_e_ = (moe_ && expert_ffn > 0) ? static_cast<double>(expert_ffn) : f;
    peak_flops_ = tflops * 1e12;
    peak_bw_ = bw * 1e12;
    weights_ = weight_bytes();
    weights_per_gpu_ = weights_ / tp_;
    precompute_decode_terms();
    // HEAD's form (roofline_head.hpp), for --profile-set head: key `form`.
    const std::string form = ctx.str_or("form", "seed");
    if (form == "head")
      head_ = std::make_unique<blis::roofline::HeadForm>(ctx, tp_, layers_, d_, heads_, kv_heads_,
                                                          static_cast<double>(ffn), bytes_, experts, top_k,
                                                          expert_ffn, tflops, bw, mfu_prefill_, mfu_decode_);
    else if (form != "seed")
      throw blis::sdk::ConfigError("key 'form' must be \"seed\" or \"head\", got \"" + form + "\"");
  }

  double step_time(const blis_step_batch& batch) const {
    if (head_) return head_->step_time(batch);
    double compute = 0, dynamic = 0;
    bool any = false;
    // Prefill members first, then decode members, each in batch order.
    lc::for_each_scheduled(batch, [&](const blis_batch_entry& e) {
      if (e.phase != BLIS_PHASE_PREFILL) return;
      any = true;
      const double s = static_cast<double>(e.progress), n = static_cast<double>(e.new_tokens);
      compute += flops(s, n) / tp_ / (peak_flops_ * mfu_prefill_);
      dynamic += dynamic_bytes(s, n) / tp_;
    });
    lc::for_each_scheduled(batch, [&](const blis_batch_entry& e) {
      if (e.phase != BLIS_PHASE_DECODE) return;
      any = true;
      const double s = static_cast<double>(e.progress);
      compute += per_gpu(decode_flops(s)) / decode_rate_;
      dynamic += per_gpu(decode_dynamic_bytes(s));
    });
    if (!any) return 0;  // the host floors the step to 1 tick
    const double memory = (weights_ / tp_ + dynamic) / peak_bw_;
    // The one model that rounds (half away from zero) instead of truncating.
    return lc::round_tick(std::max(compute, memory) * 1e6);
  }

  // A batch whose plain decodes come as aggregates. The other members are
  // summed as step_time sums them (prefill chunks first, in batch order,
  // from 0: the very same partial sums). step_time then adds one rounded
  // term per plain decode; here their sum comes from the batch size and the
  // sum of the progress fields, within a proven bound of the member-by-member
  // value (every term is positive, so rounding errors are relative: a few
  // units in the last place per term, plus one per addition). When both ends
  // of that interval round to the same tick, that tick is step_time's answer
  // too (max, the product by 1e6 and rounding are monotone); otherwise the
  // host takes the exact path.
  std::optional<double> decode_step_time(const blis_decode_batch& b) const {
    if (head_) return std::nullopt;  // HEAD's form takes the member-by-member path
    double compute = 0, dynamic = 0;
    bool any = b.count > 0;
    lc::for_each_other(b, [&](const blis_batch_entry& e) {
      if (e.new_tokens <= 0 || e.phase != BLIS_PHASE_PREFILL) return;
      any = true;
      const double s = static_cast<double>(e.progress), n = static_cast<double>(e.new_tokens);
      compute += flops(s, n) / tp_ / (peak_flops_ * mfu_prefill_);
      dynamic += dynamic_bytes(s, n) / tp_;
    });
    bool other_decodes = false;
    lc::for_each_other(b, [&](const blis_batch_entry& e) {
      if (e.new_tokens > 0 && e.phase == BLIS_PHASE_DECODE) other_decodes = true;
    });
    if (other_decodes) return std::nullopt;  // no such member from the host: plain decodes are aggregated
    if (!any) return 0;
    const double weights = weights_per_gpu_;
    if (b.count == 0) {
      const double memory = (weights + dynamic) / peak_bw_;
      return lc::round_tick(std::max(compute, memory) * 1e6);
    }
    const double n = static_cast<double>(b.count);
    const double terms = n + static_cast<double>(b.others_count);
    const double sum = static_cast<double>(b.progress_sum);
    constexpr double eps = 0x1p-52;  // two units of roundoff
    // Σ decode_flops(s) = n·(gemm + mlp + 2d·L) + Σs·(4H·d_h·L + 5H·L)
    const double flops = n * decode_member_flops_ + sum * decode_context_flops_;
    // Products by reciprocals where step_time divides (a division costs
    // several multiplications): each differs from the quotient by less than
    // two units of roundoff more, which the bounds below take in (8 more
    // units for the compute, 4 for the dynamic bytes and the memory time).
    compute += flops * inv_decode_rate_per_gpu_;
    // Σ decode_dynamic_bytes(s) = n·(activations + kv_per_token) + Σs·kv_per_token
    dynamic += (n * (decode_activations_ + kv_per_token_) + sum * kv_per_token_) * inv_tp_;
    const double memory = (weights + dynamic) * inv_peak_bw_;
    if (!(std::isfinite(compute) && std::isfinite(memory) && compute > 0 && memory > 0))
      return std::nullopt;
    // Usually no rounding boundary lies near x = max(compute, memory)·1e6:
    // the bounds below stray from x by at most (terms + 42) units of 2^-52 of
    // x (every d_ term is within (terms + 40)·eps of the max, and the sums,
    // maxima and products by 1e6 round three times), so when no boundary of
    // round_tick lies within (terms + 64)·eps·x of x (and 2^-30 for these
    // comparisons' own rounding), lo and hi are x's rounding, and that is
    // the answer without them.
    const double x = std::max(compute, memory) * 1e6;
    if (x < 0x1p52) {
      const auto t = static_cast<double>(static_cast<int64_t>(x));
      const double f = x - t;  // exact
      const double e = x * (terms + 64) * eps + 0x1p-30;
      if (f >= 0.5 ? (f - e >= 0.5 && f + e < 1.5) : (f + e < 0.5 && f - e >= -0.5))
        return f >= 0.5 ? t + 1 : t;
    }
    const double d_compute = (terms + 40) * eps * compute;
    // The per-member path adds the weights and takes them off again, each
    // time losing up to an ulp of their size.
    const double d_dynamic = (terms + 20) * eps * dynamic + (terms + 4) * eps * weights;
    const double d_memory = (d_dynamic + 4 * eps * (weights + dynamic)) * inv_peak_bw_ + 8 * eps * memory;
    const double lo = lc::round_tick(std::max(compute - d_compute, memory - d_memory) * 1e6);
    const double hi = lc::round_tick(std::max(compute + d_compute, memory + d_memory) * 1e6);
    if (lo != hi) return std::nullopt;
    return lo;
  }

  double queueing_time(const blis_request_view& r) const { return alpha_.queueing_time(r); }
  double output_token_time() const { return alpha_.output_token_time(); }
  double post_decode_overhead() const { return alpha_.post_decode_overhead(); }

 private:
  // x / tp_. Dividing by 1 is exact, so without tensor parallelism the
  // division, the slowest part of a decode member's cost, is skipped.
  double per_gpu(double x) const { return tp_ == 1 ? x : x / tp_; }

  // FLOPs of one request with context s and n new tokens (spec engine.md §5.3).
  double flops(double s, double n) const {
    const double c = n <= 1 ? s : s + (n - 1) / 2.0;
    double gemm = (2 * n * (d_ * d_ + 2 * d_ * d_kv_) + 2 * n * d_ * d_) * layers_;
    gemm += (4 * heads_ * n * c * d_h_) * layers_;
    const double sram = (5 * heads_ * n * c + 2 * n * d_) * layers_;
    double mlp = 2 * n * (kMlpMatrices * d_ * d_e_);
    if (moe_) mlp *= top_k_;
    gemm += mlp * layers_;
    return gemm + sram;
  }

  // flops(s, 1) and dynamic_bytes(s, 1) with the terms that do not depend on
  // s computed once: the same operations in the same order, so the same
  // doubles (multiplying by n = 1 is exact), at a fraction of the cost.
  double decode_flops(double c) const {
    double gemm = decode_gemm_;
    gemm += (four_heads_ * c * d_h_) * layers_;
    const double sram = (five_heads_ * c + two_d_) * layers_;
    gemm += decode_mlp_layers_;
    return gemm + sram;
  }
  double decode_dynamic_bytes(double s) const {
    const double access = kv_per_token_ * s;
    const double total = ((decode_activations_ + access) + kv_per_token_) + weights_;
    return total - weights_;
  }
  void precompute_decode_terms() {
    const double n = 1;
    decode_gemm_ = (2 * n * (d_ * d_ + 2 * d_ * d_kv_) + 2 * n * d_ * d_) * layers_;
    four_heads_ = 4 * heads_ * n;
    five_heads_ = 5 * heads_ * n;
    two_d_ = 2 * n * d_;
    double mlp = 2 * n * (kMlpMatrices * d_ * d_e_);
    if (moe_) mlp *= top_k_;
    decode_mlp_layers_ = mlp * layers_;
    kv_per_token_ = 2 * layers_ * kv_heads_ * d_h_ * bytes_;
    decode_activations_ = layers_ * d_ * bytes_ * n;
    decode_rate_ = peak_flops_ * mfu_decode_;
    // decode_step_time's constants (the same doubles its expressions made).
    decode_member_flops_ = decode_gemm_ + decode_mlp_layers_ + two_d_ * layers_;
    decode_context_flops_ = four_heads_ * d_h_ * layers_ + five_heads_ * layers_;
    inv_decode_rate_per_gpu_ = 1 / (tp_ * decode_rate_);
    inv_tp_ = 1 / tp_;
    inv_peak_bw_ = 1 / peak_bw_;
  }

  double weight_bytes() const {
    const double attention = d_ * (d_ + 2 * d_kv_) + d_ * d_;
    const double mlp = kMlpMatrices * d_ * d_e_ * (moe_ ? experts_ : 1);
    return (attention + mlp) * layers_ * bytes_;
  }

  // Bytes moved besides the weights; summed in the reference's order and then
  // the weights taken off again, which is not always exact in floating point.
  double dynamic_bytes(double s, double n) const {
    const double kv_per_token = 2 * layers_ * kv_heads_ * d_h_ * bytes_;
    const double growth = kv_per_token * n;
    const double access = kv_per_token * s;
    const double activations = layers_ * d_ * bytes_ * n;
    const double total = ((activations + access) + growth) + weights_;
    return total - weights_;
  }

  double tp_ = 1, layers_ = 0, d_ = 0, heads_ = 0, kv_heads_ = 0, bytes_ = 0;
  double d_h_ = 0, d_kv_ = 0, d_e_ = 0, experts_ = 0, top_k_ = 0;
  bool moe_ = false;
  double mfu_prefill_ = 0, mfu_decode_ = 0, peak_flops_ = 0, peak_bw_ = 0, weights_ = 0;
  double decode_gemm_ = 0, four_heads_ = 0, five_heads_ = 0, two_d_ = 0, decode_mlp_layers_ = 0;
  double kv_per_token_ = 0, decode_activations_ = 0, decode_rate_ = 0;
  double decode_member_flops_ = 0, decode_context_flops_ = 0, inv_decode_rate_per_gpu_ = 0, inv_tp_ = 0;
  double inv_peak_bw_ = 0, weights_per_gpu_ = 0;
  lc::LinearAlpha alpha_{{0, 0, 0}};
  std::unique_ptr<blis::roofline::HeadForm> head_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::latency_model<Roofline>(
    "roofline", "1.0.0", "Analytical roofline: max of compute and memory time per step",
    BLIS_NEED_MODEL | BLIS_NEED_HARDWARE))
