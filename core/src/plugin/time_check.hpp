// The one check of the times a latency model returns (step, queueing, output
// token and post-decode times), shared by the shared-library and the Lua
// adapters so both refuse the same values with the same words.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace blis {

// Above this a time is taken as a bug in the model (about 11.6 days).
constexpr double kAbsurdMicros = 1e12;

// NaN, infinities, negative and absurd times are refused.
inline bool valid_time(double us) { return std::isfinite(us) && us >= 0 && us <= kAbsurdMicros; }

// "returned nan µs for request_3; expected a finite time between 0 and 1e+12 µs".
inline std::string bad_time_text(double us, std::string_view context) {
  return fmt::format("returned {} µs{}; expected a finite time between 0 and {:.0e} µs", us, context,
                     kAbsurdMicros);
}

// The time in whole microseconds (truncated toward zero), or `fail(text)`,
// which must throw. `context` is only called for a bad value, so the hot
// path pays nothing for describing the call.
template <class Context, class Fail>
int64_t checked_time(double us, Context&& context, Fail&& fail) {
  if (!valid_time(us)) fail(bad_time_text(us, context()));
  return static_cast<int64_t>(us);
}

}  // namespace blis
