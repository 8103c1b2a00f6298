// One registry per plugin kind, keyed by kebab-case name. Entries come from
// shared libraries, Lua scripts or built-in C++; a name can be taken once.
#pragma once

#include <blis/config_table.hpp>
#include <blis/errors.hpp>
#include <blis/policies.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace blis {

enum class PluginKind { LatencyModel = 1, RoutingScorer = 2, AdmissionPolicy = 3 };

const char* kind_name(PluginKind kind);  // "latency-model", ...

// What a factory gets to build one object.
struct CreateArgs {
  const ConfigTable* config = nullptr;  // never null when called through Registry
  int64_t seed = 42;                    // the run's seed; each object derives its own stream
};

template <class T>
struct RegistryEntry {
  std::string name;
  std::string version;
  std::string summary;
  std::string source;  // "built-in", a library path or a script path
  std::function<std::unique_ptr<T>(const CreateArgs&)> factory;
  uint32_t needs = 0;  // blis_need bits the plugin declared
};

template <class T>
class Registry {
 public:
  explicit Registry(PluginKind kind) : kind_(kind) {}

  PluginKind kind() const { return kind_; }

  void add(RegistryEntry<T> entry) {
    auto it = entries_.find(entry.name);
    if (it != entries_.end())
      throw PluginError(entry.source, std::string(kind_name(kind_)) + " '" + entry.name +
                                          "' is already registered by " + it->second.source);
    std::string key = entry.name;
    entries_.emplace(std::move(key), std::move(entry));
  }
  const RegistryEntry<T>* find(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // Sorted by name.
  const std::map<std::string, RegistryEntry<T>>& entries() const { return entries_; }
  std::string names() const {
    std::string out;
    for (const auto& [name, e] : entries_) out += (out.empty() ? "" : ", ") + name;
    return out;
  }
  std::unique_ptr<T> create(const std::string& name, const CreateArgs& args) const {
    const RegistryEntry<T>* e = find(name);
    if (e == nullptr)
      throw InputError("", std::string("unknown ") + kind_name(kind_) + " '" + name +
                               "'; available: " + names());
    return e->factory(args);
  }

 private:
  PluginKind kind_;
  std::map<std::string, RegistryEntry<T>> entries_;
};

// The three registries of one run.
struct Registries {
  Registry<LatencyModel> latency{PluginKind::LatencyModel};
  Registry<RoutingScorer> scorers{PluginKind::RoutingScorer};
  Registry<AdmissionPolicy> admission{PluginKind::AdmissionPolicy};
};

}  // namespace blis
