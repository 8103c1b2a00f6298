// `blis plugins list` and `blis plugins inspect`: listing what the search
// paths hold, and the smoke test of one library or script.
#include <blis/plugin_inspect.hpp>

#include <blis/environment.hpp>
#include <blis/errors.hpp>
#include <blis/lua.hpp>
#include <blis/model_data.hpp>
#include <blis/plugin_loader.hpp>
#include <blis/plugin_overrides.hpp>
#include <blis/script_lookup.hpp>
#include <blis/config_keys.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

namespace blis {

namespace fs = std::filesystem;

namespace {

constexpr const char* kReferenceModel = "qwen/qwen3-14b";

std::string row_text(const PluginListing& p, const std::string& note = "") {
  return fmt::format("{:<17} {:<18} {:<8} {}\n    {}{}\n", kind_name(p.kind), p.name, p.version,
                     p.source, note, p.summary);
}

// One line: a script's traceback is left out (inspect shows it).
std::string broken_text(const std::string& message) {
  return fmt::format("{:<17} {}\n", "(broken)", message.substr(0, message.find('\n')));
}

bool is_lua(const fs::path& p) { return p.extension() == ".lua"; }

// The scripts of one directory of the script search path: at its top, then
// in each kind's folder, sorted within each.
std::vector<std::string> scripts_of(const std::string& dir) {
  std::vector<std::string> out;
  std::vector<fs::path> places{fs::path(dir)};
  for (const auto& row : plugin_kinds()) places.push_back(fs::path(dir) / row.script_folder);
  for (const fs::path& place : places) {
    std::error_code ec;
    if (!fs::is_directory(place, ec)) continue;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(place, ec))
      if (is_lua(e.path()) && e.is_regular_file(ec)) files.push_back(e.path().lexically_normal().string());
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

// A representative configuration for the smoke test: Qwen3-14B on one H100.
// Each latency model gets the coefficients a run would give it: its own data
// defaults, none if it is analytical, else the model's trained coefficients.
struct SmokeData {
  ConfigTable base;
  std::optional<DataCatalog> data;

  explicit SmokeData(const std::vector<std::string>& extra) {
    Environment env = Environment::load({}, 42);
    try {
      data = DataCatalog::load(env.data_dir);
      auto arch = data->bundled_model(kReferenceModel);
      HardwareSpec hw = data->hardware("H100");
      put_latency_config(base, arch ? &*arch : nullptr, &hw, 1, {}, {}, 16);
    } catch (const Error&) {
      // No bundled data: plugins that need it will say which key is missing.
    }
    for (const auto& kv : extra) {
      auto [key, value] = parse_key_value(kv, "--config");
      base.set(key, std::move(value));
    }
  }

  ConfigTable config_for(const PluginKindRow& kind, const std::string& name, uint32_t needs) const {
    ConfigTable cfg;
    if (kind.takes_coefficients && data) {
      std::optional<GlobalCoefficients> c;
      if (const auto* own = data->plugin_coefficients(name)) c = *own;
      if (!c && (needs & (BLIS_NEED_MODEL | BLIS_NEED_HARDWARE)) == 0) {
        const auto d = data->defaults_for(kReferenceModel);
        if (auto e = data->coefficients(kReferenceModel, "H100", 1, d ? d->vllm_version : ""))
          c = GlobalCoefficients{e->alpha, e->beta};
      }
      if (c) {
        cfg.set(BLIS_KEY_ALPHA_COEFFS, c->alpha);
        cfg.set(BLIS_KEY_BETA_COEFFS, c->beta);
      }
    }
    cfg.merge(base);
    return cfg;
  }
};

// Creates each plugin of `reg` once and makes one call of each of its kind's
// calls, so a plugin that fails at create() or in a call is caught here, not
// mid-run.
void smoke_test(Registries& reg, const SmokeData& smoke) {
  for (const auto& kind : plugin_kinds())
    for (const PluginListing& p : kind.registry(reg).listing())
      kind.smoke_call(reg, p.name, smoke.config_for(kind, p.name, p.needs));
}

std::string inspect_script(const std::string& path, const SmokeData& smoke) {
  LuaVm vm(42);  // declared before the registries whose entries use it
  Registries reg;
  const LuaScriptInfo info = register_lua_script(reg, vm, path);
  smoke_test(reg, smoke);
  return fmt::format("{}: Lua script\n  {:<17} {:<18} {:<8} {}\n", path, kind_name(info.kind), info.name,
                     info.version, info.summary);
}

std::string inspect_library(const std::string& path, const SmokeData& smoke) {
  auto lib = open_plugin_library(path);
  {
    Registries reg;
    register_library(reg, lib);
    smoke_test(reg, smoke);
  }
  LibraryManifest m = describe(*lib);
  std::string out = fmt::format("{}: blis plugin library, ABI {}.{}, {} plugin(s)\n", m.path, m.abi_major,
                                m.abi_minor, m.plugins.size());
  for (const auto& p : m.plugins)
    out += fmt::format("  {:<17} {:<18} {:<8} {}\n", kind_name(p.kind), p.name, p.version, p.summary);
  return out;
}

}  // namespace

std::string list_plugins(const std::vector<std::string>& plugin_dirs,
                         const std::vector<std::string>& script_dirs) {
  Environment env = Environment::load(plugin_dirs, 42);
  LuaVm vm(42);
  Registries& reg = *env.registries;
  reg.open_all_candidates();

  // Scripts by kind, in search order; the first source of a name wins.
  std::map<PluginKind, std::vector<std::pair<PluginListing, std::string>>> scripts;
  std::vector<std::string> broken_scripts;
  std::map<std::pair<PluginKind, std::string>, std::string> first_source;
  for (const auto& kind : plugin_kinds())
    for (const PluginListing& p : kind.registry(reg).listing()) first_source[{p.kind, p.name}] = p.source;
  for (const std::string& dir : script_search_dirs(script_dirs, env.script_dir)) {
    for (const std::string& file : scripts_of(dir)) {
      LuaScriptInfo info;
      try {
        info = inspect_lua_script(vm, file);
      } catch (const Error& e) {
        broken_scripts.push_back(e.what());
        continue;
      }
      PluginListing p{info.kind, info.name, info.version, info.summary, file, 0};
      auto [it, fresh] = first_source.emplace(std::make_pair(info.kind, info.name), file);
      scripts[info.kind].emplace_back(p, fresh ? "" : fmt::format("(shadowed by {}) ", it->second));
    }
  }

  std::string out = fmt::format("{:<17} {:<18} {:<8} {}\n", "KIND", "NAME", "VERSION", "SOURCE");
  for (const auto& kind : plugin_kinds()) {
    for (const PluginListing& p : kind.registry(reg).listing()) out += row_text(p);
    for (const auto& [p, note] : scripts[kind.kind]) out += row_text(p, note);
  }
  for (const BrokenLibrary& b : reg.broken()) out += broken_text(b.message);
  for (const std::string& message : broken_scripts) out += broken_text(message);
  return out;
}

std::string inspect_plugin(const std::string& path, const std::vector<std::string>& config) {
  const SmokeData smoke(config);
  return is_lua(path) ? inspect_script(path, smoke) : inspect_library(path, smoke);
}

}  // namespace blis
