// The script search path and the lookup of scripts by path or by name.
#include <blis/errors.hpp>
#include <blis/script_lookup.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <system_error>

namespace blis {

namespace fs = std::filesystem;

namespace {

bool ends_with_lua(const std::string& s) {
  return s.size() > 4 && s.compare(s.size() - 4, 4, ".lua") == 0;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}


// "kv-headroom" -> "kv_headroom.lua".
std::string file_of_name(const std::string& name) {
  std::string file = name;
  std::replace(file.begin(), file.end(), '-', '_');
  return file + ".lua";
}

// The places a name is looked for, in order.
std::vector<fs::path> name_candidates(PluginKind kind, const std::string& name,
                                      const std::vector<std::string>& dirs) {
  std::vector<fs::path> out;
  const std::string file = file_of_name(name);
  for (const auto& d : dirs) {
    out.push_back(fs::path(d) / file);
    out.push_back(fs::path(d) / script_subdir(kind) / file);
  }
  return out;
}

// The .lua files directly in `dir` whose stem a name can reach (no '-'), sorted.
std::vector<fs::path> scripts_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path& p = e.path();
    if (p.extension() == ".lua" && p.stem().string().find('-') == std::string::npos &&
        is_file(p))
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

const char* script_subdir(PluginKind kind) { return kind_row(kind).script_folder; }

std::vector<std::string> script_search_dirs(const std::vector<std::string>& script_dirs,
                                            const std::string& installed_dir) {
  std::vector<std::string> dirs = script_dirs;
  if (const char* env = std::getenv("BLIS_SCRIPT_DIR")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) dirs.push_back(item);
  }
  if (!installed_dir.empty()) dirs.push_back(installed_dir);
  return dirs;
}

std::optional<std::string> resolve_plugin_name(Registries& registries, LuaVm& vm, PluginKind kind,
                                               const std::string& spec,
                                               const std::vector<std::string>& dirs) {
  if (spec.empty()) return std::nullopt;
  if (registries.of(kind).contains(spec)) return spec;
  std::vector<fs::path> candidates;
  if (ends_with_lua(spec)) {
    candidates.push_back(spec);
    if (fs::path(spec).is_relative())
      for (const auto& d : dirs) {
        candidates.push_back(fs::path(d) / spec);
        candidates.push_back(fs::path(d) / script_subdir(kind) / spec);
      }
  } else if (spec.find('/') == std::string::npos) {
    candidates = name_candidates(kind, spec, dirs);
  } else {
    return std::nullopt;
  }
  for (const auto& c : candidates) {
    if (!is_file(c)) continue;
    register_lua_script(registries, vm, c.lexically_normal().string(), spec, kind);
    return spec;
  }
  if (!ends_with_lua(spec)) return std::nullopt;
  if (candidates.size() == 1) throw InputError("", spec + ": no such script");
  throw InputError("", fmt::format("{}: no such script (looked here and in {})", spec,
                                   fmt::join(dirs, ", ")));
}

std::string available_plugin_names(const Registries& registries, LuaVm& vm, PluginKind kind,
                                   const std::vector<std::string>& dirs) {
  std::set<std::string> names;
  for (const PluginListing& p : registries.of(kind).listing()) names.insert(p.name);
  for (const auto& d : dirs) {
    for (const fs::path& dir : {fs::path(d), fs::path(d) / script_subdir(kind)}) {
      for (const auto& file : scripts_in(dir)) {
        try {
          if (inspect_lua_script(vm, file.string()).kind == kind)
            names.insert(lua_script_name(file.string()));
        } catch (const Error&) {
          // A broken script is reported when it is named, not in this list.
        }
      }
    }
  }
  std::string out = fmt::format("{}", fmt::join(names, ", "));
  // A library that could not be opened may be the one that provides the name.
  for (const BrokenLibrary& b : registries.broken()) out += fmt::format(" (not opened: {})", b.message);
  return out;
}

}  // namespace blis
