// The table of plugin kinds: one row per kind holds everything kind-specific
// that the rest of the host needs (its name, its Lua folder and entry point,
// the vtable size the loader requires, and the adapters that turn a library
// plugin or a script into the kind's interface). Adding a kind is one row
// here (core/src/plugin/plugin_kinds.cpp) plus its interface in
// blis/policies.hpp and its registry and adapters; code outside the table
// never switches over kinds. The steps: docs/design/plugin-kinds.md.
#pragma once

#include <blis/config_table.hpp>
#include <blis/plugin.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace blis {

// The values are those of blis_kind.
enum class PluginKind {
  LatencyModel = BLIS_KIND_LATENCY_MODEL,
  RoutingScorer = BLIS_KIND_ROUTING_SCORER,
  AdmissionPolicy = BLIS_KIND_ADMISSION_POLICY,
  Autoscaler = BLIS_KIND_AUTOSCALER,
  SaturationDetector = BLIS_KIND_SATURATION_DETECTOR,
  DispatchOrder = BLIS_KIND_DISPATCH_ORDER,
  EncodeDecider = BLIS_KIND_ENCODE_DECIDER,
  FairnessPolicy = BLIS_KIND_FAIRNESS_POLICY,
  SheddingPolicy = BLIS_KIND_SHEDDING_POLICY,
  AdapterEviction = BLIS_KIND_ADAPTER_EVICTION,
  OffloadEviction = BLIS_KIND_OFFLOAD_EVICTION
};

class Registries;
class RegistryBase;
class LuaVm;
class LoadedLibrary;
namespace lua {
struct ScriptSource;
}

// One plugin entry of an opened library, as the adapters need it.
struct LibraryPlugin {
  std::shared_ptr<LoadedLibrary> lib;  // kept by every object created from the plugin
  std::string path;                    // the library's path (the registry entry's source)
  std::string name, version, summary;
  const void* vtable = nullptr;  // checked against min_vtable_size
  uint32_t needs = 0;
};

// One script, inspected, as the adapters need it.
struct ScriptPlugin {
  std::string name, version, summary, path;
  LuaVm* vm = nullptr;  // outlives the registry entry (blis/lua.hpp)
  std::shared_ptr<const lua::ScriptSource> source;
};

struct PluginKindRow {
  PluginKind kind;
  const char* name;           // "latency-model": command line, messages, a script's `kind`
  const char* script_folder;  // "latency": the subfolder of a script directory
  const char* lua_entry;      // "step_time": defining it makes a script of this kind
  const char* lua_signature;  // "step_time(n)", for messages
  // Bytes of vtable the host calls into (an ABI 1.0 vtable of this kind),
  // the last call they cover (for messages), and how many function slots
  // from `create` on must not be NULL.
  uint32_t min_vtable_size;
  const char* last_required_call;
  uint32_t required_calls;
  // `plugins inspect` hands it the data tables' trained coefficients.
  bool takes_coefficients;
  // The kind's registry in a Registries.
  RegistryBase& (*registry)(Registries& registries);
  // Adapters: register a library plugin or a script under its name
  // (PluginError if the name is taken).
  void (*add_library_plugin)(Registries& registries, const LibraryPlugin& plugin);
  void (*add_script)(Registries& registries, const ScriptPlugin& script);
  // Creates `name` with `config` and makes one of each of its calls on a
  // small fixed input, as `plugins inspect` does; throws what they throw.
  void (*smoke_call)(Registries& registries, const std::string& name, const ConfigTable& config);
};

// Every kind, in the order `blis plugins list` prints them.
std::span<const PluginKindRow> plugin_kinds();
const PluginKindRow& kind_row(PluginKind kind);
// nullptr when the value or the name is not a kind.
const PluginKindRow* find_kind(int32_t blis_kind);
const PluginKindRow* find_kind(std::string_view name);
// kind_row(kind).name: "latency-model", ...
const char* kind_name(PluginKind kind);

}  // namespace blis
