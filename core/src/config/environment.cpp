#include <blis/environment.hpp>
#include <blis/plugin_loader.hpp>

#include <cstdlib>
#include <filesystem>

namespace blis {

namespace fs = std::filesystem;

namespace {

std::string beside_binary(const char* env_var, const char* relative) {
  if (const char* v = std::getenv(env_var); v != nullptr && v[0] != '\0') return v;
  return (fs::path(executable_dir()) / ".." / relative).lexically_normal().string();
}

}  // namespace

Environment Environment::load(const std::vector<std::string>& plugin_dirs, int64_t /*seed*/) {
  Environment env;
  env.registries = std::make_unique<Registries>();
  env.data_dir = beside_binary("BLIS_DATA_DIR", "share/blis/data");
  env.script_dir = beside_binary("BLIS_SCRIPT_DIR", "share/blis/scripts");
  load_plugin_dirs(*env.registries, plugin_search_dirs(plugin_dirs));
  return env;
}

}  // namespace blis
