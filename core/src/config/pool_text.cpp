#include "config/pool_text.hpp"

#include "config/fleet_records.hpp"
#include "util/compact_text.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

namespace blis::config {
namespace {

// The settings a pool may set for its own instances.
bool per_pool(const SettingDef& def) {
  return def.group == "model" || def.group == "latency" || def.group == "kv-cache" || def.group == "batching";
}

}  // namespace

bool is_pool_lifecycle_key(const std::string& key) {
  return key == "min" || key == "max" || key == "provisioning_delay" || key == "provisioning_stddev" ||
         key == "loading_delay" || key == "loading_stddev" || key == "warm_start" || key == "warm_up_request_count" ||
         key == "warm_up_ttft_factor";
}

bool is_pool_key(const std::string& key) {
  if (key == "name" || key == "count" || key == "cost_per_hour" || key == "role" || is_pool_lifecycle_key(key))
    return true;
  const SettingDef* def = find_setting(key);
  return def != nullptr && per_pool(*def);
}

std::string not_a_pool_key(const std::string& key) {
  return fmt::format("'{}' is not a pool key: name, count, cost_per_hour, role, a lifecycle key (min, max, "
                     "provisioning_delay, loading_delay, ...), or a model, latency, KV-cache or batching setting",
                     key);
}

PoolSpec read_pool_text(const std::string& text, const RecordPlace& place) {
  const std::string& where = place.where;
  std::string key;  // the field being read, for the place of a message about it
  auto bad = [&](const std::string& what) {
    return InputError(place.of(key), fmt::format("pool '{}': {}", text, what));
  };
  PoolSpec p;
  p.count = -1;                                      // not given yet
  std::vector<std::array<std::string, 3>> settings;  // its key, value, and the key as written
  for (const auto& [k, value, piece] : compact::pairs(text, compact::kSpaced, where, fmt::format("pool '{}': ", text))) {
    key = k;
    if (key == "name") {
      p.name = value;
    } else if (key == "count") {
      int64_t n = 0;
      auto r = std::from_chars(value.data(), value.data() + value.size(), n);
      if (r.ec != std::errc() || r.ptr != value.data() + value.size() || n < 1 || n > 100000)
        throw bad(fmt::format("count={} is not an instance count in [1, 100000]", value));
      p.count = n;
    } else if (key == "cost_per_hour") {
      double d = 0;
      auto r = std::from_chars(value.data(), value.data() + value.size(), d);
      if (r.ec != std::errc() || r.ptr != value.data() + value.size() || !std::isfinite(d) || d < 0)
        throw bad(fmt::format("cost_per_hour={} is not a finite number >= 0 ($ per instance-hour)", value));
      p.cost_per_hour = d;
    } else if (key == "role") {
      if (value != "prefill" && value != "decode" && value != "mixed" && value != "encode")
        throw bad(fmt::format("role={} is not a P/D role: prefill, decode or mixed (both); or encode (E/P/D)", value));
      p.role = value;
    } else if (is_pool_lifecycle_key(key)) {
      p.lifecycle_text += (p.lifecycle_text.empty() ? "" : " ") + piece;
    } else {
      const SettingDef* def = find_setting(key);
      if (def == nullptr || !per_pool(*def)) throw bad(not_a_pool_key(key));
      settings.push_back({def->key, value, key});
    }
  }
  key.clear();
  if (p.name.empty()) throw bad("needs name=NAME");
  if (p.count < 0) throw bad("needs count=N");
  // The origins name the pool, which is only known once the whole text is read.
  if (!p.lifecycle_text.empty()) {
    RecordPlace own = place;
    own.where = fmt::format("{}: pool {}", place.where, p.name);
    p.lifecycle = parse_lifecycle(p.lifecycle_text, own);
  }
  for (auto& [k, value, written] : settings)
    p.settings.push_back(Setting{k, value, fmt::format("{}: pool {}: {}", place.of(written), p.name, k), {}});
  return p;
}

}  // namespace blis::config
