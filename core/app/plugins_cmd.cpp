// `blis plugins list` and `blis plugins inspect FILE`.
#include "app/commands.hpp"
#include <blis/environment.hpp>

#include <blis/plugin_loader.hpp>

#include <fmt/format.h>

#include <iostream>

namespace blis::app {

namespace {

template <class T>
void print_registry(const Registry<T>& reg) {
  for (const auto& [name, e] : reg.entries())
    std::cout << fmt::format("{:<17} {:<18} {:<8} {}\n    {}\n", kind_name(reg.kind()), name,
                             e.version, e.source, e.summary);
}

}  // namespace

int run_plugins_list(const std::vector<std::string>& plugin_dirs) {
  Environment env = Environment::load(plugin_dirs, 42);
  std::cout << fmt::format("{:<17} {:<18} {:<8} {}\n", "KIND", "NAME", "VERSION", "SOURCE");
  print_registry(env.registries->latency);
  print_registry(env.registries->scorers);
  print_registry(env.registries->admission);
  return 0;
}

int run_plugins_inspect(const std::string& path) {
  auto lib = open_plugin_library(path);
  LibraryManifest m = describe(*lib);
  std::cout << fmt::format("{}: blis plugin library, ABI {}.{}, {} plugin(s)\n", m.path,
                           m.abi_major, m.abi_minor, m.plugins.size());
  for (const auto& p : m.plugins)
    std::cout << fmt::format("  {:<17} {:<18} {:<8} {}\n", kind_name(p.kind), p.name, p.version,
                             p.summary);
  return 0;
}

}  // namespace blis::app
