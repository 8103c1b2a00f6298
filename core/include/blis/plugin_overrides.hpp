// Configuration the user gives to one plugin by name (`--plugin-config
// NAME.KEY=VALUE`, or a scenario's table through set()), merged over the
// configuration the host builds for that plugin's create().
#pragma once

#include <blis/config_table.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace blis {

// Types a value written on a command line like a TOML scalar: an integer, a
// float in decimal notation, true or false, a quoted string ("..." or '...',
// quotes removed), a list of numbers ("1,2,3" or "[1, 2, 3]") as an array;
// anything else (nan and inf included) is a bare string. An empty value, a list item that is
// not a number or an integer out of range is an InputError naming `where`.
ConfigValue parse_config_value(const std::string& text, const std::string& where);

// "KEY=VALUE" with the value typed as above; InputError naming `flag` if
// there is no '=' or no key.
std::pair<std::string, ConfigValue> parse_key_value(const std::string& text,
                                                    const std::string& flag);

class PluginOverrides {
 public:
  // Adds one key for `plugin`, replacing an earlier value of the same key.
  // `origin` says where it was given ("--plugin-config x.k=1", "run.toml").
  void set(const std::string& plugin, const std::string& key, ConfigValue value,
           const std::string& origin);
  bool empty() const { return plugins_.empty(); }
  // Every plugin's keys and values, by plugin name then key.
  std::map<std::string, std::map<std::string, ConfigValue>> values() const {
    std::map<std::string, std::map<std::string, ConfigValue>> out;
    for (const auto& [plugin, keys] : plugins_)
      for (const auto& [key, entry] : keys) out[plugin][key] = entry.value;
    return out;
  }

  // Every plugin named must be one the run uses: a key for a plugin that
  // never gets created would be silently ignored. InputError naming it.
  void check_plugins(const std::vector<std::string>& used) const;

  // `base` with the keys given for `plugin` written over it.
  ConfigTable config_for(const std::string& plugin, const ConfigTable& base) const;

  // Warns (log) about keys given for `plugin` that its object never read,
  // which is usually a misspelt key. Call after create().
  void warn_unread(const std::string& plugin, const ConfigTable& config) const;

 private:
  struct Entry {
    ConfigValue value;
    std::string origin;
  };
  std::map<std::string, std::map<std::string, Entry>> plugins_;  // plugin -> key -> entry
};

// Parses `--plugin-config` entries, each "NAME.KEY=VALUE". NAME ends at the
// first '.', except that a Lua script's name keeps its ".lua"
// ("scripts/guard.lua.max_tokens=10"); KEY may contain further dots.
PluginOverrides parse_plugin_overrides(const std::vector<std::string>& entries);

}  // namespace blis
