// token-bucket admission policy: a bucket of input tokens that refills at a
// fixed rate; a request costs its full prompt length (spec cluster §2.3).
#include <blis/plugin.hpp>
#include <blis/config_keys.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace {

constexpr const char* kCapacityKey = BLIS_KEY_TOKEN_BUCKET_CAPACITY;
constexpr const char* kRefillRateKey = BLIS_KEY_TOKEN_BUCKET_REFILL_RATE;
constexpr double kDefaultCapacity = 10000;
constexpr double kDefaultRefillRate = 1000;  // tokens per second
constexpr double kMicrosPerSecond = 1e6;

// spec cluster §2.3: both parameters must be finite and > 0.
double positive_finite(const blis::sdk::Context& ctx, const char* key, double fallback) {
  const double v = ctx.f64_or(key, fallback);
  if (!std::isfinite(v) || !(v > 0)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", v);
    throw blis::sdk::ConfigError(std::string("configuration key '") + key +
                                 "' must be a finite number > 0, got " + got);
  }
  return v;
}

class TokenBucket {
 public:
  explicit TokenBucket(blis::sdk::Context& ctx)
      : capacity_(positive_finite(ctx, kCapacityKey, kDefaultCapacity)),
        refill_rate_(positive_finite(ctx, kRefillRateKey, kDefaultRefillRate)),
        tokens_(capacity_) {}

  bool admit(const blis_route_input& input, std::string& reason) {
    // spec cluster §2.3: no refill at clock 0, and last_refill_ only moves
    // forward when time has advanced; same-tick bursts share one bucket.
    const int64_t elapsed = input.now_us - last_refill_;
    if (elapsed > 0) {
      tokens_ = std::min(capacity_,
                         tokens_ + (static_cast<double>(elapsed) * refill_rate_) / kMicrosPerSecond);
      last_refill_ = input.now_us;
    }
    // A token is one input token, shared prefix included; output plays no role.
    const double cost = static_cast<double>(input.request->input_tokens);
    if (tokens_ >= cost) {
      tokens_ -= cost;
      return true;
    }
    reason = "insufficient tokens";
    return false;
  }

 private:
  double capacity_;
  double refill_rate_;
  double tokens_;
  int64_t last_refill_ = 0;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::admission_policy<TokenBucket>(
    "token-bucket", "1.0.0",
    "Token bucket over input tokens (token_bucket_capacity, token_bucket_refill_rate per second)",
    BLIS_NEED_DECLARED_READS | BLIS_NEED_REQUEST))
