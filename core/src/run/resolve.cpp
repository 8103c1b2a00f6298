// Resolution of a RunConfig (spec cli §3.1-§3.7, spec cluster §8). Every rule
// about a plugin is expressed through what the plugin declares (blis_need
// bits) or through the data tables, never through its name.
#include "run/resolve.hpp"

#include "config/fleet_records.hpp"
#include "config/list_settings.hpp"
#include "workload/slo_class.hpp"

#include "run/path_rules.hpp"

#include "config/pool_text.hpp"
#include "config/saturation_file.hpp"
#include "run/fleet_config.hpp"
#include "run/kv_offload_setup.hpp"
#include "run/lora_setup.hpp"

#include "metrics/fitness.hpp"
#include "metrics/saturation.hpp"
#include "run/memory_budget.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>
#include <blis/lua.hpp>
#include <blis/plugin_loader.hpp>
#include <blis/script_lookup.hpp>
#include <blis/settings.hpp>
#include <blis/workload_convert.hpp>

#include "util/arith.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace blis {

RunContext::RunContext(RunContext&&) noexcept = default;
RunContext::~RunContext() = default;

RunContext RunContext::open(const RunConfig& config) {
  // A folder that does not exist would be skipped silently: say so instead.
  for (const auto& [key, dirs] : {std::pair{"plugin_dir", &config.plugin_dirs}, std::pair{"script_dir", &config.script_dirs}})
    for (const std::string& d : *dirs) {
      std::error_code ec;
      if (!std::filesystem::is_directory(d, ec) && d != "." )
        throw InputError(config.where(key), fmt::format("{}: no such folder", d));
      if (std::string(key) == "plugin_dir") check_path(config.rights, PathUse::PluginFolder, d, config.where(key));
    }
  RunContext ctx;
  ctx.env = Environment::load(config.plugin_dirs, config.seed.value_or(42));
  ctx.vm = std::make_unique<LuaVm>(config.seed.value_or(42));
  ctx.data = DataCatalog::load(ctx.env.data_dir);
  if (config.defaults_filepath) ctx.data.apply_reference_defaults(*config.defaults_filepath);
  return ctx;
}

namespace {

void require(bool ok, const std::string& where, const std::string& what) {
  if (!ok) throw InputError(where, what);
}

// The seed's priorities are ages (slo-based) or negated ages (inverted-slo),
// so their order is an arrival order (spec engine §7); HEAD's (slo-class) are
// the requests' vLLM priorities, fixed by their SLO class (sim/scheduler.go).
QueueOrder queue_order(const std::string& scheduler, const std::string& priority) {
  const bool aging = priority == "slo-based";
  const bool inverted = priority == "inverted-slo";
  const bool by_class = priority == "slo-class";
  if (scheduler == "sjf") return QueueOrder::ShortestFirst;
  if (scheduler == "priority-fcfs")
    return by_class ? QueueOrder::RankAsc : inverted ? QueueOrder::ArrivalDesc : QueueOrder::ArrivalAsc;
  if (scheduler == "reverse-priority")
    return by_class ? QueueOrder::RankDesc : aging ? QueueOrder::ArrivalDesc : QueueOrder::ArrivalAsc;
  return QueueOrder::Fcfs;
}

// A registered plugin, else a Lua script by path or by name. nullopt when
// found, else the "unknown <what> ...; valid: ..." message.
std::optional<std::string> unknown_plugin(PluginKind kind, const std::string& what, const std::string& spec,
                                          const RunConfig& c, RunContext& ctx) {
  const auto dirs = script_search_dirs(c.script_dirs, ctx.env.script_dir);
  if (resolve_plugin_name(*ctx.env.registries, *ctx.vm, kind, spec, dirs)) return std::nullopt;
  return fmt::format("unknown {}; valid: {}", what,
                     available_plugin_names(*ctx.env.registries, *ctx.vm, kind, dirs));
}

// `path/to/libx.so[:name]` loads that library and selects its plugin of
// `kind` (the named one when it has several), if the configuration's rights
// allow opening it (run/path_rules.hpp): checked before any of its code runs.
// `noun` names the kind in messages ("latency model").
std::string load_explicit_library(const std::string& spec, const std::string& where, const RunConfig& c,
                                  Environment& env, PluginKind kind, const char* noun) {
  check_path(c.rights, PathUse::Library, spec, where);
  const std::string path = library_path(spec);
  const std::string name = path.size() < spec.size() ? spec.substr(path.size() + 1) : "";
  auto lib = open_plugin_library(path);
  LibraryManifest m = describe(*lib);
  std::vector<std::string> found;
  for (const auto& p : m.plugins)
    if (p.kind == kind) found.push_back(p.name);
  if (found.empty()) throw PluginError(path, fmt::format("contains no {} plugin", kind_name(kind)));
  std::string chosen = name;
  if (chosen.empty()) {
    if (found.size() > 1)
      throw PluginError(path, fmt::format("contains several {}s ({}); choose one with {}:NAME", noun,
                                          fmt::join(found, ", "), path));
    chosen = found[0];
  }
  if (std::find(found.begin(), found.end(), chosen) == found.end())
    throw PluginError(path, fmt::format("has no {} '{}' (it has {})", noun, chosen, fmt::join(found, ", ")));
  if (const std::string* from = env.registries->of(kind).source_of(chosen); from != nullptr && *from == path)
    return chosen;
  register_library(*env.registries, lib);
  return chosen;
}

// The registered latency models that compute step times from the model and
// the GPU, for messages.
std::string analytical_models(const Registries& reg) {
  std::vector<std::string> names;
  for (const auto& [name, e] : reg.latency.entries())
    if ((e.needs & (BLIS_NEED_MODEL | BLIS_NEED_HARDWARE)) == (BLIS_NEED_MODEL | BLIS_NEED_HARDWARE))
      names.push_back(name);
  return text::join(names, ", ");
}

bool all_zero(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x == 0; });
}

// --profile-set NAME: every setting of the bundle that no writer gave takes
// the bundle's value, in `given` as well, so that resolution treats it as
// given (a memory share asks for the computed KV blocks). A timeout applies
// to workloads made from flags only, as in HEAD (spec head §4.1); with a
// spec or a trace the bundle's timeout only makes timed_out_requests print.
void apply_profile_set(ResolvedRun& r, const DataCatalog& data) {
  if (!r.given.profile_set) return;
  const std::string& name = *r.given.profile_set;
  const auto& sets = data.profile_sets();
  const auto it = sets.find(name);
  if (it == sets.end()) {
    std::vector<std::string> names;
    names.reserve(sets.size());
    for (const auto& [n, set] : sets) names.push_back(n);
    throw InputError(r.given.where("profile_set"), fmt::format("unknown profile set '{}'; valid: {}{}", name,
                                                               text::join(names, ", "), text::did_you_mean(name, names)));
  }
  const std::string origin = "profile-set " + name;
  const WorkloadSettings& w = r.given.workload;
  for (const auto& [key, value] : it->second) {
    const SettingDef* def = find_setting(key);
    if (def == nullptr)
      throw ConfigError((std::filesystem::path(data.dir()) / "defaults.toml").string(),
                        fmt::format("[profile-sets.{}] names '{}', which is no setting of blis run", name, key));
    if (def->key == "plugin_config") {  // per plugin and key, below: writers list entries of their own
      for (const auto& entry : text::split(value, '\n')) r.profile_plugin_config.push_back(entry);
      continue;
    }
    if (r.given.origins.count(def->key)) continue;  // given by a writer: it wins
    if (def->key == "timeout" && (w.spec || w.trace)) {
      r.deadlines = true;
      continue;
    }
    std::string text = value;
    if (def->has(kInputPath) && !std::filesystem::path(text).is_absolute())
      text = (std::filesystem::path(data.dir()) / text).string();
    const SettingValue v = parse_setting(*def, text, setting_where(origin, *def));
    for (RunConfig* c : {&r.given, &r.config}) {
      def->set(*c, v, origin);
      c->origins[def->key] = origin;
    }
  }
}

// Whether setting `key` was filled by a profile set rather than given.
bool from_profile_set(const RunConfig& g, const std::string& key) {
  const auto it = g.origins.find(key);
  return it != g.origins.end() && it->second.rfind("profile-set ", 0) == 0;
}

// KV blocks could not be computed from GPU memory. With a memory share
// (HEAD's flag, or its profile set) the count must come from memory, as in
// HEAD, which stops here; the seed had no such flag and falls back to
// `fallback` blocks, with a warning.
void kv_calculation_failed(const Error& err, bool memory_share, const RunConfig& g, int64_t fallback) {
  if (memory_share)
    throw InputError(g.where("gpu_memory_utilization"),
                     fmt::format("KV blocks cannot be computed from GPU memory: {}; give a larger --tp, "
                                 "or --total-kv-blocks",
                                 err.what()));
  spdlog::warn("KV capacity auto-calculation failed: {}; using total-kv-blocks={}", err.what(), fallback);
}

// What the steps of resolve_model() share: the latency model, the model and
// its hardware, and the coefficient table's entry for them.
struct ModelChoice {
  bool alpha_given = false;  // --alpha-coeffs (and so --beta-coeffs) given
  std::string backend;       // the latency model
  std::string model, gpu, vllm;
  int64_t tp = 0;
  std::optional<CoefficientEntry> entry;  // the coefficient table's, if any
  bool trained = false;  // the entry's trained coefficients are the model's
};

bool latency_needs(const ResolvedRun& r, uint32_t need) { return (r.latency_needs & need) != 0; }

// The latency model: given, else the data tables' default (another one
// when coefficients are given without a model), and what it needs.
void choose_latency_model(ResolvedRun& r, RunContext& ctx, ModelChoice& mc) {
  const RunConfig& g = r.given;
  ModelSettings& m = r.config.pool().model;
  const DataCatalog& data = ctx.data;
  const bool alpha_given = g.pool().model.alpha_coeffs.has_value();
  const bool beta_given = g.pool().model.beta_coeffs.has_value();
  if (alpha_given != beta_given)
    throw InputError(g.where(alpha_given ? "alpha_coeffs" : "beta_coeffs"),
                     "--alpha-coeffs and --beta-coeffs go together; give both");
  mc.alpha_given = alpha_given;

  std::string backend = m.latency_model.value_or("");
  if (backend.empty()) {
    backend = data.setting_default(alpha_given ? "latency_model_with_coefficients" : "latency_model");
    if (alpha_given) spdlog::info("--alpha-coeffs and --beta-coeffs given: using the {} latency model", backend);
  }
  if (names_library(backend))
    backend = load_explicit_library(backend, g.where("latency_model"), g, ctx.env, PluginKind::LatencyModel,
                                    "latency model");
  if (auto err = unknown_plugin(PluginKind::LatencyModel, "latency model '" + backend + "'", backend, g, ctx))
    throw InputError(g.where("latency_model"), *err);
  r.latency_model = backend;
  m.latency_model = m.latency_model.value_or(backend);
  if (const auto* entry = ctx.env.registries->latency.find(backend)) r.latency_needs = entry->needs;
  r.analytical = latency_needs(r, BLIS_NEED_MODEL) && latency_needs(r, BLIS_NEED_HARDWARE);
  mc.backend = backend;
}

// The latency model needs a GPU and a TP that neither the user nor the data
// tables gave.
[[noreturn]] void missing_hardware(const ResolvedRun& r, const DataCatalog& data, const ModelChoice& mc) {
  const RunConfig& g = r.given;
  std::vector<std::string> missing;
  if (mc.gpu.empty()) missing.push_back("--hardware (GPU type)");
  if (mc.tp <= 0) missing.push_back("--tp (tensor parallelism)");
  // What the user gave first: the model. Either it is unknown, or only its
  // defaults are missing (an architecture without a GPU and TP of its own).
  if (!r.config.pool().model.model_config_folder && !data.bundled_model(mc.model))
    throw InputError(g.where("model"),
                     fmt::format("unknown model '{}'{} (`blis models` lists the bundled models; another "
                                 "model needs --model-config-folder with its HuggingFace config.json, "
                                 "--hardware and --tp)",
                                 mc.model, text::did_you_mean(mc.model, data.model_names())));
  throw InputError(g.where("model"),
                   fmt::format("model '{}' has no default GPU and TP in the data tables; give {}, e.g. "
                               "--hardware H100 --tp 1 (`blis hardware` lists the GPUs)",
                               mc.model, fmt::join(missing, " and ")));
}

// Model defaults of the data tables (spec cli §3.1): the GPU, TP and vLLM
// version of the model when not given.
void choose_hardware(ResolvedRun& r, const DataCatalog& data, ModelChoice& mc) {
  const RunConfig& g = r.given;
  ModelSettings& m = r.config.pool().model;
  mc.model = text::lower(*m.name);
  m.name = mc.model;
  mc.gpu = m.hardware.value_or("");
  mc.tp = m.tp.value_or(0);
  mc.vllm = m.vllm_version.value_or("");
  // A profile set may give another default TP (HEAD changed 18 of them).
  if (auto d = data.defaults_for(mc.model, g.profile_set.value_or(""))) {
    if (mc.tp == 0 && d->tensor_parallelism > 0) mc.tp = d->tensor_parallelism;
    if (mc.gpu.empty()) mc.gpu = d->gpu;
    if (mc.vllm.empty()) mc.vllm = d->vllm_version;
    spdlog::info("defaults for {}: GPU={}, TP={}, vLLM={}", mc.model, mc.gpu, mc.tp, mc.vllm);
  }
  if (latency_needs(r, BLIS_NEED_HARDWARE) && (mc.gpu.empty() || mc.tp <= 0)) missing_hardware(r, data, mc);
  // GPU names are case-insensitive: the table's spelling is the one used.
  for (const auto& [name, spec] : data.gpus())
    if (text::lower(name) == text::lower(mc.gpu)) mc.gpu = name;
  if (!mc.gpu.empty()) m.hardware = mc.gpu;
  m.tp = mc.tp;
  if (!mc.vllm.empty()) m.vllm_version = mc.vllm;
}

// The architecture (an explicit folder, else the bundled data) and the
// GPU's specification.
void load_architecture(ResolvedRun& r, const DataCatalog& data, const ModelChoice& mc) {
  const RunConfig& g = r.given;
  const ModelSettings& m = r.config.pool().model;
  if (m.model_config_folder) r.arch = load_model_config_folder(*m.model_config_folder);
  else r.arch = data.bundled_model(mc.model);
  if (latency_needs(r, BLIS_NEED_MODEL) && !r.arch)
    throw InputError(g.where("model"),
                     fmt::format("no model architecture for '{}' in {}/models, which the {} latency model "
                                 "needs; give --model-config-folder with a HuggingFace config.json{}",
                                 mc.model, data.dir(), mc.backend,
                                 data.coefficients(mc.model, mc.gpu, mc.tp, mc.vllm)
                                     ? fmt::format(", or use --latency-model {} (the coefficient table has "
                                                   "{} on {} TP{})",
                                                   data.setting_default("latency_model_with_coefficients"),
                                                   mc.model, mc.gpu, mc.tp)
                                     : std::string()));
  if (!mc.gpu.empty() && (latency_needs(r, BLIS_NEED_HARDWARE) || m.hardware_config || r.arch))
    r.hardware = data.hardware(mc.gpu, m.hardware_config.value_or(""));
  // spec head §6.1: the node pool of this GPU type gives its GPUs' memory,
  // which sizes the instances' KV cache when it is computed.
  if (r.hardware)
    for (const Given<NodePoolConfig>& given : g.node_pools) {
      const NodePoolConfig& n = given.value;
      if (n.gpu_memory_gib > 0 && text::lower(n.gpu_type) == text::lower(mc.gpu))
        r.hardware->memory_gib = n.gpu_memory_gib;
    }
}

// Coefficients: given; else the plugin's data defaults; else, for a model
// that is not analytical, the trained table entry (spec cli §3.3).
void choose_coefficients(ResolvedRun& r, RunContext& ctx, ModelChoice& mc) {
  const RunConfig& g = r.given;
  ModelSettings& m = r.config.pool().model;
  const DataCatalog& data = ctx.data;
  const bool alpha_given = mc.alpha_given;
  if (!mc.gpu.empty() && mc.tp > 0) mc.entry = data.coefficients(mc.model, mc.gpu, mc.tp, mc.vllm);
  const std::optional<CoefficientEntry>& entry = mc.entry;
  mc.trained = !r.analytical && entry && !(all_zero(entry->alpha) && all_zero(entry->beta));
  const GlobalCoefficients* plugin_coefficients = data.plugin_coefficients(mc.backend);
  // An analytical model without coefficients of its own computes every time
  // from the model and the GPU: given coefficients would be silently ignored.
  if (alpha_given && r.analytical && plugin_coefficients == nullptr)
    throw InputError(g.where("alpha_coeffs"),
                     fmt::format("{} computes step times analytically and takes no coefficients; use "
                                 "--latency-model {} for coefficients",
                                 mc.backend, data.setting_default("latency_model_with_coefficients")));
  if (alpha_given) {
    r.alpha = *g.pool().model.alpha_coeffs;
    r.beta = *g.pool().model.beta_coeffs;
  } else if (plugin_coefficients) {
    r.alpha = plugin_coefficients->alpha;
    r.beta = plugin_coefficients->beta;
  } else if (mc.trained) {
    r.alpha = entry->alpha;
    r.beta = entry->beta;
  } else if (latency_needs(r, BLIS_NEED_COEFFICIENTS)) {
    throw InputError("--latency-model " + mc.backend,
                     fmt::format("no trained coefficients for model={}, GPU={}, TP={}, vLLM={}; "
                                 "give --alpha-coeffs/--beta-coeffs, or use an analytical latency "
                                 "model ({})",
                                 mc.model, mc.gpu, mc.tp, mc.vllm, analytical_models(*ctx.env.registries)));
  } else if (!r.analytical) {
    r.alpha = {0, 0, 0};  // a model without coefficients of its own sees zeros
    r.beta = {0, 0, 0};
  }
  if (!r.alpha.empty() && !(r.analytical && !alpha_given && !plugin_coefficients)) {
    m.alpha_coeffs = r.alpha;
    m.beta_coeffs = r.beta;
  }
}

// KV blocks (spec cli §3.5): given, then the defaults table, then computed.
// A given memory share (spec head §7.4) asks for the computed count: the
// table's counts were measured at vLLM's default share.
void size_kv_cache(ResolvedRun& r, const ModelChoice& mc) {
  const RunConfig& g = r.given;
  EngineSettings& e = r.config.pool().engine;
  const int64_t tp = mc.tp;
  const std::optional<double> memory_share = e.gpu_memory_utilization;
  if (memory_share && e.total_kv_blocks)
    spdlog::info("{} has no effect: --total-kv-blocks is given", g.where("gpu_memory_utilization"));
  if (memory_share && !e.total_kv_blocks && !(r.arch && r.hardware && tp > 0) &&
      !from_profile_set(g, "gpu_memory_utilization"))
    spdlog::warn("{} has no effect: no model architecture and GPU to compute KV blocks from",
                 g.where("gpu_memory_utilization"));
  if (!e.total_kv_blocks) {
    int64_t blocks = 1000000;
    const bool table_applies = (r.analytical || (mc.trained && !mc.alpha_given)) && !memory_share;
    if (table_applies && mc.entry && mc.entry->total_kv_blocks > 0) {
      blocks = mc.entry->total_kv_blocks;
      spdlog::info("total-kv-blocks={} from the defaults table", blocks);
    } else if (r.arch && r.hardware && tp > 0) {
      try {
        const double share = memory_share.value_or(kDefaultGpuMemoryUtilization);
        // A memory share is HEAD's flag: HEAD's formula with it (quantised weights).
        // LoRA: the adapter slots' HBM is HEAD's static reservation, on this path only.
        const double lora_bytes = r.lora ? static_cast<double>(static_cast<int64_t>(r.lora->reserved_bytes())) : 0;
        blocks = auto_kv_blocks(*r.arch, *r.hardware, tp, e.block_size, share, memory_share.has_value(), lora_bytes);
        if (lora_bytes > 0)
          spdlog::info("reserved {:.2f} GiB of GPU HBM for LoRA adapters (capacity x per-slot footprint)",
                       lora_bytes / 1073741824.0);
        spdlog::info("auto-calculated total-kv-blocks={} (GPU={} GiB x {}, TP={}, block size {})", blocks,
                     r.hardware->memory_gib, share, tp, e.block_size);
      } catch (const Error& err) {
        kv_calculation_failed(err, memory_share.has_value(), g, blocks);
      }
    }
    e.total_kv_blocks = blocks;
  }
  require(*e.total_kv_blocks > 0, g.where("total_kv_blocks"), fmt::format("must be > 0, got {}", *e.total_kv_blocks));
  require(*e.total_kv_blocks <= 100'000'000, g.where("total_kv_blocks"),
          fmt::format("{} KV blocks per instance is more than blis simulates (at most 100000000); "
                      "give --total-kv-blocks, or a smaller --tp",
                      *e.total_kv_blocks));
}

// max-model-len (spec cli §3.6): derived and capped for analytical models.
void cap_max_model_len(ResolvedRun& r) {
  ModelSettings& m = r.config.pool().model;
  const EngineSettings& e = r.config.pool().engine;
  int64_t max_len = m.max_model_len.value_or(0);
  if (r.analytical) {
    if (!m.max_model_len && r.arch) max_len = derive_max_model_len(*r.arch);
    const int64_t cap = *e.total_kv_blocks * e.block_size;
    if (max_len > 0 && ceil_div(max_len, e.block_size) > *e.total_kv_blocks) {
      spdlog::warn("max-model-len {} exceeds KV capacity ({} blocks x {} tokens); capping to {}", max_len,
                   *e.total_kv_blocks, e.block_size, cap);
      max_len = cap;
    }
  }
  m.max_model_len = max_len;
}

// Model, hardware, latency model, coefficients, KV blocks and max-model-len
// of the (only) pool.
void resolve_model(ResolvedRun& r, RunContext& ctx) {
  ModelChoice mc;
  choose_latency_model(r, ctx, mc);
  choose_hardware(r, ctx.data, mc);
  load_architecture(r, ctx.data, mc);
  choose_coefficients(r, ctx, mc);
  size_kv_cache(r, mc);
  cap_max_model_len(r);
}

// The gateway's policies (docs/gateway.md), only with --flow-control: each a
// registered plugin, a Lua script or a library path[:name].
void resolve_gateway(ResolvedRun& r, RunContext& ctx) {
  const RunConfig& g = r.given;
  if (!g.gateway.flow_control) return;
  auto policy = [&](const std::string& given, const char* key, PluginKind kind, const char* noun) {
    std::string name = given;
    if (names_library(name)) name = load_explicit_library(name, g.where(key), g, ctx.env, kind, noun);
    if (auto err = unknown_plugin(kind, fmt::format("{} '{}'", noun, name), name, g, ctx))
      throw InputError(g.where(key), *err);
    return name;
  };
  r.saturation_detector = policy(g.gateway.saturation_detector, "saturation_detector",
                                 PluginKind::SaturationDetector, "saturation detector");
  r.dispatch_order = policy(g.gateway.dispatch_order, "dispatch_order", PluginKind::DispatchOrder, "dispatch order");
  r.fairness_policy =
      policy(g.gateway.fairness_policy, "fairness_policy", PluginKind::FairnessPolicy, "fairness policy");
  if (g.gateway.queue_shedding)
    r.shedding_policy =
        policy(g.gateway.shedding_policy, "shedding_policy", PluginKind::SheddingPolicy, "shedding policy");
}

// E/P/D's encode decider (docs/epd.md), when given: a registered plugin, a
// Lua script or a library path[:name]. Not given: the built-in never.
void resolve_encode(ResolvedRun& r, RunContext& ctx) {
  const RunConfig& g = r.given;
  if (!g.pd.encode_decider) {
    r.encode_decider = "never";
    return;
  }
  std::string name = *g.pd.encode_decider;
  if (names_library(name))
    name = load_explicit_library(name, g.where("encode_decider"), g, ctx.env, PluginKind::EncodeDecider,
                                 "encode decider");
  if (auto err = unknown_plugin(PluginKind::EncodeDecider, fmt::format("encode decider '{}'", name), name, g, ctx))
    throw InputError(g.where("encode_decider"), *err);
  r.encode_decider = name;
}

// LoRA's adapter eviction (docs/lora.md), with adapter slots only: a
// registered plugin, a Lua script or a library path[:name]; lru unless given.
void resolve_lora_eviction(ResolvedRun& r, RunContext& ctx) {
  const RunConfig& g = r.given;
  if (!r.lora || !r.lora->active()) {
    if (g.lora.eviction)
      spdlog::warn("{} has no effect without adapter slots (--lora-config with adapters, --lora-adapter-capacity)",
                   g.where("lora_eviction"));
    return;
  }
  std::string name = g.lora.eviction.value_or("lru");
  if (names_library(name))
    name = load_explicit_library(name, g.where("lora_eviction"), g, ctx.env, PluginKind::AdapterEviction,
                                 "adapter eviction");
  if (auto err = unknown_plugin(PluginKind::AdapterEviction, fmt::format("adapter eviction '{}'", name), name, g, ctx))
    throw InputError(g.where("lora_eviction"), *err);
  r.lora_eviction = name;
}

// The offload tier's eviction policy (docs/kv-offload.md), named by the
// file's eviction_policy: lru (the built-in, without calls), a registered
// plugin, a Lua script or a library path[:name].
void resolve_offload_eviction(ResolvedRun& r, RunContext& ctx) {
  if (!r.offload || r.offload->eviction_policy == "lru") return;
  const RunConfig& g = r.given;
  const std::string& where = r.offload->eviction_where;
  std::string name = r.offload->eviction_policy;
  if (names_library(name))
    name = load_explicit_library(name, where, g, ctx.env, PluginKind::OffloadEviction, "offload eviction");
  if (auto err = unknown_plugin(PluginKind::OffloadEviction, fmt::format("offload eviction '{}'", name), name, g, ctx))
    throw InputError(where, *err);
  r.offload_eviction = name;
}

// The offload eviction policy object, with its --plugin-config keys.
void make_offload_eviction(ResolvedRun& r, RunContext& ctx) {
  if (r.offload_eviction.empty() || r.offload_eviction == "lru") return;
  auto offload = std::make_shared<OffloadChainConfig>(*r.offload);
  const ConfigTable cfg = r.overrides.config_for(r.offload_eviction, ConfigTable{});
  offload->eviction = ctx.env.registries->offload_eviction.create(r.offload_eviction, CreateArgs{&cfg, r.seed});
  r.overrides.warn_unread(r.offload_eviction, cfg);
  r.offload = std::move(offload);
}

// The adapter eviction policy of the run's adapter slots, with its
// --plugin-config keys (after the profile set's).
void make_lora_eviction(ResolvedRun& r, RunContext& ctx) {
  if (r.lora_eviction.empty()) return;
  auto lora = std::make_shared<LoraConfig>(*r.lora);
  const ConfigTable cfg = r.overrides.config_for(r.lora_eviction, ConfigTable{});
  lora->eviction = ctx.env.registries->adapter_eviction.create(r.lora_eviction, CreateArgs{&cfg, r.seed});
  r.overrides.warn_unread(r.lora_eviction, cfg);
  r.lora = std::move(lora);
}

// Admission, routing, scheduling and tracing (spec cluster §8).
void resolve_policies(ResolvedRun& r, RunContext& ctx) {
  const RunConfig& g = r.given;
  PolicySettings& p = r.config.policies;
  p.priority = p.priority.value_or("constant");
  p.scheduler = p.scheduler.value_or("fcfs");
  p.routing = p.routing.value_or("round-robin");
  if (!p.admission) p.admission = ctx.data.setting_default("admission_policy");
  if (auto err = unknown_plugin(PluginKind::AdmissionPolicy, "admission policy '" + *p.admission + "'",
                                *p.admission, g, ctx))
    throw InputError(g.where("admission_policy"), *err);
  // The bucket's two numbers are checked only when the bucket admits (spec cli step 15).
  if (*p.admission == "token-bucket") {
    for (const auto& [key, value] : {std::pair{"token_bucket_capacity", p.token_bucket_capacity},
                                     std::pair{"token_bucket_refill_rate", p.token_bucket_refill_rate}})
      require(!value || (std::isfinite(*value) && *value > 0), g.where(key),
              fmt::format("must be a finite value > 0, got {}", value.value_or(0)));
  }
  r.routing = parse_routing_policy(*p.routing);
  r.order = queue_order(*p.scheduler, *p.priority);

  const TraceSettings& t = r.config.trace;
  const bool tracing = t.level == "decisions";
  if (t.counterfactual_k > 0 && !tracing)
    spdlog::warn("--counterfactual-k={} has no effect without --trace-level decisions", t.counterfactual_k);
  if (t.summarize && !tracing) spdlog::warn("--summarize-trace has no effect without --trace-level decisions");
  if (t.fitness_weights) r.fitness_weights = t.fitness_weights->value;

  if (r.routing != RoutingPolicy::Weighted) {
    if (g.policies.scorers && !g.policies.scorers->empty() && g.where("routing_scorers").rfind("--", 0) == 0)
      spdlog::warn("--routing-scorers has no effect when the routing policy is '{}'", *p.routing);
    if (g.lora.scorer_weight)
      spdlog::warn("{} has no effect when the routing policy is '{}' (only with weighted)",
                   g.where("lora_scorer_weight"), *p.routing);
    return;
  }
  auto unknown = [&](const std::string& name) {
    return unknown_plugin(PluginKind::RoutingScorer, "scorer \"" + name + "\"", name, g, ctx);
  };
  const std::string given_scorers = p.scorers.value_or("");
  std::vector<ScorerWeight> scorers;
  try {
    scorers = parse_scorer_list(given_scorers, unknown);
  } catch (const InputError& e) {
    // A list from a file names the file; from the command line, the flag.
    if (auto placed = at_origin(e, g)) throw *placed;
    throw;
  }
  if (scorers.empty()) {
    p.scorers = ctx.data.setting_default("routing_scorers");
    scorers = parse_scorer_list(*p.scorers);
  }
  for (const auto& sw : scorers)
    if (auto err = unknown(sw.name)) throw InputError(g.where("routing_scorers"), *err);
  if (g.lora.scorer_weight) {  // HEAD: lora-affinity joins the profile, named once
    for (const auto& sw : scorers)
      if (sw.name == "lora-affinity")
        throw InputError(g.where("lora_scorer_weight"),
                         "lora-affinity is already in the scorer profile; set its weight with --routing-scorers "
                         "or --lora-scorer-weight, not both");
    if (auto err = unknown("lora-affinity")) throw InputError(g.where("lora_scorer_weight"), *err);
    scorers.push_back(ScorerWeight{"lora-affinity", *g.lora.scorer_weight});
  }
  r.scorers = std::move(scorers);
}

// Seed, horizon and request count of the workload (spec workload §1.1-§1.2),
// and the workload spec the run generates from.
// Settings a user gave that the chosen workload source does not use.
void warn_ignored(const RunConfig& g, const std::vector<const char*>& keys, const std::string& why) {
  for (const char* key : keys)
    if (g.origins.count(key)) spdlog::warn("{} has no effect: {}", g.where(key), why);
}

const std::vector<const char*> kLengthKeys = {
    "prefix_tokens",     "prompt_tokens",     "prompt_tokens_stdev", "prompt_tokens_min", "prompt_tokens_max",
    "output_tokens",     "output_tokens_stdev", "output_tokens_min", "output_tokens_max"};

// spec head §4.1: --timeout gives every client and cohort its deadline (none
// when negative), over a spec's own.
void apply_timeout(ResolvedRun& r) {
  const std::optional<int64_t>& t = r.given.workload.timeout_s;
  if (!t) return;
  const int64_t us = *t > 0 ? *t * 1'000'000 : 0;
  for (auto& c : r.spec->clients) c.timeout_us = us;
  for (auto& c : r.spec->cohorts) c.timeout_us = us;
  r.spec->expanded_timeout_us = us;
  r.deadlines = true;
}

// Whether some request may have a deadline: timed_out_requests is reported.
bool has_deadlines(const WorkloadSpec& spec) {
  // Closed-loop sessions default to 300 s, as concurrency clients do.
  const bool chat = spec.inference_perf && spec.inference_perf->shared_prefix &&
                    spec.inference_perf->shared_prefix->enable_multi_turn_chat;
  if (spec.closed_loop_sessions && chat && spec.clients.empty()) return true;
  for (const auto& c : spec.clients) {
    const bool session = spec.closed_loop_sessions && c.reasoning && c.reasoning->multi_turn;
    if (c.timeout_us.value_or(c.concurrency > 0 || session ? kDefaultClosedLoopTimeoutUs : 0) > 0) return true;
  }
  for (const auto& c : spec.cohorts)
    if (c.timeout_us.value_or(0) > 0) return true;
  return false;
}

// Settings the workload's source makes moot are told about on stderr.
void warn_unused_workload_settings(const RunConfig& g, const WorkloadSettings& w) {
  if (w.spec || w.trace) {
    const std::string why = w.spec ? "the workload spec sets arrivals and lengths" : "the trace sets arrivals and lengths";
    std::vector<const char*> keys = kLengthKeys;
    keys.push_back("rate");
    keys.push_back("workload");
    keys.push_back("arrival_process");
    keys.push_back("arrival_cv");
    warn_ignored(g, keys, why);
    if (w.trace && !w.spec) warn_ignored(g, {"timeout"}, "requests replayed from a trace have no deadlines");
  } else if (w.workload == "traces") {
    std::vector<const char*> keys = kLengthKeys;
    keys.push_back("rate");
    keys.push_back("arrival_process");
    keys.push_back("arrival_cv");
    warn_ignored(g, keys, "the trace sets arrivals and lengths");
  } else if (w.workload != "distribution") {
    warn_ignored(g, kLengthKeys, "the preset '" + w.workload + "' sets the lengths");
  }
}

// A --workload-spec: its seed, horizon and request count unless the flags give them.
void resolve_spec_workload(ResolvedRun& r, const RunConfig& g, const WorkloadSettings& w) {
  require(!w.trace, g.where("workload_spec"), "give --workload-spec or --workload-trace, not both");
  WorkloadSpec spec = load_workload_spec(*w.spec);
  // The file's seed unless --seed is given (the simulator's streams keep
  // --seed either way), its horizon unless --horizon is, its request count
  // unless --num-requests is.
  if (g.seed) {
    spdlog::info("CLI --seed {} overrides workload-spec seed {}", *g.seed, spec.seed);
    spec.seed = *g.seed;
  } else {
    spdlog::info("Using workload-spec seed {} (CLI --seed not specified)", spec.seed);
  }
  if (spec.horizon > 0 && !g.horizon) r.horizon = spec.horizon;
  r.request_cap = g.workload.num_requests ? *g.workload.num_requests : spec.num_requests;
  if (!g.workload.num_requests && spec.num_requests < 0)
    throw InputError(g.where("workload_spec"),
                     fmt::format("the spec's num_requests is {}: give a count of requests (or 0 and a horizon "
                                 "to bound the workload by time)",
                                 spec.num_requests));
  if (r.request_cap <= 0 && r.horizon == kNoHorizon)
    throw InputError(g.where("workload_spec"),
                     "the spec sets neither num_requests nor horizon: give one of them, "
                     "or --num-requests or --horizon, to bound the workload");
  spec.closed_loop_sessions = w.session_mode == "closed-loop";
  r.spec = std::move(spec);
  apply_timeout(r);
  r.deadlines = r.deadlines || has_deadlines(*r.spec);
}

// --workload traces: the legacy CSV through the lossy conversion.
void resolve_legacy_traces(ResolvedRun& r, const RunConfig& g, const WorkloadSettings& w) {
  // spec cli §3.7 step 2: the legacy CSV through the lossy conversion,
  // bounded by the run's horizon, generated with --seed.
  if (!w.traces_filepath)
    throw InputError(g.where("workload"), "--workload traces needs --workload-traces-filepath FILE (the trace CSV)");
  spdlog::warn("--workload traces replays the CSV only approximately: every request gets the mean prompt and "
               "output length, and arrivals are evenly spaced at the average rate. To replay a trace exactly, "
               "use --workload-trace (blis's CSV) or --workload-spec");
  WorkloadSpec spec = csv_trace_to_spec(*w.traces_filepath, r.horizon == kNoHorizon ? 0 : r.horizon);
  spec.seed = r.seed;
  r.request_cap = g.workload.num_requests ? *g.workload.num_requests : spec.num_requests;
  r.config.workload.num_requests = r.request_cap;
  try {
    validate_workload_spec(spec);
  } catch (const InputError& e) {
    throw InputError(g.where("workload_traces_filepath"),
                     *w.traces_filepath + ": the trace converts to an invalid spec: " + e.what());
  }
  r.spec = std::move(spec);
}

// A distribution or preset workload, open or closed loop.
void resolve_distribution_workload(ResolvedRun& r, const RunContext& ctx, const RunConfig& g,
                                   const WorkloadSettings& w, int64_t concurrency) {
  if (w.traces_filepath)
    spdlog::warn("{} has no effect: it is read only with --workload traces", g.where("workload_traces_filepath"));
  DistributionWorkload d;
  d.rate = w.rate;
  // Closed-loop users run until --num-requests or --horizon stops them.
  d.num_requests = w.num_requests.value_or(concurrency > 0 ? 0 : 100);
  d.concurrency = concurrency;
  d.think_time_us = w.think_time_ms.value_or(0) * 1000;
  if (concurrency > 0)
    warn_ignored(g, {"arrival_process", "arrival_cv"}, "closed-loop users send when their previous request ends");
  else if (w.arrival_process)
    d.arrival.process = *w.arrival_process;
  if (w.arrival_cv && concurrency == 0) {
    const bool shaped = d.arrival.process == "gamma" || d.arrival.process == "weibull";
    if (!shaped)
      spdlog::warn("{} is ignored: {} arrivals have no shape parameter (it applies to gamma and weibull)",
                   g.where("arrival_cv"), d.arrival.process);
    else
      d.arrival.cv = *w.arrival_cv;
    if (d.arrival.process == "weibull")
      require(*w.arrival_cv >= 0.01 && *w.arrival_cv <= 10.4, g.where("arrival_cv"),
              fmt::format("must lie in [0.01, 10.4] for weibull arrivals, got {}", *w.arrival_cv));
  }
  if (w.workload == "distribution") {
    auto check_len = [&](const char* name, int64_t mean, int64_t sd, int64_t lo, int64_t hi) {
      auto at = [&](const std::string& suffix) { return g.where(key_of_flag(std::string(name) + suffix)); };
      const std::string base = std::string("--") + name;
      require(lo >= 1, at("-min"), fmt::format("must be >= 1, got {}", lo));
      require(hi >= 1, at("-max"), fmt::format("must be >= 1, got {}", hi));
      require(sd >= 0, at("-stdev"), fmt::format("must be >= 0, got {}", sd));
      require(lo <= hi, at("-min"), fmt::format("{}-min ({}) must be <= {}-max ({})", base, lo, base, hi));
      require(mean >= lo && mean <= hi, at(""), fmt::format("mean {} must lie in [{}, {}]", mean, lo, hi));
      // The reference also demands the standard deviation lie in [min, max]
      // (docs/differences.md): blis accepts any stdev from 0 to max.
      require(sd <= hi, at("-stdev"), fmt::format("must be <= {}-max ({}), got {}", base, hi, sd));
    };
    check_len("prompt-tokens", w.prompt_tokens, w.prompt_tokens_stdev, w.prompt_tokens_min, w.prompt_tokens_max);
    check_len("output-tokens", w.output_tokens, w.output_tokens_stdev, w.output_tokens_min, w.output_tokens_max);
    d.prefix_tokens = w.prefix_tokens;
    d.prompt_mean = w.prompt_tokens, d.prompt_stdev = w.prompt_tokens_stdev;
    d.prompt_min = w.prompt_tokens_min, d.prompt_max = w.prompt_tokens_max;
    d.output_mean = w.output_tokens, d.output_stdev = w.output_tokens_stdev;
    d.output_min = w.output_tokens_min, d.output_max = w.output_tokens_max;
  } else {
    auto p = ctx.data.preset(w.workload);
    if (!p)
      throw InputError(g.where("workload"), fmt::format("unknown workload '{}'; use distribution or a preset: {}",
                                                        w.workload, text::join(ctx.data.preset_names(), ", ")));
    d.prefix_tokens = p->prefix_tokens;
    d.prompt_mean = p->prompt_tokens, d.prompt_stdev = p->prompt_tokens_stdev;
    d.prompt_min = p->prompt_tokens_min, d.prompt_max = p->prompt_tokens_max;
    d.output_mean = p->output_tokens, d.output_stdev = p->output_tokens_stdev;
    d.output_min = p->output_tokens_min, d.output_max = p->output_tokens_max;
  }
  if (d.num_requests <= 0 && !g.horizon)
    throw InputError(g.where("num_requests"), "0 requests and no --horizon: give one of them to bound the workload");
  r.request_cap = d.num_requests;
  r.config.workload.num_requests = d.num_requests;
  WorkloadSpec spec = synthesize_distribution_spec(d, r.seed);
  validate_workload_spec(spec);
  r.spec = std::move(spec);
  if (concurrency == 0) r.distribution = d;
  apply_timeout(r);
  r.deadlines = r.deadlines || has_deadlines(*r.spec);
}

// `blis replay`: the TraceV2's requests (workload/trace_v2.hpp); by default
// the run lasts twice the last injection time (10 minutes when that is 0), as
// HEAD's replay.
void resolve_replay_workload(ResolvedRun& r, const RunConfig& g) {
  const RunConfig::Replay& rp = *g.replay;
  for (const char* key : {"workload_spec", "workload_trace", "concurrency"})
    if (g.origins.count(key))
      throw InputError(g.where(key), "not with blis replay: the trace (--trace-header, --trace-data) is the workload");
  auto trace = std::make_shared<workload::TraceV2>(workload::load_trace_v2(rp.header, rp.data));
  if (trace->records.empty()) throw InputError(rp.data, "the trace has no requests");
  if (trace->header.has_kv_offload)
    throw InputError(rp.header, "kv_offload: the trace's KV-cache offload tiers cannot be replayed by blis");
  int64_t last = 0;
  for (const workload::TraceRecord& rec : trace->records) {
    last = std::max(last, workload::injection_time(rec));
    r.deadlines = r.deadlines || rec.deadline_us > 0;
  }
  if (!g.horizon) r.horizon = last <= 0 ? 600'000'000 : last > kNoHorizon / 2 ? kNoHorizon : 2 * last;
  r.request_cap = 0;
  r.replay = std::move(trace);
}

// A replayed trace's goodput targets, under those of the flags (HEAD's precedence).
void apply_trace_targets(ResolvedRun& r) {
  if (!r.replay) return;
  for (const auto& [name, t] : r.replay->header.goodput_slo_targets) {
    const auto cls = name == "default" ? std::optional<int>(0) : workload::slo_class_from_name(name);
    if (!cls)
      throw InputError(r.replay->header.where, fmt::format("goodput_slo_targets: unknown SLO class '{}' (expected {})",
                                                           name, workload::kSloClassChoices));
    SloTargets& target = r.slo_targets[*cls];
    if (t.ttft_ms > 0) target.ttft_ms = t.ttft_ms;
    if (t.itl_ms > 0) target.itl_ms = t.itl_ms;
    if (t.e2e_ms > 0) target.e2e_ms = t.e2e_ms;
  }
}

void resolve_workload(ResolvedRun& r, const RunContext& ctx) {
  const RunConfig& g = r.given;
  const WorkloadSettings& w = r.config.workload;
  warn_unused_workload_settings(g, w);
  r.seed = g.seed.value_or(42);
  r.horizon = g.horizon.value_or(kNoHorizon);
  const int64_t concurrency = w.concurrency.value_or(0);
  if (concurrency > 0) {  // spec head §4.2
    require(!w.spec, g.where("concurrency"),
            "not with --workload-spec: give the spec's clients a concurrency instead");
    require(!w.trace, g.where("concurrency"), "not with --workload-trace: a trace has its own arrivals");
    require(!g.origins.count("rate"), g.where("concurrency"),
            "closed-loop users set their own pace: give --concurrency or --rate, not both");
  } else {
    warn_ignored(g, {"think_time_ms"}, "it applies to --concurrency users only");
  }
  if (g.replay) return resolve_replay_workload(r, g);
  if (w.spec) return resolve_spec_workload(r, g, w);
  if (w.trace) {
    r.request_cap = g.workload.num_requests.value_or(0);
    return;
  }
  if (w.workload == "traces") return resolve_legacy_traces(r, g, w);
  resolve_distribution_workload(r, ctx, g, w, concurrency);
}

}  // namespace

// --model-autoscaler-interval-us (HEAD: set, it replaces the policy file's
// autoscaler.interval_us; 0 disables the autoscaler).
static void apply_autoscaler_interval(RunConfig& c) {
  if (!c.model_autoscaler_interval_us) return;
  const auto us = static_cast<int64_t>(*c.model_autoscaler_interval_us);  // whole µs, as the kernel's clock
  const std::string where = c.where("model_autoscaler_interval_us");
  if (us == 0) {  // HEAD: 0 = no autoscaler, the policy file's included
    c.autoscaler.reset();
    return;
  }
  const std::string interval = fmt::format("interval={}us", us);
  if (!c.autoscaler) {
    c.origins["autoscaler"] = where;
    c.autoscaler = Given<AutoscalerSettings>{parse_autoscaler(interval, where), interval};
    return;
  }
  // Replace the interval of the record, and its interval= item in the text
  // it is written back as, keeping its other keys.
  c.autoscaler->value.interval = us;
  std::string& text = c.autoscaler->text;
  size_t at = 0;
  while ((at = text.find("interval=", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == ' ' || text[at - 1] == '\t') break;
    at += 9;
  }
  if (at == std::string::npos) {
    text = interval + " " + text;
  } else {
    const size_t end = text.find_first_of(" \t", at);
    text.replace(at, end == std::string::npos ? std::string::npos : end - at, interval);
  }
}

void apply_policy_file(RunConfig& c) {
  if (!c.policies.policy_file) return;
  const std::string& path = *c.policies.policy_file;
  const PolicyBundle b = load_policy_config(path);
  PolicySettings& p = c.policies;
  auto take = [&](const char* key, auto& field, const auto& from) {
    if (from && !field) {
      field = *from;
      c.origins[key] = path;
    }
  };
  take("admission_policy", p.admission, b.admission_policy);
  take("token_bucket_capacity", p.token_bucket_capacity, b.token_bucket_capacity);
  take("token_bucket_refill_rate", p.token_bucket_refill_rate, b.token_bucket_refill_rate);
  // HEAD's tier-shed and gaie-legacy keys: that plugin's configuration, when it admits.
  std::vector<std::string> keys = b.admission_keys;
  // A file naming tier-shed protects standard (3) by default, the flag alone
  // everything non-negative (0): the same with GIE's priorities, not with
  // --slo-priorities (HEAD, cmd/root.go resolvePolicies).
  auto has_key = [&](const char* k) {
    return std::any_of(keys.begin(), keys.end(), [&](const std::string& kv) { return kv.rfind(k, 0) == 0; });
  };
  const bool given = std::any_of(c.plugin_config.begin(), c.plugin_config.end(), [](const PluginSetting& s) {
    return s.entry.rfind("tier-shed.tier_shed_min_priority=", 0) == 0;
  });
  if (b.admission_policy == "tier-shed" && !has_key("tier_shed_min_priority=") && !given)
    keys.push_back("tier_shed_min_priority=3");
  for (const std::string& kv : keys) {
    const char* plugin = kv.rfind("tier_shed_", 0) == 0 ? "tier-shed" : "gaie-legacy";
    if (p.admission == plugin) c.plugin_config.push_back(PluginSetting{std::string(plugin) + "." + kv, path});
  }
  // Its lists and records are read as a writer's would be, placed at the file.
  auto take_record = [&](const char* key, auto& field, const std::optional<std::string>& from, auto parse) {
    if (!from || field) return;
    c.origins[key] = path;  // first: the reader's messages name the file
    field = typename std::remove_reference_t<decltype(field)>::value_type{parse(*from, c.where(key)), *from};
  };
  take_record("tenant_budgets", p.tenant_budgets, b.tenant_budgets, &parse_tenant_budgets);
  take_record("slo_priorities", p.slo_priorities, b.slo_priorities, &parse_slo_priorities);
  take_record("slo_targets", c.gateway.slo_targets, b.slo_targets,
              &parse_gateway_slo_targets);  // --slo-targets wins (HEAD)
  take("routing_policy", p.routing, b.routing_policy);
  take("priority_policy", p.priority, b.priority_policy);
  take("scheduler", p.scheduler, b.scheduler);
  take_record("autoscaler", c.autoscaler, b.autoscaler, &parse_autoscaler);
  take_record("lifecycle", c.lifecycle, b.lifecycle, &parse_lifecycle);
  // The file's scorers count only when no other writer listed any.
  if (!b.scorers.empty() && (!p.scorers || p.scorers->empty())) {
    std::vector<std::string> parts;
    for (const auto& sw : b.scorers) parts.push_back(sw.name + ":" + setting_text(SettingValue{sw.weight}));
    p.scorers = text::join(parts, ",");
    c.origins["routing_scorers"] = path;
  }
  // The file's pools count only when no other writer gave any, as its scorers.
  if (!b.pools.empty() && c.pool_specs.empty()) {
    for (size_t i = 0; i < b.pools.size(); ++i) {
      const PolicyPool& pool = b.pools[i];
      c.pool_specs.push_back({config::read_pool_text(pool.text, pool.where), pool.text});
      c.origins[fmt::format("pools#{}", i)] = pool.where;
    }
    c.origins["pools"] = path;
  }
  // Its node pools likewise; checked here, with the entry's position.
  if (!b.node_pools.empty() && c.node_pools.empty()) {
    for (size_t i = 0; i < b.node_pools.size(); ++i) {
      c.node_pools.push_back({parse_node_pool(b.node_pools[i].text, b.node_pools[i].where), b.node_pools[i].text});
      c.origins[fmt::format("node_pools#{}", i)] = b.node_pools[i].where;
    }
    c.origins["node_pools"] = path;
  }
  // Values from the file are checked like any other writer's.
  for (const char* key : {"priority_policy", "scheduler", "routing_policy"}) {
    const SettingDef* def = find_setting(key);
    if (auto v = def->get(c)) parse_setting(*def, setting_text(*v), c.where(key));
  }
}

RunConfig build_config(const std::vector<const Settings*>& layers, const std::string& script_dir) {
  RunConfig c;
  for (const Settings* l : layers) apply_settings(c, *l);
  // Scripts named in a scenario are found beside it, after any folder the
  // command line or the scenario names (once: a dumped scenario names its own).
  auto same_dir = [&](const std::string& d) {
    std::error_code ec;
    auto norm = [&](const std::string& p) { return (std::filesystem::absolute(p, ec) / "").lexically_normal(); };
    return norm(d) == norm(script_dir);
  };
  if (!script_dir.empty() && std::none_of(c.script_dirs.begin(), c.script_dirs.end(), same_dir))
    c.script_dirs.push_back(script_dir);
  apply_policy_file(c);
  apply_autoscaler_interval(c);
  return c;
}

namespace {

// The goodput targets of --slo-ttft, --slo-itl and --slo-e2e, by class.
void add_slo_targets(const SloSettings& slo, SloTargetMap& targets) {
  for (const auto& [given, field] :
       {std::pair{&slo.ttft, &SloTargets::ttft_ms}, std::pair{&slo.itl, &SloTargets::itl_ms},
        std::pair{&slo.e2e, &SloTargets::e2e_ms}})
    if (*given)
      for (const auto& [slo_class, ms] : (*given)->value) targets[slo_class].*field = ms;
}

// --detectors and the settings of the detectors (spec head §3.1).
void resolve_saturation(const RunConfig& config, ResolvedRun& r) {
  const OutputSettings& o = config.outputs;
  if (!o.detectors) {
    // They would be ignored without a detector: an error, as in HEAD.
    for (const char* key : {"saturation_config", "saturation_report", "saturation_final_window"})
      if (config.origins.count(key))
        throw InputError(config.where(key), "needs --detectors (the detectors it is about)");
    return;
  }
  r.detectors = o.detectors->value;
  bool window_from_file = false;
  if (o.saturation_config) {
    const config::SaturationFile f = config::read_saturation_file(*o.saturation_config, r.detectors);
    r.saturation.threshold_ms = f.threshold_ms;
    BacklogDriftConfig& d = r.saturation.drift;
    d.window_size_sec = f.window_size_sec;
    d.min_windows = f.min_windows;
    d.warmup_windows = f.warmup_windows;
    d.tail_windows = f.tail_windows;
    d.saturated_drain_ratio = f.saturated_drain_ratio;
    d.transient_drain_ratio = f.transient_drain_ratio;
    window_from_file = f.has_backlog_drift_window;
  }
  if (o.saturation_final_window)
    r.saturation.final_window_us = *o.saturation_final_window;
  else if (window_from_file)
    r.saturation.final_window_us = r.saturation.drift.window_size_sec * 1'000'000;
}

}  // namespace

ResolvedRun resolve(const RunConfig& config, RunContext& ctx) {
  ResolvedRun r;
  r.given = config;
  r.config = config;
  require(config.pool().model.name && !config.pool().model.name->empty(), "--model",
          "no model given; e.g. --model qwen/qwen3-14b");
  const EngineSettings& e = config.pool().engine;
  // Checked only when used, as the reference does: a bandwidth of 0 runs without a CPU tier.
  require(e.kv_cpu_blocks == 0 || (std::isfinite(e.kv_transfer_bandwidth) && e.kv_transfer_bandwidth > 0),
          config.where("kv_transfer_bandwidth"),
          fmt::format("must be a finite value > 0 when --kv-cpu-blocks > 0, got {}", e.kv_transfer_bandwidth));
  require(e.kv_cpu_blocks == 0 || (e.kv_transfer_bandwidth >= 1e-9 && e.kv_transfer_bandwidth <= 1e12),
          config.where("kv_transfer_bandwidth"),
          fmt::format("must lie in [1e-09, 1e+12] blocks per µs, got {}", e.kv_transfer_bandwidth));
  std::vector<std::string> entries;
  for (const auto& p : config.plugin_config) entries.push_back(p.entry);
  r.overrides = parse_plugin_overrides(entries);

  apply_profile_set(r, ctx.data);
  r.lora = resolve_lora(config);
  resolve_model(r, ctx);
  r.offload = resolve_kv_offload(r.config, r.arch);
  resolve_policies(r, ctx);
  resolve_gateway(r, ctx);
  resolve_encode(r, ctx);
  resolve_lora_eviction(r, ctx);
  resolve_offload_eviction(r, ctx);
  // spec head §7.2: the caches are queried for the plugins that read them.
  auto needs_cache = [](const auto* entry) { return entry != nullptr && (entry->needs & BLIS_NEED_PREFIX_CACHE) != 0; };
  r.cache_query = needs_cache(ctx.env.registries->admission.find(*r.config.policies.admission));
  for (const auto& sw : r.scorers) r.cache_query = r.cache_query || needs_cache(ctx.env.registries->scorers.find(sw.name));
  std::vector<std::string> used{r.latency_model, *r.config.policies.admission};
  for (const auto& sw : r.scorers) used.push_back(sw.name);
  for (const std::string* gate :
       {&r.saturation_detector, &r.dispatch_order, &r.fairness_policy, &r.shedding_policy})
    if (!gate->empty()) used.push_back(*gate);
  if (config.pd.encode_decider) used.push_back(r.encode_decider);
  if (!r.lora_eviction.empty()) used.push_back(r.lora_eviction);
  if (!r.offload_eviction.empty()) used.push_back(r.offload_eviction);
  // a scaling rule of the user's (docs/autoscaling.md)
  if (config.autoscaler && !config.autoscaler->value.policy.empty()) used.push_back(config.autoscaler->value.policy);
  r.overrides.check_plugins(used);
  // The profile set's plugin keys: for the plugins of this run, under a writer's.
  const auto given_keys = r.overrides.values();
  for (const auto& [plugin, keys] : parse_plugin_overrides(r.profile_plugin_config).values()) {
    if (std::find(used.begin(), used.end(), plugin) == used.end()) continue;
    const auto g = given_keys.find(plugin);
    for (const auto& [key, value] : keys)
      if (g == given_keys.end() || !g->second.count(key))
        r.overrides.set(plugin, key, value, "profile-set " + *config.profile_set);
  }
  resolve_workload(r, ctx);
  if (r.spec) check_adapter_references(r.lora.get(), *r.spec, config.where("workload_spec"));
  if (r.replay) check_trace_adapters(r.lora.get(), r.replay->records, config.replay->data);
  apply_trace_targets(r);
  add_slo_targets(config.slo, r.slo_targets);
  resolve_saturation(config, r);
  r.config.seed = r.seed;
  if (r.horizon != kNoHorizon) r.config.horizon = r.horizon;
  check_memory(r);
  make_lora_eviction(r, ctx);
  make_offload_eviction(r, ctx);
  return r;
}

ResolvedRun resolve_workload_only(const RunConfig& config, RunContext& ctx) {
  ResolvedRun r;
  r.given = config;
  r.config = config;
  resolve_workload(r, ctx);
  add_slo_targets(config.slo, r.slo_targets);
  resolve_saturation(config, r);
  r.config.seed = r.seed;
  return r;
}

std::vector<WorkloadPhase> make_workload_phases(const ResolvedRun& r, const std::vector<ScenarioEvent>& events,
                                                bool& deadlines) {
  std::vector<const ScenarioEvent*> changes;
  for (const ScenarioEvent& e : events)
    if (e.action == EventAction::Workload) changes.push_back(&e);
  std::stable_sort(changes.begin(), changes.end(), [](auto* a, auto* b) { return a->at < b->at; });
  auto closed_loop = [](const WorkloadSpec& s) {
    return std::any_of(s.clients.begin(), s.clients.end(), [](const ClientSpec& c) { return c.concurrency > 0; });
  };
  std::vector<WorkloadPhase> out;
  if (changes.empty()) return out;
  const std::string& where = changes.front()->where;
  // A closed-loop user's next request comes from its own workload, which a
  // change would end under it.
  if (r.spec && closed_loop(*r.spec))
    throw InputError(where, "a workload change cannot follow closed-loop users (--concurrency or a spec's "
                            "concurrency clients): use an open-loop workload, or a 'rate' event");
  const auto sessions = [](const WorkloadSpec& s) {
    const bool chat = s.inference_perf && s.inference_perf->shared_prefix &&
                      s.inference_perf->shared_prefix->enable_multi_turn_chat;
    return s.closed_loop_sessions &&
           (chat || std::any_of(s.clients.begin(), s.clients.end(),
                                [](const ClientSpec& c) { return c.reasoning && c.reasoning->multi_turn; }));
  };
  if (r.spec && sessions(*r.spec))
    throw InputError(where, "a workload change cannot follow closed-loop sessions (--session-mode closed-loop, "
                            "set by --profile-set head): give --session-mode open-loop, or use a 'rate' event");
  const int32_t block_size = static_cast<int32_t>(r.config.pool().engine.block_size);
  for (size_t k = 0; k < changes.size(); ++k) {
    const ScenarioEvent& e = *changes[k];
    const std::string at = fmt::format("{}: event '{}'", e.where, e.text);
    WorkloadSpec spec = load_workload_spec(e.spec);  // errors name the file (and line)
    if (closed_loop(spec))
      throw InputError(at, "the spec has closed-loop (concurrency) clients: a workload change takes open-loop "
                           "clients only");
    if (spec.num_requests <= 0 && r.horizon == kNoHorizon)
      throw InputError(at, "the spec sets no num_requests and the run has no horizon: give the spec a "
                           "num_requests, or the run a --horizon");
    // Its own seed, moved by the change's position: two phases never draw
    // the same random content, whatever their specs' seeds.
    spec.seed = static_cast<int64_t>((static_cast<uint64_t>(spec.seed) + 1'000'003ULL * (k + 1)) & 0x7fffffffffffffffULL);
    if (const std::optional<int64_t>& t = r.given.workload.timeout_s) {
      const int64_t us = *t > 0 ? *t * 1'000'000 : 0;
      for (auto& c : spec.clients) c.timeout_us = us;
      for (auto& c : spec.cohorts) c.timeout_us = us;
      spec.expanded_timeout_us = us;
    }
    deadlines = deadlines || has_deadlines(spec) || r.given.workload.timeout_s.has_value();
    const int64_t horizon = r.horizon == kNoHorizon ? kNoHorizon : std::max<int64_t>(r.horizon - e.at, 0);
    out.push_back({e.at, make_spec_workload(spec, horizon, spec.num_requests > 0 ? spec.num_requests : 0, block_size)});
  }
  return out;
}

std::unique_ptr<WorkloadSource> make_workload(const ResolvedRun& r,
                                              const std::vector<ScenarioEvent>& events) {
  const int32_t block_size = static_cast<int32_t>(r.config.pool().engine.block_size);
  if (r.replay) return workload::make_trace_v2_workload(r.replay, block_size, r.seed);
  double stretch = 1;
  for (const ScenarioEvent& e : events)
    if (e.action == EventAction::Rate) stretch *= std::max(1.0, e.factor);
  int64_t horizon = r.horizon;
  if (horizon != kNoHorizon && stretch > 1)
    horizon = static_cast<int64_t>(std::min(std::ceil(static_cast<double>(horizon) * stretch), 4e18));
  if (r.spec) return make_spec_workload(*r.spec, horizon, r.request_cap, block_size);
  return make_trace_workload(*r.config.workload.trace, horizon, r.request_cap, block_size, r.seed);
}

}  // namespace blis
