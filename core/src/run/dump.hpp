// --dump-config: a resolved run written as a TOML scenario file that
// reproduces it (`blis run dumped.toml` prints the same metrics).
#pragma once

#include "run/resolve.hpp"

#include <string>

namespace blis {

std::string dump_toml(const ResolvedRun& run);

}  // namespace blis
