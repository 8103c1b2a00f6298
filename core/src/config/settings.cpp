// The table of `blis run` settings (blis/settings.hpp): one row per setting.
// To add a setting: add its field to RunConfig, add a row here, and use the
// field where the run is resolved (resolve.cpp). The command line, scenarios
// and --dump-config pick the row up.
#include <blis/errors.hpp>
#include <blis/scenario_events.hpp>
#include <blis/settings.hpp>

#include "config/fleet_records.hpp"
#include "config/list_settings.hpp"
#include "config/pool_text.hpp"
#include "config/scenario_common.hpp"
#include "util/go_duration.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <unordered_map>

namespace blis {
namespace {

// Bounds that keep every time and size computed from a setting far from
// overflow (docs/differences.md explains the limits a user can meet).
constexpr int64_t kMaxMicros = 1'000'000'000'000'000;  // ~31.7 years of simulated time
constexpr int64_t kMaxKvBlocks = 100'000'000;          // 1.6 GB of block metadata per instance
constexpr int64_t kMaxTokens = 2'147'483'647;

template <class T>
struct Unwrap {
  using type = T;
};
template <class T>
struct Unwrap<std::optional<T>> {
  using type = T;
};

template <class T>
constexpr SettingType type_of() {
  if constexpr (std::is_same_v<T, int64_t>) return SettingType::Integer;
  else if constexpr (std::is_same_v<T, double>) return SettingType::Number;
  else if constexpr (std::is_same_v<T, bool>) return SettingType::Boolean;
  else if constexpr (std::is_same_v<T, std::string>) return SettingType::Text;
  else if constexpr (std::is_same_v<T, std::vector<double>>) return SettingType::NumberList;
  else return SettingType::TextList;
}

using Check = std::function<std::optional<std::string>(const SettingValue&)>;

// A row over a field of RunConfig; `access` returns a reference to it.
template <class Access>
SettingDef row(std::string key, std::vector<std::string> flags, std::string group, std::string help,
               Access access, Check check = {}, unsigned traits = 0) {
  using Field = std::remove_reference_t<decltype(access(std::declval<RunConfig&>()))>;
  using T = typename Unwrap<Field>::type;
  SettingDef d;
  d.key = std::move(key);
  d.flags = std::move(flags);
  d.type = type_of<T>();
  d.group = std::move(group);
  d.help = std::move(help);
  d.traits = traits | (d.type == SettingType::TextList ? kAccumulates : 0u);
  d.check = std::move(check);
  d.set = [access](RunConfig& c, const SettingValue& v, const std::string&) {
    Field& f = access(c);
    if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      const auto& items = std::get<T>(v);
      f.insert(f.end(), items.begin(), items.end());
    } else {
      f = std::get<T>(v);
    }
  };
  d.get = [access](const RunConfig& c) -> std::optional<SettingValue> {
    const Field& f = access(const_cast<RunConfig&>(c));
    if constexpr (std::is_same_v<Field, T>) {
      if constexpr (std::is_same_v<T, std::vector<std::string>>)
        if (f.empty()) return std::nullopt;
      return SettingValue{f};
    } else {
      if (!f) return std::nullopt;
      return SettingValue{*f};
    }
  };
  return d;
}

template <class T>
constexpr bool kIsVector = false;
template <class T>
constexpr bool kIsVector<std::vector<T>> = true;

// The text a record was given as.
const std::string& given_text(const ScenarioEvent& e) { return e.text; }
template <class T>
const std::string& given_text(const Given<T>& g) {
  return g.text;
}

// A row over a record setting whose field holds the record read into its
// struct: one (std::optional of it) or repeatable (a vector); with `traits`
// 0, a short list read the same way (--tenant-budgets, --shard). `read(text,
// place)` reads one record when it is set, so an error names the place of
// the field it is about (apply_settings keeps the places first); the row's
// value is the text it was given as, which --dump-config writes back.
template <class Access, class Read>
SettingDef record_row(std::string key, std::vector<std::string> flags, std::string group, std::string help,
                      Access access, Read read, unsigned traits = kRecord) {
  using Field = std::remove_reference_t<decltype(access(std::declval<RunConfig&>()))>;
  constexpr bool kList = kIsVector<Field>;
  SettingDef d;
  d.key = std::move(key);
  d.flags = std::move(flags);
  d.type = kList ? SettingType::TextList : SettingType::Text;
  d.group = std::move(group);
  d.help = std::move(help);
  d.traits = traits | (kList ? kAccumulates : 0u);
  d.set = [access, read, key = d.key](RunConfig& c, const SettingValue& v, const std::string&) {
    Field& f = access(c);
    if constexpr (kList) {
      for (const std::string& text : std::get<std::vector<std::string>>(v))
        f.push_back(read(text, c.record_place(key, f.size())));
    } else {
      f = read(std::get<std::string>(v), c.record_place(key));
    }
  };
  d.get = [access](const RunConfig& c) -> std::optional<SettingValue> {
    const Field& f = access(const_cast<RunConfig&>(c));
    if constexpr (kList) {
      if (f.empty()) return std::nullopt;
      std::vector<std::string> texts;
      texts.reserve(f.size());
      for (const auto& item : f) texts.push_back(given_text(item));
      return SettingValue{std::move(texts)};
    } else {
      if (!f) return std::nullopt;
      return SettingValue{f->text};
    }
  };
  return d;
}

// Reads a record of type T by `parse` into Given<T>.
template <class T>
auto given_by(T (*parse)(const std::string&, const RecordPlace&)) {
  return [parse](const std::string& text, const RecordPlace& place) {
    return Given<T>{parse(text, place), text};
  };
}

// Checks, with the messages the reference's users know.
Check int_at_least(int64_t lo) {
  return [lo](const SettingValue& v) -> std::optional<std::string> {
    const int64_t x = std::get<int64_t>(v);
    if (x < lo) return fmt::format("must be >= {}, got {}", lo, x);
    return std::nullopt;
  };
}
Check int_positive() {
  return [](const SettingValue& v) -> std::optional<std::string> {
    const int64_t x = std::get<int64_t>(v);
    if (x <= 0) return fmt::format("must be > 0, got {}", x);
    return std::nullopt;
  };
}
Check int_between(int64_t lo, int64_t hi, bool positive_message = false) {
  return [=](const SettingValue& v) -> std::optional<std::string> {
    const int64_t x = std::get<int64_t>(v);
    if (positive_message && x <= 0) return fmt::format("must be > 0, got {}", x);
    if (!positive_message && x < lo) return fmt::format("must be >= {}, got {}", lo, x);
    if (x > hi) return fmt::format("must be at most {}, got {}", hi, x);
    return std::nullopt;
  };
}
Check int_range(int64_t lo, int64_t hi) {
  return [=](const SettingValue& v) -> std::optional<std::string> {
    const int64_t x = std::get<int64_t>(v);
    if (x < lo || x > hi) return fmt::format("must be between {} and {}, got {}", lo, hi, x);
    return std::nullopt;
  };
}
Check finite_positive(double lo = 0, double hi = std::numeric_limits<double>::infinity()) {
  return [=](const SettingValue& v) -> std::optional<std::string> {
    const double x = std::get<double>(v);
    if (!std::isfinite(x) || x <= 0) return fmt::format("must be a finite value > 0, got {}", x);
    if (x < lo || x > hi) return fmt::format("must lie in [{}, {}], got {}", lo, hi, x);
    return std::nullopt;
  };
}
Check finite_unit() {
  return [](const SettingValue& v) -> std::optional<std::string> {
    const double x = std::get<double>(v);
    if (!std::isfinite(x) || x < 0 || x > 1) return fmt::format("must be a finite value in [0, 1], got {}", x);
    return std::nullopt;
  };
}
Check timeout_seconds() {
  return [](const SettingValue& v) -> std::optional<std::string> {
    const int64_t x = std::get<int64_t>(v);
    if (x == 0) return std::string("must be positive (seconds) or negative to disable, got 0");
    if (x > kMaxMicros / 1'000'000) return fmt::format("must be at most {} seconds, got {}", kMaxMicros / 1'000'000, x);
    return std::nullopt;
  };
}
// A text setting with a fixed list of values: its check, and the list that
// help and shell completion show.
struct OneOf {
  std::string what;
  std::vector<std::string> valid;
};
OneOf one_of(std::string what, std::vector<std::string> valid) { return {std::move(what), std::move(valid)}; }

template <class Access>
SettingDef choice_row(std::string key, std::vector<std::string> flags, std::string group, std::string help,
                      Access access, OneOf one, unsigned traits = 0) {
  Check check = [what = one.what, valid = one.valid](const SettingValue& v) -> std::optional<std::string> {
    const auto& s = std::get<std::string>(v);
    if (std::find(valid.begin(), valid.end(), s) != valid.end()) return std::nullopt;
    return fmt::format("unknown {} '{}'; valid: {}", what, s, text::join(valid, ", "));
  };
  SettingDef d = row(std::move(key), std::move(flags), std::move(group), std::move(help), access, std::move(check),
                     traits);
  d.choices = std::move(one.valid);
  return d;
}

// A row whose values are names of the bundled data or plugins (SettingDef::values_from).
SettingDef values_from(SettingDef d, std::string source) {
  d.values_from = std::move(source);
  return d;
}

Check finite_numbers() {
  return [](const SettingValue& v) -> std::optional<std::string> {
    for (double x : std::get<std::vector<double>>(v))
      if (!std::isfinite(x)) return fmt::format("every value must be finite, got {}", x);
    return std::nullopt;
  };
}

std::vector<SettingDef> make_table() {
  std::vector<SettingDef> t;
  // simulation
  t.push_back(row("seed", {"--seed"}, "simulation",
                  "Seed of the workload and of every random stream (default 42; a workload spec "
                  "has its own unless this is given)",
                  [](RunConfig& c) -> auto& { return c.seed; }));
  t.push_back(row("horizon", {"--horizon"}, "simulation",
                  "Stop at the first event after this time (µs); also bounds arrivals",
                  [](RunConfig& c) -> auto& { return c.horizon; }, int_between(1, kMaxMicros, true), kDuration));
  t.push_back(record_row("memory_limit", {"--memory-limit"}, "simulation",
                  "Memory budget of the pre-flight check (16GiB, 512MiB, bytes); a run that needs more "
                  "is refused before it starts (default: the machine's memory or its cgroup limit)",
                  [](RunConfig& c) -> auto& { return c.memory_limit; }, given_by(&parse_memory_limit), 0));
  t.push_back(row("profile_set", {"--profile-set"}, "simulation",
                  "A named bundle of defaults: head switches at once every default the reference "
                  "changed after c9ca689b (trained-physics latency, its scorer profile, 300 s "
                  "timeouts, ...; docs/design/head.md §0.3); c9ca689b is the usual defaults. "
                  "Settings given explicitly win over the bundle",
                  [](RunConfig& c) -> auto& { return c.profile_set; }));
  t.push_back(row("log", {"--log"}, "simulation", "Log level on stderr: trace, debug, info, warn, error (fatal and panic: the same), off",
                  [](RunConfig& c) -> auto& { return c.outputs.log_level; }));
  t.push_back(choice_row("format", {"--format"}, "outputs",
                  "stdout format: reference (the reference's metrics blocks, byte for byte), json (one "
                  "JSON document: configuration, verdict, cluster, instances, fitness, trace summary) or "
                  "table (a compact summary for people, with units)",
                  [](RunConfig& c) -> auto& { return c.outputs.format; },
                  one_of("format", {"json", "reference", "table"})));
  t.push_back(choice_row("output_form", {"--output-form"}, "outputs",
                  "Whose metrics blocks: seed (c9ca689b's, the default) or head (BLIS HEAD's: a block per "
                  "instance and for the cluster even with nothing completed, timed_out_requests, rejections at "
                  "admission and routing apart, priority inversions counted under priority-fcfs only); "
                  "--profile-set head sets head",
                  [](RunConfig& c) -> auto& { return c.outputs.output_form; }, one_of("output form", {"head", "seed"})));
  t.push_back(row("results_path", {"--results-path", "--metrics-path"}, "outputs",
                  "Also write the metrics and one record per request to this JSON file (--metrics-path: "
                  "HEAD's name; under --output-form head the file has HEAD's cache_hit_rate and round_index)",
                  [](RunConfig& c) -> auto& { return c.outputs.results_path; }, {}, kOutputPath));
  t.push_back(row("trace_output", {"--trace-output"}, "outputs",
                  "Also write the run's requests as a TraceV2 (BLIS HEAD's trace format): PREFIX.yaml (header) "
                  "and PREFIX.csv (one row per request with its times); `blis replay` and BLIS HEAD read it",
                  [](RunConfig& c) -> auto& { return c.outputs.trace_output; }, {}, kOutputPath));
  t.push_back(record_row("detectors", {"--detectors"}, "outputs",
                  "Print the labels of these saturation detectors in the cluster's metrics, \"saturation\": "
                  "composite, threshold, backlog-drift (comma list) or all (blis plan judges its trials by them)",
                  [](RunConfig& c) -> auto& { return c.outputs.detectors; }, given_by(&parse_detectors), 0));
  t.push_back(row("saturation_config", {"--saturation-config"}, "outputs",
                  "The detectors' settings (HEAD's strict YAML: threshold: {threshold_ms}, backlog_drift: "
                  "{window_size_sec, min_windows, warmup_windows, tail_windows, saturated_drain_ratio, "
                  "transient_drain_ratio, ...}); a block for a detector not selected is an error; needs --detectors",
                  [](RunConfig& c) -> auto& { return c.outputs.saturation_config; }, {}, kInputPath));
  t.push_back(row("saturation_final_window", {"--saturation-final-window"}, "outputs",
                  "The trailing window of the detectors' final vote, e.g. 30s (default: backlog_drift.window_size_sec "
                  "of --saturation-config, else 30s); needs --detectors",
                  [](RunConfig& c) -> auto& { return c.outputs.saturation_final_window; },
                  int_between(1, kMaxMicros, true), kDuration));
  t.push_back(row("saturation_report", {"--saturation-report"}, "outputs",
                  "Also write the detectors' result after every event to this JSON file, "
                  "{\"final\": {...}, \"trace\": [...]} (HEAD's format); needs --detectors",
                  [](RunConfig& c) -> auto& { return c.outputs.saturation_report; }, {}, kOutputPath));
  t.push_back(row("report", {"--report"}, "outputs",
                  "Also write a report to this folder: report.html (charts inline, no script, nothing fetched) "
                  "and its SVG charts (latency CDFs; queue depth, running batch and KV usage over time)",
                  [](RunConfig& c) -> auto& { return c.outputs.report; }, {}, kOutputPath));
  t.push_back(row("quiet", {"--quiet", "-q"}, "outputs",
                  "No progress on stderr (a long run shows a bar with its ETA on a terminal, a line every 10 s "
                  "otherwise, after its first 2 s)",
                  [](RunConfig& c) -> auto& { return c.outputs.quiet; }));
  t.push_back(row("timeseries", {"--timeseries"}, "outputs",
                  "Also write a time series of the run to this CSV file: per interval and pool, instances "
                  "taking traffic, queue depth, running batch and KV usage at the interval's end, arrivals, "
                  "completions, failures and scenario events within it",
                  [](RunConfig& c) -> auto& { return c.outputs.timeseries; }, {}, kOutputPath));
  t.push_back(row("timeseries_interval", {"--timeseries-interval"}, "outputs",
                  "Simulated time per row of --timeseries (default 1s)",
                  [](RunConfig& c) -> auto& { return c.outputs.timeseries_interval; }, int_between(1, kMaxMicros, true),
                  kDuration));
  t.push_back(row("profile", {"--profile"}, "outputs", "Print events, steps, wall time, events/s and how many batch-member steps were handled member by member to stderr",
                  [](RunConfig& c) -> auto& { return c.outputs.profile; }));
  t.push_back(record_row("events", {"--event"}, "simulation",
                  "A scenario event in virtual time (repeatable): 'at=30s action=fail instance=2 "
                  "requests=reroute', or triggered: 'when=queue_depth>40 action=rate factor=0.5'; "
                  "actions fail, drain, restore, slow, rate, weight, routing, add, remove; P/D clusters too (docs/cli.md)",
                  [](RunConfig& c) -> auto& { return c.events; },
                  [](const std::string& text, const RecordPlace& place) { return parse_scenario_event(text, place); }));
  // model and latency
  t.push_back(values_from(row("model", {"--model"}, "model", "Model name, e.g. qwen/qwen3-14b (case-insensitive)",
                  [](RunConfig& c) -> auto& { return c.pool().model.name; }), "models"));
  t.push_back(values_from(row("hardware", {"--hardware"}, "model",
                  "GPU type (blis hardware lists them); default from the model's defaults",
                  [](RunConfig& c) -> auto& { return c.pool().model.hardware; }), "gpus"));
  t.push_back(row("tp", {"--tp", "--tensor-parallel-size"}, "model", "Tensor parallelism per instance; 0 = the model's default",
                  [](RunConfig& c) -> auto& { return c.pool().model.tp; }, int_range(0, 1024)));
  t.push_back(row("vllm_version", {"--vllm-version"}, "model", "vLLM version key of the coefficient table",
                  [](RunConfig& c) -> auto& { return c.pool().model.vllm_version; }));
  t.push_back(values_from(row("latency_model", {"--latency-model"}, "latency",
                  "Latency model: a plugin name (blis plugins list), a plugin library path "
                  "(path/lib.so[:name]) or a Lua script (model.lua); default from the data tables",
                  [](RunConfig& c) -> auto& { return c.pool().model.latency_model; }, {}, kLibraryRef), "latency-model"));
  t.push_back(row("alpha_coeffs", {"--alpha-coeffs"}, "latency",
                  "Alpha coefficients (comma-separated); needs --beta-coeffs",
                  [](RunConfig& c) -> auto& { return c.pool().model.alpha_coeffs; }, finite_numbers()));
  t.push_back(row("beta_coeffs", {"--beta-coeffs"}, "latency",
                  "Beta coefficients (comma-separated); needs --alpha-coeffs",
                  [](RunConfig& c) -> auto& { return c.pool().model.beta_coeffs; }, finite_numbers()));
  t.push_back(row("max_model_len", {"--max-model-len"}, "model",
                  "Max input + output tokens per request; 0 = derived from the model (analytical "
                  "models) or unlimited",
                  [](RunConfig& c) -> auto& { return c.pool().model.max_model_len; },
                  int_between(0, kMaxTokens)));
  t.push_back(row("model_config_folder", {"--model-config-folder"}, "model",
                  "Folder with a HuggingFace config.json for the model",
                  [](RunConfig& c) -> auto& { return c.pool().model.model_config_folder; }, {}, kInputPath));
  t.push_back(row("hardware_config", {"--hardware-config"}, "model",
                  "GPU table (TOML, or the reference's hardware_config.json)",
                  [](RunConfig& c) -> auto& { return c.pool().model.hardware_config; }, {}, kInputPath));
  t.push_back(row("defaults_filepath", {"--defaults-filepath"}, "model",
                  "The reference's defaults.yaml read over the bundled data: its model defaults, presets "
                  "and coefficients replace the bundled ones of the same name",
                  [](RunConfig& c) -> auto& { return c.defaults_filepath; }, {}, kInputPath));
  t.push_back(row("dp", {"--dp"}, "latency",
                  "Data-parallel ranks over which a MoE model's experts are spread (latency models "
                  "that model it; default 1)",
                  [](RunConfig& c) -> auto& { return c.pool().model.dp; }, int_range(1, 1024)));
  t.push_back(row("moe_comm_backend", {"--moe-comm-backend"}, "latency",
                  "How MoE layers exchange tokens when --dp > 1: allgather_reducescatter (default), "
                  "naive, pplx, deepep_high_throughput, deepep_low_latency, mori, flashinfer_all2allv",
                  [](RunConfig& c) -> auto& { return c.pool().model.moe_comm_backend; }));
  t.push_back(row("enable_expert_parallel", {"--enable-expert-parallel"}, "latency",
                  "A MoE model's experts are owned whole by the TP·DP ranks (vLLM's --enable-expert-parallel; "
                  "MoE models, latency models that model it: trained-physics)",
                  [](RunConfig& c) -> auto& { return c.pool().model.enable_expert_parallel; }));
  // KV cache and batching
  t.push_back(row("total_kv_blocks", {"--total-kv-blocks"}, "kv-cache",
                  "KV blocks per instance (default: from the defaults table, else computed from GPU memory)",
                  [](RunConfig& c) -> auto& { return c.pool().engine.total_kv_blocks; },
                  int_between(1, kMaxKvBlocks, true)));
  t.push_back(row("block_size_in_tokens", {"--block-size-in-tokens", "--block-size"}, "kv-cache", "Tokens per KV block",
                  [](RunConfig& c) -> auto& { return c.pool().engine.block_size; }, int_range(1, 65536)));
  t.push_back(row("kv_cpu_blocks", {"--kv-cpu-blocks"}, "kv-cache",
                  "CPU-tier KV blocks per instance; > 0 enables offloading to CPU memory",
                  [](RunConfig& c) -> auto& { return c.pool().engine.kv_cpu_blocks; },
                  int_between(0, kMaxKvBlocks)));
  t.push_back(choice_row(
      "kv_cpu_model", {"--kv-cpu-model"}, "kv-cache",
      "How the CPU tier of --kv-cpu-blocks fills: threshold (the seed's, the default: cached blocks "
      "move there when GPU usage passes --kv-offload-threshold, and come back when an allocation "
      "fails) or mirror (HEAD's vLLM v1 model: every step copies the running requests' full blocks "
      "there, least recently used out first, and a prompt that continues there is reloaded at "
      "admission; the threshold is unused); --profile-set head sets mirror",
      [](RunConfig & c) -> auto& { return c.pool().engine.kv_cpu_model; },
      one_of("CPU tier model", {"threshold", "mirror"})));
  t.push_back(row(
      "kv_offload_threshold", {"--kv-offload-threshold"}, "kv-cache",
      "GPU KV usage above which cached blocks are offloaded to the CPU tier (--kv-cpu-model threshold)",
      [](RunConfig & c) -> auto& { return c.pool().engine.kv_offload_threshold; }, finite_unit()));
  t.push_back(row("kv_transfer_bandwidth", {"--kv-transfer-bandwidth"}, "kv-cache",
                  "CPU-GPU transfer bandwidth in blocks per µs",
                  // Checked only when a CPU tier uses it (run/resolve.cpp), as the reference does.
                  [](RunConfig& c) -> auto& { return c.pool().engine.kv_transfer_bandwidth; }, {}));
  t.push_back(row("kv_transfer_base_latency", {"--kv-transfer-base-latency"}, "kv-cache",
                  "Fixed µs added to every block transfer between tiers",
                  [](RunConfig& c) -> auto& { return c.pool().engine.kv_transfer_base_latency; },
                  int_between(0, kMaxMicros), kDuration));
  t.push_back(row("kv_offload_config", {"--kv-offload-config"}, "kv-cache",
                  "YAML file with a kv_offload: block: N-tier KV offload (cpu_bytes_to_use, "
                  "block_size/blocks_per_chunk, eviction_policy, offload_prompt_only, secondary_tiers with "
                  "device_class/direct_io/bandwidths; docs/kv-offload.md)",
                  [](RunConfig& c) -> auto& { return c.pool().engine.kv_offload_config; }, {}, kInputPath));
  t.push_back(row("max_num_running_reqs", {"--max-num-running-reqs", "--max-num-seqs"}, "batching",
                  "Max requests in the running batch",
                  [](RunConfig& c) -> auto& { return c.pool().engine.max_running; }, int_positive()));
  t.push_back(row("max_num_scheduled_tokens", {"--max-num-scheduled-tokens", "--max-num-batched-tokens"},
                  "batching", "Max new tokens per step",
                  [](RunConfig& c) -> auto& { return c.pool().engine.max_scheduled_tokens; }, int_positive()));
  t.push_back(row("long_prefill_token_threshold", {"--long-prefill-token-threshold"}, "batching",
                  "Chunked prefill: max prefill tokens of one request per step (0 = off)",
                  [](RunConfig& c) -> auto& { return c.pool().engine.long_prefill_threshold; }, int_at_least(0)));
  // workload
  t.push_back(row("workload", {"--workload"}, "workload",
                  "distribution, a preset of the data tables (chatbot, contentgen, summarization, multidoc), "
                  "or traces (the legacy CSV of --workload-traces-filepath)",
                  [](RunConfig& c) -> auto& { return c.workload.workload; }));
  t.push_back(row("workload_spec", {"--workload-spec"}, "workload",
                  "Workload spec in the reference's YAML (v2, or v1 upgraded); wins over --workload. "
                  "Its seed is used unless --seed is given; --rate and the token flags are ignored",
                  [](RunConfig& c) -> auto& { return c.workload.spec; }, {}, kInputPath));
  t.push_back(row("lazy_generation", {"--lazy-generation"}, "workload",
                  "BLIS HEAD's switch to draw requests as they come due instead of all before the run; blis "
                  "always does, for every workload, so it changes nothing (accepted for HEAD's command lines)",
                  [](RunConfig& c) -> auto& { return c.workload.lazy_generation; }));
  t.push_back(row("workload_trace", {"--workload-trace"}, "workload",
                  "Replay a CSV trace exactly (arrival_time_us,input_tokens,output_tokens[,...])",
                  [](RunConfig& c) -> auto& { return c.workload.trace; }, {}, kInputPath));
  t.push_back(row("workload_traces_filepath", {"--workload-traces-filepath"}, "workload",
                  "The reference's legacy request-trace CSV of --workload traces, converted lossily as "
                  "`blis convert csv-trace` does: mean lengths, constant arrivals at the average rate",
                  [](RunConfig& c) -> auto& { return c.workload.traces_filepath; }, {}, kInputPath));
  t.push_back(row("rate", {"--rate", "--request-rate"}, "workload", "Arrival rate, requests per second (spaced as --arrival-process says)",
                  [](RunConfig& c) -> auto& { return c.workload.rate; }, finite_positive()));
  t.push_back(choice_row("arrival_process", {"--arrival-process"}, "workload",
                  "Arrivals of the distribution workload and presets: constant (the default, even "
                  "spacing), poisson, gamma or weibull (burstiness from --arrival-cv)",
                  [](RunConfig& c) -> auto& { return c.workload.arrival_process; },
                  one_of("arrival process", {"constant", "gamma", "poisson", "weibull"})));
  t.push_back(row("arrival_cv", {"--arrival-cv"}, "workload",
                  "Coefficient of variation of inter-arrival times for gamma (> 0) and weibull "
                  "([0.01, 10.4]) arrivals (default 1)",
                  [](RunConfig& c) -> auto& { return c.workload.arrival_cv; }, finite_positive()));
  t.push_back(row("num_requests", {"--num-requests", "--num-prompts"}, "workload",
                  "Number of requests (default 100; a workload spec or trace has its own)",
                  [](RunConfig& c) -> auto& { return c.workload.num_requests; }, int_at_least(0)));
  t.push_back(row("prefix_tokens", {"--prefix-tokens"}, "workload", "Shared prefix prepended to every prompt",
                  [](RunConfig& c) -> auto& { return c.workload.prefix_tokens; }, int_at_least(0)));
  t.push_back(row("prompt_tokens", {"--prompt-tokens"}, "workload", "Mean prompt length",
                  [](RunConfig& c) -> auto& { return c.workload.prompt_tokens; }));
  t.push_back(row("prompt_tokens_stdev", {"--prompt-tokens-stdev"}, "workload", "Std-dev of prompt length",
                  [](RunConfig& c) -> auto& { return c.workload.prompt_tokens_stdev; }));
  t.push_back(row("prompt_tokens_min", {"--prompt-tokens-min"}, "workload", "Min prompt length",
                  [](RunConfig& c) -> auto& { return c.workload.prompt_tokens_min; }));
  t.push_back(row("prompt_tokens_max", {"--prompt-tokens-max"}, "workload", "Max prompt length",
                  [](RunConfig& c) -> auto& { return c.workload.prompt_tokens_max; }));
  t.push_back(row("output_tokens", {"--output-tokens"}, "workload", "Mean output length",
                  [](RunConfig& c) -> auto& { return c.workload.output_tokens; }));
  t.push_back(row("output_tokens_stdev", {"--output-tokens-stdev"}, "workload", "Std-dev of output length",
                  [](RunConfig& c) -> auto& { return c.workload.output_tokens_stdev; }));
  t.push_back(row("output_tokens_min", {"--output-tokens-min"}, "workload", "Min output length",
                  [](RunConfig& c) -> auto& { return c.workload.output_tokens_min; }));
  t.push_back(row("output_tokens_max", {"--output-tokens-max"}, "workload", "Max output length",
                  [](RunConfig& c) -> auto& { return c.workload.output_tokens_max; }));
  // cluster, scheduling, admission, routing
  t.push_back(row("num_instances", {"--num-instances"}, "cluster", "Number of identical instances",
                  [](RunConfig& c) -> auto& { return c.pool().instances; }, int_range(1, 100000)));
  t.push_back(record_row("pools", {"--pool"}, "cluster",
                  "A pool of instances (repeatable; replaces --num-instances): 'name=a100 count=4 "
                  "hardware=A100-80 tp=2 cost_per_hour=3.5' plus any model, latency, KV-cache or "
                  "batching setting of its own; role=prefill|decode|mixed for P/D pools "
                  "(docs/scenarios.md)",
                  [](RunConfig& c) -> auto& { return c.pool_specs; }, given_by(&config::read_pool_text)));
  t.push_back(record_row("lifecycle", {"--lifecycle"}, "cluster",
                  "Instance lifecycle of every pool (a pool's own keys win): 'provisioning_delay=180s "
                  "loading_delay=30s min=1 max=8' (also provisioning_stddev, loading_stddev); delays apply "
                  "to instances added by 'add' events or the autoscaler (warm_start=false: the initial ones load "
                  "first too); warm_up_request_count=N "
                  "warm_up_ttft_factor=F multiplies the TTFT of each instance's first N requests (docs/autoscaling.md)",
                  [](RunConfig& c) -> auto& { return c.lifecycle; }, given_by(&parse_lifecycle)));
  t.push_back(record_row("autoscaler", {"--autoscaler"}, "cluster",
                  "Scale pools between their min and max (--lifecycle) every interval from KV demand, spec "
                  "head 6.3: 'interval=30s up_window=0s down_window=120s actuation_delay=0s "
                  "kv_cache_threshold=0.8 scale_up_threshold=0.8 scale_down_boundary=0.4 avg_input_tokens=512' "
                  "(docs/autoscaling.md)",
                  [](RunConfig& c) -> auto& { return c.autoscaler; }, given_by(&parse_autoscaler)));
  t.push_back(row("model_autoscaler_interval_us", {"--model-autoscaler-interval-us"}, "cluster",
                  "BLIS HEAD's autoscaler interval in µs: replaces the interval of the autoscaler (of "
                  "--autoscaler or the policy file), or, without one, runs it with the defaults; 0 turns it off",
                  [](RunConfig& c) -> auto& { return c.model_autoscaler_interval_us; },
                  [](const SettingValue& v) -> std::optional<std::string> {
                    const double x = std::get<double>(v);
                    if (!std::isfinite(x) || x < 0) return fmt::format("must be a finite value >= 0, got {}", x);
                    if (x > 0 && x < 1) return fmt::format("must be 0 or at least 1 (µs), got {}", x);
                    if (x > static_cast<double>(kMaxMicros)) return fmt::format("must be at most {}, got {}", kMaxMicros, x);
                    return std::nullopt;
                  }));
  t.push_back(record_row("node_pools", {"--node-pool"}, "cluster",
                  "A pool of nodes the instances are placed on (repeatable): 'name=h100-nodes gpu_type=H100 "
                  "gpus_per_node=8 gpu_memory_gib=80 initial_nodes=1 min_nodes=0 max_nodes=4 "
                  "provisioning_delay=30s provisioning_stddev=5s cost_per_hour=98.32'; an instance takes TP GPUs "
                  "of a node of its hardware's GPU type, and cost and GPU-hours are billed per node "
                  "(docs/autoscaling.md)",
                  [](RunConfig& c) -> auto& { return c.node_pools; }, given_by(&parse_node_pool)));
  t.push_back(choice_row("scheduler", {"--scheduler"}, "scheduling",
                  "Wait-queue order: fcfs, priority-fcfs, sjf, reverse-priority (default fcfs)",
                  [](RunConfig& c) -> auto& { return c.policies.scheduler; },
                  one_of("scheduler", {"fcfs", "priority-fcfs", "reverse-priority", "sjf"})));
  t.push_back(choice_row(
      "priority_policy", {"--priority-policy"}, "scheduling",
      "Priority: constant, slo-based, inverted-slo (the seed's, by age), slo-class (HEAD's: by "
      "SLO class under --slo-priorities, then arrival; --profile-set head's default) (default "
      "constant)",
      [](RunConfig & c) -> auto& { return c.policies.priority; },
      one_of("priority policy", {"constant", "inverted-slo", "slo-based", "slo-class"})));
  t.push_back(values_from(row("admission_policy", {"--admission-policy"}, "admission",
                  "Admission: an admission plugin (blis plugins list) or a Lua script (guard.lua); default "
                  "from the data tables",
                  [](RunConfig& c) -> auto& { return c.policies.admission; }, {}, kLibraryRef), "admission-policy"));
  t.push_back(row("admission_latency", {"--admission-latency"}, "admission",
                  "µs from arrival to the admission decision",
                  [](RunConfig& c) -> auto& { return c.policies.admission_latency; }, int_between(0, kMaxMicros), kDuration));
  t.push_back(row("token_bucket_capacity", {"--token-bucket-capacity"}, "admission",
                  "Token bucket size, in input tokens (given to the admission policy)",
                  // Both checked only when the token bucket admits (run/resolve.cpp), as the reference does.
                  [](RunConfig& c) -> auto& { return c.policies.token_bucket_capacity; }, {}));
  t.push_back(row("token_bucket_refill_rate", {"--token-bucket-refill-rate"}, "admission",
                  "Token bucket refill, tokens per second (given to the admission policy)",
                  [](RunConfig& c) -> auto& { return c.policies.token_bucket_refill_rate; }, {}));
  t.push_back(record_row("tenant_budgets", {"--tenant-budgets"}, "admission",
                  "Per-tenant share of the cluster's batch slots (instances x --max-num-running-reqs), "
                  "tenant=fraction,... in [0, 1]: a sheddable request of a tenant over its share is rejected "
                  "(tenant-budget-shed), before the admission policy or the gateway queue",
                  [](RunConfig& c) -> auto& { return c.policies.tenant_budgets; }, given_by(&parse_tenant_budgets), 0));
  t.push_back(record_row("slo_priorities", {"--slo-priorities"}, "admission",
                  "SLO class priorities over GIE's (critical=4,standard=3,batch=-1,sheddable=-2,background=-3), "
                  "class=integer,... in [-100, 100]; negative is sheddable (gateway bands, shedding, eviction, "
                  "tier-shed, gaie-legacy, tenant budgets, priority preemption)",
                  [](RunConfig& c) -> auto& { return c.policies.slo_priorities; }, given_by(&parse_slo_priorities), 0));
  t.push_back(row("routing_latency", {"--routing-latency"}, "routing", "µs from admission to the routing decision",
                  [](RunConfig& c) -> auto& { return c.policies.routing_latency; }, int_between(0, kMaxMicros), kDuration));
  // flow control at the gateway (docs/gateway.md)
  t.push_back(row("flow_control", {"--flow-control"}, "gateway",
                  "Hold admitted requests in a gateway queue of priority bands and dispatch them to routing "
                  "while the saturation detector allows (llm-d/GIE flow control; it replaces the admission "
                  "policy)",
                  [](RunConfig& c) -> auto& { return c.gateway.flow_control; }));
  t.push_back(values_from(row("dispatch_order", {"--dispatch-order"}, "gateway",
                  "Gateway queue dispatch order: fifo (earliest arrival), priority (most urgent SLO band "
                  "first), slo-deadline (earliest enqueue + --slo-targets deadline within a band), or a "
                  "dispatch-order plugin, Lua script (shortest_prompt.lua) or library path[:name] (docs/gateway.md)",
                  [](RunConfig& c) -> auto& { return c.gateway.dispatch_order; }, {}, kLibraryRef),
                  "dispatch-order"));
  t.push_back(record_row("slo_targets", {"--slo-targets"}, "gateway",
                  "TTFT targets per SLO class in µs for --dispatch-order slo-deadline, class=µs,... "
                  "(critical=100000,standard=500000)",
                  [](RunConfig& c) -> auto& { return c.gateway.slo_targets; }, given_by(&parse_gateway_slo_targets),
                  0));
  t.push_back(row("dispatch_tick_interval", {"--dispatch-tick-interval"}, "gateway",
                  "µs between dispatch attempts while the gateway queue holds requests (0 = 1ms)",
                  [](RunConfig& c) -> auto& { return c.gateway.dispatch_tick_interval; },
                  int_between(0, kMaxMicros), kDuration));
  t.push_back(row("max_gateway_queue_depth", {"--max-gateway-queue-depth"}, "gateway",
                  "Requests the gateway queue holds at most (0 = unlimited); past it a request is rejected",
                  [](RunConfig& c) -> auto& { return c.gateway.max_queue_depth; }, int_between(0, kMaxTokens)));
  t.push_back(row("per_band_capacity", {"--per-band-capacity"}, "gateway",
                  "Requests one priority band of the gateway queue holds at most (0 = unlimited)",
                  [](RunConfig& c) -> auto& { return c.gateway.per_band_capacity; }, int_between(0, kMaxTokens)));
  t.push_back(
      values_from(row(
                      "fairness_policy", {"--fairness-policy"}, "gateway",
                      "Which tenant's flow of a band dispatches next: global-strict (earliest head), "
                      "round-robin (tenants in turn), or a fairness-policy plugin, Lua script "
                      "(weighted_tenants.lua) or library path[:name] (docs/gateway.md)",
                      [](RunConfig & c) -> auto& { return c.gateway.fairness_policy; }, {}, kLibraryRef),
                  "fairness-policy"));
  t.push_back(row("usage_limit_threshold", {"--usage-limit-threshold"}, "gateway",
                  "Saturation ceiling of the least urgent band (the most urgent has 1, those between "
                  "interpolate); a band over its ceiling holds every later band (1 = no head-of-line blocking)",
                  [](RunConfig& c) -> auto& { return c.gateway.usage_limit_threshold; }, finite_positive(0, 1)));
  t.push_back(row("queue_shedding", {"--queue-shedding"}, "gateway",
                  "When the gateway queue is full, a request evicts the least urgent sheddable one "
                  "(negative priority: batch, sheddable, background) if it is more urgent",
                  [](RunConfig& c) -> auto& { return c.gateway.queue_shedding; }));
  t.push_back(values_from(
      row(
          "shedding_policy", {"--shedding-policy"}, "gateway",
          "Which queued request --queue-shedding sheds for an arriving one: lowest-priority (HEAD's: "
          "the least urgent sheddable, the latest on a tie, if less urgent than the arriving one), "
          "or a shedding-policy plugin, Lua script (tenant_over_share.lua) or library path[:name] "
          "(docs/gateway.md)",
          [](RunConfig & c) -> auto& { return c.gateway.shedding_policy; }, {}, kLibraryRef),
      "shedding-policy"));
  t.push_back(row("in_flight_eviction", {"--in-flight-eviction"}, "gateway",
                  "When saturated with a non-sheddable request waiting, evict a routed sheddable request "
                  "(the least urgent, the latest dispatched) from its instance instead of dispatching",
                  [](RunConfig& c) -> auto& { return c.gateway.in_flight_eviction; }));
  t.push_back(row("request_ttl", {"--request-ttl"}, "gateway",
                  "µs a request may wait in the gateway queue before it expires (0 = forever)",
                  [](RunConfig& c) -> auto& { return c.gateway.request_ttl; }, int_between(0, kMaxMicros), kDuration));
  t.push_back(values_from(row("saturation_detector", {"--saturation-detector"}, "gateway",
                  "What holds the gateway's dispatch: never, utilization (mean over instances of "
                  "max(queue/--queue-depth-threshold, KV/--kv-cache-util-threshold) >= 1), concurrency "
                  "(requests in flight >= instances x --max-concurrency), or a saturation-detector plugin, "
                  "Lua script (kv_only.lua) or library path[:name] (docs/gateway.md)",
                  [](RunConfig& c) -> auto& { return c.gateway.saturation_detector; }, {}, kLibraryRef),
                  "saturation-detector"));
  t.push_back(row("max_concurrency", {"--max-concurrency"}, "gateway",
                  "Requests in flight per instance at which the concurrency detector saturates",
                  [](RunConfig& c) -> auto& { return c.gateway.max_concurrency; }, int_between(1, kMaxTokens, true)));
  t.push_back(row("queue_depth_threshold", {"--queue-depth-threshold"}, "gateway",
                  "Wait-queue depth per instance at which the utilization detector saturates",
                  [](RunConfig& c) -> auto& { return c.gateway.queue_depth_threshold; }, finite_positive()));
  t.push_back(row("kv_cache_util_threshold", {"--kv-cache-util-threshold"}, "gateway",
                  "KV cache utilization per instance at which the utilization detector saturates",
                  [](RunConfig& c) -> auto& { return c.gateway.kv_cache_util_threshold; }, finite_positive()));
  t.push_back(choice_row("routing_policy", {"--routing-policy"}, "routing",
                  "Routing: round-robin, least-loaded, weighted, always-busiest (default round-robin)",
                  [](RunConfig& c) -> auto& { return c.policies.routing; },
                  one_of("routing policy", {"always-busiest", "least-loaded", "round-robin", "weighted"})));
  t.push_back(values_from(row("routing_scorers", {"--routing-scorers"}, "routing",
                  "Scorers of weighted routing, \"name:weight,...\"; a name may be a Lua script path "
                  "(default from the data tables: prefix-affinity:3,queue-depth:2,kv-utilization:2)",
                  [](RunConfig& c) -> auto& { return c.policies.scorers; }), "routing-scorer"));
  t.push_back(row("snapshot_refresh_interval", {"--snapshot-refresh-interval"}, "routing",
                  "µs between refreshes of the queue/batch/KV signals the router sees (0 = always fresh)",
                  [](RunConfig& c) -> auto& { return c.policies.snapshot_refresh_interval; },
                  int_between(0, kMaxMicros), kDuration));
  t.push_back(row("policy_config", {"--policy-config"}, "routing",
                  "Policy file (TOML, or the reference's YAML): policies, scorers, pools, autoscaler, lifecycle; "
                  "every other writer wins over it",
                  [](RunConfig& c) -> auto& { return c.policies.policy_file; }, {}, kInputPath));
  // tracing and fitness
  t.push_back(choice_row("trace_level", {"--trace-level"}, "tracing", "Decision tracing: none or decisions",
                  [](RunConfig& c) -> auto& { return c.trace.level; }, one_of("trace level", {"none", "decisions"})));
  t.push_back(row("counterfactual_k", {"--counterfactual-k"}, "tracing",
                  "With tracing: rank this many candidates per routing decision and compute regret",
                  [](RunConfig& c) -> auto& { return c.trace.counterfactual_k; }, int_between(0, 100000)));
  t.push_back(row("summarize_trace", {"--summarize-trace"}, "tracing", "Print the decision-trace summary",
                  [](RunConfig& c) -> auto& { return c.trace.summarize; }));
  t.push_back(record_row("fitness_weights", {"--fitness-weights"}, "tracing",
                  "Fitness score weights, \"key:value,...\" (throughput, tokens_per_sec, p99_ttft, "
                  "p50_ttft, mean_ttft, p99_e2e, p50_e2e, mean_e2e)",
                  [](RunConfig& c) -> auto& { return c.trace.fitness_weights; }, given_by(&parse_fitness), 0));
  // SLO targets and goodput (spec head §2)
  t.push_back(record_row("slo_ttft", {"--slo-ttft"}, "slo",
                  "TTFT targets per SLO class, class=duration,... (100ms, 1.5s, 250us; class default, "
                  "critical, standard, sheddable, batch, background): adds goodput_rps, slo_attainment "
                  "and per_class to the cluster's metrics",
                  [](RunConfig& c) -> auto& { return c.slo.ttft; }, given_by(&parse_slo_durations), 0));
  t.push_back(record_row("slo_itl", {"--slo-itl"}, "slo",
                  "Mean-ITL targets per SLO class, class=duration,... (each request's mean inter-token latency)",
                  [](RunConfig& c) -> auto& { return c.slo.itl; }, given_by(&parse_slo_durations), 0));
  t.push_back(record_row("slo_e2e", {"--slo-e2e"}, "slo", "E2E targets per SLO class, class=duration,...",
                  [](RunConfig& c) -> auto& { return c.slo.e2e; }, given_by(&parse_slo_durations), 0));
  // sweeps and outputs
  t.push_back(row("jobs", {"--jobs", "-j"}, "outputs",
                  "Configurations of a sweep or search simulated in parallel; results are identical "
                  "for every value",
                  [](RunConfig& c) -> auto& { return c.outputs.jobs; }, int_range(1, 1024)));
  t.push_back(row("rows_csv", {"--rows-csv"}, "outputs",
                  "Also write a sweep's rows (one per configuration) to this CSV file",
                  [](RunConfig& c) -> auto& { return c.outputs.rows_csv; }, {}, kOutputPath));
  t.push_back(row("rows_json", {"--rows-json"}, "outputs",
                  "Also write a sweep's report (the JSON on stdout) to this file",
                  [](RunConfig& c) -> auto& { return c.outputs.rows_json; }, {}, kOutputPath));
  t.push_back(record_row("shard", {"--shard"}, "outputs",
                  "Run one shard of a sweep, I/N (I from 0 to N-1): the configurations whose index modulo N "
                  "is I; prints a shard report that `blis merge` assembles",
                  [](RunConfig& c) -> auto& { return c.outputs.shard; }, given_by(&parse_shard), 0));
  t.push_back(row("resume", {"--resume"}, "outputs",
                  "Continue a sweep that was stopped: skip the configurations its checkpoint journal "
                  "(ROWS.journal beside --rows-json or --rows-csv) already holds",
                  [](RunConfig& c) -> auto& { return c.outputs.resume; }));
  // plugins and scripts
  {
    SettingDef d;
    d.key = "plugin_config";
    d.flags = {"--plugin-config"};
    d.type = SettingType::TextList;
    d.group = "plugins";
    d.help = "Configuration key of one plugin of the run, NAME.KEY=VALUE (repeatable); VALUE is "
             "typed like TOML: 42, 0.5, true, \"text\", 1,2,3";
    d.traits = kAccumulates;
    d.set = [](RunConfig& c, const SettingValue& v, const std::string& origin) {
      for (const auto& e : std::get<std::vector<std::string>>(v)) c.plugin_config.push_back({e, origin});
    };
    d.get = [](const RunConfig& c) -> std::optional<SettingValue> {
      if (c.plugin_config.empty()) return std::nullopt;
      std::vector<std::string> out;
      for (const auto& p : c.plugin_config) out.push_back(p.entry);
      return SettingValue{out};
    };
    t.push_back(std::move(d));
  }
  t.push_back(row("script_dir", {"--script-dir"}, "plugins",
                  "Look here first for Lua scripts named by name or relative path (repeatable); "
                  "BLIS_SCRIPT_DIR adds more, colon-separated",
                  [](RunConfig& c) -> auto& { return c.script_dirs; }, {}, kInputPath));
  t.push_back(row("plugin_dir", {"--plugin-dir"}, "plugins",
                  "Also load plugins (lib*.so) from this directory (repeatable); BLIS_PLUGIN_PATH "
                  "adds more, colon-separated",
                  [](RunConfig& c) -> auto& { return c.plugin_dirs; }, {}, kInputPath));
  t.push_back(row("trust_scenario", {"--trust-scenario"}, "plugins",
                  "Give the scenario file the command line's rights: it may load plugin libraries and "
                  "write outside the current directory (for files you wrote, such as a --dump-config)",
                  [](RunConfig& c) -> auto& { return c.trust_scenario; }));
  // Settings of the reference's later snapshot (spec head §7.2-§7.4).
  t.push_back(row("cache_signal_delay", {"--cache-signal-delay"}, "routing",
                  "µs between the copies of the instances' KV caches that cache-aware scorers "
                  "(precise-prefix-cache, no-hit-lru) query; 0 = the live caches",
                  [](RunConfig& c) -> auto& { return c.policies.cache_signal_delay; },
                  int_between(0, kMaxMicros), kDuration));
  t.push_back(choice_row("preemption_policy", {"--preemption-policy"}, "batching",
                  "Which running request loses its KV when blocks run out: fcfs (the batch's last) or "
                  "priority (the least urgent SLO class, latest arrival first)",
                  [](RunConfig& c) -> auto& { return c.pool().engine.preemption_policy; },
                  one_of("preemption policy", {"fcfs", "priority"})));
  t.push_back(choice_row("preemption_mode", {"--preemption-mode"}, "batching",
                  "What a preempted request keeps: recompute (vLLM's, the default: the tokens it delivered "
                  "stay delivered; back in the batch it recomputes prompt and those tokens, then goes on) or "
                  "restart (HEAD's: it prefills its prompt again and makes its whole output anew; its TTFT and "
                  "inter-token latencies are those of the last attempt); --profile-set head sets restart",
                  [](RunConfig& c) -> auto& { return c.pool().engine.preemption_mode; },
                  one_of("preemption mode", {"recompute", "restart"})));
  t.push_back(row("gpu_memory_utilization", {"--gpu-memory-utilization"}, "kv-cache",
                  "Share of GPU memory, in (0, 1], from which KV blocks are computed (default 0.9); "
                  "given, it replaces the defaults table's KV blocks",
                  [](RunConfig& c) -> auto& { return c.pool().engine.gpu_memory_utilization; },
                  [](const SettingValue& v) -> std::optional<std::string> {
                    const double x = std::get<double>(v);
                    if (!std::isfinite(x) || x <= 0 || x > 1)
                      return fmt::format("must be a finite value in (0, 1], got {}", x);
                    return std::nullopt;
                  }));
  // prefill/decode disaggregation (spec head §5.1; docs/disaggregation.md)
  t.push_back(row("prefill_instances", {"--prefill-instances"}, "disaggregation",
                  "Instances that only prefill (P/D disaggregation; with --decode-instances, or "
                  "--prefill-decode-instances); the P/D pools replace --num-instances [default: 0]",
                  [](RunConfig& c) -> auto& { return c.pd.prefill_instances; }, int_range(0, 100000)));
  t.push_back(row("decode_instances", {"--decode-instances"}, "disaggregation",
                  "Instances that only decode (P/D disaggregation) [default: 0]",
                  [](RunConfig& c) -> auto& { return c.pd.decode_instances; }, int_range(0, 100000)));
  t.push_back(row("prefill_decode_instances", {"--prefill-decode-instances"}, "disaggregation",
                  "Instances of both P/D pools: they prefill and decode [default: 0]",
                  [](RunConfig& c) -> auto& { return c.pd.prefill_decode_instances; }, int_range(0, 100000)));
  t.push_back(choice_row("pd_decider", {"--pd-decider"}, "disaggregation",
                  "Which requests are split into a prefill on the prefill pool and a decode on the decode "
                  "pool: never, always, prefix-threshold (when the chosen decode instance would compute "
                  "more than --pd-prefix-threshold prompt tokens itself) [default: never]",
                  [](RunConfig& c) -> auto& { return c.pd.decider; },
                  one_of("P/D decider", {"always", "never", "prefix-threshold"})));
  t.push_back(row("pd_prefix_threshold", {"--pd-prefix-threshold"}, "disaggregation",
                  "Prompt tokens not cached on the decode instance above which prefix-threshold splits a "
                  "request [default: 16]",
                  [](RunConfig& c) -> auto& { return c.pd.prefix_threshold; }, int_between(0, kMaxTokens)));
  t.push_back(row("pd_transfer_bandwidth", {"--pd-transfer-bandwidth"}, "disaggregation",
                  "Bandwidth of the KV transfer from prefill to decode instances, GB/s [default: 25]",
                  [](RunConfig& c) -> auto& { return c.pd.transfer_bandwidth; }, finite_positive()));
  t.push_back(row("pd_transfer_base_latency", {"--pd-transfer-base-latency"}, "disaggregation",
                  "Fixed latency of each KV transfer, ms [default: 0.05]",
                  [](RunConfig& c) -> auto& { return c.pd.transfer_base_latency; },
                  [](const SettingValue& v) -> std::optional<std::string> {
                    const double x = std::get<double>(v);
                    if (!std::isfinite(x) || x < 0 || x > 1e9) return fmt::format("must be a finite value in [0, 1e9] ms, got {}", x);
                    return std::nullopt;
                  }));
  t.push_back(row("pd_transfer_contention", {"--pd-transfer-contention"}, "disaggregation",
                  "KV transfers share the bandwidth equally while they overlap (else each has all of it)",
                  [](RunConfig& c) -> auto& { return c.pd.transfer_contention; }));
  t.push_back(values_from(row("prefill_routing_scorers", {"--prefill-routing-scorers"}, "disaggregation",
                  "Scorers of the prefill pool's weighted router, \"name:weight,...\" (default: the run's routing)",
                  [](RunConfig& c) -> auto& { return c.pd.prefill_routing_scorers; }), "routing-scorer"));
  t.push_back(values_from(row("decode_routing_scorers", {"--decode-routing-scorers"}, "disaggregation",
                  "Scorers of the decode pool's weighted router, \"name:weight,...\" (default: the run's routing)",
                  [](RunConfig& c) -> auto& { return c.pd.decode_routing_scorers; }), "routing-scorer"));
  t.push_back(row("prefill_tp", {"--prefill-tp"}, "disaggregation",
                  "TP of the prefill instances (0 = --tp); also sets the KV bytes per token on the wire",
                  [](RunConfig& c) -> auto& { return c.pd.prefill_tp; }, int_range(0, 1024)));
  t.push_back(row("decode_tp", {"--decode-tp"}, "disaggregation", "TP of the decode instances (0 = --tp)",
                  [](RunConfig& c) -> auto& { return c.pd.decode_tp; }, int_range(0, 1024)));
  t.push_back(values_from(row("prefill_hardware", {"--prefill-hardware"}, "disaggregation",
                  "GPU of the prefill instances (default: --hardware)",
                  [](RunConfig& c) -> auto& { return c.pd.prefill_hardware; }), "gpus"));
  t.push_back(values_from(row("decode_hardware", {"--decode-hardware"}, "disaggregation",
                  "GPU of the decode instances (default: --hardware)",
                  [](RunConfig& c) -> auto& { return c.pd.decode_hardware; }), "gpus"));
  t.push_back(row("prefill_latency_model", {"--prefill-latency-model"}, "disaggregation",
                  "Latency model of the prefill instances (default: --latency-model)",
                  [](RunConfig& c) -> auto& { return c.pd.prefill_latency_model; }, {}, kLibraryRef));
  t.push_back(row("decode_latency_model", {"--decode-latency-model"}, "disaggregation",
                  "Latency model of the decode instances (default: --latency-model)",
                  [](RunConfig& c) -> auto& { return c.pd.decode_latency_model; }, {}, kLibraryRef));
  t.push_back(row("prefill_max_model_len", {"--prefill-max-model-len"}, "disaggregation",
                  "Max model length of the prefill instances (0 = --max-model-len)",
                  [](RunConfig& c) -> auto& { return c.pd.prefill_max_model_len; }, int_between(0, kMaxTokens)));
  t.push_back(row("decode_max_model_len", {"--decode-max-model-len"}, "disaggregation",
                  "Max model length of the decode instances (0 = --max-model-len)",
                  [](RunConfig& c) -> auto& { return c.pd.decode_max_model_len; }, int_between(0, kMaxTokens)));
  // encoder disaggregation (docs/epd.md)
  t.push_back(row("encode_instances", {"--encode-instances"}, "disaggregation",
                  "Instances of the encode pool, beside the P/D pools: requests the encode decider picks are "
                  "routed there first (the encode takes no time) [default: 0 = no encode pool]",
                  [](RunConfig& c) -> auto& { return c.pd.encode_instances; }, int_range(0, 100000)));
  t.push_back(values_from(row("encode_decider", {"--encode-decider"}, "disaggregation",
                  "Which requests go through the encode pool: never, always, multimodal (those with image, "
                  "audio or video tokens), or an encode-decider plugin, Lua script (media_heavy.lua) or "
                  "library path[:name] (docs/epd.md) [default: never]",
                  [](RunConfig& c) -> auto& { return c.pd.encode_decider; }, {}, kLibraryRef),
                  "encode-decider"));
  // per-request deadlines (spec head §4.1)
  t.push_back(row("timeout", {"--timeout"}, "workload",
                  "Seconds after its arrival at which a request is abandoned, queued or running "
                  "(counted in timed_out_requests); negative = no deadline; not given: none",
                  [](RunConfig& c) -> auto& { return c.workload.timeout_s; }, timeout_seconds()));
  // closed-loop users (spec head §4.2)
  t.push_back(row("concurrency", {"--concurrency"}, "workload",
                  "Closed-loop users instead of --rate: each sends its next request when its previous one "
                  "completes, plus --think-time-ms (0 = off; --num-requests then defaults to unbounded)",
                  [](RunConfig& c) -> auto& { return c.workload.concurrency; }, int_between(0, 1'000'000)));
  t.push_back(row("think_time_ms", {"--think-time-ms"}, "workload",
                  "With --concurrency: milliseconds a user waits after a completion before its next request",
                  [](RunConfig& c) -> auto& { return c.workload.think_time_ms; },
                  int_between(0, kMaxMicros / 1000)));
  t.push_back(choice_row("session_mode", {"--session-mode"}, "workload",
                  "Multi-turn sessions of a --workload-spec: open-loop (the default: every round arrives on "
                  "its schedule) or closed-loop (HEAD's: a round arrives its think time after the previous "
                  "one completes; inference_perf then expands as HEAD's does)",
                  [](RunConfig& c) -> auto& { return c.workload.session_mode; },
                  one_of("session mode", {"closed-loop", "open-loop"})));
  // LoRA adapters (docs/lora.md): HEAD's flags, checked with the adapters (run/lora_setup.cpp)
  t.push_back(row("lora_config", {"--lora-config"}, "lora",
                  "YAML file with a top-level lora: block (adapters [{id, rank, base_model}], adapter_capacity, "
                  "load_base_latency_us, load_bandwidth_bytes_us, footprint_bytes_per_rank, step_overhead_tiers); "
                  "a workload client names its adapter with `adapter:`",
                  [](RunConfig& c) -> auto& { return c.lora.config; }, {}, kInputPath));
  t.push_back(row("lora_adapter_capacity", {"--lora-adapter-capacity"}, "lora",
                  "Resident LoRA adapter slots per instance (over --lora-config; 0 with adapters declared is an "
                  "error; unset: the subsystem is inert)",
                  [](RunConfig& c) -> auto& { return c.lora.adapter_capacity; }, int_between(INT64_MIN, kMaxTokens)));
  t.push_back(row("lora_load_base_latency_us", {"--lora-load-base-latency-us"}, "lora",
                  "Fixed µs of a cold adapter load (over --lora-config; default 1500)",
                  [](RunConfig& c) -> auto& { return c.lora.load_base_latency_us; }));
  t.push_back(row("lora_load_bandwidth_bytes_us", {"--lora-load-bandwidth-bytes-us"}, "lora",
                  "Adapter load bandwidth in bytes/µs, > 0 (over --lora-config; default 2e6)",
                  [](RunConfig& c) -> auto& { return c.lora.load_bandwidth_bytes_us; }));
  t.push_back(row("lora_footprint_bytes_per_rank", {"--lora-footprint-bytes-per-rank"}, "lora",
                  "Adapter HBM footprint per rank unit in bytes, > 0 (over --lora-config; default 2e6)",
                  [](RunConfig& c) -> auto& { return c.lora.footprint_bytes_per_rank; }));
  t.push_back(row("lora_scorer_weight", {"--lora-scorer-weight"}, "lora",
                  "Weight of the lora-affinity scorer added to the weighted routing profile (instances holding "
                  "the request's adapter score 1, others 0); must be finite and > 0; unset: not added",
                  [](RunConfig& c) -> auto& { return c.lora.scorer_weight; }, finite_positive()));
  t.push_back(values_from(row("lora_eviction", {"--lora-eviction"}, "lora",
                  "Which resident adapter a cold load evicts when an instance's adapter slots are full: lru "
                  "(HEAD's: the least recently used that no running request uses), or an adapter-eviction "
                  "plugin, Lua script (mru.lua) or library path[:name] (docs/lora.md) [default: lru]",
                  [](RunConfig& c) -> auto& { return c.lora.eviction; }, {}, kLibraryRef),
                  "adapter-eviction"));
  return t;
}

std::string kebab(const std::string& key) { return flag_of_key(key); }

// Every setting's kebab name, for "did you mean" messages.
std::vector<std::string> setting_names() {
  std::vector<std::string> out;
  for (const auto& d : setting_table()) out.push_back(kebab(d.key));
  return out;
}

// Go's rule for underscores in an integer literal (strconv's underscoreOK):
// each one stands between two digits, a base prefix counting as a digit
// ("1_000", "0x_ff"); anywhere else the text is not a number.
bool go_underscores_ok(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  char saw = '^';  // ^ start, 0 digit or prefix, _ underscore, ! other
  size_t i = 0;
  bool hex = false;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    if (p == 'b' || p == 'o' || p == 'x') i = 2, saw = '0', hex = p == 'x';
  }
  for (; i < s.size(); ++i) {
    const char c = s[i];
    const char lc = static_cast<char>(c | 0x20);
    if ((c >= '0' && c <= '9') || (hex && lc >= 'a' && lc <= 'f')) {
      saw = '0';
    } else if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
    } else {
      if (saw == '_') return false;
      saw = '!';
    }
  }
  return saw != '_';
}

// An integer as the reference's flags read one, Go's strconv.ParseInt(s, 0,
// 64): an optional sign, then 0x/0X hex, 0o/0O or a bare leading 0 octal
// ("010" is 8), 0b/0B binary, or decimal; underscores as above.
std::optional<int64_t> go_parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string_view whole = s;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') negative = s[0] == '-', s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  unsigned base = 10;
  if (s[0] == '0') {
    const char p = s.size() >= 3 ? static_cast<char>(s[1] | 0x20) : '\0';
    if (p == 'b') base = 2, s.remove_prefix(2);
    else if (p == 'o') base = 8, s.remove_prefix(2);
    else if (p == 'x') base = 16, s.remove_prefix(2);
    else base = 8, s.remove_prefix(1);
  }
  uint64_t n = 0;
  bool underscores = false;
  for (const char c : s) {
    if (c == '_') {
      underscores = true;
      continue;
    }
    const char lc = static_cast<char>(c | 0x20);
    unsigned d = 0;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (lc >= 'a' && lc <= 'z') d = static_cast<unsigned>(lc - 'a') + 10;
    else return std::nullopt;
    if (d >= base) return std::nullopt;
    if (n > (uint64_t{1} << 63) / base) return std::nullopt;  // out of range
    n = n * base + d;
    if (n > (uint64_t{1} << 63)) return std::nullopt;
  }
  if (underscores && !go_underscores_ok(whole)) return std::nullopt;
  if (!negative && n == (uint64_t{1} << 63)) return std::nullopt;
  if (negative) return n == (uint64_t{1} << 63) ? INT64_MIN : -static_cast<int64_t>(n);
  return static_cast<int64_t>(n);
}

std::optional<int64_t> parse_int(const std::string& s) {
  if (auto v = go_parse_int(s)) return v;
  // Integral values written as floats ("1e4", "100.0") are accepted when
  // exact; a text with neither point nor exponent ("08") is no float.
  if (s.find_first_of(".eE") == std::string::npos || s.find_first_of("xX") != std::string::npos)
    return std::nullopt;
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  double d = 0;
  auto rd = std::from_chars(b, e, d);
  if (rd.ec == std::errc() && rd.ptr == e && std::isfinite(d) && d == std::floor(d) &&
      std::fabs(d) < 9.2e18)
    return static_cast<int64_t>(d);
  return std::nullopt;
}

// A Go duration ("60s", "500ms", "1m30s", "1.5h", "250us"/"250µs"), or bare µs, as whole µs.
std::optional<int64_t> parse_duration_us(const std::string& s);

std::optional<double> parse_double(const std::string& s) {
  double v = 0;
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  auto r = std::from_chars(b, e, v);
  if (r.ec == std::errc() && r.ptr == e) return v;
  return std::nullopt;
}

std::optional<int64_t> parse_duration_us(const std::string& s) {
  if (auto ns = go_duration_ns(s)) {
    if (*ns % 1000 != 0) return std::nullopt;  // settings hold whole µs
    return *ns / 1000;
  }
  return parse_int(s);
}

}  // namespace

std::optional<int64_t> duration_text_us(const std::string& text) { return parse_duration_us(text::trim(text)); }

const std::vector<SettingDef>& setting_table() {
  static const std::vector<SettingDef> table = make_table();
  return table;
}

const std::vector<std::string>& setting_groups() {
  static const std::vector<std::string> groups = [] {
    std::vector<std::string> g;
    for (const auto& d : setting_table())
      if (std::find(g.begin(), g.end(), d.group) == g.end()) g.push_back(d.group);
    return g;
  }();
  return groups;
}

namespace {

// Every name find_setting() accepts, once: "--flag" as written, and keys
// ("max_num_seqs", or a flag's name with '_' for '-'). The first row that
// has a name keeps it, as a scan of the table in order would find it. A
// scenario's events and callbacks ask for settings by name at run time
// (RunConfig::where), so a lookup must not scan the table.
struct SettingIndex {
  std::unordered_map<std::string, const SettingDef*> flags, keys;
  SettingIndex() {
    for (const auto& d : setting_table()) {
      keys.emplace(d.key, &d);
      for (const auto& f : d.flags) {
        flags.emplace(f, &d);
        if (f.size() > 2) keys.emplace(key_of_flag(f.substr(2)), &d);
      }
    }
  }
};

}  // namespace

const SettingDef* find_setting(std::string_view name) {
  static const SettingIndex index;
  const bool is_flag = name.substr(0, 2) == "--";
  const auto& names = is_flag ? index.flags : index.keys;
  const auto at = names.find(is_flag ? std::string(name) : key_of_flag(std::string(name)));
  return at == names.end() ? nullptr : at->second;
}

std::string setting_where(const std::string& origin, const SettingDef& def) {
  if (origin.empty()) return def.flag();
  if (origin.front() == '-') return origin;  // a flag, "--rate" or "-n"
  return origin + ": " + kebab(def.key);
}

SettingValue parse_setting(const SettingDef& def, const std::string& text, const std::string& where) {
  auto bad = [&](const char* expected) {
    return InputError(where, fmt::format("invalid value '{}': expected {}", text, expected));
  };
  SettingValue v;
  switch (def.type) {
    case SettingType::Integer: {
      if (def.has(kDuration)) {
        auto x = parse_duration_us(text::trim(text));
        if (!x)
          throw bad("a duration: µs as a bare integer, or with a unit (60s, 500ms, 1m30s, 1.5h, 250us)");
        v = *x;
        break;
      }
      const std::string t = text::trim(text);
      auto x = parse_int(t);
      if (!x) {
        const size_t digits = t.find_first_not_of("+-");
        if (digits != std::string::npos && t.size() > digits + 1 && t[digits] == '0' &&
            t.find_first_not_of("0123456789_", digits) == std::string::npos)
          throw bad("an integer (a leading 0 makes it octal, as Go reads it, so only digits 0-7 follow; "
                    "leave the 0 out for a decimal)");
        if (parse_double(t)) throw bad("an integer in range");
        throw bad("an integer");
      }
      v = *x;
      break;
    }
    case SettingType::Number: {
      auto x = parse_double(text::trim(text));
      if (!x) throw bad("a number");
      v = *x;
      break;
    }
    case SettingType::Boolean: {
      const std::string s = text::lower(text::trim(text));
      if (s == "true" || s == "1" || s == "yes" || s == "on") v = true;
      else if (s == "false" || s == "0" || s == "no" || s == "off") v = false;
      else throw bad("true or false");
      break;
    }
    case SettingType::Text: v = text; break;
    case SettingType::NumberList: {
      std::vector<double> xs;
      for (const auto& item : text::split(text, ',')) {
        auto x = parse_double(text::trim(item));
        if (!x) throw bad("comma-separated numbers");
        xs.push_back(*x);
      }
      v = std::move(xs);
      break;
    }
    case SettingType::TextList: v = std::vector<std::string>{text}; break;
  }
  if (def.check)
    if (auto msg = def.check(v)) throw InputError(where, *msg);
  return v;
}

namespace {

// How many items a repeatable setting holds in `config` (0 for the others).
size_t item_count(const SettingDef& def, const RunConfig& config) {
  if (def.type != SettingType::TextList) return 0;
  const auto v = def.get(config);
  return v ? std::get<std::vector<std::string>>(*v).size() : 0;
}

// A record's fields' own places (a TOML table's keys), as origins
// "KEY#I.FIELD" (a repeatable record's item I) or "KEY.FIELD"; a single
// record given again forgets the places of the one it replaces.
void keep_field_places(RunConfig& config, const SettingDef& def, const Setting& s, size_t item) {
  std::string prefix = def.type == SettingType::TextList ? fmt::format("{}#{}.", def.key, item) : def.key + ".";
  if (def.type != SettingType::TextList)
    for (auto it = config.origins.lower_bound(prefix); it != config.origins.end() && it->first.starts_with(prefix);)
      it = config.origins.erase(it);
  for (const auto& [field, origin] : s.field_where) config.origins[prefix + field] = setting_where(origin, def);
}

}  // namespace

void apply_settings(RunConfig& config, const Settings& settings) {
  for (const Setting& s : settings) {
    const SettingDef* def = find_setting(s.flag);
    if (def == nullptr)
      throw InputError(s.where.rfind("--", 0) == 0 ? "" : s.where,
                       fmt::format("unknown setting '{}'{}; a scenario's settings are the flags of "
                                   "`blis run` (see blis run --help) without the leading dashes",
                                   s.flag, text::did_you_mean(s.flag, setting_names())));
    const std::string where = setting_where(s.where, *def);
    // A list written as a list (TOML array, Lua table) keeps its items apart.
    SettingValue value;
    if (def->type == SettingType::TextList && !s.items.empty()) {
      value = s.items;
    } else {
      value = parse_setting(*def, s.value, where);
    }
    // The places first: a record is read as it is set, and its errors name them.
    const size_t before = item_count(*def, config);
    const size_t added = def->type == SettingType::TextList ? std::get<std::vector<std::string>>(value).size() : 0;
    config.origins[def->key] = s.where;
    for (size_t i = before; i < before + added; ++i) config.origins[fmt::format("{}#{}", def->key, i)] = where;
    if (def->has(kRecord)) keep_field_places(config, *def, s, before);
    def->set(config, value, s.where);
  }
}

Settings settings_of(const RunConfig& config) {
  Settings out;
  for (const SettingDef& def : setting_table()) {
    const auto v = def.get(config);
    if (!v) continue;
    if (const auto* items = std::get_if<std::vector<std::string>>(&*v)) {
      for (const auto& item : *items) out.push_back(Setting{def.key, item, def.flag(), {item}});
      continue;
    }
    out.push_back(Setting{def.key, setting_text(*v), def.flag()});
  }
  return out;
}

std::string setting_text(const SettingValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return scenario::number_text(v);
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return v;
        else if constexpr (std::is_same_v<T, std::vector<double>>) {
          std::vector<std::string> items;
          items.reserve(v.size());
          for (double x : v) items.push_back(scenario::number_text(x));
          return text::join(items, ",");
        } else {
          return text::join(v, ",");
        }
      },
      value);
}

std::optional<InputError> at_origin(const InputError& error, const RunConfig& config) {
  const std::string& where = error.where();
  if (where.rfind("--", 0) != 0) return std::nullopt;
  const std::string flag = where.substr(0, where.find(' '));  // "--latency-model X": the flag
  const SettingDef* def = find_setting(flag);
  if (def == nullptr) return std::nullopt;
  auto it = config.origins.find(def->key);
  if (it == config.origins.end() || it->second.empty() || it->second.front() == '-') return std::nullopt;
  const std::string what = error.what();
  const std::string message = what.size() > where.size() + 2 ? what.substr(where.size() + 2) : what;
  return InputError(config.where(def->key) + where.substr(flag.size()), message);
}

std::string RunConfig::item_where(const std::string& key, size_t i) const {
  auto it = origins.find(fmt::format("{}#{}", key, i));
  return it != origins.end() ? it->second : where(key);
}

RecordPlace RunConfig::record_place(const std::string& key, size_t i) const {
  RecordPlace place(i == static_cast<size_t>(-1) ? where(key) : item_where(key, i));
  const std::string prefix = i == static_cast<size_t>(-1) ? key + "." : fmt::format("{}#{}.", key, i);
  for (auto it = origins.lower_bound(prefix); it != origins.end() && it->first.starts_with(prefix); ++it)
    place.fields.emplace(it->first.substr(prefix.size()), it->second);
  return place;
}

std::string RunConfig::where(const std::string& key) const {
  const SettingDef* def = find_setting(key);
  auto it = origins.find(key);
  if (def == nullptr) return it == origins.end() ? key : it->second;
  return setting_where(it == origins.end() ? "" : it->second, *def);
}

}  // namespace blis
