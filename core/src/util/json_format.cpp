#include "util/json_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace blis {

std::string go_float(double x) {
  char buf[64];
  const double a = std::fabs(x);
  const bool plain = a == 0 || (a >= 1e-6 && a < 1e21);
  auto res = std::to_chars(buf, buf + sizeof buf, x,
                           plain ? std::chars_format::fixed : std::chars_format::scientific);
  std::string s(buf, res.ptr);
  if (!plain) {
    // "1e-07" -> "1e-7", "1e+21" stays "1e+21".
    auto e = s.find('e');
    if (e != std::string::npos && e + 2 < s.size() && s[e + 2] == '0' && e + 3 < s.size())
      s.erase(e + 2, 1);
  }
  return s;
}

std::string go_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace blis
