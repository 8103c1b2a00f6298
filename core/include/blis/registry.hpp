// One registry per plugin kind, keyed by kebab-case name. Entries come from
// shared libraries, Lua scripts or built-in C++; a name can be taken once.
//
// Libraries of the plugin search path are not opened up front: Registries
// keeps the candidate files (scan_plugin_dirs, blis/plugin_loader.hpp) and
// opens them one at a time, in search order, when a name is not found, so a
// broken file that provides nothing the run asks for never affects it.
#pragma once

#include <blis/config_table.hpp>
#include <blis/errors.hpp>
#include <blis/plugin_kinds.hpp>
#include <blis/policies.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace blis {

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

// One line of `blis plugins list`: an entry without its factory.
struct PluginListing {
  PluginKind kind;
  std::string name, version, summary, source;
  uint32_t needs = 0;
};

class Registries;

// What code that does not know the kind's interface can ask of a registry.
class RegistryBase {
 public:
  explicit RegistryBase(PluginKind kind) : kind_(kind) {}
  virtual ~RegistryBase() = default;
  RegistryBase(const RegistryBase&) = delete;
  RegistryBase& operator=(const RegistryBase&) = delete;

  PluginKind kind() const { return kind_; }
  // Whether `name` is registered, opening candidate libraries as needed.
  virtual bool contains(const std::string& name) const = 0;
  // Where `name` was registered from (RegistryEntry::source), or null.
  virtual const std::string* source_of(const std::string& name) const = 0;
  // Every entry, sorted by name (opens every candidate library).
  virtual std::vector<PluginListing> listing() const = 0;

 protected:
  friend class Registries;
  PluginKind kind_;
  Registries* owner_ = nullptr;  // set by Registries; null for a stand-alone registry
};

template <class T>
class Registry final : public RegistryBase {
 public:
  explicit Registry(PluginKind kind) : RegistryBase(kind) {}

  void add(RegistryEntry<T> entry) {
    auto it = entries_.find(entry.name);
    if (it != entries_.end())
      throw PluginError(entry.source, std::string(kind_name(kind_)) + " '" + entry.name +
                                          "' is already registered by " + it->second.source);
    std::string key = entry.name;
    entries_.emplace(std::move(key), std::move(entry));
  }
  // Opens candidate libraries, in search order, until one provides `name`.
  const RegistryEntry<T>* find(const std::string& name) const;
  // Sorted by name; opens every candidate library first.
  const std::map<std::string, RegistryEntry<T>>& entries() const;
  std::string names() const {
    std::string out;
    for (const auto& [name, e] : entries()) out += (out.empty() ? "" : ", ") + name;
    return out;
  }
  std::unique_ptr<T> create(const std::string& name, const CreateArgs& args) const {
    const RegistryEntry<T>* e = find(name);
    if (e == nullptr)
      throw InputError("", std::string("unknown ") + kind_name(kind_) + " '" + name +
                               "'; available: " + names());
    return e->factory(args);
  }

  bool contains(const std::string& name) const override { return find(name) != nullptr; }
  const std::string* source_of(const std::string& name) const override {
    const RegistryEntry<T>* e = find(name);
    return e != nullptr ? &e->source : nullptr;
  }
  std::vector<PluginListing> listing() const override {
    std::vector<PluginListing> out;
    for (const auto& [name, e] : entries())
      out.push_back(PluginListing{kind_, e.name, e.version, e.summary, e.source, e.needs});
    return out;
  }

 private:
  std::map<std::string, RegistryEntry<T>> entries_;
};

// A library of the search path that could not be opened.
struct BrokenLibrary {
  std::string path;
  std::string message;  // the PluginError text, which starts with the path
};

class LoadedLibrary;

// The registries of one run, one per row of the kind table. Not copyable or
// movable: each registry points back to it. Not thread-safe (one run, one
// thread).
class Registries {
 public:
  Registries();
  ~Registries();
  Registries(const Registries&) = delete;
  Registries& operator=(const Registries&) = delete;

  Registry<LatencyModel> latency{PluginKind::LatencyModel};
  Registry<RoutingScorer> scorers{PluginKind::RoutingScorer};
  Registry<AdmissionPolicy> admission{PluginKind::AdmissionPolicy};
  Registry<Autoscaler> autoscalers{PluginKind::Autoscaler};
  Registry<SaturationDetector> saturation{PluginKind::SaturationDetector};
  Registry<DispatchOrder> dispatch{PluginKind::DispatchOrder};
  Registry<EncodeDecider> encode{PluginKind::EncodeDecider};
  Registry<FairnessPolicy> fairness{PluginKind::FairnessPolicy};
  Registry<SheddingPolicy> shedding{PluginKind::SheddingPolicy};
  Registry<AdapterEviction> adapter_eviction{PluginKind::AdapterEviction};
  Registry<OffloadEviction> offload_eviction{PluginKind::OffloadEviction};

  RegistryBase& of(PluginKind kind);
  const RegistryBase& of(PluginKind kind) const;

  // Library files to open on demand, after those added before.
  void add_candidates(const std::vector<std::string>& paths);
  // Opens the next candidate and registers its plugins. False when none is
  // left. A file that cannot be opened is recorded in broken() (and logged
  // as a warning when `warn`); a name clash throws PluginError.
  bool open_next_candidate(bool warn = true);
  void open_all_candidates();
  // Candidates that failed to open, in the order they were tried.
  const std::vector<BrokenLibrary>& broken() const { return broken_; }

 private:
  std::vector<std::string> pending_;  // reversed: the next one is at the back
  std::vector<BrokenLibrary> broken_;
};

template <class T>
const RegistryEntry<T>* Registry<T>::find(const std::string& name) const {
  auto it = entries_.find(name);
  while (it == entries_.end() && owner_ != nullptr && owner_->open_next_candidate())
    it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

template <class T>
const std::map<std::string, RegistryEntry<T>>& Registry<T>::entries() const {
  if (owner_ != nullptr) owner_->open_all_candidates();
  return entries_;
}

}  // namespace blis
