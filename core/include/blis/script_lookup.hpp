// Finding the Lua scripts a user names where a plugin is expected: by path
// ("scorers/kv_headroom.lua", "./mine.lua") or by name ("kv-headroom"),
// through the script search path. See docs/lua.md, "Loading scripts".
#pragma once

#include <blis/lua.hpp>
#include <blis/registry.hpp>

#include <optional>
#include <string>
#include <vector>

namespace blis {

// The subfolder of a script directory that holds scripts of `kind`:
// "scorers", "admission", "latency" or "autoscalers".
const char* script_subdir(PluginKind kind);

// The script search path, in order: each of `script_dirs` (--script-dir),
// each directory of BLIS_SCRIPT_DIR (colon-separated), then `installed_dir`
// (share/blis/scripts beside the binary, Environment::script_dir).
std::vector<std::string> script_search_dirs(const std::vector<std::string>& script_dirs,
                                            const std::string& installed_dir);

// Makes `spec`, what the user wrote where a plugin of `kind` is expected,
// creatable from `registries`, and returns the name to create it by:
//  1. a name already registered for `kind` is returned as is, so a native
//     plugin wins over a script of the same name (and a script registered
//     by an earlier call is reused);
//  2. a spec ending in ".lua" is a path: as given, else relative to each
//     directory of `dirs` and to its script_subdir(kind); it is registered
//     under `spec` itself, so it never clashes with a plugin. None found:
//     InputError listing where it looked;
//  3. any other spec without '/' is a name: the file "<spec, '-' -> '_'>.lua"
//     in each directory of `dirs`, first at its top, then in its
//     script_subdir(kind); registered under `spec`. None found: nullopt.
// The script must be of `kind` (ScriptError naming it otherwise); scripts
// that fail to load throw ScriptError as register_lua_script does. `vm` must
// outlive every object later created from `registries` by that name.
std::optional<std::string> resolve_plugin_name(Registries& registries, LuaVm& vm, PluginKind kind,
                                               const std::string& spec,
                                               const std::vector<std::string>& dirs);

// What resolve_plugin_name would accept by name for `kind`, for an "unknown
// ...; valid: ..." message: the names registered for `kind` and the names of
// the scripts of that kind found in `dirs`, sorted and comma-separated.
// Scripts that fail to load are left out; plugin libraries that could not be
// opened are named after the list.
std::string available_plugin_names(const Registries& registries, LuaVm& vm, PluginKind kind,
                                   const std::vector<std::string>& dirs);

}  // namespace blis
