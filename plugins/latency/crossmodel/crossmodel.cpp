// Crossmodel latency model: one global set of coefficients scaled by features
// of the model architecture (spec engine.md §5.4).
#include <blis/plugin.hpp>
#include <blis/config_keys.h>

#include "../common/latency_common.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace lc = blis::latency_common;

class Crossmodel : public lc::WithLinearAlpha {
 public:
  explicit Crossmodel(blis::sdk::Context& ctx)
      : WithLinearAlpha(lc::coefficients(ctx, BLIS_KEY_ALPHA_COEFFS, 3)),
        beta_(lc::coefficients(ctx, BLIS_KEY_BETA_COEFFS, 4)) {
    const auto shape = lc::AttentionShape::read(ctx);
    const int64_t tp = shape.tp, layers = shape.layers, d = shape.hidden, heads = shape.heads;
    const int64_t kv_heads = shape.kv_heads;
    const int64_t experts = ctx.i64_or(BLIS_KEY_MODEL_NUM_EXPERTS, 0);

    // Features fixed at construction (spec engine.md §5.4).
    const double d_h = static_cast<double>(d) / static_cast<double>(heads);
    layers_ = static_cast<double>(layers);
    kv_scaled_ = static_cast<double>(layers) * static_cast<double>(kv_heads) * d_h /
                 static_cast<double>(tp) * 1e-6;
    moe_ = experts > 0 ? 1 : 0;
    tp_flag_ = tp > 1 ? 1 : 0;
  }

  double step_time(const blis_step_batch& batch) const {
    const auto [prefill, decode] = lc::token_counts(batch);
    return priced(prefill, decode);
  }

  // The same counts, the plain decodes given by their number: the same formula.
  std::optional<double> decode_step_time(const blis_decode_batch& b) const {
    const auto [prefill, decode] = lc::token_counts(b);
    return priced(prefill, decode);
  }

 private:
  double priced(int64_t prefill, int64_t decode) const {
    // Prefill tokens only cost through the MoE term (free for dense models).
    const double t = beta_[0] * layers_ + beta_[1] * static_cast<double>(decode) * kv_scaled_ +
                     beta_[2] * static_cast<double>(prefill + decode) * moe_ + beta_[3] * tp_flag_;
    return lc::at_least_one(lc::trunc_ticks(t));
  }

  std::vector<double> beta_;
  double layers_ = 0, kv_scaled_ = 0, moe_ = 0, tp_flag_ = 0;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::latency_model<Crossmodel>(
    "crossmodel", "1.0.0", "Global coefficients scaled by architecture features",
    BLIS_NEED_MODEL | BLIS_NEED_HARDWARE))
