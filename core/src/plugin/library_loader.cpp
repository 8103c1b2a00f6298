// Shared-library plugins: opening, ABI checks, and adapters from the C
// vtables to the internal interfaces. The only file that uses Boost.DLL.
#include <blis/errors.hpp>
#include <blis/plugin_loader.hpp>

#include "plugin/host_api.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <fmt/format.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace blis {

namespace fs = std::filesystem;

// Sizes a 1.0 host needs: a struct may be larger (newer minor), never smaller.
constexpr uint32_t kMinManifestSize = sizeof(blis_manifest);
constexpr uint32_t kMinInfoSize = offsetof(blis_plugin_info, needs);  // a 1.0 entry
constexpr uint32_t kInfoNeedsEnd = offsetof(blis_plugin_info, needs) + sizeof(uint32_t);
constexpr uint32_t kMinLatencyVtable =
    offsetof(blis_latency_model_vtable, post_decode_overhead) + sizeof(void*);
constexpr uint32_t kMinScorerVtable = offsetof(blis_routing_scorer_vtable, score) + sizeof(void*);
constexpr uint32_t kScorerObserveEnd = offsetof(blis_routing_scorer_vtable, observe) + sizeof(void*);
constexpr uint32_t kMinAdmissionVtable =
    offsetof(blis_admission_policy_vtable, admit) + sizeof(void*);

const char* kind_name(PluginKind kind) {
  switch (kind) {
    case PluginKind::LatencyModel: return "latency-model";
    case PluginKind::RoutingScorer: return "routing-scorer";
    case PluginKind::AdmissionPolicy: return "admission-policy";
  }
  return "unknown";
}

class LoadedLibrary {
 public:
  LoadedLibrary(std::string path, boost::dll::shared_library lib, const blis_manifest* m)
      : path_(std::move(path)), lib_(std::move(lib)), manifest_(m) {}
  const std::string& path() const { return path_; }
  const blis_manifest& manifest() const { return *manifest_; }
  const blis_plugin_info& plugin(uint32_t i) const {
    // Entries are indexed by the library's own struct size (it may be newer).
    return *reinterpret_cast<const blis_plugin_info*>(
        reinterpret_cast<const char*>(manifest_->plugins) +
        static_cast<size_t>(i) * manifest_->plugins[0].struct_size);
  }

 private:
  std::string path_;
  boost::dll::shared_library lib_;
  const blis_manifest* manifest_;
};

namespace {

constexpr size_t kErrLen = 512;

std::string message_or(const char* buf, const char* fallback) {
  return (buf != nullptr && buf[0] != '\0') ? std::string(buf) : std::string(fallback);
}

// Everything an object created from a library holds on to.
struct ObjectContext {
  std::shared_ptr<LoadedLibrary> lib;
  std::string name;
  PluginLogContext log;
  blis_host host;
  std::unique_ptr<PluginRng> rng;

  ObjectContext(std::shared_ptr<LoadedLibrary> l, const std::string& kind, const std::string& n,
                int64_t seed)
      : lib(std::move(l)), name(n), log{n}, host(make_host(&log)),
        rng(std::make_unique<PluginRng>(seed, "plugin:" + kind + ":" + n)) {}

  std::string who() const { return fmt::format("{} '{}'", lib->path(), name); }

  void* create(blis_create_fn fn, const ConfigTable& config) {
    char err[kErrLen] = {0};
    void* self = nullptr;
    int32_t status = BLIS_ERROR;
    try {
      status = fn(&host, as_blis_config(config), rng->view(), &self, err, sizeof(err));
    } catch (...) {
      throw PluginError(lib->path(), fmt::format("plugin '{}': create() threw a C++ exception "
                                                 "across the C ABI",
                                                 name));
    }
    if (status != BLIS_OK)
      throw PluginError(lib->path(), fmt::format("plugin '{}': create() failed: {}", name,
                                                 message_or(err, "no message")));
    if (self == nullptr)
      throw PluginError(lib->path(),
                        fmt::format("plugin '{}': create() returned no object", name));
    return self;
  }

  // Runs one call; a status error or an escaping exception becomes PluginError.
  template <class F>
  void call(const char* what, F&& f) {
    char err[kErrLen];
    err[0] = '\0';
    int32_t status = BLIS_ERROR;
    try {
      status = f(err, sizeof(err));
    } catch (...) {
      throw PluginError(lib->path(), fmt::format("plugin '{}': {}() threw a C++ exception across "
                                                 "the C ABI",
                                                 name, what));
    }
    if (status != BLIS_OK)
      throw PluginError(lib->path(), fmt::format("plugin '{}': {}() failed: {}", name, what,
                                                 message_or(err, "no message")));
  }
};

// Above this a step time is taken as a bug in the model (about 11.6 days).
constexpr double kAbsurdMicros = 1e12;

// `context` describes the call for the error message; it is only run when
// the value is bad, so the hot path pays nothing for it.
template <class Context>
int64_t checked_time(const ObjectContext& ctx, const char* what, double v, Context&& context) {
  if (std::isnan(v) || v < 0 || v > kAbsurdMicros)
    throw PluginError(ctx.lib->path(),
                      fmt::format("plugin '{}': {}() returned {} µs{}; expected a finite "
                                  "time between 0 and {:.0e} µs",
                                  ctx.name, what, v, context(), kAbsurdMicros));
  return static_cast<int64_t>(v);  // truncation toward zero
}

std::string describe_batch(const blis_step_batch& b) {
  int64_t prefill = 0, decode = 0, tokens = 0;
  for (int64_t i = 0; i < b.count; ++i) {
    const auto& e = *reinterpret_cast<const blis_batch_entry*>(
        reinterpret_cast<const char*>(b.entries) + static_cast<size_t>(i) * b.entry_size);
    (e.phase == BLIS_PHASE_PREFILL ? prefill : decode) += 1;
    tokens += e.new_tokens;
  }
  return fmt::format(" for a batch of {} requests ({} prefill, {} decode, {} new tokens) at t={} µs",
                     b.count, prefill, decode, tokens, b.now_us);
}

class SharedLatencyModel final : public LatencyModel {
 public:
  SharedLatencyModel(std::unique_ptr<ObjectContext> ctx, const blis_latency_model_vtable* vt,
                     const ConfigTable& config)
      : ctx_(std::move(ctx)), vt_(vt), self_(ctx_->create(vt->create, config)) {}
  ~SharedLatencyModel() override { vt_->destroy(self_); }

  int64_t step_time(const blis_step_batch& batch) override {
    double v = 0;
    ctx_->call("step_time", [&](char* e, size_t n) { return vt_->step_time(self_, &batch, &v, e, n); });
    return checked_time(*ctx_, "step_time", v, [&] { return describe_batch(batch); });
  }
  int64_t queueing_time(const blis_request_view& r) override {
    double v = 0;
    ctx_->call("queueing_time",
               [&](char* e, size_t n) { return vt_->queueing_time(self_, &r, &v, e, n); });
    return checked_time(*ctx_, "queueing_time", v, [&] { return fmt::format(" for request_{}", r.id); });
  }
  int64_t output_token_time() override {
    double v = 0;
    ctx_->call("output_token_time",
               [&](char* e, size_t n) { return vt_->output_token_time(self_, &v, e, n); });
    return checked_time(*ctx_, "output_token_time", v, [] { return std::string(); });
  }
  int64_t post_decode_overhead() override {
    double v = 0;
    ctx_->call("post_decode_overhead",
               [&](char* e, size_t n) { return vt_->post_decode_overhead(self_, &v, e, n); });
    return checked_time(*ctx_, "post_decode_overhead", v, [] { return std::string(); });
  }

 private:
  std::unique_ptr<ObjectContext> ctx_;
  const blis_latency_model_vtable* vt_;
  void* self_;
};

class SharedScorer final : public RoutingScorer {
 public:
  SharedScorer(std::unique_ptr<ObjectContext> ctx, const blis_routing_scorer_vtable* vt,
               const ConfigTable& config)
      : ctx_(std::move(ctx)), vt_(vt), self_(ctx_->create(vt->create, config)),
        observe_(vt->struct_size >= kScorerObserveEnd ? vt->observe : nullptr) {}
  ~SharedScorer() override { vt_->destroy(self_); }

  void score(const blis_route_input& in, double* scores) override {
    ctx_->call("score", [&](char* e, size_t n) { return vt_->score(self_, &in, scores, e, n); });
  }
  bool observes() const override { return observe_ != nullptr; }
  void observe(const blis_route_input& in, int64_t chosen) override {
    try {
      observe_(self_, &in, chosen);
    } catch (...) {
      throw PluginError(ctx_->lib->path(),
                        fmt::format("plugin '{}': observe() threw a C++ exception across the C ABI",
                                    ctx_->name));
    }
  }

 private:
  std::unique_ptr<ObjectContext> ctx_;
  const blis_routing_scorer_vtable* vt_;
  void* self_;
  void (*observe_)(void*, const blis_route_input*, int64_t);
};

class SharedAdmission final : public AdmissionPolicy {
 public:
  SharedAdmission(std::unique_ptr<ObjectContext> ctx, const blis_admission_policy_vtable* vt,
                  const ConfigTable& config)
      : ctx_(std::move(ctx)), vt_(vt), self_(ctx_->create(vt->create, config)) {}
  ~SharedAdmission() override { vt_->destroy(self_); }

  bool admit(const blis_route_input& in, std::string& reason) override {
    int32_t admitted = 0;
    char why[256] = {0};
    ctx_->call("admit", [&](char*, size_t) {
      return vt_->admit(self_, &in, &admitted, why, sizeof(why));
    });
    reason = admitted ? std::string() : std::string(why);
    return admitted != 0;
  }

 private:
  std::unique_ptr<ObjectContext> ctx_;
  const blis_admission_policy_vtable* vt_;
  void* self_;
};

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
  if (p.vtable == nullptr)
    throw PluginError(path, fmt::format("plugin '{}' has no vtable", p.name));
  uint32_t need = 0;
  const char* call = "";
  switch (p.kind) {
    case BLIS_KIND_LATENCY_MODEL: need = kMinLatencyVtable; call = "post_decode_overhead"; break;
    case BLIS_KIND_ROUTING_SCORER: need = kMinScorerVtable; call = "score"; break;
    case BLIS_KIND_ADMISSION_POLICY: need = kMinAdmissionVtable; call = "admit"; break;
    default:
      throw PluginError(path, fmt::format("plugin '{}' has unknown kind {}", p.name, p.kind));
  }
  uint32_t have = vtable_size(p);
  if (have < need)
    throw PluginError(path, fmt::format("plugin '{}': its vtable is {} bytes and lacks {}() "
                                        "(needs {} bytes); it was built for an older, "
                                        "incompatible SDK",
                                        p.name, have, call, need));
  // Required calls must be present.
  const void* const* slots = reinterpret_cast<const void* const*>(
      static_cast<const char*>(p.vtable) + offsetof(blis_latency_model_vtable, create));
  size_t required = (need - offsetof(blis_latency_model_vtable, create)) / sizeof(void*);
  if (p.kind == BLIS_KIND_ROUTING_SCORER) required = 3;  // create, destroy, score
  for (size_t i = 0; i < required; ++i)
    if (slots[i] == nullptr)
      throw PluginError(path, fmt::format("plugin '{}': vtable slot {} is NULL", p.name, i));
}

PluginKind to_kind(int32_t k) { return static_cast<PluginKind>(k); }

}  // namespace

std::shared_ptr<LoadedLibrary> open_plugin_library(const std::string& path) {
  boost::dll::shared_library lib;
  std::error_code ec;
  if (!fs::exists(path)) throw PluginError(path, "no such file");
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
  if (m->count > 0 && m->plugins == nullptr)
    throw PluginError(path, "manifest lists plugins but its plugin array is NULL");
  auto loaded = std::make_shared<LoadedLibrary>(path, std::move(lib), m);
  if (m->count > 0) {
    // The first entry's size is the library's stride; check it first.
    if (m->plugins[0].struct_size < kMinInfoSize) check_plugin_entry(path, m->plugins[0], 0);
    for (uint32_t i = 0; i < m->count; ++i) check_plugin_entry(path, loaded->plugin(i), i);
  }
  return loaded;
}

LibraryManifest describe(const LoadedLibrary& lib) {
  LibraryManifest out;
  out.path = lib.path();
  out.abi_major = lib.manifest().abi_major;
  out.abi_minor = lib.manifest().abi_minor;
  for (uint32_t i = 0; i < lib.manifest().count; ++i) {
    const blis_plugin_info& p = lib.plugin(i);
    out.plugins.push_back(PluginInfo{to_kind(p.kind), p.name, p.version ? p.version : "",
                                     p.summary ? p.summary : ""});
  }
  return out;
}

void register_library(Registries& reg, const std::shared_ptr<LoadedLibrary>& lib) {
  for (uint32_t i = 0; i < lib->manifest().count; ++i) {
    const blis_plugin_info& p = lib->plugin(i);
    std::string name = p.name;
    std::string version = p.version ? p.version : "";
    std::string summary = p.summary ? p.summary : "";
    const uint32_t needs = p.struct_size >= kInfoNeedsEnd ? p.needs : 0;
    switch (p.kind) {
      case BLIS_KIND_LATENCY_MODEL: {
        auto vt = static_cast<const blis_latency_model_vtable*>(p.vtable);
        reg.latency.add({name, version, summary, lib->path(), [lib, vt, name](const CreateArgs& a) {
                           auto ctx = std::make_unique<ObjectContext>(lib, "latency-model", name, a.seed);
                           return std::unique_ptr<LatencyModel>(
                               new SharedLatencyModel(std::move(ctx), vt, *a.config));
                         }, needs});
        break;
      }
      case BLIS_KIND_ROUTING_SCORER: {
        auto vt = static_cast<const blis_routing_scorer_vtable*>(p.vtable);
        reg.scorers.add({name, version, summary, lib->path(), [lib, vt, name](const CreateArgs& a) {
                           auto ctx = std::make_unique<ObjectContext>(lib, "routing-scorer", name, a.seed);
                           return std::unique_ptr<RoutingScorer>(
                               new SharedScorer(std::move(ctx), vt, *a.config));
                         }});
        break;
      }
      case BLIS_KIND_ADMISSION_POLICY: {
        auto vt = static_cast<const blis_admission_policy_vtable*>(p.vtable);
        reg.admission.add({name, version, summary, lib->path(), [lib, vt, name](const CreateArgs& a) {
                             auto ctx = std::make_unique<ObjectContext>(lib, "admission-policy", name, a.seed);
                             return std::unique_ptr<AdmissionPolicy>(
                                 new SharedAdmission(std::move(ctx), vt, *a.config));
                           }});
        break;
      }
      default: break;  // rejected by open_plugin_library
    }
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

void load_plugin_dirs(Registries& reg, const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string fname = e.path().filename().string();
      if (e.is_regular_file() && fname.rfind("lib", 0) == 0 && e.path().extension() == ".so")
        files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) register_library(reg, open_plugin_library(f));
  }
}

}  // namespace blis
