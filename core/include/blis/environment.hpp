// What a run needs from the installation: the plugin registries (shared
// libraries, Lua scripts and built-ins) and the data directory.
#pragma once

#include <blis/registry.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blis {

struct Environment {
  std::unique_ptr<Registries> registries;
  std::string data_dir;    // share/blis/data beside the binary, or BLIS_DATA_DIR
  std::string script_dir;  // share/blis/scripts beside the binary (the installed scripts)

  // Scans the plugin search path (beside the binary, then `plugin_dirs`,
  // then BLIS_PLUGIN_PATH); its libraries open when a name is asked for.
  static Environment load(const std::vector<std::string>& plugin_dirs, int64_t seed);
};

}  // namespace blis
