// `blis run`: flags, resolution of the configuration (spec cli §3.1-§3.7),
// the simulation, and the report on stdout.
#include "app/commands.hpp"
#include "app/run_options.hpp"
#include "app/simulate.hpp"

#include "cluster/cluster.hpp"
#include "metrics/fitness.hpp"
#include "metrics/report.hpp"

#include <blis/environment.hpp>
#include <blis/errors.hpp>
#include <blis/lua.hpp>
#include <blis/model_data.hpp>
#include <blis/policy_config.hpp>
#include <blis/plugin_loader.hpp>
#include <blis/plugin_overrides.hpp>
#include <blis/script_lookup.hpp>
#include <blis/workload.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace blis::app {

namespace fs = std::filesystem;

namespace {

bool is_analytical(const std::string& b) {
  return b == "roofline" || b == "crossmodel" || b == "trained-roofline";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

QueueOrder queue_order(const std::string& scheduler, const std::string& priority) {
  const bool aging = priority == "slo-based";
  const bool inverted = priority == "inverted-slo";
  if (scheduler == "fcfs" || scheduler.empty()) return QueueOrder::Fcfs;
  if (scheduler == "sjf") return QueueOrder::ShortestFirst;
  // Priorities are ages (slo-based) or negated ages (inverted-slo), so their
  // order is an arrival order (spec engine §7).
  if (scheduler == "priority-fcfs") return inverted ? QueueOrder::ArrivalDesc : QueueOrder::ArrivalAsc;
  if (scheduler == "reverse-priority") return aging ? QueueOrder::ArrivalDesc : QueueOrder::ArrivalAsc;
  throw InputError("--scheduler", "unknown scheduler '" + scheduler +
                                      "'; valid: fcfs, priority-fcfs, reverse-priority, sjf");
}

// What the configuration resolves to.
struct Resolved {
  std::string backend;
  std::string model;
  std::string gpu;
  int64_t tp = 0;
  std::string vllm;
  std::optional<ModelArch> arch;
  std::optional<HardwareSpec> hw;
  std::vector<double> alpha, beta;
  int64_t kv_blocks = 0;
  int64_t max_model_len = 0;
};

bool is_script(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".lua") == 0;
}

// A plugin named on the command line: a registered one, else a Lua script by
// path or by name (blis/script_lookup.hpp). nullopt when found, else the
// "unknown <what> ...; valid: ..." message.
std::optional<std::string> unknown_plugin(PluginKind kind, const std::string& what,
                                          const std::string& spec, const RunOptions& o,
                                          Environment& env, LuaVm& vm) {
  const auto dirs = script_search_dirs(o.script_dirs, env.script_dir);
  if (resolve_plugin_name(*env.registries, vm, kind, spec, dirs)) return std::nullopt;
  return fmt::format("unknown {}; valid: {}", what,
                     available_plugin_names(*env.registries, vm, kind, dirs));
}

// `--latency-model path/to/libx.so[:name]` loads that library explicitly and
// selects its latency model (the named one when it has several).
std::string load_explicit_plugin(const std::string& spec, Environment& env) {
  std::string path = spec, name;
  auto colon = spec.rfind(':');
  if (colon != std::string::npos && spec.find(".so", colon) == std::string::npos) {
    path = spec.substr(0, colon);
    name = spec.substr(colon + 1);
  }
  auto lib = open_plugin_library(path);
  LibraryManifest m = describe(*lib);
  std::vector<std::string> models;
  for (const auto& p : m.plugins)
    if (p.kind == PluginKind::LatencyModel) models.push_back(p.name);
  if (models.empty()) throw PluginError(path, "contains no latency-model plugin");
  if (name.empty()) {
    if (models.size() > 1)
      throw PluginError(path, fmt::format("contains several latency models ({}); choose one with {}:NAME",
                                          fmt::join(models, ", "), path));
    name = models[0];
  }
  if (std::find(models.begin(), models.end(), name) == models.end())
    throw PluginError(path, fmt::format("has no latency model '{}' (it has {})", name, fmt::join(models, ", ")));
  if (const auto* e = env.registries->latency.find(name); e != nullptr && e->source == path) return name;
  register_library(*env.registries, lib);
  return name;
}

Resolved resolve(const RunOptions& o, Environment& env, const DataCatalog& data, LuaVm& vm) {
  Resolved r;
  r.backend = o.latency_model;
  if (!is_script(r.backend) &&
      (r.backend.find('/') != std::string::npos || r.backend.find(".so") != std::string::npos))
    r.backend = load_explicit_plugin(r.backend, env);
  if (auto err = unknown_plugin(PluginKind::LatencyModel, "latency model '" + r.backend + "'",
                                r.backend, o, env, vm))
    throw InputError("--latency-model", *err);
  const bool alpha_given = o.given("--alpha-coeffs"), beta_given = o.given("--beta-coeffs");
  if (alpha_given != beta_given)
    throw InputError(alpha_given ? "--alpha-coeffs" : "--beta-coeffs",
                     "--alpha-coeffs and --beta-coeffs go together; give both");
  if (alpha_given && !o.given("--latency-model")) {
    r.backend = "blackbox";
    spdlog::info("--alpha-coeffs and --beta-coeffs given: using the blackbox latency model");
  }
  if (alpha_given && r.backend == "roofline")
    throw InputError("--alpha-coeffs", "roofline computes step times analytically and takes no "
                                       "coefficients; use --latency-model blackbox for coefficients");
  r.model = lower(o.model);
  r.gpu = o.hardware;
  r.tp = o.tp;
  r.vllm = o.vllm_version;
  if (auto d = data.defaults_for(r.model)) {
    if (r.tp == 0 && d->tensor_parallelism > 0) r.tp = d->tensor_parallelism;
    if (r.gpu.empty()) r.gpu = d->gpu;
    if (r.vllm.empty()) r.vllm = d->vllm_version;
    spdlog::info("defaults for {}: GPU={}, TP={}, vLLM={}", r.model, r.gpu, r.tp, r.vllm);
  }

  const bool analytical = is_analytical(r.backend);
  if (analytical && (r.gpu.empty() || r.tp <= 0)) {
    std::vector<std::string> missing;
    if (r.gpu.empty()) missing.push_back("--hardware (GPU type)");
    if (r.tp <= 0) missing.push_back("--tp (tensor parallelism)");
    throw InputError("--latency-model " + r.backend,
                     fmt::format("needs {}; no defaults are known for model '{}'. Give them "
                                 "explicitly, or use --latency-model blackbox with coefficients",
                                 fmt::join(missing, " and "), r.model));
  }
  // The model's architecture: an explicit folder, else the bundled data.
  if (!o.model_config_folder.empty()) r.arch = load_model_config_folder(o.model_config_folder);
  else r.arch = data.bundled_model(r.model);
  if (analytical && !r.arch)
    throw InputError("--model", fmt::format("no model configuration for '{}' in {}/models; give "
                                            "--model-config-folder with a HuggingFace config.json",
                                            r.model, data.dir()));
  if (!r.gpu.empty() && (analytical || !o.hardware_config.empty() || r.arch))
    r.hw = data.hardware(r.gpu, o.hardware_config);

  // Coefficients.
  std::optional<CoefficientEntry> entry;
  if (!r.gpu.empty() && r.tp > 0) entry = data.coefficients(r.model, r.gpu, r.tp, r.vllm);
  const auto all_zero = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x == 0; });
  };
  // Every model that is not analytical (blackbox, another plugin, a Lua
  // script) gets the trained coefficients and the KV blocks of the table entry.
  const bool trained = !analytical && entry && !(all_zero(entry->alpha) && all_zero(entry->beta));
  if (alpha_given) {
    r.alpha = o.alpha_coeffs;
    r.beta = o.beta_coeffs;
  } else if (r.backend == "crossmodel") {
    r.alpha = data.crossmodel_defaults().alpha;
    r.beta = data.crossmodel_defaults().beta;
  } else if (r.backend == "trained-roofline") {
    r.alpha = data.trained_roofline_defaults().alpha;
    r.beta = data.trained_roofline_defaults().beta;
  } else if (trained) {
    r.alpha = entry->alpha;
    r.beta = entry->beta;
  } else if (r.backend == "blackbox") {
    throw InputError("--latency-model blackbox",
                     fmt::format("no trained coefficients for model={}, GPU={}, TP={}, vLLM={}; "
                                 "give --alpha-coeffs/--beta-coeffs, or use --latency-model "
                                 "roofline, crossmodel or trained-roofline",
                                 r.model, r.gpu, r.tp, r.vllm));
  } else {
    r.alpha = o.alpha_coeffs;
    r.beta = o.beta_coeffs;
  }

  // KV blocks (spec cli §3.5): flag, then the defaults table, then computed.
  r.kv_blocks = o.total_kv_blocks;
  if (!o.given("--total-kv-blocks")) {
    const bool table_applies = analytical || (trained && !alpha_given);
    if (table_applies && entry && entry->total_kv_blocks > 0) {
      r.kv_blocks = entry->total_kv_blocks;
      spdlog::info("total-kv-blocks={} from the defaults table", r.kv_blocks);
    } else if (r.arch && r.hw && r.tp > 0) {
      try {
        r.kv_blocks = auto_kv_blocks(*r.arch, *r.hw, r.tp, o.block_size);
        spdlog::info("auto-calculated total-kv-blocks={} (GPU={} GiB, TP={}, block size {})",
                     r.kv_blocks, r.hw->memory_gib, r.tp, o.block_size);
      } catch (const Error& e) {
        spdlog::warn("KV capacity auto-calculation failed: {}; using total-kv-blocks={}",
                     e.what(), r.kv_blocks);
      }
    }
  }
  // max-model-len (spec cli §3.6): derived and capped for analytical models.
  r.max_model_len = o.max_model_len;
  if (analytical) {
    if (!o.given("--max-model-len") && r.arch) r.max_model_len = derive_max_model_len(*r.arch);
    const int64_t cap = r.kv_blocks * o.block_size;
    if (r.max_model_len > 0 && (r.max_model_len + o.block_size - 1) / o.block_size > r.kv_blocks) {
      spdlog::warn("max-model-len {} exceeds KV capacity ({} blocks x {} tokens); capping to {}",
                   r.max_model_len, r.kv_blocks, o.block_size, cap);
      r.max_model_len = cap;
    }
  }
  return r;
}

void require(bool ok, const char* flag, const std::string& what) {
  if (!ok) throw InputError(flag, what);
}

// The reference's default scorer profile for weighted routing (spec cluster §3.9).
const std::vector<ScorerWeight> kDefaultScorers = {
    {"prefix-affinity", 3}, {"queue-depth", 2}, {"kv-utilization", 2}};

// Applies the policy file under the flags (an explicit flag wins, even when
// equal to its default; spec cluster §8.2), then checks the policies.
std::vector<ScorerWeight> resolve_policies(RunOptions& o, Environment& env, LuaVm& vm) {
  PolicyBundle b;
  if (!o.policy_config.empty()) b = load_policy_config(o.policy_config);
  auto take = [&](const char* flag, auto& field, const auto& from) {
    if (from && !o.given(flag)) field = *from;
  };
  take("--admission-policy", o.admission_policy, b.admission_policy);
  take("--token-bucket-capacity", o.token_bucket_capacity, b.token_bucket_capacity);
  take("--token-bucket-refill-rate", o.token_bucket_refill_rate, b.token_bucket_refill_rate);
  take("--routing-policy", o.routing_policy, b.routing_policy);
  take("--priority-policy", o.priority_policy, b.priority_policy);
  take("--scheduler", o.scheduler, b.scheduler);

  require(o.priority_policy == "constant" || o.priority_policy == "slo-based" ||
              o.priority_policy == "inverted-slo" || o.priority_policy.empty(),
          "--priority-policy",
          fmt::format("unknown priority policy '{}'; valid: constant, inverted-slo, slo-based", o.priority_policy));
  if (o.admission_policy.empty()) o.admission_policy = "always-admit";
  if (o.admission_policy == "token-bucket") {
    require(std::isfinite(o.token_bucket_capacity) && o.token_bucket_capacity > 0, "--token-bucket-capacity",
            fmt::format("must be a finite value > 0, got {}", o.token_bucket_capacity));
    require(std::isfinite(o.token_bucket_refill_rate) && o.token_bucket_refill_rate > 0,
            "--token-bucket-refill-rate",
            fmt::format("must be a finite value > 0, got {}", o.token_bucket_refill_rate));
  }
  if (auto err = unknown_plugin(PluginKind::AdmissionPolicy,
                                "admission policy '" + o.admission_policy + "'",
                                o.admission_policy, o, env, vm))
    throw InputError("--admission-policy", *err);
  const RoutingPolicy routing = parse_routing_policy(o.routing_policy);
  require(o.trace_level == "none" || o.trace_level == "decisions" || o.trace_level.empty(), "--trace-level",
          fmt::format("unknown trace level '{}'; valid: none, decisions", o.trace_level));
  require(o.counterfactual_k >= 0, "--counterfactual-k", fmt::format("must be >= 0, got {}", o.counterfactual_k));
  const bool tracing = o.trace_level == "decisions";
  if (o.counterfactual_k > 0 && !tracing)
    spdlog::warn("--counterfactual-k={} has no effect without --trace-level decisions", o.counterfactual_k);
  if (o.summarize_trace && !tracing) spdlog::warn("--summarize-trace has no effect without --trace-level decisions");
  require(o.snapshot_refresh_interval >= 0, "--snapshot-refresh-interval",
          fmt::format("must be >= 0, got {}", o.snapshot_refresh_interval));
  require(o.admission_latency >= 0, "--admission-latency", fmt::format("must be >= 0, got {}", o.admission_latency));
  require(o.routing_latency >= 0, "--routing-latency", fmt::format("must be >= 0, got {}", o.routing_latency));

  if (routing != RoutingPolicy::Weighted) {
    if (!o.routing_scorers.empty())
      spdlog::warn("--routing-scorers has no effect when the routing policy is '{}'", o.routing_policy);
    return {};
  }
  auto unknown = [&](const std::string& name) {
    return unknown_plugin(PluginKind::RoutingScorer, "scorer \"" + name + "\"", name, o, env, vm);
  };
  std::vector<ScorerWeight> scorers = parse_scorer_list(o.routing_scorers, unknown);
  if (scorers.empty()) scorers = b.scorers;
  if (scorers.empty()) scorers = kDefaultScorers;
  for (const auto& sw : scorers)
    if (auto err = unknown(sw.name)) throw InputError("--policy-config", *err);
  return scorers;
}

ClusterPolicies make_policies(const RunOptions& o, const Environment& env,
                              const std::vector<ScorerWeight>& scorers, const PluginOverrides& overrides) {
  ClusterPolicies p;
  ConfigTable admission_base;
  admission_base.set("token_bucket_capacity", o.token_bucket_capacity);
  admission_base.set("token_bucket_refill_rate", o.token_bucket_refill_rate);
  const ConfigTable admission_cfg = overrides.config_for(o.admission_policy, admission_base);
  p.admission = env.registries->admission.create(o.admission_policy, CreateArgs{&admission_cfg, o.seed});
  overrides.warn_unread(o.admission_policy, admission_cfg);
  std::vector<WeightedScorer> weighted;
  ConfigTable scorer_base;
  scorer_base.set("block_size", o.block_size);
  for (const auto& sw : scorers) {
    const ConfigTable scorer_cfg = overrides.config_for(sw.name, scorer_base);
    weighted.push_back({sw.name, sw.weight, env.registries->scorers.create(sw.name, CreateArgs{&scorer_cfg, o.seed})});
    overrides.warn_unread(sw.name, scorer_cfg);
  }
  p.router = std::make_unique<Router>(parse_routing_policy(o.routing_policy), std::move(weighted), o.seed);
  return p;
}

// "=== Trace Summary ===" (spec cluster §5.4); instances in string order.
std::string trace_block(const TraceSummary& t) {
  std::vector<std::pair<std::string, int64_t>> targets;
  for (size_t i = 0; i < t.targets.size(); ++i)
    if (t.targets[i] > 0) targets.emplace_back("instance_" + std::to_string(i), t.targets[i]);
  std::sort(targets.begin(), targets.end());
  std::string out = "=== Trace Summary ===\n";
  out += fmt::format("Total Decisions: {}\n  Admitted: {}\n  Rejected: {}\n", t.admitted + t.rejected,
                     t.admitted, t.rejected);
  out += fmt::format("Unique Targets: {}\n", targets.size());
  if (t.routings > 0) {
    out += "Target Distribution:\n";
    for (const auto& [id, n] : targets) out += fmt::format("  {}: {}\n", id, n);
  }
  const double mean = t.routings > 0 ? t.regret_sum / static_cast<double>(t.routings) : 0;
  out += fmt::format("Mean Regret: {:.6f}\nMax Regret: {:.6f}\n", mean, t.regret_max);
  return out;
}

void validate(const RunOptions& o) {
  require(o.max_model_len >= 0, "--max-model-len", fmt::format("must be >= 0, got {}", o.max_model_len));
  require(o.num_requests >= 0, "--num-requests", fmt::format("must be >= 0, got {}", o.num_requests));
  require(o.prefix_tokens >= 0, "--prefix-tokens", fmt::format("must be >= 0, got {}", o.prefix_tokens));
  require(o.num_instances >= 1 && o.num_instances <= 100000, "--num-instances",
          fmt::format("must be between 1 and 100000, got {}", o.num_instances));
  require(o.total_kv_blocks > 0, "--total-kv-blocks", fmt::format("must be > 0, got {}", o.total_kv_blocks));
  require(o.block_size > 0 && o.block_size <= 65536, "--block-size-in-tokens",
          fmt::format("must be between 1 and 65536, got {}", o.block_size));
  require(o.max_running > 0, "--max-num-running-reqs", fmt::format("must be > 0, got {}", o.max_running));
  require(o.max_scheduled_tokens > 0, "--max-num-scheduled-tokens",
          fmt::format("must be > 0, got {}", o.max_scheduled_tokens));
  require(o.long_prefill_threshold >= 0, "--long-prefill-token-threshold",
          fmt::format("must be >= 0, got {}", o.long_prefill_threshold));
  require(o.kv_cpu_blocks >= 0, "--kv-cpu-blocks", fmt::format("must be >= 0, got {}", o.kv_cpu_blocks));
  require(std::isfinite(o.kv_offload_threshold) && o.kv_offload_threshold >= 0 && o.kv_offload_threshold <= 1,
          "--kv-offload-threshold", fmt::format("must be a finite value in [0, 1], got {}", o.kv_offload_threshold));
  require(o.kv_cpu_blocks == 0 || (std::isfinite(o.kv_transfer_bandwidth) && o.kv_transfer_bandwidth > 0),
          "--kv-transfer-bandwidth",
          fmt::format("must be a finite value > 0 when --kv-cpu-blocks > 0, got {}", o.kv_transfer_bandwidth));
  require(o.kv_transfer_base_latency >= 0, "--kv-transfer-base-latency",
          fmt::format("must be >= 0, got {}", o.kv_transfer_base_latency));
  require(!o.given("--horizon") || o.horizon > 0, "--horizon", fmt::format("must be > 0, got {}", o.horizon));
}

// `--workload-spec` (spec workload §1.1-§1.2): the file's seed unless --seed
// is given (the simulator's streams keep --seed either way), its horizon
// unless --horizon is given, its request count unless --num-requests is.
std::unique_ptr<WorkloadSource> make_spec_file_workload(RunOptions& o) {
  require(o.workload_trace.empty(), "--workload-spec", "give --workload-spec or --workload-trace, not both");
  WorkloadSpec spec = load_workload_spec(o.workload_spec);
  if (o.given("--seed")) {
    spdlog::info("CLI --seed {} overrides workload-spec seed {}", o.seed, spec.seed);
    spec.seed = o.seed;
  } else {
    spdlog::info("Using workload-spec seed {} (CLI --seed not specified)", spec.seed);
  }
  if (spec.horizon > 0 && !o.given("--horizon")) o.horizon = spec.horizon;
  const int64_t cap = o.given("--num-requests") ? o.num_requests : spec.num_requests;
  if (cap <= 0 && o.horizon == kNoHorizon)
    throw InputError("--workload-spec", "the spec sets neither num_requests nor horizon: give one of them, "
                                        "or --num-requests or --horizon, to bound the workload");
  return make_spec_workload(spec, o.horizon, cap, static_cast<int32_t>(o.block_size));
}

std::unique_ptr<WorkloadSource> make_workload(RunOptions& o, const DataCatalog& data) {
  if (!o.workload_spec.empty()) return make_spec_file_workload(o);
  if (!o.workload_trace.empty()) {
    int64_t cap = o.given("--num-requests") ? o.num_requests : 0;
    return make_trace_workload(o.workload_trace, o.horizon, cap, static_cast<int32_t>(o.block_size), o.seed);
  }
  require(std::isfinite(o.rate) && o.rate > 0, "--rate", fmt::format("must be a finite value > 0, got {}", o.rate));
  DistributionWorkload w;
  w.rate = o.rate;
  w.num_requests = o.num_requests;
  if (o.workload == "distribution") {
    auto check_len = [&](const char* name, int64_t mean, int64_t sd, int64_t lo, int64_t hi) {
      std::string base = std::string("--") + name;
      require(lo >= 1, (base + "-min").c_str(), fmt::format("must be >= 1, got {}", lo));
      require(hi >= 1, (base + "-max").c_str(), fmt::format("must be >= 1, got {}", hi));
      require(sd >= 0, (base + "-stdev").c_str(), fmt::format("must be >= 0, got {}", sd));
      require(lo <= hi, (base + "-min").c_str(), fmt::format("{}-min ({}) must be <= {}-max ({})", base, lo, base, hi));
      require(mean >= lo && mean <= hi, base.c_str(),
              fmt::format("mean {} must lie in [{}, {}]", mean, lo, hi));
      // The reference also demands the standard deviation lie in [min, max]
      // (docs/differences.md): blis accepts any stdev from 0 to max.
      require(sd <= hi, (base + "-stdev").c_str(), fmt::format("must be <= {}-max ({}), got {}", base, hi, sd));
    };
    check_len("prompt-tokens", o.prompt_tokens, o.prompt_tokens_stdev, o.prompt_tokens_min, o.prompt_tokens_max);
    check_len("output-tokens", o.output_tokens, o.output_tokens_stdev, o.output_tokens_min, o.output_tokens_max);
    w.prefix_tokens = o.prefix_tokens;
    w.prompt_mean = o.prompt_tokens, w.prompt_stdev = o.prompt_tokens_stdev;
    w.prompt_min = o.prompt_tokens_min, w.prompt_max = o.prompt_tokens_max;
    w.output_mean = o.output_tokens, w.output_stdev = o.output_tokens_stdev;
    w.output_min = o.output_tokens_min, w.output_max = o.output_tokens_max;
  } else {
    auto p = data.preset(o.workload);
    if (!p) {
      std::string names;
      for (const auto& n : data.preset_names()) names += (names.empty() ? "" : ", ") + n;
      throw InputError("--workload", fmt::format("unknown workload '{}'; use distribution or a preset: {}",
                                                 o.workload, names));
    }
    w.prefix_tokens = p->prefix_tokens;
    w.prompt_mean = p->prompt_tokens, w.prompt_stdev = p->prompt_tokens_stdev;
    w.prompt_min = p->prompt_tokens_min, w.prompt_max = p->prompt_tokens_max;
    w.output_mean = p->output_tokens, w.output_stdev = p->output_tokens_stdev;
    w.output_min = p->output_tokens_min, w.output_max = p->output_tokens_max;
  }
  if (w.num_requests <= 0 && !o.given("--horizon"))
    throw InputError("--num-requests", "0 requests and no --horizon: give one of them to bound the workload");
  WorkloadSpec spec = synthesize_distribution_spec(w, o.seed);
  validate_workload_spec(spec);
  return make_spec_workload(spec, o.horizon, w.num_requests, static_cast<int32_t>(o.block_size));
}

}  // namespace

void set_log_level(const std::string& level) {
  std::string l = lower(level);
  if (l == "warning") l = "warn";
  auto parsed = spdlog::level::from_str(l);
  if (parsed == spdlog::level::off && l != "off")
    throw InputError("--log", "unknown level '" + level + "'; use trace, debug, info, warn, error or off");
  spdlog::set_level(parsed);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw RuntimeError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    f << text;
    if (!f.flush()) throw RuntimeError(fmt::format("cannot write {}", tmp));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw RuntimeError(fmt::format("cannot write {}: rename failed", path));
  }
}

RunOutcome simulate(RunOptions& o) {
  require(!o.model.empty(), "--model", "no model given; e.g. --model qwen/qwen3-14b");
  validate(o);
  const PluginOverrides overrides = parse_plugin_overrides(o.plugin_config);
  Environment env = Environment::load(o.plugin_dirs, o.seed);
  // One Lua VM per simulation; it outlives every object made from its scripts.
  LuaVm vm(o.seed);
  DataCatalog data = DataCatalog::load(env.data_dir);
  Resolved r = resolve(o, env, data, vm);
  const std::vector<ScorerWeight> scorers = resolve_policies(o, env, vm);
  const auto fitness_weights = parse_fitness_weights(o.fitness_weights);
  std::vector<std::string> used_plugins{r.backend, o.admission_policy};
  for (const auto& sw : scorers) used_plugins.push_back(sw.name);
  overrides.check_plugins(used_plugins);
  require(r.kv_blocks > 0, "--total-kv-blocks", fmt::format("must be > 0, got {}", r.kv_blocks));
  // Before the configuration: a workload spec may set the horizon.
  auto workload = make_workload(o, data);

  ClusterConfig cc;
  cc.num_instances = static_cast<int32_t>(o.num_instances);
  cc.engine.total_kv_blocks = r.kv_blocks;
  cc.engine.block_size = static_cast<int32_t>(o.block_size);
  cc.engine.max_running = o.max_running;
  cc.engine.max_scheduled_tokens = o.max_scheduled_tokens;
  cc.engine.long_prefill_threshold = o.long_prefill_threshold;
  cc.engine.max_model_len = r.max_model_len;
  cc.engine.order = queue_order(o.scheduler, o.priority_policy);
  cc.engine.horizon = o.horizon;
  cc.engine.cpu_tier = CpuTierConfig{o.kv_cpu_blocks, o.kv_offload_threshold,
                                     o.kv_transfer_bandwidth, o.kv_transfer_base_latency};
  cc.keep_records = !o.results_path.empty();
  cc.keep_completions = !(o.priority_policy == "constant" || o.priority_policy.empty());
  cc.admission_latency = o.admission_latency;
  cc.routing_latency = o.routing_latency;
  cc.snapshot_refresh_interval = o.snapshot_refresh_interval;
  cc.trace_decisions = o.trace_level == "decisions";
  cc.counterfactual_k = o.counterfactual_k;

  ConfigTable latency_base;
  put_latency_config(latency_base, r.arch ? &*r.arch : nullptr, r.hw ? &*r.hw : nullptr, r.tp,
                     r.alpha, r.beta, o.block_size);
  const ConfigTable latency_cfg = overrides.config_for(r.backend, latency_base);
  spdlog::info("starting: {} instance(s), {} KV blocks, latency model {}, horizon {}",
               o.num_instances, r.kv_blocks, r.backend, o.horizon);

  const auto wall_start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  ClusterSimulation sim(cc, *workload, [&](int32_t) {
    return env.registries->latency.create(r.backend, CreateArgs{&latency_cfg, o.seed});
  }, make_policies(o, env, scorers, overrides));
  overrides.warn_unread(r.backend, latency_cfg);
  ClusterResult result = sim.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;

  std::vector<const InstanceMetrics*> parts;
  for (const auto& m : result.instances) parts.push_back(&m);
  InstanceMetrics cluster = merge_metrics(parts);

  RunOutcome outcome;
  std::string& out = outcome.report;
  if (o.num_instances > 1)
    for (size_t i = 0; i < result.instances.size(); ++i)
      if (result.instances[i].completed > 0)
        out += "=== Simulation Metrics ===\n" +
               metrics_json(result.instances[i], "instance_" + std::to_string(i), false) + "\n";
  if (cluster.completed > 0)
    out += "=== Simulation Metrics ===\n" + metrics_json(cluster, "cluster", false) + "\n";
  outcome.metrics = metrics_fields(cluster);
  outcome.metrics.push_back({"rejected_requests", static_cast<double>(result.rejected), true});
  if (!fitness_weights.empty()) {
    const Fitness fitness = evaluate_fitness(cluster, fitness_weights);
    out += fitness_block(fitness);
    outcome.metrics.push_back({"fitness_score", fitness.score, false});
  }
  ReportContext ctx;
  ctx.priority_policy_constant = !cc.keep_completions;
  ctx.rejected = result.rejected;
  out += text_blocks(parts, cluster, ctx);
  if (cc.trace_decisions && o.summarize_trace) out += trace_block(result.trace);

  if (!o.results_path.empty()) outcome.results_json = metrics_json(cluster, "cluster", true) + "\n";
  if (o.profile)
    outcome.profile = fmt::format("profile: {} events, {} steps, {} requests, wall {:.3f} s, cpu {:.3f} s, "
                                  "{:.0f} events/s\n",
                                  result.events, result.steps, cluster.completed + cluster.still_queued +
                                      cluster.still_running + cluster.dropped_unservable,
                                  wall, cpu, wall > 0 ? static_cast<double>(result.events) / wall : 0);
  return outcome;
}

int run_simulation(RunOptions& o) {
  set_log_level(o.log_level);
  for (const char* flag : {"--rows-csv", "--rows-json"})
    require(!o.given(flag) || !o.scenario.empty(), flag, "needs a scenario file with a sweep or search");
  RunOutcome outcome = simulate(o);
  if (!o.results_path.empty()) {
    write_file_atomically(o.results_path, outcome.results_json);
    spdlog::info("metrics written to {}", o.results_path);
  }
  std::cout << outcome.report << std::flush;
  std::cerr << outcome.profile;
  return 0;
}

}  // namespace blis::app
