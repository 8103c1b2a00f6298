// Blackbox latency model: a linear regression over the tokens of a step, with
// coefficients fitted per model/GPU/TP (spec engine.md §5.2).
#include <blis/plugin.hpp>
#include <blis/config_keys.h>

#include "../common/latency_common.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace {

namespace lc = blis::latency_common;

class Blackbox : public lc::WithLinearAlpha {
 public:
  explicit Blackbox(blis::sdk::Context& ctx)
      : WithLinearAlpha(lc::coefficients(ctx, BLIS_KEY_ALPHA_COEFFS, 3)),
        beta_(lc::coefficients(ctx, BLIS_KEY_BETA_COEFFS, 3)) {}

  // spec engine.md §5.2: max(1, trunc(((0 + β0) + β1·P) + β2·D)).
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
    double t = 0;
    t += beta_[0];
    t += beta_[1] * static_cast<double>(prefill);
    t += beta_[2] * static_cast<double>(decode);
    return lc::at_least_one(lc::trunc_ticks(t));
  }

  std::vector<double> beta_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::latency_model<Blackbox>(
    "blackbox", "1.0.0", "Linear regression on prefill and decode tokens (fitted alpha/beta)",
    BLIS_NEED_COEFFICIENTS))
