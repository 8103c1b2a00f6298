// HEAD's think-time distribution of closed-loop users (blis observe
// --think-time-dist): its grammar and its draw.
#pragma once

#include <blis/go_rand.hpp>
#include <blis/workload.hpp>

#include <string>

namespace blis::workload {

// "lognormal:mu=M,sigma=S[,min=T][,max=T]" (mu and sigma in log-space of
// seconds) or "constant:value=T"; T is a time with us, ms or s (bare: ms).
// InputError naming `where` for anything else: an unknown type, a missing,
// duplicate or malformed parameter, sigma <= 0, min > max.
ThinkTimeDist parse_think_time_dist(const std::string& text, const std::string& where);

// One think time (µs, >= 1), as HEAD draws it: one normal from `rng` for a
// lognormal, nothing for a constant.
int64_t sample_think_time(const ThinkTimeDist& d, GoRand& rng);

}  // namespace blis::workload
