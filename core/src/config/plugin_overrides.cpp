#include <blis/errors.hpp>
#include <blis/plugin_overrides.hpp>

#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace blis {

namespace {

constexpr const char* kFlag = "--plugin-config";

bool all_digits(const std::string& s, size_t from) {
  return from < s.size() &&
         std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

// An optional sign and digits only; out of range is an error rather than a
// float, as in TOML.
std::optional<int64_t> as_integer(const std::string& s, const std::string& where) {
  const size_t digits_at = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (!all_digits(s, digits_at)) return std::nullopt;
  int64_t v = 0;
  const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw InputError(where, fmt::format("integer {} is out of range", s));
  return v;
}

// Decimal notation only: "nan" and "inf" stay strings (a mode named "nan" is
// likelier than a NaN parameter). from_chars takes no '+' and would take them.
std::optional<double> as_float(const std::string& s) {
  const size_t at = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (at >= s.size() || !(std::isdigit(static_cast<unsigned char>(s[at])) || s[at] == '.'))
    return std::nullopt;
  const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
  double v = 0;
  const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> as_number(const std::string& s, const std::string& where) {
  if (s.empty()) return std::nullopt;
  if (auto i = as_integer(s, where)) return static_cast<double>(*i);
  return as_float(s);
}

std::vector<double> as_list(const std::string& body, const std::string& where) {
  std::vector<double> out;
  if (text::trim(body).empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t comma = body.find(',', start);
    const std::string item = text::trim(body.substr(start, comma - start));
    auto v = as_number(item, where);
    if (!v)
      throw InputError(where, fmt::format("list item '{}' is not a number; lists hold numbers "
                                          "only (quote a string that contains a comma)",
                                          item));
    out.push_back(*v);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

ConfigValue parse_config_value(const std::string& text, const std::string& where) {
  const std::string t = text::trim(text);
  if (t.empty()) throw InputError(where, "no value; write \"\" for an empty string");
  if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front())
    return ConfigValue(std::in_place_type<std::string>, t.substr(1, t.size() - 2));
  if (t == "true" || t == "false") return ConfigValue(std::in_place_type<bool>, t == "true");
  if (auto i = as_integer(t, where)) return ConfigValue(std::in_place_type<int64_t>, *i);
  if (auto d = as_float(t)) return ConfigValue(std::in_place_type<double>, *d);
  if (t.front() == '[' && t.back() == ']')
    return ConfigValue(std::in_place_type<std::vector<double>>, as_list(t.substr(1, t.size() - 2), where));
  if (t.find(',') != std::string::npos)
    return ConfigValue(std::in_place_type<std::vector<double>>, as_list(t, where));
  return ConfigValue(std::in_place_type<std::string>, t);
}

std::pair<std::string, ConfigValue> parse_key_value(const std::string& text,
                                                    const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || text::trim(text.substr(0, eq)).empty())
    throw InputError(flag, fmt::format("expected KEY=VALUE, got '{}'", text));
  const std::string where = fmt::format("{} {}", flag, text);
  return {text::trim(text.substr(0, eq)), parse_config_value(text.substr(eq + 1), where)};
}

void PluginOverrides::set(const std::string& plugin, const std::string& key, ConfigValue value,
                          const std::string& origin) {
  plugins_[plugin][key] = Entry{std::move(value), origin};
}

void PluginOverrides::check_plugins(const std::vector<std::string>& used) const {
  for (const auto& [plugin, keys] : plugins_) {
    if (std::find(used.begin(), used.end(), plugin) != used.end()) continue;
    throw InputError(keys.begin()->second.origin,
                     fmt::format("'{}' is not a plugin of this run; its plugins are {}", plugin,
                                 fmt::join(used, ", ")));
  }
}

ConfigTable PluginOverrides::config_for(const std::string& plugin, const ConfigTable& base) const {
  ConfigTable out = base;
  if (auto it = plugins_.find(plugin); it != plugins_.end())
    for (const auto& [key, entry] : it->second) out.set(key, entry.value);
  return out;
}

void PluginOverrides::warn_unread(const std::string& plugin, const ConfigTable& config) const {
  auto it = plugins_.find(plugin);
  if (it == plugins_.end()) return;
  const std::vector<std::string> unread = config.unread_keys();
  for (const auto& [key, entry] : it->second)
    if (std::find(unread.begin(), unread.end(), key) != unread.end())
      spdlog::warn("{}: plugin '{}' never read the key '{}' (misspelt?)", entry.origin, plugin, key);
}

PluginOverrides parse_plugin_overrides(const std::vector<std::string>& entries) {
  PluginOverrides out;
  for (const auto& text : entries) {
    const std::string origin = fmt::format("{} {}", kFlag, text);
    const auto eq = text.find('=');
    const std::string target = text.substr(0, eq);
    // A script's name keeps its extension: the key starts after ".lua.".
    const auto script = target.find(".lua.");
    const auto dot = script != std::string::npos ? script + 4 : target.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot == 0 ||
        dot + 1 >= target.size())
      throw InputError(kFlag, fmt::format("expected NAME.KEY=VALUE (NAME a plugin of the run), "
                                          "got '{}'",
                                          text));
    out.set(target.substr(0, dot), target.substr(dot + 1),
            parse_config_value(text.substr(eq + 1), origin), origin);
  }
  return out;
}

}  // namespace blis
