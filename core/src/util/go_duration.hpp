// Durations as Go's time.ParseDuration reads them ("1m30s", "1.5h", "250µs",
// "-2ms", "0"), to the nanosecond, with Go's rules: an optional sign, then one
// or more NUMBER UNIT terms (units ns, us, µs, μs, ms, s, m, h; a number may
// have a fraction, never an exponent), summed; "0" alone needs no unit; a
// total beyond ±2^63 ns is refused. The fraction of a term is scaled in
// double precision and truncated, as Go does, so every duration BLIS HEAD
// accepts reads to the same nanoseconds here. The one reader of durations
// written with units (settings, SLO targets).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace blis {

// The nanoseconds of `text`, nullopt when Go would refuse it.
std::optional<int64_t> go_duration_ns(std::string_view text);

}  // namespace blis
