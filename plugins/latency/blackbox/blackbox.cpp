// Blackbox latency model: a linear regression over the tokens of a step, with
// coefficients fitted per model/GPU/TP (spec engine.md §5.2).
#include <blis/plugin.hpp>

#include "../common/latency_common.hpp"

#include <cstdint>
#include <vector>

namespace {

namespace lc = blis::latency_common;

class Blackbox {
 public:
  explicit Blackbox(blis::sdk::Context& ctx)
      : alpha_(lc::coefficients(ctx, "alpha_coeffs", 3)),
        beta_(lc::coefficients(ctx, "beta_coeffs", 3)) {}

  // spec engine.md §5.2: max(1, trunc(((0 + β0) + β1·P) + β2·D)).
  double step_time(const blis_step_batch& batch) const {
    int64_t prefill = 0, decode = 0;
    lc::for_each_scheduled(batch, [&](const blis_batch_entry& e) {
      if (e.phase == BLIS_PHASE_PREFILL) prefill += e.new_tokens;
      else decode += e.new_tokens;
    });
    double t = 0;
    t += beta_[0];
    t += beta_[1] * static_cast<double>(prefill);
    t += beta_[2] * static_cast<double>(decode);
    return lc::at_least_one(lc::trunc_ticks(t));
  }

  double queueing_time(const blis_request_view& r) const { return alpha_.queueing_time(r); }
  double output_token_time() const { return alpha_.output_token_time(); }
  double post_decode_overhead() const { return alpha_.post_decode_overhead(); }

 private:
  lc::LinearAlpha alpha_;
  std::vector<double> beta_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::latency_model<Blackbox>(
    "blackbox", "1.0.0", "Linear regression on prefill and decode tokens (fitted alpha/beta)"))
