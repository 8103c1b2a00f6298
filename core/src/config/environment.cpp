#include <blis/environment.hpp>
#include <blis/plugin_loader.hpp>

#include <cstdlib>
#include <filesystem>

namespace blis {

namespace fs = std::filesystem;

namespace {

std::string beside_binary(const char* relative) {
  return (fs::path(executable_dir()) / ".." / relative).lexically_normal().string();
}

std::string overridable(const char* env_var, const char* relative) {
  if (const char* v = std::getenv(env_var); v != nullptr && v[0] != '\0') return v;
  return beside_binary(relative);
}

}  // namespace

Environment Environment::load(const std::vector<std::string>& plugin_dirs, int64_t /*seed*/) {
  Environment env;
  env.registries = std::make_unique<Registries>();
  env.data_dir = overridable("BLIS_DATA_DIR", "share/blis/data");
  // BLIS_SCRIPT_DIR adds to the script search path rather than replacing
  // this one (script_search_dirs, blis/script_lookup.hpp).
  env.script_dir = beside_binary("share/blis/scripts");
  scan_plugin_dirs(*env.registries, plugin_search_dirs(plugin_dirs));
  return env;
}

}  // namespace blis
