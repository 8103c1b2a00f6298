// An opened plugin library (internal to core/src/plugin): the Boost.DLL
// handle, kept alive by every object created from it, and its manifest,
// checked by open_plugin_library.
#pragma once

#include <blis/plugin.h>

#include <boost/dll/shared_library.hpp>

#include <cstddef>
#include <string>

namespace blis {

class LoadedLibrary {
 public:
  LoadedLibrary(std::string path, boost::dll::shared_library lib, const blis_manifest* m)
      : path_(std::move(path)), lib_(std::move(lib)), manifest_(m) {}
  const std::string& path() const { return path_; }
  const blis_manifest& manifest() const { return *manifest_; }
  // Entries are indexed by the library's own entry size, plugins[0].struct_size
  // (a newer minor's entries are larger); open_plugin_library bounds it.
  const blis_plugin_info& plugin(uint32_t i) const {
    return *reinterpret_cast<const blis_plugin_info*>(
        reinterpret_cast<const char*>(manifest_->plugins) +
        static_cast<size_t>(i) * manifest_->plugins[0].struct_size);
  }

 private:
  std::string path_;
  boost::dll::shared_library lib_;
  const blis_manifest* manifest_;
};

}  // namespace blis
