// Script files in, registry entries and objects out: naming, inspection and
// the public make_lua_* functions.
#include <blis/errors.hpp>
#include <blis/lua.hpp>

#include "lua/lua_host.hpp"

#include <filesystem>

namespace blis {
namespace {

const PluginKindRow* folder_kind(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().filename().string();
  for (const auto& row : plugin_kinds())
    if (folder == row.script_folder) return &row;
  return nullptr;
}

LuaScriptInfo inspect_source(LuaVm& vm, const lua::ScriptSource& source,
                             std::optional<PluginKind> expect) {
  // A scratch instance: its top level runs once and its state is dropped.
  lua::ScriptInstance script(vm, source.path, source.name, source.text);
  LuaScriptInfo info;
  if (!expect) {
    // A script in a kind's folder ("scorers/x.lua") is of that kind when it
    // defines the kind's entry point; otherwise what it defines decides.
    const PluginKindRow* folder = folder_kind(source.path);
    if (folder != nullptr && !script.string_global("kind") &&
        script.function_ref(folder->lua_entry) != LUA_NOREF)
      expect = folder->kind;
  }
  if (expect) {
    lua::require_kind(script, *expect);
    info.kind = *expect;
  } else {
    info.kind = lua::detect_kind(script);
  }
  info.name = source.name;
  info.path = source.path;
  info.version = script.string_global("version").value_or("");
  info.summary = script.string_global("summary").value_or(std::string("Lua ") +
                                                          kind_name(info.kind) + " script");
  return info;
}

lua::ScriptSource read_source(const std::string& path, const std::string& name) {
  return lua::ScriptSource{path, name.empty() ? lua_script_name(path) : name,
                           lua::read_script(path)};
}

}  // namespace

std::string lua_script_name(const std::string& path) {
  std::string name = std::filesystem::path(path).stem().string();
  for (char& c : name)
    if (c == '_') c = '-';
  return name;
}

LuaScriptInfo inspect_lua_script(LuaVm& vm, const std::string& path) {
  return inspect_source(vm, read_source(path, ""), std::nullopt);
}

std::unique_ptr<RoutingScorer> make_lua_routing_scorer(LuaVm& vm, const std::string& path,
                                                       const ConfigTable& config) {
  return lua::make_scorer_from_source(vm, read_source(path, ""), config);
}

std::unique_ptr<AdmissionPolicy> make_lua_admission_policy(LuaVm& vm, const std::string& path,
                                                           const ConfigTable& config) {
  return lua::make_admission_from_source(vm, read_source(path, ""), config);
}

std::unique_ptr<LatencyModel> make_lua_latency_model(LuaVm& vm, const std::string& path,
                                                     const ConfigTable& config) {
  return lua::make_latency_from_source(vm, read_source(path, ""), config);
}

LuaScriptInfo register_lua_script(Registries& registries, LuaVm& vm, const std::string& path,
                                  const std::string& name, std::optional<PluginKind> expect) {
  auto source = std::make_shared<const lua::ScriptSource>(read_source(path, name));
  LuaScriptInfo info = inspect_source(vm, *source, expect);
  kind_row(info.kind).add_script(registries,
                                 ScriptPlugin{info.name, info.version, info.summary, path, &vm, source});
  return info;
}

}  // namespace blis
