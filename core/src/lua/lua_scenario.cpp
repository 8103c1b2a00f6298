// Lua scenario scripts (docs/scenarios.md): the table a script returns becomes
// settings, a sweep or a search; a search calls back into the host through
// sim.run / sim.run_all. Runs once at setup, never in the simulation's hot path.
#include <blis/errors.hpp>
#include <blis/lua.hpp>
#include <blis/scenario.hpp>
#include <blis/settings.hpp>

#include "config/scenario_common.hpp"
#include "util/text.hpp"
#include "lua/lua_host.hpp"
#include "lua/lua_scenario_api.hpp"
#include "util/json_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>

namespace blis {
namespace {

constexpr int kMaxDepth = 16;

// A search's budget (docs/lua.md "Bounds"): the simulations it may run, set
// by the scenario's `search_simulations` up to a ceiling. Its own Lua is
// held to the scenario limits, but a loop of sim.run calls spends almost
// none of them, so without this an endless search would never end.
constexpr const char* kSearchSimulations = "search-simulations";
constexpr int64_t kDefaultSearchSimulations = 1000;
constexpr double kMaxSearchSimulations = 1'000'000;

// Lua 5.1 (LuaJIT) has no lua_absindex.
int lua_absindex(lua_State* L, int idx) {
  return idx > 0 || idx <= LUA_REGISTRYINDEX ? idx : lua_gettop(L) + idx + 1;
}

// The string keys of the table at `idx`, sorted so that iteration order (which
// Lua leaves unspecified) never reaches the output. Non-string keys are
// refused.
std::vector<std::string> sorted_keys(lua_State* L, int idx, const std::string& what) {
  idx = lua_absindex(L, idx);
  std::vector<std::string> keys;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      lua_pop(L, 2);
      throw ScriptError(fmt::format("{}: keys must be names (strings)", what));
    }
    keys.emplace_back(lua::lua_text(L, -2));
    lua_pop(L, 1);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Number of entries of a table (array part and hash part alike).
size_t entry_count(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    ++n;
    lua_pop(L, 1);
  }
  return n;
}

// A table whose keys are exactly 1..n, n >= 1.
bool is_list(lua_State* L, int idx) {
  const size_t n = lua_objlen(L, idx);
  return n > 0 && entry_count(L, idx) == n;
}

std::optional<std::string> scalar_text(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER: return scenario::number_text(lua_tonumber(L, idx));
    case LUA_TSTRING: return lua::lua_text(L, idx);
    case LUA_TBOOLEAN: return std::string(lua_toboolean(L, idx) ? "true" : "false");
    default: return std::nullopt;
  }
}

class TableReader {
 public:
  explicit TableReader(std::string path) : path_(std::move(path)) {}

  // The value at `idx` as command-line text: a scalar or a list of scalars.
  std::string value_text(lua_State* L, int idx, const std::string& key) const {
    if (auto t = scalar_text(L, idx)) return *t;
    if (lua_type(L, idx) == LUA_TTABLE && is_list(L, idx)) {
      std::string out;
      const size_t n = lua_objlen(L, idx);
      for (size_t i = 1; i <= n; ++i) {
        lua_rawgeti(L, idx, static_cast<int>(i));
        auto t = scalar_text(L, -1);
        lua_pop(L, 1);
        if (!t) throw error(key, "list items must be strings, numbers or booleans");
        text::append(out, ",", *t);
      }
      return out;
    }
    throw error(key, fmt::format("must be a string, number, boolean or list, not a {} (grouping "
                                 "tables are {})",
                                 luaL_typename(L, idx), scenario::group_names()));
  }

  // Reads the settings of the table at `idx` into `out`. At the top level
  // `sweep`, `search` and `search_simulations` are handed to the callbacks.
  template <typename OnSpecial>
  void settings(lua_State* L, int idx, Settings& out, bool top, OnSpecial&& special) const {
    idx = lua_absindex(L, idx);
    for (const std::string& key : sorted_keys(L, idx, path_)) {
      const std::string flag = flag_of_key(key);
      lua_getfield(L, idx, key.c_str());
      const int v = lua_gettop(L);
      if (top && (flag == scenario::kSweep || flag == scenario::kSearch || flag == kSearchSimulations)) {
        special(flag, v);
      } else if (flag == scenario::kPluginConfig) {
        plugin_config(L, v, out);
      } else if (is_record(key) && lua_type(L, v) == LUA_TTABLE && is_list(L, v)) {
        table_list(L, v, flag, out);
      } else if (is_record(key) && lua_type(L, v) == LUA_TTABLE) {
        out.push_back(Setting{flag, record_text(L, v, flag), path_, {}});
      } else if (lua_type(L, v) == LUA_TTABLE && !is_list(L, v) && scenario::is_group(key)) {
        settings(L, v, out, false, special);
      } else {
        out.push_back(make_setting(L, v, key, path_));
      }
      lua_settop(L, v - 1);
    }
  }

  Settings settings_only(lua_State* L, int idx, const std::string& what) const {
    Settings out;
    if (lua_isnil(L, idx)) return out;
    if (lua_type(L, idx) != LUA_TTABLE)
      throw error(what, fmt::format("must be a table of settings, not a {}", luaL_typename(L, idx)));
    settings(L, idx, out, false, [&](const std::string&, int) {});
    return out;
  }

  // sweep = { {...}, {...} } (configurations) or { key = {values}, ... } (product).
  std::vector<Settings> sweep(lua_State* L, int idx) const {
    if (lua_type(L, idx) != LUA_TTABLE) throw error("sweep", "must be a table");
    std::vector<Settings> points;
    if (is_list(L, idx)) {
      const size_t n = lua_objlen(L, idx);
      scenario::check_sweep_size(static_cast<double>(n), "", path_ + ": sweep");
      for (size_t i = 1; i <= n; ++i) {
        lua_rawgeti(L, idx, static_cast<int>(i));
        points.push_back(settings_only(L, lua_gettop(L), fmt::format("sweep[{}]", i)));
        lua_pop(L, 1);
      }
      return points;
    }
    std::vector<Settings> axes;
    for (const std::string& key : sorted_keys(L, idx, path_ + ": sweep")) {
      lua_getfield(L, idx, key.c_str());
      const int v = lua_gettop(L);
      if (lua_type(L, v) != LUA_TTABLE || !is_list(L, v))
        throw error("sweep." + key, "must be a non-empty list of values");
      Settings& axis = axes.emplace_back();
      const size_t n = lua_objlen(L, v);
      for (size_t i = 1; i <= n; ++i) {
        lua_rawgeti(L, v, static_cast<int>(i));
        axis.push_back(make_setting(L, lua_gettop(L), key, path_ + ": sweep"));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    return scenario::product(axes, path_ + ": sweep");
  }

  // The setting `key` = the value at `idx`; a list keeps its items apart.
  Setting make_setting(lua_State* L, int idx, const std::string& key, const std::string& where) const {
    Setting s{flag_of_key(key), value_text(L, idx, key), where};
    if (lua_type(L, idx) == LUA_TTABLE) {
      const size_t n = lua_objlen(L, idx);
      for (size_t i = 1; i <= n; ++i) {
        lua_rawgeti(L, idx, static_cast<int>(i));
        s.items.push_back(*scalar_text(L, -1));
        lua_pop(L, 1);
      }
    }
    return s;
  }

  ScriptError error(const std::string& key, const std::string& what) const {
    return ScriptError(fmt::format("{}: {} {}", path_, key, what));
  }

 private:
  // plugin_config = { ["name"] = { key = value } } -> --plugin-config name.key=value
  void plugin_config(lua_State* L, int idx, Settings& out) const {
    if (lua_type(L, idx) != LUA_TTABLE) throw error("plugin_config", "must be a table of tables");
    for (const std::string& name : sorted_keys(L, idx, path_ + ": plugin_config")) {
      lua_getfield(L, idx, name.c_str());
      const int t = lua_gettop(L);
      if (lua_type(L, t) != LUA_TTABLE)
        throw error("plugin_config." + name, "must be a table of the plugin's keys");
      for (const std::string& key : sorted_keys(L, t, path_ + ": plugin_config." + name)) {
        lua_getfield(L, t, key.c_str());
        out.push_back(Setting{scenario::kPluginConfig,
                              fmt::format("{}.{}={}", name, key, value_text(L, lua_gettop(L), key)),
                              path_ + ": plugin_config." + name});
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
  }

  // A record setting (kRecord: pools, events, lifecycle, ...)?
  static bool is_record(const std::string& key) {
    const SettingDef* def = find_setting(key);
    return def != nullptr && def->has(kRecord);
  }

  // The record written as the table at `idx` ({min = 1, max = 8}) as its
  // compact text, values quoted as needed so that each reads back as written.
  std::string record_text(lua_State* L, int idx, const std::string& what) const {
    std::vector<std::pair<std::string, std::string>> fields;
    for (const std::string& key : sorted_keys(L, idx, path_ + ": " + what)) {
      lua_getfield(L, idx, key.c_str());  // +1: the field's value
      auto t = scalar_text(L, -1);
      lua_pop(L, 1);  // -1
      if (!t) throw error(what + "." + key, "must be a string, number or boolean");
      fields.emplace_back(key, *t);
    }
    return scenario::record_text(std::move(fields));
  }

  // events = { {at = "30s", action = "fail", instance = 2}, "at=40s action=restore instance=2" }
  // pools = { {name = "a100", count = 2, hardware = "A100-80"} } likewise.
  void table_list(lua_State* L, int idx, const std::string& flag, Settings& out) const {
    const size_t n = lua_objlen(L, idx);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, idx, static_cast<int>(i));  // +1: events[i]
      const int e = lua_gettop(L);
      std::string text;
      if (auto t = scalar_text(L, e)) {
        text = *t;
      } else if (lua_type(L, e) == LUA_TTABLE) {
        text = record_text(L, e, fmt::format("{}[{}]", flag, i));
      } else {
        throw error(fmt::format("{}[{}]", flag, i), "must be a table or a string");
      }
      lua_pop(L, 1);  // -1: events[i]
      out.push_back(Setting{flag, text, path_, {text}});
    }
  }

  std::string path_;
};

// A setting's value as a Lua value: a number when it reads as one.
void push_setting_value(lua_State* L, const std::string& text) {
  if (auto v = setting_number(text)) lua_pushnumber(L, *v);
  else lua_pushlstring(L, text.data(), text.size());
}

// JSON text of a Lua value (a search's result): tables with name keys become
// objects (sorted keys), lists become arrays.
void append_json(lua_State* L, int idx, std::string& out, const std::string& where, int depth) {
  idx = lua_absindex(L, idx);
  if (depth > kMaxDepth) throw ScriptError(where + ": the result is nested too deeply (or has a cycle)");
  switch (lua_type(L, idx)) {
    case LUA_TNIL: out += "null"; return;
    case LUA_TBOOLEAN: out += lua_toboolean(L, idx) ? "true" : "false"; return;
    case LUA_TNUMBER: {
      const double v = lua_tonumber(L, idx);
      if (!std::isfinite(v)) throw ScriptError(where + ": the result holds a NaN or infinite number");
      out += scenario::number_text(v);
      return;
    }
    case LUA_TSTRING: out += go_string(lua::lua_text(L, idx)); return;
    case LUA_TTABLE: {
      if (is_list(L, idx)) {
        out += "[";
        const size_t n = lua_objlen(L, idx);
        for (size_t i = 1; i <= n; ++i) {
          lua_rawgeti(L, idx, static_cast<int>(i));
          if (i > 1) out += ", ";
          append_json(L, -1, out, where, depth + 1);
          lua_pop(L, 1);
        }
        out += "]";
        return;
      }
      out += "{";
      bool first = true;
      for (const std::string& key : sorted_keys(L, idx, where)) {
        lua_getfield(L, idx, key.c_str());
        out += (first ? "" : ", ") + go_string(key) + ": ";
        first = false;
        append_json(L, -1, out, where, depth + 1);
        lua_pop(L, 1);
      }
      out += "}";
      return;
    }
    default:
      throw ScriptError(fmt::format("{}: the result holds a {}, which has no JSON form", where,
                                    luaL_typename(L, idx)));
  }
}

}  // namespace

struct LuaScenario::Impl {
  LuaVm vm;
  int64_t max_simulations = kDefaultSearchSimulations;  // search_simulations
  int64_t simulations = 0;                              // run by the search so far
  lua::ScenarioApi api;  // at() and every() at the top level: the script has code
  std::unique_ptr<lua::ScriptInstance> script;
  Scenario scenario;
  int search_ref = LUA_NOREF;
  ScenarioRunner* runner = nullptr;
  std::exception_ptr pending;  // a runner failure, rethrown after the Lua stack unwinds

  explicit Impl(int64_t seed) : vm(seed) {}
  ~Impl() {
    if (search_ref != LUA_NOREF) luaL_unref(vm.state(), LUA_REGISTRYINDEX, search_ref);
  }

  // sim.run(settings) / sim.run_all({settings, ...}). Leaves the result or an
  // error message on the stack; returns whether it succeeded. No C++ object
  // with a destructor may be alive when the caller raises the Lua error.
  bool call_runner(lua_State* L, bool many) {
    try {
      TableReader reader(scenario.path);
      std::vector<Settings> points;
      if (many) {
        if (lua_type(L, 1) != LUA_TTABLE || (lua_objlen(L, 1) > 0 && !is_list(L, 1)))
          throw ScriptError("sim.run_all takes a list of setting tables");
        const size_t n = lua_objlen(L, 1);
        for (size_t i = 1; i <= n; ++i) {
          lua_rawgeti(L, 1, static_cast<int>(i));
          points.push_back(reader.settings_only(L, lua_gettop(L), fmt::format("sim.run_all item {}", i)));
          lua_pop(L, 1);
        }
      } else {
        points.push_back(reader.settings_only(L, 1, "sim.run argument"));
      }
      if (simulations + static_cast<int64_t>(points.size()) > max_simulations)
        throw ScriptError(fmt::format("the search would run more than {} simulations ({} so far, {} asked now); "
                                      "raise search_simulations in the scenario if it needs more",
                                      max_simulations, simulations, points.size()));
      simulations += static_cast<int64_t>(points.size());
      std::vector<NamedValues> results;
      {
        lua::CpuClockPause pause(lua::core_of(vm));  // the simulations are not the script's CPU time
        results = runner->run(points);
      }
      if (many) lua_createtable(L, static_cast<int>(results.size()), 0);
      for (size_t i = 0; i < results.size(); ++i) {
        lua_createtable(L, 0, static_cast<int>(results[i].size() + points[i].size()));
        for (const Setting& s : points[i]) {
          push_setting_value(L, s.value);
          lua_setfield(L, -2, key_of_flag(s.flag).c_str());
        }
        for (const auto& [name, value] : results[i]) {
          lua_pushnumber(L, value);
          lua_setfield(L, -2, name.c_str());
        }
        if (many) lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return true;
    } catch (const ScriptError& e) {
      lua_pushstring(L, e.what());
    } catch (...) {
      pending = std::current_exception();
      lua_pushstring(L, "a simulation of the search failed");
    }
    return false;
  }

  static int sim_call(lua_State* L) {
    auto* self = static_cast<Impl*>(lua_touserdata(L, lua_upvalueindex(1)));
    const bool many = lua_toboolean(L, lua_upvalueindex(2)) != 0;
    if (self->call_runner(L, many)) return 1;
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
    return lua_error(L);
  }
};

LuaScenario::LuaScenario(const std::string& path, int64_t seed)
    : impl_(std::make_unique<Impl>(seed)) {
  impl_->scenario.path = path;
  impl_->script = std::make_unique<lua::ScriptInstance>(impl_->vm, path, "scenario", lua::read_script(path),
                                                        lua::kScenarioInstructionLimit, lua::kScenarioCpuLimit,
                                                        [this](lua_State* L) { impl_->api.install(L); });
  lua_State* L = impl_->vm.state();
  const int ref = impl_->script->result_ref();
  if (ref == LUA_NOREF)
    throw ScriptError(path + ": a scenario script must end with `return { ... }`, a table of settings");
  const int base = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  try {
    if (lua_type(L, -1) != LUA_TTABLE)
      throw ScriptError(fmt::format("{}: a scenario script must return a table of settings, not a {}",
                                    path, luaL_typename(L, -1)));
    TableReader reader(path);
    reader.settings(L, -1, impl_->scenario.base, true, [&](const std::string& flag, int idx) {
      if (flag == scenario::kSweep) {
        impl_->scenario.sweep = reader.sweep(L, idx);
      } else if (flag == kSearchSimulations) {
        const double n = lua_type(L, idx) == LUA_TNUMBER ? lua_tonumber(L, idx) : 0;
        if (!(n >= 1 && n <= kMaxSearchSimulations) || n != std::floor(n))
          throw reader.error("search_simulations", fmt::format("must be a whole number from 1 to {}",
                                                               kMaxSearchSimulations));
        impl_->max_simulations = static_cast<int64_t>(n);
      } else {
        if (lua_type(L, idx) != LUA_TFUNCTION)
          throw reader.error("search", fmt::format("must be a function(sim), not a {}", luaL_typename(L, idx)));
        lua_pushvalue(L, idx);
        impl_->search_ref = luaL_ref(L, LUA_REGISTRYINDEX);
      }
    });
    if (impl_->search_ref != LUA_NOREF && !impl_->scenario.sweep.empty())
      throw ScriptError(path + ": a scenario has either a sweep or a search, not both");
  } catch (...) {
    lua_settop(L, base);
    throw;
  }
  lua_settop(L, base);
}

LuaScenario::~LuaScenario() = default;

const Scenario& LuaScenario::scenario() const { return impl_->scenario; }

bool LuaScenario::has_search() const { return impl_->search_ref != LUA_NOREF; }

bool LuaScenario::has_code() const { return impl_->api.registered() > 0; }

std::string LuaScenario::search(ScenarioRunner& runner) {
  lua_State* L = impl_->vm.state();
  impl_->runner = &runner;
  impl_->pending = nullptr;
  const int base = impl_->script->begin_call(impl_->search_ref);
  lua_createtable(L, 0, 2);
  for (const auto& [name, many] : {std::pair{"run", false}, std::pair{"run_all", true}}) {
    lua_pushlightuserdata(L, impl_.get());
    lua_pushboolean(L, many ? 1 : 0);
    lua_pushcclosure(L, &Impl::sim_call, 2);
    lua_setfield(L, -2, name);
  }
  try {
    impl_->script->end_call(base, 1, 1);
  } catch (const ScriptError&) {
    if (impl_->pending) std::rethrow_exception(std::exchange(impl_->pending, nullptr));
    throw;
  }
  std::string json;
  try {
    if (!lua_isnil(L, -1)) append_json(L, -1, json, impl_->scenario.path + ": search's result", 0);
  } catch (...) {
    lua_settop(L, base);
    throw;
  }
  lua_settop(L, base);
  return json;
}

}  // namespace blis
