// One script in its own sandbox: loading, the seeded math.random, the pcall
// protocol with tracebacks, and kind detection.
#include <blis/errors.hpp>

#include "config/strict_yaml.hpp"
#include "lua/lua_host.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

namespace blis::lua {
namespace {

// Integers beyond this are not exact in a Lua number (a double).
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

// math.random with Lua's semantics over the script's GoRand stream:
// () -> [0, 1), (m) -> integer in [1, m], (m, n) -> integer in [m, n].
// Arguments are floored as LuaJIT's own math.random does.
int sandbox_random(lua_State* L) {
  auto* rand = static_cast<GoRand*>(lua_touserdata(L, lua_upvalueindex(1)));
  int nargs = lua_gettop(L);
  if (nargs == 0) {
    lua_pushnumber(L, rand->float64());
    return 1;
  }
  double lo = 1, hi = 0;
  if (nargs == 1) {
    hi = std::floor(luaL_checknumber(L, 1));
  } else if (nargs == 2) {
    lo = std::floor(luaL_checknumber(L, 1));
    hi = std::floor(luaL_checknumber(L, 2));
  } else {
    return luaL_error(L, "wrong number of arguments to 'random'");
  }
  if (!(lo <= hi)) return luaL_argerror(L, nargs, "interval is empty");
  if (std::fabs(lo) > kMaxExactInteger || std::fabs(hi) > kMaxExactInteger)
    return luaL_argerror(L, nargs, "interval bounds must be within +/-2^53");
  auto span = static_cast<int64_t>(hi) - static_cast<int64_t>(lo) + 1;
  lua_pushnumber(L, static_cast<double>(static_cast<int64_t>(lo) + rand->intn(span)));
  return 1;
}

// The sandbox's print: one line to blis's log (stderr), never to stdout, which
// carries the report.
int sandbox_log(lua_State* L) {
  const char* who = lua_tostring(L, lua_upvalueindex(1));
  const char* msg = lua_tostring(L, 1);
  try {
    spdlog::info("[{}] {}", who != nullptr ? who : "lua", msg != nullptr ? msg : "");
  } catch (...) {
    // Logging must never unwind through Lua frames.
  }
  return 0;
}

std::string message_at(lua_State* L, int idx) {
  const char* s = lua_tostring(L, idx);
  return s != nullptr ? s : "(error object is not a string)";
}

std::string file_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "a routing-scorer", "an admission-policy".
std::string with_article(PluginKind kind) {
  std::string name = kind_name(kind);
  return (name[0] == 'a' ? "an " : "a ") + name;
}

}  // namespace

std::string with_path(const std::string& path, const std::string& what) {
  // Lua shortens long chunk names ("...ts/scorers/x.lua:3:"), so the full
  // path is only assumed present when the message starts with it.
  if (what.rfind(path, 0) == 0) return what;
  return path + ": " + what;
}

std::string read_script(const std::string& path) {
  try {
    return config::read_text_file(path, "Lua script");
  } catch (const ConfigError& e) {
    throw ScriptError(std::string(e.what()) + " (check the path)");
  }
}

namespace {
int limit_divisor = 1;  // divide_script_limits
}  // namespace

void divide_script_limits(int divisor) { limit_divisor = std::max(divisor, 1); }
int script_limit_divisor() { return limit_divisor; }

int ScriptInstance::guarded_pcall(int nargs, int nresults, int handler, int reset_to) const {
  lua_State* L = core_->L;
  const int32_t limit = instruction_limit_ / limit_divisor;
  core_->budget.limit = limit;  // one call: no nesting
  core_->budget.left = std::min(limit, kBudgetChunk);
  core_->budget_reserve = int64_t{limit} - core_->budget.left;
  core_->cpu_limit_ns = static_cast<int64_t>(cpu_limit_ / limit_divisor * 1e9);
  core_->cpu_start_ns = -1;
  core_->cpu_excluded_ns = 0;

  core_->budget_error.clear();
  core_->heap_refused = false;
  const int status = lua_pcall(L, nargs, nresults, handler);
  core_->budget.left = kNoBudget;
  // A script may catch these errors with pcall: they end the run anyway.
  if (!core_->budget_error.empty() || core_->heap_refused) {
    lua_settop(L, reset_to);
    if (!core_->budget_error.empty()) throw ScriptError(with_path(path_, core_->budget_error), 2);
    throw ScriptError(fmt::format("{}: the Lua heap would exceed its limit of {} MiB (every script of the run "
                                  "shares it); the script holds too much data",
                                  path_, kMemoryLimit >> 20),
                      2);
  }
  return status;
}

ScriptInstance::ScriptInstance(LuaVm& vm, std::string path, const std::string& name,
                               const std::string& source, int32_t instruction_limit, double cpu_limit,
                               const std::function<void(lua_State*)>& prepare)
    : core_(&core_of(vm)),
      instruction_limit_(instruction_limit),
      cpu_limit_(cpu_limit),
      path_(std::move(path)),
      rand_(derive_seed(core_->seed, "lua:" + name)),
      log_name_(file_name(path_)) {
  lua_State* L = core_->L;
  ++core_->live_scripts;
  int base = lua_gettop(L);
  try {
    // The sandbox table, with math.random and print bound to this instance.
    lua_rawgeti(L, LUA_REGISTRYINDEX, core_->new_env_ref);
    lua_pushlightuserdata(L, &rand_);
    lua_pushcclosure(L, sandbox_random, 1);
    lua_pushstring(L, log_name_.c_str());
    lua_pushcclosure(L, sandbox_log, 1);
    lua_pushlightuserdata(L, &core_->budget);
    lua_pushcfunction(L, budget_exceeded);
    if (lua_pcall(L, 4, 1, 0) != 0)
      throw ScriptError(path_ + ": cannot create the script sandbox: " + message_at(L, -1));
    env_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
    if (prepare) {
      lua_rawgeti(L, LUA_REGISTRYINDEX, env_ref_);  // +1: the sandbox
      prepare(L);
      lua_pop(L, 1);  // -1
    }

    std::string chunk_name = "@" + path_;
    const std::string code = instrument(source);
    if (luaL_loadbuffer(L, code.data(), code.size(), chunk_name.c_str()) != 0)
      throw ScriptError(with_path(path_, message_at(L, -1)));
    lua_rawgeti(L, LUA_REGISTRYINDEX, env_ref_);
    lua_setfenv(L, -2);
    // Run the top level under the traceback handler.
    lua_rawgeti(L, LUA_REGISTRYINDEX, core_->on_error_ref);
    lua_insert(L, -2);
    if (guarded_pcall(0, 1, lua_gettop(L) - 1, base) != 0) throw ScriptError(with_path(path_, message_at(L, -1)));
    if (!lua_isnil(L, -1)) {
      result_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
      refs_.push_back(result_ref_);
    }
    lua_settop(L, base);
  } catch (...) {
    lua_settop(L, base);
    if (env_ref_ != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, env_ref_);
    --core_->live_scripts;
    throw;
  }
}

ScriptInstance::~ScriptInstance() {
  lua_State* L = core_->L;
  for (int r : refs_) luaL_unref(L, LUA_REGISTRYINDEX, r);
  luaL_unref(L, LUA_REGISTRYINDEX, env_ref_);
  --core_->live_scripts;
}

int ScriptInstance::function_ref(const char* name) {
  lua_State* L = core_->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, env_ref_);
  lua_getfield(L, -1, name);
  int type = lua_type(L, -1);
  if (type == LUA_TNIL) {
    lua_pop(L, 2);
    return LUA_NOREF;
  }
  if (type != LUA_TFUNCTION) {
    std::string got = lua_typename(L, type);
    lua_pop(L, 2);
    throw ScriptError(fmt::format("{}: global '{}' must be a function, not a {}", path_, name, got));
  }
  int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pop(L, 1);
  refs_.push_back(ref);
  return ref;
}

std::optional<std::string> ScriptInstance::string_global(const char* name) {
  lua_State* L = core_->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, env_ref_);
  lua_getfield(L, -1, name);
  int type = lua_type(L, -1);
  std::optional<std::string> out;
  if (type == LUA_TSTRING) out = lua_tostring(L, -1);
  lua_pop(L, 2);
  if (type != LUA_TSTRING && type != LUA_TNIL)
    throw ScriptError(fmt::format("{}: global '{}' must be a string, not a {}", path_, name,
                                  lua_typename(L, type)));
  return out;
}

void ScriptInstance::bind_pointer(const char* global, const void* address) {
  lua_State* L = core_->L;
  int base = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, core_->bind_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, env_ref_);
  lua_pushstring(L, global);
  lua_pushlightuserdata(L, const_cast<void*>(address));
  if (lua_pcall(L, 3, 0, 0) != 0) {
    std::string msg = message_at(L, -1);
    lua_settop(L, base);
    throw ScriptError(fmt::format("{}: cannot bind '{}': {}", path_, global, msg));
  }
}

int ScriptInstance::begin_call(int fn_ref) const {
  lua_State* L = core_->L;
  int base = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, core_->on_error_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, fn_ref);
  return base;
}

void ScriptInstance::end_call(int base, int nargs, int nresults, int exit_code) const {
  lua_State* L = core_->L;
  if (guarded_pcall(nargs, nresults, base + 1, base) != 0) {
    std::string msg = message_at(L, -1);
    lua_settop(L, base);
    throw ScriptError(with_path(path_, msg), exit_code);
  }
  if (nresults == 0) lua_settop(L, base);  // only the handler is left
}

void ScriptInstance::push_config(const ConfigTable& config) const {
  lua_State* L = core_->L;
  lua_createtable(L, 0, static_cast<int>(config.values().size()));
  for (const auto& [key, unused] : config.values()) {
    // find() marks the key as read: the script decides what it uses, so the
    // host cannot tell a typo from a key the script ignores.
    const ConfigValue& value = *config.find(key);
    lua_pushlstring(L, key.data(), key.size());
    if (auto i = std::get_if<int64_t>(&value)) {
      lua_pushnumber(L, static_cast<double>(*i));
    } else if (auto d = std::get_if<double>(&value)) {
      lua_pushnumber(L, *d);
    } else if (auto b = std::get_if<bool>(&value)) {
      lua_pushboolean(L, *b ? 1 : 0);
    } else if (auto s = std::get_if<std::string>(&value)) {
      lua_pushlstring(L, s->data(), s->size());
    } else {
      const auto& a = std::get<std::vector<double>>(value);
      lua_createtable(L, static_cast<int>(a.size()), 0);
      for (size_t j = 0; j < a.size(); ++j) {
        lua_pushnumber(L, a[j]);
        lua_rawseti(L, -2, static_cast<int>(j + 1));
      }
    }
    lua_rawset(L, -3);
  }
}

void ScriptInstance::run_init(const ConfigTable& config) {
  int init = function_ref("init");
  if (init == LUA_NOREF) return;
  int base = begin_call(init);
  push_config(config);
  end_call(base, 1, 0, 2);
}

PluginKind detect_kind(ScriptInstance& script) {
  const auto kinds = plugin_kinds();
  if (auto declared = script.string_global("kind")) {
    const PluginKindRow* k = find_kind(*declared);
    if (k == nullptr) {
      std::string names;
      for (const auto& row : kinds) names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", row.name);
      throw ScriptError(fmt::format("{}: kind = \"{}\" is not one of {}", script.path(), *declared, names));
    }
    if (script.function_ref(k->lua_entry) == LUA_NOREF)
      throw ScriptError(fmt::format("{}: declares kind = \"{}\" but does not define function {}",
                                    script.path(), *declared, k->lua_signature));
    return k->kind;
  }
  std::vector<const PluginKindRow*> found;
  for (const auto& k : kinds)
    if (script.function_ref(k.lua_entry) != LUA_NOREF) found.push_back(&k);
  if (found.size() == 1) return found[0]->kind;
  if (found.empty()) {
    std::string entries;
    for (size_t i = 0; i < kinds.size(); ++i)
      entries += fmt::format("{}{} ({})", i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ",
                             kinds[i].lua_signature, kinds[i].name);
    throw ScriptError(fmt::format("{}: defines none of the entry points {}; define one of them",
                                  script.path(), entries));
  }
  throw ScriptError(fmt::format(
      "{}: defines both {} and {}; set the global kind = \"{}\" (or another kind) to say "
      "which plugin it is",
      script.path(), found[0]->lua_signature, found[1]->lua_signature, found[0]->name));
}

void require_kind(ScriptInstance& script, PluginKind want) {
  const PluginKindRow& w = kind_row(want);
  // Defining the entry point is enough when no kind is declared: the use
  // (or the folder) says which one a script that defines several is.
  if (!script.string_global("kind") && script.function_ref(w.lua_entry) != LUA_NOREF) return;
  PluginKind got;
  try {
    got = detect_kind(script);
  } catch (const ScriptError&) {
    // Prefer naming what this use needs when the script has no entry point.
    if (script.string_global("kind") || script.function_ref(w.lua_entry) != LUA_NOREF) throw;
    throw ScriptError(fmt::format("{}: {} script must define function {}", script.path(),
                                  with_article(want), w.lua_signature));
  }
  if (got != want)
    throw ScriptError(fmt::format("{}: is {} script (it defines {}), not {} script, which "
                                  "must define function {}",
                                  script.path(), with_article(got), kind_row(got).lua_signature,
                                  with_article(want), w.lua_signature));
}

}  // namespace blis::lua
