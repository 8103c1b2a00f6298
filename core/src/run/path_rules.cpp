#include "run/path_rules.hpp"

#include "util/text.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace blis {
namespace {

namespace fs = std::filesystem;

// The path with every symlink along it followed, dangling ones included (a
// symlink to a file not yet written leads where the write would go), for
// comparing two names of one file. At most 40 links, as the kernel allows.
std::string real(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal();
  for (int hops = 0; hops < 40; ++hops) {
    fs::path prefix;
    bool followed = false;
    for (auto it = p.begin(); it != p.end(); ++it) {
      prefix /= *it;
      if (!fs::is_symlink(prefix, ec)) continue;
      fs::path target = fs::read_symlink(prefix, ec);
      if (ec) break;
      if (target.is_relative()) target = prefix.parent_path() / target;
      for (auto rest = std::next(it); rest != p.end(); ++rest) target /= *rest;
      p = target.lexically_normal();
      followed = true;
      break;
    }
    if (!followed) break;
  }
  return p.string();
}

bool below(const fs::path& inner, const fs::path& outer) {
  const auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end();
}

// The libraries and plugin folders a command line names: the values of
// library settings and --plugin-dir, and any library named inside a compact
// text (a --pool's latency-model=path/lib.so).
void add_native(const Setting& s, std::vector<std::string>& out) {
  const SettingDef* def = find_setting(s.flag);
  if (def == nullptr) return;
  std::vector<std::string> values = s.items;
  if (values.empty()) values.push_back(s.value);
  for (const std::string& v : values) {
    if (def->key == "plugin_dir") {
      out.push_back(real(v));
      continue;
    }
    for (const std::string& word : text::split(v, ' ')) {
      const auto eq = word.rfind('=');
      const std::string value = eq == std::string::npos ? word : word.substr(eq + 1);
      if (names_library(value)) out.push_back(real(library_path(value)));
    }
  }
}

constexpr const char* kNativeHint =
    "give it on the command line (--latency-model / --admission-policy path/lib.so, --pool "
    "latency-model=path/lib.so, --plugin-dir DIR) and name the plugin in the scenario, or run a file you "
    "trust with --trust-scenario";

}  // namespace

bool names_library(const std::string& spec) {
  return !text::ends_with(spec, ".lua") && (spec.find('/') != std::string::npos || spec.find(".so") != std::string::npos);
}

std::string library_path(const std::string& spec) {
  const auto colon = spec.rfind(':');
  if (colon != std::string::npos && spec.find(".so", colon) == std::string::npos) return spec.substr(0, colon);
  return spec;
}

std::optional<PathUse> path_use(const SettingDef& def, const std::string& value) {
  if (def.key == "plugin_dir") return PathUse::PluginFolder;
  if (def.has(kOutputPath)) return PathUse::Write;
  if (def.has(kLibraryRef)) return names_library(value) ? std::optional(PathUse::Library) : std::nullopt;
  if (def.has(kInputPath)) return PathUse::Read;
  return std::nullopt;
}

PathRights scenario_rights(const std::string& file, const Settings& command_line, bool trusted) {
  PathRights rights;
  if (trusted) return rights;
  rights.scenario = file;
  for (const Setting& s : command_line) add_native(s, rights.native);
  return rights;
}

void check_path(const PathRights& rights, PathUse use, const std::string& path, const std::string& where) {
  if (rights.scenario.empty() || use == PathUse::Read) return;
  if (use == PathUse::Library || use == PathUse::PluginFolder) {
    const std::string r = real(use == PathUse::Library ? library_path(path) : path);
    if (std::find(rights.native.begin(), rights.native.end(), r) != rights.native.end()) return;
    throw InputError(where, fmt::format("a scenario file may not load native code ({} names {}); {}", rights.scenario,
                                        path, kNativeHint));
  }
  if (path == "-") return;
  const fs::path p(path);
  bool leaves = p.is_absolute();
  for (const auto& part : p) leaves = leaves || part == "..";
  if (leaves)
    throw InputError(where, fmt::format("a scenario file writes only below the current directory: '{}' is absolute "
                                        "or leaves it; give the path on the command line instead, or run a file you "
                                        "trust with --trust-scenario",
                                        path));
  std::error_code ec;
  const fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  if (!below(fs::path(real(path)), cwd))
    throw InputError(where, fmt::format("a scenario file writes only below the current directory: '{}' leads to {} "
                                        "through a symlink; give the path on the command line instead, or run a file "
                                        "you trust with --trust-scenario",
                                        path, real(path)));
}

}  // namespace blis
