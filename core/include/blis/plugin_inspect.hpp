// What `blis plugins list` and `blis plugins inspect` do, as text: the
// command line only parses flags and prints these (core/app/plugins_cmd.cpp).
#pragma once

#include <string>
#include <vector>

namespace blis {

// Every plugin a run could name, one kind after another in the order of the
// kind table: the registered ones (shared libraries of the plugin search path
// beside the binary, `plugin_dirs`, BLIS_PLUGIN_PATH), then the Lua scripts of
// the script search path (`script_dirs`, BLIS_SCRIPT_DIR, the installed
// scripts), at the top of each directory or in the kind's folder. A script
// whose name is taken earlier says which source shadows it. Libraries and
// scripts that cannot be opened get one line each, naming the file and the
// reason. Throws PluginError when two libraries register the same name.
std::string list_plugins(const std::vector<std::string>& plugin_dirs,
                         const std::vector<std::string>& script_dirs);

// Checks one plugin library, or one Lua script when `path` ends in ".lua":
// loads it (a script in the sandbox, its kind taken from what it defines or
// from its folder), creates each of its plugins once with a representative
// configuration plus `config` ("KEY=VALUE" items), makes one call of each
// of its kind's calls and checks the answers as a run would (NaN scores,
// nonsense times). Returns the description; throws PluginError (naming the
// library) or ScriptError (script:line), both exit status 2.
std::string inspect_plugin(const std::string& path, const std::vector<std::string>& config);

}  // namespace blis
