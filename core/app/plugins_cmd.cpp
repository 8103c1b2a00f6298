// `blis plugins list` and `blis plugins inspect FILE`: printing what the core
// returns (blis/plugin_inspect.hpp).
#include "app/commands.hpp"

#include <blis/plugin_inspect.hpp>

#include <iostream>

namespace blis::app {

int run_plugins_list(const std::vector<std::string>& plugin_dirs, const std::vector<std::string>& script_dirs) {
  std::cout << list_plugins(plugin_dirs, script_dirs);
  return 0;
}

int run_plugins_inspect(const std::string& path, const std::vector<std::string>& config) {
  std::cout << inspect_plugin(path, config);
  return 0;
}

}  // namespace blis::app
