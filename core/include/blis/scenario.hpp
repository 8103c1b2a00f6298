// Scenario files: the settings of a `blis run` written down as a TOML or Lua
// file, optionally with a sweep (several configurations) or, in Lua, a search
// that runs configurations and picks the next from their metrics. The user
// guide is docs/scenarios.md.
//
// The core only reads files into settings (flag name + command-line text);
// the command line (core/app) checks the names and values against its flags.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace blis {

// One setting: a `blis run` flag without its dashes, in kebab-case, and its
// value as it would be written on the command line.
struct Setting {
  std::string flag;   // "num-instances"
  std::string value;  // "8"
  std::string where;  // "file:line:col" (TOML), the file (Lua) or the flag (command line)
  std::vector<std::string> items{};  // the items, when the value was written as a list
  // A record written as a table: each field's own place ("file:line:col"), by key.
  std::vector<std::pair<std::string, std::string>> field_where{};
};
using Settings = std::vector<Setting>;

// Flag name of a scenario key: '_' becomes '-' ("num_instances" -> "num-instances").
std::string flag_of_key(const std::string& key);
// Key of a flag in rows and in Lua tables: '-' becomes '_'.
std::string key_of_flag(const std::string& flag);

// A setting's value as a number, when the whole text reads as a finite one.
std::optional<double> setting_number(const std::string& value);

// Named numbers: the metrics of one configuration.
using NamedValues = std::vector<std::pair<std::string, double>>;

struct Scenario {
  std::string path;
  Settings base;                // applied to every configuration
  std::vector<Settings> sweep;  // each configuration's own settings; empty = base alone
};

// Reads a TOML scenario (see docs/scenarios.md). Throws ConfigError with
// file:line:col on syntax errors, unknown sections and ill-typed values.
Scenario load_toml_scenario(const std::string& path);

// What a search asks of its host: simulate configurations (base settings plus
// each point) and return their metrics, in order.
class ScenarioRunner {
 public:
  virtual ~ScenarioRunner() = default;
  virtual std::vector<NamedValues> run(const std::vector<Settings>& points) = 0;
};

// A Lua scenario script, run once at load in a sandbox (no io, os, require;
// math.random seeded from `seed`). It returns a table of settings, which may
// hold `sweep` (a list of setting tables, or a table of lists whose product is
// swept) or `search`, a function(sim) run by search().
class LuaScenario {
 public:
  // Throws ScriptError (file:line and traceback) if the script fails, and
  // ScriptError naming the key if the returned table is malformed.
  LuaScenario(const std::string& path, int64_t seed);
  ~LuaScenario();
  LuaScenario(const LuaScenario&) = delete;
  LuaScenario& operator=(const LuaScenario&) = delete;

  const Scenario& scenario() const;
  bool has_search() const;
  // Whether the top level registered callbacks with at() or every(): each
  // run of the scenario then runs the script again for them
  // (RunConfig::event_script, make_lua_scenario_code).
  bool has_code() const;
  // Calls the script's search(sim). sim.run{...} and sim.run_all{{...}, ...}
  // go to `runner`. Returns the JSON object text of what search returned
  // ("" for nil). Errors thrown by the runner propagate unchanged.
  std::string search(ScenarioRunner& runner);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace blis
