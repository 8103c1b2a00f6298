// Shared-library plugins: checking a file before it is mapped, opening it,
// the ABI checks of its manifest, and the plugin search path, whose files
// Registries opens on demand. The only file that loads libraries (Boost.DLL).
#include <blis/errors.hpp>
#include <blis/plugin_loader.hpp>

#include "plugin/host_api.hpp"
#include "plugin/loaded_library.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <dlfcn.h>
#include <sys/stat.h>
#include <elf.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace blis {

namespace fs = std::filesystem;

namespace {

// Sizes a 1.0 host needs: a struct may be larger (newer minor), never smaller.
constexpr uint32_t kMinManifestSize = sizeof(blis_manifest);
constexpr uint32_t kMinInfoSize = offsetof(blis_plugin_info, needs);  // a 1.0 entry
constexpr uint32_t kInfoNeedsEnd = offsetof(blis_plugin_info, needs) + sizeof(uint32_t);
// Bounds on what a manifest may declare, far above any real library, so a
// corrupt count or stride is refused before the host reads through it.
constexpr uint32_t kMaxPlugins = 4096;
constexpr uint32_t kMaxInfoSize = 4096;

std::string text_of(const char* s) {
  return s != nullptr ? std::string(s, ::strnlen(s, kMaxPluginText)) : std::string();
}

// The checks the dynamic loader skips: mapping a truncated library succeeds
// and the first access past the end of the file raises SIGBUS, so the file
// must hold its ELF header, its program headers and every loaded segment.
void check_elf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const auto size = static_cast<uint64_t>(fs::file_size(path, ec));
  if (!in || ec) throw PluginError(path, "cannot load shared library: cannot read the file");
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char*>(&eh), sizeof(eh));
  if (size < sizeof(eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    throw PluginError(path, "cannot load shared library: not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
    throw PluginError(path, "cannot load shared library: not a 64-bit ELF library");
  auto truncated = [&](uint64_t end, const char* what) {
    return PluginError(path, fmt::format("cannot load shared library: the file is truncated or "
                                         "corrupt ({} bytes, but its {} end at byte {})",
                                         size, what, end));
  };
  const uint64_t ph_end = eh.e_phoff + static_cast<uint64_t>(eh.e_phnum) * sizeof(Elf64_Phdr);
  if (eh.e_phoff > size || ph_end > size) throw truncated(ph_end, "program headers");
  if (eh.e_shoff != 0) {
    const uint64_t sh_end = eh.e_shoff + static_cast<uint64_t>(eh.e_shnum) * eh.e_shentsize;
    if (eh.e_shoff > size || sh_end > size) throw truncated(sh_end, "section headers");
  }
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.read(reinterpret_cast<char*>(&ph), sizeof(ph));
    if (!in) throw truncated(ph_end, "program headers");
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
    const uint64_t end = ph.p_offset + ph.p_filesz;
    if (ph.p_offset > size || end > size) throw truncated(end, "loaded segments");
  }
}

uint32_t vtable_size(const blis_plugin_info& p) {
  return *static_cast<const uint32_t*>(p.vtable);  // every vtable starts with struct_size
}

void check_plugin_entry(const std::string& path, const blis_plugin_info& p, uint32_t index) {
  if (p.struct_size < kMinInfoSize)
    throw PluginError(path, fmt::format("plugin entry {} is {} bytes, smaller than the {} bytes "
                                        "of ABI {}.0; rebuild it against the current SDK",
                                        index, p.struct_size, kMinInfoSize, BLIS_ABI_MAJOR));
  if (p.name == nullptr || p.name[0] == '\0')
    throw PluginError(path, fmt::format("plugin entry {} has no name", index));
  const std::string name = text_of(p.name);
  if (p.vtable == nullptr) throw PluginError(path, fmt::format("plugin '{}' has no vtable", name));
  const PluginKindRow* row = find_kind(p.kind);
  if (row == nullptr)
    throw PluginError(path, fmt::format("plugin '{}' has unknown kind {}", name, p.kind));
  const uint32_t have = vtable_size(p);
  if (have < row->min_vtable_size)
    throw PluginError(path, fmt::format("plugin '{}': its vtable is {} bytes and lacks {}() "
                                        "(needs {} bytes); it was built for an older, "
                                        "incompatible SDK",
                                        name, have, row->last_required_call, row->min_vtable_size));
  // Every vtable is {struct_size, reserved0, create, destroy, calls...}.
  const void* const* slots = reinterpret_cast<const void* const*>(
      static_cast<const char*>(p.vtable) + offsetof(blis_latency_model_vtable, create));
  for (uint32_t i = 0; i < row->required_calls; ++i)
    if (slots[i] == nullptr)
      throw PluginError(path, fmt::format("plugin '{}': vtable slot {} is NULL", name, i));
}

}  // namespace

namespace {

std::shared_ptr<LoadedLibrary> open_uncached(const std::string& path);

// Which file a path names now (device, inode, size, modification and change
// times), "" when it cannot be asked: the same stamp is the same file, as
// dlopen itself takes a file it has open already for the same one.
std::string file_stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return fmt::format("{}:{}:{}:{}.{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

}  // namespace

// A sweep opens its plugin folders once per configuration. Unloading a
// library unmaps its pages, which on a virtual machine flushes every CPU's
// TLB: the libraries stay loaded for the process, each opened and checked
// once while its file stays the same. (Two threads' runs shared a library
// before too: dlopen hands out one handle per file.)
std::shared_ptr<LoadedLibrary> open_plugin_library(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::string, std::shared_ptr<LoadedLibrary>>> opened;
  const std::string stamp = file_stamp(path);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = opened.find(path);
    if (!stamp.empty() && it != opened.end() && it->second.first == stamp) return it->second.second;
  }
  auto lib = open_uncached(path);
  const std::lock_guard<std::mutex> lock(mutex);
  if (!stamp.empty()) opened[path] = {stamp, lib};
  return lib;
}

namespace {

std::shared_ptr<LoadedLibrary> open_uncached(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw PluginError(path, "no such file");
  check_elf_file(path);
  boost::dll::shared_library lib;
  lib.load(path, ec, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (ec) {
    const char* detail = ::dlerror();
    throw PluginError(path, fmt::format("cannot load shared library: {}",
                                        detail != nullptr ? detail : ec.message()));
  }
  if (!lib.has(BLIS_MANIFEST_SYMBOL))
    throw PluginError(path, fmt::format("not a blis plugin: the entry symbol '{}' is missing "
                                        "(export it with BLIS_PLUGINS(...) from blis/plugin.hpp)",
                                        BLIS_MANIFEST_SYMBOL));
  auto entry = lib.get<const blis_manifest*()>(BLIS_MANIFEST_SYMBOL);
  const blis_manifest* m = nullptr;
  try {
    m = entry();
  } catch (...) {
    throw PluginError(path, "the manifest function threw a C++ exception");
  }
  if (m == nullptr) throw PluginError(path, "the manifest function returned NULL");
  if (m->abi_major != BLIS_ABI_MAJOR)
    throw PluginError(path, fmt::format("built for plugin ABI {}.{}, but this blis speaks ABI {}.{}; "
                                        "rebuild the plugin against this SDK",
                                        m->abi_major, m->abi_minor, BLIS_ABI_MAJOR, BLIS_ABI_MINOR));
  if (m->struct_size < kMinManifestSize)
    throw PluginError(path, fmt::format("manifest is {} bytes, smaller than the {} bytes of ABI "
                                        "{}.0",
                                        m->struct_size, kMinManifestSize, BLIS_ABI_MAJOR));
  if (m->count > kMaxPlugins)
    throw PluginError(path, fmt::format("manifest lists {} plugins, more than the {} a library may "
                                        "hold; its count field is corrupt",
                                        m->count, kMaxPlugins));
  if (m->count > 0 && m->plugins == nullptr)
    throw PluginError(path, "manifest lists plugins but its plugin array is NULL");
  auto loaded = std::make_shared<LoadedLibrary>(path, std::move(lib), m);
  if (m->count > 0) {
    // The first entry's size is the library's stride: bound it before
    // stepping through the array with it.
    const uint32_t stride = m->plugins[0].struct_size;
    if (stride < kMinInfoSize) check_plugin_entry(path, m->plugins[0], 0);
    if (stride > kMaxInfoSize || stride % alignof(blis_plugin_info) != 0)
      throw PluginError(path, fmt::format("plugin entry 0 says entries are {} bytes apart; expected "
                                          "a multiple of {} between {} and {} (a corrupt "
                                          "struct_size)",
                                          stride, alignof(blis_plugin_info), kMinInfoSize,
                                          kMaxInfoSize));
    for (uint32_t i = 0; i < m->count; ++i) check_plugin_entry(path, loaded->plugin(i), i);
  }
  return loaded;
}

}  // namespace

LibraryManifest describe(const LoadedLibrary& lib) {
  LibraryManifest out;
  out.path = lib.path();
  out.abi_major = lib.manifest().abi_major;
  out.abi_minor = lib.manifest().abi_minor;
  for (uint32_t i = 0; i < lib.manifest().count; ++i) {
    const blis_plugin_info& p = lib.plugin(i);
    out.plugins.push_back(PluginInfo{find_kind(p.kind)->kind, text_of(p.name), text_of(p.version),
                                     text_of(p.summary)});
  }
  return out;
}

void register_library(Registries& reg, const std::shared_ptr<LoadedLibrary>& lib) {
  for (uint32_t i = 0; i < lib->manifest().count; ++i) {
    const blis_plugin_info& p = lib->plugin(i);
    LibraryPlugin plugin{lib, lib->path(), text_of(p.name), text_of(p.version), text_of(p.summary), p.vtable,
                         p.struct_size >= kInfoNeedsEnd ? p.needs : 0};
    find_kind(p.kind)->add_library_plugin(reg, plugin);  // the kind was checked on opening
  }
}

std::string executable_dir() {
  std::error_code ec;
  auto p = boost::dll::program_location(ec);
  if (ec) return ".";
  return p.parent_path().string();
}

std::vector<std::string> plugin_search_dirs(const std::vector<std::string>& extra_dirs) {
  std::vector<std::string> dirs;
  dirs.push_back((fs::path(executable_dir()) / ".." / "lib" / "blis" / "plugins").lexically_normal().string());
  for (const auto& d : extra_dirs) dirs.push_back(d);
  if (const char* env = std::getenv("BLIS_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) dirs.push_back(item);
  }
  return dirs;
}

std::vector<std::string> plugin_files(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string fname = e.path().filename().string();
      if (e.is_regular_file(ec) && fname.rfind("lib", 0) == 0 && e.path().extension() == ".so")
        files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

void scan_plugin_dirs(Registries& reg, const std::vector<std::string>& dirs) {
  reg.add_candidates(plugin_files(dirs));
}

bool Registries::open_next_candidate(bool warn) {
  if (pending_.empty()) return false;
  const std::string path = std::move(pending_.back());
  pending_.pop_back();
  std::shared_ptr<LoadedLibrary> lib;
  try {
    lib = open_plugin_library(path);
  } catch (const PluginError& e) {
    if (warn) spdlog::warn("skipping plugin library {}", e.what());
    broken_.push_back(BrokenLibrary{path, e.what()});
    return true;
  }
  register_library(*this, lib);
  return true;
}

}  // namespace blis
