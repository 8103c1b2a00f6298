// Small helpers for reading blis's own TOML data files strictly: every error
// names "file:line:col" so a user can find the offending key.
#pragma once

#include <blis/errors.hpp>

#include <toml++/toml.h>

#include "config/toml_input.hpp"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blis::toml_util {

inline std::string where(const std::string& path, const toml::source_region& src) {
  if (src.begin.line == 0) return path;
  return path + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

// Parses a whole file; syntax errors become ConfigError at their position.
inline toml::table parse_file(const std::string& path) { return config::parse_toml_file(path, "TOML file"); }

// Rejects any key of `t` not in `allowed` (the files are strict so that a typo
// cannot silently fall back to a default).
inline void check_keys(const std::string& path, const toml::table& t, std::string_view context,
                       std::initializer_list<std::string_view> allowed) {
  for (const auto& [k, v] : t) {
    bool ok = false;
    for (auto a : allowed) ok = ok || k.str() == a;
    if (!ok)
      throw ConfigError(where(path, k.source()),
                        "unknown key '" + std::string(k.str()) + "' in " + std::string(context));
  }
}

inline const toml::table& as_table(const std::string& path, const toml::node& n,
                                   const std::string& what) {
  if (const auto* t = n.as_table()) return *t;
  throw ConfigError(where(path, n.source()), what + " must be a table");
}

inline std::string get_string(const std::string& path, const toml::node& n,
                              const std::string& what) {
  if (const auto* s = n.as_string()) return s->get();
  throw ConfigError(where(path, n.source()), what + " must be a string");
}

inline int64_t get_int(const std::string& path, const toml::node& n, const std::string& what) {
  if (const auto* i = n.as_integer()) return i->get();
  throw ConfigError(where(path, n.source()), what + " must be an integer");
}

// Integers are accepted where numbers are expected (312 means 312.0).
inline double get_number(const std::string& path, const toml::node& n, const std::string& what) {
  if (const auto* f = n.as_floating_point()) return f->get();
  if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
  throw ConfigError(where(path, n.source()), what + " must be a number");
}

inline std::vector<double> get_numbers(const std::string& path, const toml::node& n,
                                       const std::string& what) {
  const auto* arr = n.as_array();
  if (arr == nullptr) throw ConfigError(where(path, n.source()), what + " must be an array of numbers");
  std::vector<double> out;
  out.reserve(arr->size());
  for (const auto& e : *arr) out.push_back(get_number(path, e, what + " element"));
  return out;
}

}  // namespace blis::toml_util
