// Loading shared-library plugins (the only place that knows about Boost.DLL).
#pragma once

#include <blis/registry.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blis {

struct PluginInfo {
  PluginKind kind;
  std::string name, version, summary;
};

// What a library declares, after every ABI check has passed.
struct LibraryManifest {
  std::string path;
  uint32_t abi_major = 0, abi_minor = 0;
  std::vector<PluginInfo> plugins;
};

class LoadedLibrary;

// Checks that `path` is a complete ELF file (a truncated one would crash the
// process when mapped), opens it and checks, in order: the entry symbol
// exists, abi_major matches, the manifest, each entry and each vtable are
// large enough, the plugin count and the entry stride are sane. Throws
// PluginError naming the file and what is wrong.
std::shared_ptr<LoadedLibrary> open_plugin_library(const std::string& path);
LibraryManifest describe(const LoadedLibrary& lib);

// Registers every plugin of the library (PluginError if a name is taken).
void register_library(Registries& reg, const std::shared_ptr<LoadedLibrary>& lib);

// Where plugins are looked for, in order: the directory installed beside the
// binary, then each --plugin-dir, then each entry of BLIS_PLUGIN_PATH.
std::vector<std::string> plugin_search_dirs(const std::vector<std::string>& extra_dirs);

// The lib*.so files of the search directories, in directory order and file
// name order within one directory. Nothing is opened.
std::vector<std::string> plugin_files(const std::vector<std::string>& dirs);

// Adds plugin_files(dirs) to the candidates `reg` opens on demand, when a
// name is not found among the plugins registered so far (blis/registry.hpp).
void scan_plugin_dirs(Registries& reg, const std::vector<std::string>& dirs);

// The directory of the running executable.
std::string executable_dir();

}  // namespace blis
