// Helpers shared by the built-in latency-model plugins. Header-only and built
// on the SDK alone, like any vendor plugin would be.
#pragma once

#include <blis/plugin.hpp>
#include <blis/config_keys.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace blis::latency_common {

// std::round (half away from zero), without the call into libm for the
// step times: for 0 < x < 2^52 the truncation and the fraction x - t are
// exact, so the result is std::round's bit for bit.
inline double round_tick(double x) {
  if (!(x > 0 && x < 0x1p52)) return std::round(x);
  const auto t = static_cast<double>(static_cast<int64_t>(x));
  return x - t >= 0.5 ? t + 1 : t;
}

// Number formatting for messages. snprintf rather than std::to_string: the
// latter would export a GNU unique symbol that keeps the library from ever
// being unloaded.
inline std::string show(double v) {
  char buf[40];
  for (int precision = 15; precision <= 17; ++precision) {  // shortest that round-trips
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}
inline std::string show(int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  return buf;
}
inline std::string show(size_t v) { return show(static_cast<int64_t>(v)); }

// Reads a coefficient vector and applies spec engine.md §5.1: at least
// `min_count` entries, each finite and >= 0.
inline std::vector<double> coefficients(const blis::sdk::Context& ctx, const char* key,
                                        size_t min_count) {
  std::vector<double> c = ctx.f64_array(key);
  if (c.size() < min_count)
    throw blis::sdk::ConfigError(std::string(key) + " needs at least " + show(min_count) +
                                 " values, got " + show(c.size()));
  for (size_t i = 0; i < c.size(); ++i)
    if (!std::isfinite(c[i]) || c[i] < 0)
      throw blis::sdk::ConfigError(std::string(key) + "[" + show(i) +
                                   "] must be a finite non-negative number, got " + show(c[i]));
  return c;
}

inline int64_t positive_int(const blis::sdk::Context& ctx, const char* key) {
  const int64_t v = ctx.i64(key);
  if (v <= 0)
    throw blis::sdk::ConfigError(std::string(key) + " must be > 0, got " + show(v));
  return v;
}

inline double positive_finite(const blis::sdk::Context& ctx, const char* key) {
  const double v = ctx.f64(key);
  if (!(std::isfinite(v) && v > 0))
    throw blis::sdk::ConfigError(std::string(key) + " must be a finite number > 0, got " + show(v));
  return v;
}

// Model outputs become ticks by truncation toward zero (spec engine.md §0).
inline double trunc_ticks(double v) { return std::trunc(v); }

// The "max(1, …)" floor several backends apply themselves (spec engine.md §5.2–§5.5).
inline double at_least_one(double ticks) { return ticks < 1 ? 1 : ticks; }

// Calls f(entry) for every request that received tokens this step. Stalled
// requests (new_tokens == 0) cost nothing: the reference's quirk Q7 is fixed
// on purpose (spec engine.md §14).
template <class F>
void for_each_scheduled(const blis_step_batch& batch, F&& f) {
  for (int64_t i = 0; i < batch.count; ++i) {
    const blis_batch_entry& e = blis::sdk::entry_at(batch, i);
    if (e.new_tokens > 0) f(e);
  }
}


// Calls f(entry) for every member listed in a blis_decode_batch's `others`
// (every member but the plain decodes), in batch order.
template <class F>
void for_each_other(const blis_decode_batch& b, F&& f) {
  for (int64_t i = 0; i < b.others_count; ++i)
    f(*reinterpret_cast<const blis_batch_entry*>(reinterpret_cast<const char*>(b.others) +
                                                 static_cast<size_t>(i) * b.entry_size));
}

// Sums of integers stay exact in doubles, whatever their order, below 2^53.
inline constexpr double kExactSum = 9007199254740992.0;  // 2^53

// What the trained models (trained-roofline, trained-physics) price a step
// from: prefill tokens, decode members, the decodes' context (progress) and
// the prefill chunks' attention work (the whole prompt is a chunk's context).
struct TrainedSums {
  double t_pf = 0, t_dc = 0, ctx_sum = 0, attn = 0;

  void add(const blis_batch_entry& e, double heads_per_gpu, double d_h) {
    if (e.phase == BLIS_PHASE_PREFILL) {
      const double t = static_cast<double>(e.new_tokens);
      const double s = static_cast<double>(e.input_tokens);
      t_pf += t;
      attn += 4 * heads_per_gpu * t * (s + t / 2) * d_h;
    } else {
      t_dc += 1;
      ctx_sum += static_cast<double>(e.progress);
    }
  }

  // Adds a blis_decode_batch's plain decodes by their number and progress
  // sum; false when the decode sums would no longer be exact in doubles.
  bool add_plain_decodes(const blis_decode_batch& b) {
    if (b.progress_sum > (int64_t{1} << 53)) return false;
    t_dc += static_cast<double>(b.count);
    ctx_sum += static_cast<double>(b.progress_sum);
    return ctx_sum <= kExactSum && t_dc <= kExactSum;
  }
};

// The alpha terms of the blackbox, roofline and crossmodel models (spec
// engine §5.2): queueing trunc(α0 + α1·I), per-token output time trunc(α2).
class LinearAlpha {
 public:
  explicit LinearAlpha(std::vector<double> alpha) : alpha_(std::move(alpha)) {}
  double queueing_time(const blis_request_view& r) const {
    double t = 0;
    t += alpha_[0];
    t += alpha_[1] * static_cast<double>(r.input_tokens);
    return trunc_ticks(t);
  }
  double output_token_time() const { return trunc_ticks(alpha_[2]); }
  double post_decode_overhead() const { return 0; }

 private:
  std::vector<double> alpha_;
};

// The attention shape every analytical model reads: TP, layers, hidden size,
// heads and KV heads (0 or absent means one KV head per attention head).
struct AttentionShape {
  int64_t tp = 0, layers = 0, hidden = 0, heads = 0, kv_heads = 0;

  static AttentionShape read(const blis::sdk::Context& ctx) {
    AttentionShape a;
    a.tp = positive_int(ctx, BLIS_KEY_TP);
    a.layers = positive_int(ctx, BLIS_KEY_MODEL_NUM_LAYERS);
    a.hidden = positive_int(ctx, BLIS_KEY_MODEL_HIDDEN_SIZE);
    a.heads = positive_int(ctx, BLIS_KEY_MODEL_NUM_HEADS);
    a.kv_heads = ctx.i64_or(BLIS_KEY_MODEL_NUM_KV_HEADS, 0);
    if (a.kv_heads < 0)
      throw blis::sdk::ConfigError("model.num_kv_heads must be >= 0, got " + show(a.kv_heads));
    if (a.kv_heads == 0) a.kv_heads = a.heads;
    return a;
  }
};

// New tokens of a step by phase: P and D of spec engine §5.2/§5.4.
struct TokenCounts {
  int64_t prefill = 0, decode = 0;
};
inline TokenCounts token_counts(const blis_step_batch& batch) {
  TokenCounts c;
  for_each_scheduled(batch, [&](const blis_batch_entry& e) {
    (e.phase == BLIS_PHASE_PREFILL ? c.prefill : c.decode) += e.new_tokens;
  });
  return c;
}

// The same counts for a batch whose plain decodes come as aggregates: each
// plain decode is one decode token.
inline TokenCounts token_counts(const blis_decode_batch& b) {
  TokenCounts c;
  for_each_other(b, [&](const blis_batch_entry& e) {
    if (e.new_tokens > 0) (e.phase == BLIS_PHASE_PREFILL ? c.prefill : c.decode) += e.new_tokens;
  });
  c.decode += b.count;
  return c;
}

// Base of the models whose alpha terms are LinearAlpha's.
class WithLinearAlpha {
 public:
  explicit WithLinearAlpha(std::vector<double> alpha) : alpha_(std::move(alpha)) {}
  double queueing_time(const blis_request_view& r) const { return alpha_.queueing_time(r); }
  double output_token_time() const { return alpha_.output_token_time(); }
  double post_decode_overhead() const { return alpha_.post_decode_overhead(); }

 protected:
  LinearAlpha alpha_;
};

}  // namespace blis::latency_common
