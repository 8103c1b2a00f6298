#include "util/go_duration.hpp"

#include <array>
#include <tuple>
#include <utility>

namespace blis {
namespace {

constexpr uint64_t kLimit = uint64_t{1} << 63;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The digits at the front of `s`, consumed; nullopt past 2^63.
std::optional<uint64_t> leading_int(std::string_view& s) {
  uint64_t x = 0;
  size_t i = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    if (x > kLimit / 10) return std::nullopt;
    x = x * 10 + static_cast<uint64_t>(s[i] - '0');
    if (x > kLimit) return std::nullopt;
  }
  s.remove_prefix(i);
  return x;
}

// The digits of a fraction, consumed: their value and 10^(digits kept).
// Digits past what 63 bits hold are consumed and dropped.
std::pair<uint64_t, double> leading_fraction(std::string_view& s) {
  uint64_t x = 0;
  double scale = 1;
  bool full = false;
  size_t i = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    if (full) continue;
    const uint64_t y = x * 10 + static_cast<uint64_t>(s[i] - '0');
    if (x > (kLimit - 1) / 10 || y > kLimit) {
      full = true;
      continue;
    }
    x = y;
    scale *= 10;
  }
  s.remove_prefix(i);
  return {x, scale};
}

std::optional<uint64_t> unit_ns(std::string_view u) {
  static constexpr std::array<std::pair<std::string_view, uint64_t>, 8> kUnits{{
      {"ns", 1},
      {"us", 1000},
      {"\xc2\xb5s", 1000},  // U+00B5 micro sign
      {"\xce\xbcs", 1000},  // U+03BC Greek mu
      {"ms", 1000000},
      {"s", 1000000000},
      {"m", 60000000000},
      {"h", 3600000000000},
  }};
  for (const auto& [name, ns] : kUnits)
    if (name == u) return ns;
  return std::nullopt;
}

// One NUMBER UNIT term at the front of `s`, consumed, in ns.
std::optional<uint64_t> term(std::string_view& s) {
  if (s.empty() || !(s.front() == '.' || is_digit(s.front()))) return std::nullopt;
  const size_t before = s.size();
  auto v = leading_int(s);
  if (!v) return std::nullopt;
  const bool whole_digits = s.size() != before;
  uint64_t f = 0;
  double scale = 1;
  bool fraction_digits = false;
  if (!s.empty() && s.front() == '.') {
    s.remove_prefix(1);
    const size_t at = s.size();
    std::tie(f, scale) = leading_fraction(s);
    fraction_digits = s.size() != at;
  }
  if (!whole_digits && !fraction_digits) return std::nullopt;
  size_t i = 0;
  while (i < s.size() && s[i] != '.' && !is_digit(s[i])) ++i;
  const auto unit = unit_ns(s.substr(0, i));
  if (i == 0 || !unit) return std::nullopt;
  s.remove_prefix(i);
  if (*v > kLimit / *unit) return std::nullopt;
  uint64_t ns = *v * *unit;
  if (f > 0) {
    ns += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(*unit) / scale));
    if (ns > kLimit) return std::nullopt;
  }
  return ns;
}

}  // namespace

std::optional<int64_t> go_duration_ns(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  uint64_t total = 0;
  while (!s.empty()) {
    const auto ns = term(s);
    if (!ns) return std::nullopt;
    total += *ns;
    if (total > kLimit) return std::nullopt;
  }
  if (negative) return static_cast<int64_t>(~total + 1);  // -2^63 included
  if (total > kLimit - 1) return std::nullopt;
  return static_cast<int64_t>(total);
}

}  // namespace blis
