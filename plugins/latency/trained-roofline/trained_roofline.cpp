// Trained-roofline latency model: roofline-style basis functions (no MFU)
// combined with globally fitted correction coefficients (spec engine.md §5.5).
#include <blis/plugin.hpp>
#include <blis/config_keys.h>

#include "../common/latency_common.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace lc = blis::latency_common;

// spec engine.md §5.5: byte width fixed at 2 whatever the model's dtype.
constexpr double kBytesPerElement = 2.0;

class TrainedRoofline {
 public:
  explicit TrainedRoofline(blis::sdk::Context& ctx)
      : alpha_(lc::coefficients(ctx, BLIS_KEY_ALPHA_COEFFS, 3)),
        beta_(lc::coefficients(ctx, BLIS_KEY_BETA_COEFFS, 7)) {
    const auto shape = lc::AttentionShape::read(ctx);
    const int64_t tp = shape.tp, layers = shape.layers, d = shape.hidden, heads = shape.heads;
    const int64_t kv_heads = shape.kv_heads;
    const int64_t ffn = lc::positive_int(ctx, BLIS_KEY_MODEL_INTERMEDIATE_SIZE);
    const int64_t experts = ctx.i64_or(BLIS_KEY_MODEL_NUM_EXPERTS, 0);
    const int64_t top_k = ctx.i64_or(BLIS_KEY_MODEL_EXPERTS_PER_TOKEN, 0);
    if (heads % tp != 0)
      throw blis::sdk::ConfigError("model.num_heads (" + lc::show(heads) +
                                   ") must be divisible by tp (" + lc::show(tp) + ")");
    if (kv_heads % tp != 0)
      throw blis::sdk::ConfigError("model.num_kv_heads (" + lc::show(kv_heads) +
                                   ") must be divisible by tp (" + lc::show(tp) + ")");
    const double tflops = lc::positive_finite(ctx, BLIS_KEY_HARDWARE_TFLOPS_PEAK);
    const double bw = lc::positive_finite(ctx, BLIS_KEY_HARDWARE_BW_PEAK_TBS);

    // Integer head dimension here, unlike roofline (spec engine.md §5.5).
    const int64_t d_h = d / heads;
    layers_ = static_cast<double>(layers);
    d_ = static_cast<double>(d);
    d_h_ = static_cast<double>(d_h);
    d_kv_ = static_cast<double>(kv_heads * d_h);
    ffn_ = static_cast<double>(ffn);
    tp_ = static_cast<double>(tp);
    k_eff_ = static_cast<double>(std::max<int64_t>(1, top_k));
    moe_ = experts > 0;
    experts_ = static_cast<double>(experts);
    heads_per_gpu_ = static_cast<double>(heads) / tp_;
    flops_per_us_ = tflops * 1e6;
    bytes_per_us_ = bw * 1e6;
  }

  double step_time(const blis_step_batch& batch) const {
    if (batch.count == 0) return 1;
    lc::TrainedSums sums;
    lc::for_each_scheduled(batch, [&](const blis_batch_entry& e) {
      sums.add(e, heads_per_gpu_, d_h_);
    });
    return priced(sums.t_pf, sums.t_dc, sums.ctx_sum, sums.attn, batch.count);
  }

  // The plain decodes given by their number and their sum of progress: the
  // decode sums above are of integers, exact in doubles (and so independent
  // of order) while the context sum stays below 2^53; the other members go
  // through the same code in the same order.
  std::optional<double> decode_step_time(const blis_decode_batch& b) const {
    lc::TrainedSums sums;
    lc::for_each_other(b, [&](const blis_batch_entry& e) {
      if (e.new_tokens <= 0) return;  // as for_each_scheduled
      sums.add(e, heads_per_gpu_, d_h_);
    });
    if (!sums.add_plain_decodes(b)) return std::nullopt;
    const int64_t count = b.count + b.others_count;
    if (count == 0) return step_time(blis_step_batch{sizeof(blis_step_batch), sizeof(blis_batch_entry), b.now_us, 0, nullptr});
    return priced(sums.t_pf, sums.t_dc, sums.ctx_sum, sums.attn, count);
  }

 private:
  double priced(double t_pf, double t_dc, double ctx_sum, double attn, int64_t count) const {
    const double L = layers_, d = d_, d_kv = d_kv_, d_h = d_h_, F = ffn_, tp = tp_, k = k_eff_;

    double pf_compute = 0, pf_memory = 0, dc_compute = 0, dc_memory = 0;
    if (t_pf > 0) {
      const double proj = L * 2 * t_pf * d * (2 * d + 2 * d_kv) / tp;
      const double ffn = L * t_pf * k * 6 * d * F / tp;
      pf_compute = (proj + L * attn + ffn) / flops_per_us_;
      pf_memory = L * 2 * (d_kv / tp) * t_pf * kBytesPerElement / bytes_per_us_;
    }
    if (t_dc > 0) {
      const double proj = L * 2 * t_dc * d * (2 * d + 2 * d_kv) / tp;
      const double dc_attn = L * 4 * heads_per_gpu_ * ctx_sum * d_h;
      const double ffn = L * t_dc * k * 6 * d * F / tp;
      dc_compute = (proj + dc_attn + ffn) / flops_per_us_;
      dc_memory = L * 2 * (d_kv / tp) * kBytesPerElement * (ctx_sum + t_dc) / bytes_per_us_;
    }
    double experts_loaded = 1;
    if (moe_) experts_loaded = std::min(experts_, std::max(k, (t_pf + t_dc) * k));
    const double weight_attn = L * d * (2 * d + 2 * d_kv) * kBytesPerElement / tp;
    const double weight_ffn = L * experts_loaded * 3 * d * F * kBytesPerElement / tp;
    const double weight_time = (weight_attn + weight_ffn) / bytes_per_us_;
    const double tp_comm = 0;  // the β4 basis is not modelled (spec engine.md §5.5)

    // len(batch) counts every running request, stalled ones included.
    const double t = beta_[0] * std::max(pf_compute, pf_memory) +
                     beta_[1] * std::max(dc_compute, dc_memory) + beta_[2] * weight_time +
                     beta_[3] * tp_comm + beta_[4] * L +
                     beta_[5] * static_cast<double>(count) + beta_[6];
    return lc::at_least_one(lc::trunc_ticks(t));
  }

 public:
  // α0 is a constant per request here, independent of the prompt length.
  double queueing_time(const blis_request_view&) const { return lc::trunc_ticks(alpha_[0]); }
  double output_token_time() const { return lc::trunc_ticks(alpha_[2]); }
  double post_decode_overhead() const { return lc::trunc_ticks(alpha_[1]); }

 private:
  std::vector<double> alpha_, beta_;
  double layers_ = 0, d_ = 0, d_h_ = 0, d_kv_ = 0, ffn_ = 0, tp_ = 1, k_eff_ = 1;
  bool moe_ = false;
  double experts_ = 0, heads_per_gpu_ = 0, flops_per_us_ = 0, bytes_per_us_ = 0;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::latency_model<TrainedRoofline>(
    "trained-roofline", "1.0.0", "Roofline basis functions with fitted corrections",
    BLIS_NEED_MODEL | BLIS_NEED_HARDWARE))
