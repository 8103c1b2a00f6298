// Number and string formatting identical to Go's encoding/json, so reports
// match the reference byte for byte.
#pragma once

#include <string>

namespace blis {

// Shortest round-trip decimal; plain notation for 1e-6 <= |x| < 1e21 (and 0),
// otherwise exponent form without a leading zero in the exponent.
std::string go_float(double x);
// A JSON string literal with <, >, & escaped as \u003c, \u003e, \u0026.
std::string go_string(const std::string& s);

}  // namespace blis
