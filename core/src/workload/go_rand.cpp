// Go math/rand (v1) port: seeding and the floating-point draws
// (spec workload §7.1), plus the partitioned-seed helpers (§7.2).
#include "blis/go_rand.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "workload/go_rand_kernels.hpp"
#include "workload/go_rand_tables.hpp"

namespace blis {

namespace {

constexpr int32_t kInt32Max = 2147483647;  // 2^31 - 1, the seeding modulus

// One step of the Park-Miller "minimal standard" generator, Schrage's method,
// used only to fill the state at seeding time (spec workload §7.1).
int32_t seed_step(int32_t x) {
  constexpr int32_t kA = 48271, kQ = 44488, kR = 3399;
  const int32_t hi = x / kQ;
  const int32_t lo = x % kQ;
  x = kA * lo - kR * hi;
  if (x < 0) x += kInt32Max;
  return x;
}

constexpr double kNormR = 3.442619855899;      // start of the normal tail strip
constexpr double kExpR = 7.69711747013104972;  // start of the exponential tail strip

}  // namespace

int32_t GoRand::state_seed(int64_t seed) {
  seed %= kInt32Max;  // C++ % truncates like Go's
  if (seed < 0) seed += kInt32Max;
  if (seed == 0) seed = 89482311;
  return static_cast<int32_t>(seed);
}

GoRand::GoRand(int64_t seed_in) {
  // Go starts with tap = 0 and feed = kLen - kTap; its first draw updates
  // slot feed - 1 from slot tap - 1 (wrapped), i.e. slot p from p + kTap.
  pos_ = stop_ = kLen - kTap;
  const int32_t seed = state_seed(seed_in);
  int32_t x = seed;
  for (int i = -20; i < kLen; ++i) {
    x = seed_step(x);
    if (i < 0) continue;
    int64_t u = static_cast<int64_t>(x) << 40;
    x = seed_step(x);
    u ^= static_cast<int64_t>(x) << 20;
    x = seed_step(x);
    u ^= static_cast<int64_t>(x);
    vec_[i] = u ^ go_rand_tables::kRngCooked[i];
  }
}

void GoRand::refill() {
  // spec workload §7.1 core step, batched. Go's draw k (k = 1, 2, ...) sets
  // vec[f] += vec[t] with f = feed - k and t = tap - k (both mod kLen), so
  // t = f + kTap (mod kLen) always. Within a batch of at most kTap consecutive
  // slots no slot read is one written in the same batch (the tap slots lie
  // kTap or more above the batch, modulo kLen), so the batch can be updated
  // in any order and then handed out from the top down, exactly as Go would.
  if (stop_ == 0) stop_ = kLen;  // the feed index wraps from 0 to kLen - 1
  const int hi = stop_;
  const int lo = hi > kTap ? hi - kTap : 0;
  const int split = kLen - kTap;  // slots below it read slot + kTap; the rest wrap around
  const go_rand_kernels::AddFn add = go_rand_kernels::best().add;
  top_ = 0;
  if (lo < split) top_ = add(vec_ + lo, vec_ + lo + kTap, std::min(hi, split) - lo);
  const int top = std::max(lo, split);
  if (top < hi) top_ = std::max(top_, add(vec_ + top, vec_ + top - split, hi - top));
  pos_ = hi;
  stop_ = lo;
}

void GoRand::skip_int31n(int32_t n, int64_t count) {
  if (n <= 0) bad_bound(n);
  // int31n draws one value per result, and again while the value lies above
  // `max` (never for a power of two): consume values in order, slot by slot
  // of the register, until `count` of them were accepted. Each pass takes at
  // most `count` values, so it never consumes past the last accepted one.
  const bool pow2 = (n & (n - 1)) == 0;
  const int32_t max = pow2 ? 0x7fffffff : static_cast<int32_t>(0x7fffffffU - (0x80000000U % static_cast<uint32_t>(n)));
  const go_rand_kernels::CountAboveFn count_above = go_rand_kernels::best().count_above;
  while (count > 0) {
    if (pos_ == stop_) refill();
    const int take = static_cast<int>(std::min<int64_t>(count, pos_ - stop_));
    // A batch whose values all lie below max's top bits rejects none.
    const int rejected = pow2 || top_ < (max >> 16) ? 0 : count_above(vec_ + pos_ - take, take, max);
    pos_ -= take;
    count -= take - rejected;
  }
}

void GoRand::bad_bound(int64_t n) {
  throw std::invalid_argument("GoRand: bound must be positive, got " + std::to_string(n));
}

int64_t GoRand::int63n(int64_t n) {
  if (n <= 0) bad_bound(n);
  if ((n & (n - 1)) == 0) return int63() & (n - 1);
  const int64_t max = static_cast<int64_t>(0x7fffffffffffffffULL -
                                           (0x8000000000000000ULL % static_cast<uint64_t>(n)));
  int64_t v = int63();
  while (v > max) v = int63();
  return v % n;
}

double GoRand::float64() {
  // 2^63 is exact; the int64 -> double conversion rounds to nearest, so 1.0
  // is possible and is redrawn (Go's Float64).
  for (;;) {
    const double f = static_cast<double>(int63()) / 9223372036854775808.0;
    if (f != 1.0) return f;
  }
}

double GoRand::norm_float64() {
  using go_rand_tables::kFn;
  using go_rand_tables::kKn;
  using go_rand_tables::kWn;
  for (;;) {
    const int32_t j = static_cast<int32_t>(uint32());
    const int32_t i = j & 0x7f;
    double x = static_cast<double>(j) * static_cast<double>(kWn[i]);
    // |j| as uint32; negating in unsigned arithmetic maps -2^31 to 2^31.
    const uint32_t abs_j = j < 0 ? 0u - static_cast<uint32_t>(j) : static_cast<uint32_t>(j);
    if (abs_j < kKn[i]) return x;
    if (i == 0) {
      // Tail beyond kNormR (Marsaglia's method).
      for (;;) {
        x = -std::log(float64()) * (1.0 / kNormR);
        const double y = -std::log(float64());
        if (y + y >= x * x) break;
      }
      return j > 0 ? kNormR + x : -kNormR - x;
    }
    // Single-precision test, as in Go (float32 arithmetic and comparison).
    const float u = static_cast<float>(float64());
    if (kFn[i] + u * (kFn[i - 1] - kFn[i]) < static_cast<float>(std::exp(-0.5 * x * x))) return x;
  }
}

double GoRand::exp_float64() {
  using go_rand_tables::kFe;
  using go_rand_tables::kKe;
  using go_rand_tables::kWe;
  for (;;) {
    const uint32_t j = uint32();
    const uint32_t i = j & 0xff;
    const double x = static_cast<double>(j) * static_cast<double>(kWe[i]);
    if (j < kKe[i]) return x;
    if (i == 0) return kExpR - std::log(float64());
    const float u = static_cast<float>(float64());
    if (kFe[i] + u * (kFe[i - 1] - kFe[i]) < static_cast<float>(std::exp(-x))) return x;
  }
}

int64_t fnv1a64(std::string_view name) {
  // spec workload §7.2: offset basis and prime of 64-bit FNV-1a.
  uint64_t h = 14695981039346656037ULL;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<int64_t>(h);
}

int64_t derive_seed(int64_t seed, std::string_view name) {
  if (name == "workload") return seed;  // legacy name keeps the master seed (§7.2)
  return seed ^ fnv1a64(name);
}

}  // namespace blis
