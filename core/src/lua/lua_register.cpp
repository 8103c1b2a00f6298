// Script files in, registry entries and objects out: naming, inspection and
// the public make_lua_* functions.
#include <blis/errors.hpp>
#include <blis/lua.hpp>

#include "lua/lua_host.hpp"

#include <filesystem>

namespace blis {
namespace {

LuaScriptInfo inspect_source(LuaVm& vm, const lua::ScriptSource& source,
                             std::optional<PluginKind> expect) {
  // A scratch instance: its top level runs once and its state is dropped.
  lua::ScriptInstance script(vm, source.path, source.name, source.text);
  LuaScriptInfo info;
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

const ConfigTable& config_of(const CreateArgs& args) {
  static const ConfigTable kEmpty;
  return args.config != nullptr ? *args.config : kEmpty;
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
  LuaVm* vmp = &vm;
  // The factories ignore CreateArgs::seed: the VM was created with the run's
  // seed, and math.random streams derive from it and the registry name.
  switch (info.kind) {
    case PluginKind::RoutingScorer:
      registries.scorers.add({info.name, info.version, info.summary, path,
                              [vmp, source](const CreateArgs& args) {
                                return lua::make_scorer_from_source(*vmp, *source,
                                                                    config_of(args));
                              }});
      break;
    case PluginKind::AdmissionPolicy:
      registries.admission.add({info.name, info.version, info.summary, path,
                                [vmp, source](const CreateArgs& args) {
                                  return lua::make_admission_from_source(*vmp, *source,
                                                                         config_of(args));
                                }});
      break;
    case PluginKind::LatencyModel:
      registries.latency.add({info.name, info.version, info.summary, path,
                              [vmp, source](const CreateArgs& args) {
                                return lua::make_latency_from_source(*vmp, *source,
                                                                     config_of(args));
                              }});
      break;
  }
  return info;
}

}  // namespace blis
