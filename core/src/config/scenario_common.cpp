#include "config/scenario_common.hpp"
#include "util/compact_text.hpp"
#include "util/text.hpp"
#include "util/json_format.hpp"

#include <blis/scenario.hpp>
#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace blis {

std::string flag_of_key(const std::string& key) {
  std::string f = key;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::string key_of_flag(const std::string& flag) {
  std::string k = flag;
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

std::optional<double> setting_number(const std::string& value) {
  double v = 0;
  const auto res = std::from_chars(value.data(), value.data() + value.size(), v);
  if (res.ec != std::errc() || res.ptr != value.data() + value.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

namespace scenario {

bool is_group(const std::string& key) {
  const auto& groups = setting_groups();
  return std::find(groups.begin(), groups.end(), flag_of_key(key)) != groups.end();
}

std::string group_names() {
  std::string out;
  for (const auto& g : setting_groups()) text::append(out, ", ", g);
  return out;
}

std::string number_text(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9007199254740992.0)
    return std::to_string(static_cast<int64_t>(v));
  return go_float(v);
}

void check_sweep_size(double count, const std::string& how, const std::string& where) {
  if (count <= static_cast<double>(kMaxSweepConfigurations)) return;
  throw ConfigError(where, fmt::format("the sweep has {} configurations{}, more than the {} a sweep may hold; "
                                       "sweep fewer values, or split it into several scenario files",
                                       count < 1e15 ? fmt::format("{:.0f}", count) : fmt::format("{:.3g}", count), how,
                                       kMaxSweepConfigurations));
}

std::vector<Settings> product(const std::vector<Settings>& axes, const std::string& where) {
  double count = 1;
  std::string how;
  for (const Settings& axis : axes) {
    count *= static_cast<double>(axis.size());
    text::append(how, " x ", std::to_string(axis.size()));
  }
  check_sweep_size(count, axes.size() > 1 ? " (" + how + ")" : "", where);
  std::vector<Settings> points{Settings{}};
  for (const Settings& axis : axes) {
    std::vector<Settings> next;
    for (const Settings& p : points)
      for (const Setting& value : axis) {
        next.push_back(p);
        next.back().push_back(value);
      }
    points = std::move(next);
  }
  return points;
}

std::string record_text(std::vector<std::pair<std::string, std::string>> fields) {
  auto rank = [](const std::string& k) { return k == "at" || k == "when" || k == "name" ? 0 : k == "action" ? 1 : 2; };
  std::stable_sort(fields.begin(), fields.end(), [&](const auto& a, const auto& b) {
    return rank(a.first) != rank(b.first) ? rank(a.first) < rank(b.first) : a.first < b.first;
  });
  return compact::write(fields, compact::kSpaced);
}

}  // namespace scenario
}  // namespace blis
