// One rule for every path a run names (docs/scenarios.md, "Trust"). The
// command line has every right. A scenario file the person running it did not
// trust (no --trust-scenario), and everything it names in turn (its pools, a
// policy file it names, the tables of a Lua `sim.run{...}`), may read any
// file, but opens no native library and no plugin folder the command line
// does not name itself, and writes only below the current directory, after
// following symlinks. Every place that opens a library, scans a plugin folder
// or writes an output asks check_path first, so a refusal comes before any of
// the library's code runs.
#pragma once

#include <blis/run_config.hpp>
#include <blis/scenario.hpp>
#include <blis/settings.hpp>

#include <optional>
#include <string>

namespace blis {

enum class PathUse {
  Read,          // a file the run reads (workload spec, trace, policy file, data)
  Write,         // a file or folder the run writes (results, rows, time series, report)
  Library,       // a plugin library opened by path (path/lib.so[:name])
  PluginFolder,  // a folder whose lib*.so files are opened
};

// What a value of setting `def` does with the path it names; nullopt when the
// setting names no path (or, for a library setting, names a plugin or script).
std::optional<PathUse> path_use(const SettingDef& def, const std::string& value);

// The rights of configurations built from scenario `file`, run with
// `command_line`: full rights when `trusted`.
PathRights scenario_rights(const std::string& file, const Settings& command_line, bool trusted);

// InputError naming `where` when `rights` do not allow `use` of `path`.
void check_path(const PathRights& rights, PathUse use, const std::string& path, const std::string& where);

// Whether `spec` names a plugin library by path rather than a registered
// plugin or a Lua script: it has a '/' or ".so" and does not end in ".lua".
bool names_library(const std::string& spec);

// The file of a library spec "path/lib.so[:name]".
std::string library_path(const std::string& spec);

}  // namespace blis
