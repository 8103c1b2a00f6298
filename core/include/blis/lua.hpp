// Lua scripts as plugins: a LuaJIT VM per simulation, and adapters that turn a
// script into a RoutingScorer, AdmissionPolicy or LatencyModel. The script
// contract (which globals a script reads and which functions it defines) is
// described in docs/lua.md.
//
// Ownership and lifetime:
//  - A LuaVm belongs to one simulation and is used from one thread at a time.
//  - Every object made from a VM (and every Registries entry added by
//    register_lua_script) refers to the VM: the VM must outlive them all.
//    Declare the VM before the Registries and the simulation that use it.
//  - Each object runs its script in its own sandboxed environment, so two
//    objects made from the same script never share state.
#pragma once

#include <blis/config_table.hpp>
#include <blis/policies.hpp>
#include <blis/registry.hpp>
#include <blis/scenario_events.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct lua_State;

namespace blis {

class LuaVm;

namespace lua {
struct VmCore;  // the VM's internals (core/src/lua/lua_host.hpp)
VmCore& core_of(LuaVm& vm);
}  // namespace lua

class LuaVm {
 public:
  // A LuaJIT state that declares the plugin ABI structs to its FFI once,
  // opened when first used (state(), or any script). `seed` is the run's
  // seed: each script object's math.random draws from derive_seed(seed,
  // "lua:" + the script's registry name). Opening throws ScriptError on failure.
  explicit LuaVm(int64_t seed);
  ~LuaVm();
  LuaVm(const LuaVm&) = delete;
  LuaVm& operator=(const LuaVm&) = delete;

  int64_t seed() const;
  // The raw state, for tests and diagnostics. Its globals are the host's full
  // environment (ffi included); scripts never see it.
  lua_State* state() const;

 private:
  friend lua::VmCore& lua::core_of(LuaVm& vm);
  lua::VmCore& core() const;  // opens the state on first use
  void open() const;
  int64_t seed_;
  mutable std::unique_ptr<lua::VmCore> core_;  // null until first used
};

// What a script is, as register_lua_script sees it.
struct LuaScriptInfo {
  PluginKind kind = PluginKind::RoutingScorer;
  std::string name;     // registry name
  std::string path;     // as given
  std::string version;  // the script's `version` global, "" if unset
  std::string summary;  // the script's `summary` global, or a generic line
};

// Registry name of a script: its file stem with '_' turned into '-'
// ("scripts/scorers/kv_headroom.lua" -> "kv-headroom").
std::string lua_script_name(const std::string& path);

// Loads and runs the script's top level once in a scratch sandbox to learn its
// kind (see docs/lua.md). Throws ScriptError (syntax error, runtime
// error, no entry point, ambiguous or unknown kind).
LuaScriptInfo inspect_lua_script(LuaVm& vm, const std::string& path);

// Builds one object from a script file, its math.random stream named after
// lua_script_name(path). `config` is handed to the script's
// optional init(config) as a plain table (every key counts as read). Throws
// ScriptError if the script cannot be loaded, is of another kind, lacks the
// kind's required function, or init fails. Calls on the returned object throw
// ScriptError (exit code 2, like any bad plugin) when the script fails or
// returns invalid values.
std::unique_ptr<RoutingScorer> make_lua_routing_scorer(LuaVm& vm, const std::string& path,
                                                       const ConfigTable& config = {});
std::unique_ptr<AdmissionPolicy> make_lua_admission_policy(LuaVm& vm, const std::string& path,
                                                           const ConfigTable& config = {});
std::unique_ptr<LatencyModel> make_lua_latency_model(LuaVm& vm, const std::string& path,
                                                     const ConfigTable& config = {});

// Inspects the script and adds it to the registry of its kind under `name`
// (default: lua_script_name(path)), with source = path. The script text is
// read once, here; objects are built from that text. The entry's factory uses
// the VM's seed (CreateArgs::seed is expected to be the same run seed) and
// the registry name for the math.random stream. With `expect`, a script of
// another kind is a ScriptError naming what that kind must define.
// Throws ScriptError, or PluginError if the name is already registered.
LuaScriptInfo register_lua_script(Registries& registries, LuaVm& vm, const std::string& path,
                                  const std::string& name = "",
                                  std::optional<PluginKind> expect = std::nullopt);

// The at()/every() callbacks of the Lua scenario at `path`
// (docs/scenarios.md "Events from Lua code"): runs the script's top level
// again in `vm`, in a sandbox of its own, and returns the code the cluster
// calls. Throws ScriptError as a scenario's loading does.
std::unique_ptr<ScenarioCode> make_lua_scenario_code(LuaVm& vm, const std::string& path);

}  // namespace blis
