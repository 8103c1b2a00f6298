// The latency model of Acme's (fictional) inference accelerator, as a vendor
// would ship it: a step costs a launch overhead plus a price per prefill and
// per decode token. The prices were measured on a model of hidden size 5120
// on one card; they scale with the square of the hidden size (the weights
// read per token) over the tensor parallelism, and divide by `efficiency`,
// the throughput of the customer's card relative to the measured one.
#include <blis/plugin.hpp>

#include <cstdio>

namespace {

class AcmeLinear {
 public:
  explicit AcmeLinear(blis::sdk::Context& ctx)
      : efficiency_(ctx.f64("efficiency")),  // required: --plugin-config acme-linear.efficiency=0.8
        launch_us_(ctx.f64_or("launch_us", 4000)),
        prefill_us_(ctx.f64_or("prefill_us_per_token", 45)),
        decode_us_(ctx.f64_or("decode_us_per_token", 18)) {
    if (!(efficiency_ > 0 && efficiency_ <= 10))
      throw blis::sdk::ConfigError("config key 'efficiency' must be in (0, 10]");
    // Set by blis for every latency model: the model's shape and the TP.
    const double hidden = static_cast<double>(ctx.i64_or("model.hidden_size", 5120));
    const double tp = static_cast<double>(ctx.i64_or("tp", 1));
    scale_ = (hidden / 5120) * (hidden / 5120) / (tp > 0 ? tp : 1);
    char line[160];
    std::snprintf(line, sizeof line, "efficiency %.3g, token prices scaled by %.3g", efficiency_,
                  scale_);
    ctx.log(BLIS_LOG_INFO, line);
  }

  // GPU time of one step, in microseconds.
  double step_time(const blis_step_batch& batch) const {
    double prefill = 0, decode = 0;
    for (int64_t i = 0; i < batch.count; ++i) {
      const blis_batch_entry& e = blis::sdk::entry_at(batch, i);  // honours entry_size
      (e.phase == BLIS_PHASE_PREFILL ? prefill : decode) += static_cast<double>(e.new_tokens);
    }
    return (launch_us_ + scale_ * (prefill_us_ * prefill + decode_us_ * decode)) / efficiency_;
  }

  // Detokenisation and streaming of each output token, outside the step.
  double output_token_time() const { return 50; }

 private:
  double efficiency_, launch_us_, prefill_us_, decode_us_;
  double scale_ = 1;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::latency_model<AcmeLinear>(
    "acme-linear", "1.0.0", "Acme accelerator: launch overhead plus per-token prices"))
