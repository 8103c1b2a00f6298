// A typed key/value table: the configuration handed to a plugin object
// (exposed through the C ABI as the opaque blis_config). Keys are dotted
// strings ("model.hidden_size"); iteration is in key order.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace blis {

using ConfigValue = std::variant<int64_t, double, bool, std::string, std::vector<double>>;

class ConfigTable {
 public:
  void set(const std::string& key, ConfigValue value) { values_[key] = std::move(value); }
  const ConfigValue* find(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) return nullptr;
    read_.insert(key);
    return &it->second;
  }
  bool contains(const std::string& key) const { return values_.count(key) != 0; }
  const std::map<std::string, ConfigValue>& values() const { return values_; }
  // Keys set but never looked up (typos in --plugin-config, say).
  std::vector<std::string> unread_keys() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : values_)
      if (!read_.count(k)) out.push_back(k);
    return out;
  }
  // Copies every key of `other` under `prefix` (no prefix: as is), overwriting.
  void merge(const ConfigTable& other, const std::string& prefix = "") {
    for (const auto& [k, v] : other.values_) values_[prefix + k] = v;
  }

 private:
  std::map<std::string, ConfigValue> values_;
  mutable std::set<std::string> read_;
};

}  // namespace blis
