// The typed configuration of one `blis run`: what the user asked for, before
// defaults and data tables are applied (blis/resolve.hpp does that).
//
// Every writer — the command line, TOML and Lua scenarios, the policy file —
// fills a RunConfig through the one table of settings (blis/settings.hpp).
// A field is std::optional where "not given" means something different from
// any value: the data tables, the workload spec or the policy file fill it
// (see docs/design/configuration.md for the precedence).
#pragma once

#include <blis/fleet_settings.hpp>
#include <blis/record_place.hpp>
#include <blis/scenario.hpp>
#include <blis/scenario_events.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace blis {

// A record setting read into its struct when it was given, whoever gave it,
// with the text it was given as: what --dump-config and settings_of() write
// back, so that a value reads back as the user spelled it ("180s").
template <class T>
struct Given {
  T value;
  std::string text;
};

// The short lists, read when given (src/config/list_settings.cpp).
// Tenant and the fraction of the cluster's batch slots it may hold, in the order given.
using TenantBudgetList = std::vector<std::pair<std::string, double>>;
// A value per SLO class (blis_slo_class: critical 1 ... background 5), in the order given.
using SloClassValues = std::vector<std::pair<int32_t, int64_t>>;
// A duration in ms per SLO class (0: the default class), for goodput.
using SloClassMs = std::map<int32_t, double>;
// --shard I/N: the configurations k of a sweep with k % count == index.
struct ShardSpec {
  int64_t index = 0, count = 1;
};

// Model, hardware and latency backend of the instances of a pool.
struct ModelSettings {
  std::optional<std::string> name;                 // --model (case-insensitive)
  std::optional<std::string> hardware;             // GPU type; default from the data tables
  std::optional<int64_t> tp;                       // tensor parallelism; 0 = the model's default
  std::optional<std::string> vllm_version;         // coefficient-table key
  std::optional<std::string> latency_model;        // plugin name, library path or Lua script
  std::optional<std::vector<double>> alpha_coeffs;
  std::optional<std::vector<double>> beta_coeffs;
  std::optional<int64_t> max_model_len;            // 0 = unlimited
  std::optional<std::string> model_config_folder;  // a HuggingFace config.json
  std::optional<std::string> hardware_config;      // another GPU table
  // Handed to the latency model as "dp", "moe_comm_backend" and
  // "enable_expert_parallel"; a model that does not read them refuses the run.
  std::optional<int64_t> dp;                       // data-parallel ranks of a MoE model
  std::optional<std::string> moe_comm_backend;     // token exchange of MoE layers at dp > 1
  std::optional<bool> enable_expert_parallel;      // experts owned whole by the TP·DP group (docs/epd.md)
};

// KV cache and batch formation of one instance.
struct EngineSettings {
  std::optional<int64_t> total_kv_blocks;  // default: data table, else computed
  int64_t block_size = 16;
  int64_t max_running = 256;
  int64_t max_scheduled_tokens = 2048;
  int64_t long_prefill_threshold = 0;
  int64_t kv_cpu_blocks = 0;
  double kv_offload_threshold = 0.9;
  double kv_transfer_bandwidth = 100.0;   // blocks per µs
  int64_t kv_transfer_base_latency = 0;   // µs
  // threshold (the seed's: cached blocks move to the CPU tier above the
  // threshold) or mirror (HEAD's vLLM v1 model: running requests' full blocks
  // are copied there every step, and reloaded when a prompt continues there)
  std::string kv_cpu_model = "threshold";
  std::optional<std::string> kv_offload_config;  // the kv_offload: YAML file (docs/kv-offload.md)
  // Share of GPU memory for weights, activations and KV (spec head §7.4).
  // Given, it replaces the defaults table's KV blocks by a computed count.
  std::optional<double> gpu_memory_utilization;
  std::string preemption_policy = "fcfs";  // fcfs (batch tail) or priority (spec head §7.3)
  // recompute (vLLM's: delivered tokens stay delivered) or restart (HEAD's:
  // the victim makes its output again from the first token)
  std::string preemption_mode = "recompute";
};

// A group of identical instances. Today a cluster has exactly one pool.
struct PoolSettings {
  int64_t instances = 1;
  ModelSettings model;
  EngineSettings engine;
};

struct WorkloadSettings {
  std::string workload = "distribution";      // or a preset of the data tables
  std::optional<std::string> spec;            // the reference's v2 YAML; wins over `workload`
  std::optional<std::string> trace;           // CSV replay
  std::optional<std::string> traces_filepath; // the legacy CSV of `workload = "traces"` (lossy)
  double rate = 1.0;                          // requests per second
  std::optional<std::string> arrival_process;  // constant (default), poisson, gamma, weibull
  std::optional<double> arrival_cv;            // gamma and weibull; default 1
  std::optional<int64_t> num_requests;        // default 100; a spec or trace has its own
  int64_t prefix_tokens = 0;
  int64_t prompt_tokens = 512, prompt_tokens_stdev = 256, prompt_tokens_min = 2,
          prompt_tokens_max = 7000;
  int64_t output_tokens = 512, output_tokens_stdev = 256, output_tokens_min = 2,
          output_tokens_max = 7000;
  // Seconds from arrival after which a request is abandoned; negative = none.
  // Not given: no deadlines (blis keeps the baseline's behaviour; spec head §4.1).
  std::optional<int64_t> timeout_s;
  // > 0: that many closed-loop users instead of --rate, each sending its next
  // request think_time_ms after its previous one completed (spec head §4.2).
  // Optional so that a configuration without them dumps as it did.
  std::optional<int64_t> concurrency;
  std::optional<int64_t> think_time_ms;
  // How a spec's single-session multi-turn clients send their rounds:
  // "open-loop" (not given: every round on its schedule, the baseline) or
  // "closed-loop" (each round think time after the previous one completes,
  // as HEAD; --profile-set head). Optional so that dumps are unchanged.
  std::optional<std::string> session_mode;
  // HEAD's --lazy-generation: blis always draws requests lazily, so it
  // changes nothing; kept so that HEAD's command lines run and dump.
  std::optional<bool> lazy_generation;
};

// Admission, routing and scheduling. The optional ones may also come from a
// policy file, which fills only what no other writer set.
struct PolicySettings {
  std::optional<std::string> admission;        // plugin name or script
  std::optional<double> token_bucket_capacity;
  std::optional<double> token_bucket_refill_rate;
  std::optional<std::string> routing;          // round-robin, least-loaded, weighted, ...
  std::optional<std::string> scorers;          // "name:weight,..."
  std::optional<std::string> scheduler;
  std::optional<std::string> priority;
  std::optional<Given<TenantBudgetList>>
      tenant_budgets;                                   // "tenant=fraction,..." (BLIS HEAD's tenant_budgets)
  std::optional<Given<SloClassValues>> slo_priorities;  // "class=priority,..." over GIE's defaults
  int64_t admission_latency = 0;               // µs
  int64_t routing_latency = 0;                 // µs
  int64_t snapshot_refresh_interval = 0;       // µs
  int64_t cache_signal_delay = 50000;          // µs; age of the KV caches scorers query (spec head §7.2)
  std::optional<std::string> policy_file;      // --policy-config
};

// Flow control at the gateway (docs/gateway.md): HEAD's flags, its defaults.
struct GatewaySettings {
  bool flow_control = false;
  std::string dispatch_order = "fifo";          // fifo, priority, slo-deadline
  std::string saturation_detector = "never";    // never, utilization, concurrency
  std::string fairness_policy = "global-strict";  // global-strict, round-robin
  std::optional<Given<SloClassValues>> slo_targets;  // "class=µs,..." for slo-deadline
  int64_t max_queue_depth = 0;                  // 0 = unlimited
  int64_t per_band_capacity = 0;                // 0 = unlimited
  double usage_limit_threshold = 1.0;
  int64_t request_ttl = 0;                      // µs, 0 = none
  bool queue_shedding = false;
  std::string shedding_policy = "lowest-priority";  // the victim of --queue-shedding (blis)
  bool in_flight_eviction = false;
  int64_t dispatch_tick_interval = 1000;        // µs, 0 = the default
  int64_t max_concurrency = 100;
  double queue_depth_threshold = 5;
  double kv_cache_util_threshold = 0.8;
};

// LoRA adapters (docs/lora.md): HEAD's flags; all unset = inert.
struct LoraSettings {
  std::optional<std::string> config;                  // --lora-config: YAML with a top-level lora: block
  std::optional<int64_t> adapter_capacity;            // resident adapter slots per instance
  std::optional<double> load_base_latency_us;         // µs
  std::optional<double> load_bandwidth_bytes_us;      // bytes/µs
  std::optional<double> footprint_bytes_per_rank;     // bytes
  std::optional<double> scorer_weight;                // lora-affinity in the weighted profile
  std::optional<std::string> eviction;                // adapter-eviction plugin (lru unless given)
};

struct TraceSettings {
  std::string level = "none";  // none or decisions
  int64_t counterfactual_k = 0;
  bool summarize = false;
  std::optional<Given<std::map<std::string, double>>> fitness_weights;  // metric key -> weight
};

// SLO targets per class for goodput (spec head §2): "class=duration,...".
struct SloSettings {
  std::optional<Given<SloClassMs>> ttft, itl, e2e;
};

struct OutputSettings {
  std::string format = "reference";  // reference (the reference's blocks), json or table
  std::string log_level = "warn";
  std::optional<std::string> results_path;
  // --trace-output PREFIX: the run as a TraceV2, PREFIX.yaml and PREFIX.csv.
  std::optional<std::string> trace_output;
  bool profile = false;
  int64_t jobs = 1;                      // sweeps and searches
  std::optional<std::string> rows_csv;
  std::optional<std::string> rows_json;
  std::optional<Given<ShardSpec>> shard;  // "I/N": run the sweep's configurations k with k % N == I
  bool resume = false;               // skip configurations a checkpoint journal holds
  std::optional<std::string> timeseries;  // --timeseries: the time series CSV
  int64_t timeseries_interval = 1000000;  // µs per row of the time series
  bool warn_unsteady = true;  // not a setting: searches judge the verdict themselves
  // Saturation detectors whose labels are printed (spec head §3.1), in the roster's order ("all": every one).
  std::optional<Given<std::vector<std::string>>> detectors;
  std::optional<std::string> saturation_config;        // their settings file (HEAD's strict YAML)
  std::optional<int64_t> saturation_final_window;      // µs of the final vote; default window_size_sec, else 30 s
  std::optional<std::string> saturation_report;        // the per-event results file (HEAD's JSON)
  std::optional<std::string> report;     // a folder for report.html and its charts
  bool keep_distributions = false;       // not a setting: plans keep latency CDFs for their report
  bool keep_timed_samples = false;       // not a setting: plans judge latencies in steady state
  bool quiet = false;                    // no progress on stderr
  bool report_text = true;               // not a setting: the runs of sweeps and plans write no report
  // What stdout's blocks look like: "seed" (c9ca689b's) or "head" (HEAD's:
  // every metrics block even with nothing completed, timed_out_requests, the
  // split rejection lines, priority inversions only under priority-fcfs).
  std::string output_form = "seed";
};

// Prefill/decode disaggregation (spec head §5.1; docs/disaggregation.md):
// the pools by role, the decider, the KV link, and each role's own model
// settings. All optional, so that a configuration without them dumps as it did.
struct PdSettings {
  std::optional<int64_t> prefill_instances, decode_instances, prefill_decode_instances;
  std::optional<std::string> decider;           // never (default), always, prefix-threshold
  std::optional<int64_t> prefix_threshold;      // tokens; default 16
  std::optional<double> transfer_bandwidth;     // GB/s; default 25
  std::optional<double> transfer_base_latency;  // ms; default 0.05
  std::optional<bool> transfer_contention;      // default false
  std::optional<std::string> prefill_routing_scorers, decode_routing_scorers;
  std::optional<int64_t> prefill_tp, decode_tp;
  std::optional<std::string> prefill_hardware, decode_hardware;
  std::optional<std::string> prefill_latency_model, decode_latency_model;
  std::optional<int64_t> prefill_max_model_len, decode_max_model_len;
  // E/P/D (docs/epd.md): an encode pool beside the P/D pools, and which
  // requests go through it: never (default), always, multimodal.
  std::optional<int64_t> encode_instances;
  std::optional<std::string> encode_decider;
  bool configured() const {
    return prefill_instances.value_or(0) + decode_instances.value_or(0) + prefill_decode_instances.value_or(0) > 0;
  }
};

// One `--plugin-config NAME.KEY=VALUE` (or a scenario's plugin-config table
// entry), kept as text until resolution types it.
struct PluginSetting {
  std::string entry;   // "NAME.KEY=VALUE"
  std::string origin;  // where it was given, for messages
};

// What a configuration may do with the paths it names (run/path_rules.hpp).
// Empty `scenario`: the command line's full rights. Otherwise the values came
// from that scenario file, which the person running it did not trust: it opens
// no native library or plugin folder except those in `native` (what the
// command line names, canonical), and writes only below the current directory.
struct PathRights {
  std::string scenario;
  std::vector<std::string> native;
};

// One pool of a heterogeneous cluster (--pool, a scenario's [[pools]], the
// policy file's pools; src/config/pool_text.cpp reads them all).
struct PoolSpec {
  std::string name;
  int64_t count = 0;
  double cost_per_hour = 0;  // $ per instance-hour
  std::string role;          // P/D role: prefill, decode, mixed, encode; "" = none
  // Its own lifecycle keys (min, max, delays), laid over --lifecycle's, and
  // how they were written ("" = none), for messages.
  LifecycleSettings lifecycle;
  std::string lifecycle_text;
  // Its own model, latency, KV-cache and batching settings, each placed at
  // its field: applied over the run's when the pool is resolved (run/pools.cpp).
  Settings settings;
};

struct RunConfig {
  // A named bundle of defaults of the data tables ([profile-sets.NAME]):
  // resolution fills every setting it names that no writer gave.
  std::optional<std::string> profile_set;
  std::optional<int64_t> seed;     // default 42; a workload spec has its own
  std::optional<int64_t> horizon;  // µs; a workload spec may set one
  std::vector<PoolSettings> pools{PoolSettings{}};
  WorkloadSettings workload;
  PolicySettings policies;
  GatewaySettings gateway;
  LoraSettings lora;
  TraceSettings trace;
  SloSettings slo;
  OutputSettings outputs;
  PdSettings pd;
  // Heterogeneous pools (`[[pools]]`), written "name=NAME count=N
  // cost_per_hour=D" and any model, latency, KV-cache or batching setting, or
  // as tables (run/pools.cpp). Empty: one pool, `pools.front()`, as the flags set it.
  std::vector<Given<PoolSpec>> pool_specs;
  // Scenario events (blis/scenario_events.hpp), in the order given; each
  // keeps its text and place.
  std::vector<ScenarioEvent> events;
  // A Lua scenario whose at()/every() callbacks run in the simulation
  // (docs/scenarios.md "Events from Lua code"); set by the scenario reader,
  // never by a flag.
  std::optional<std::string> event_script;
  // Instance lifecycle and the autoscaler (docs/autoscaling.md), written
  // "provisioning_delay=180s loading_delay=30s min=1 max=8" and
  // "interval=30s scale_up_threshold=0.8" or as tables.
  std::optional<Given<LifecycleSettings>> lifecycle;
  std::optional<Given<AutoscalerSettings>> autoscaler;
  // HEAD's --model-autoscaler-interval-us: given, it replaces the
  // autoscaler's interval (0: no autoscaler), whoever set the autoscaler.
  std::optional<double> model_autoscaler_interval_us;
  // Node pools (`[[node_pools]]`, docs/autoscaling.md), written
  // "name=h100-nodes gpu_type=H100 gpus_per_node=8 max_nodes=4 ..." or as tables.
  std::vector<Given<NodePoolConfig>> node_pools;
  std::vector<PluginSetting> plugin_config;
  std::vector<std::string> plugin_dirs;
  std::vector<std::string> script_dirs;
  std::optional<std::string> defaults_filepath;  // the reference's defaults.yaml over the bundled tables
  bool trust_scenario = false;  // the scenario file gets the command line's rights
  PathRights rights;            // set by the scenario runner, never by a setting
  std::optional<Given<int64_t>> memory_limit;  // bytes ("16GiB"); default: what the machine allows
  // `blis replay` (docs/cli.md "Traces"): the TraceV2 whose requests are the
  // workload, and where its per-request SimResults go; set by the replay
  // command, never by a setting.
  struct Replay {
    std::string header, data;
    std::optional<std::string> sim_results;
    std::string mode = "generated";  // what --trace-output's header says: replayed for a replay
  };
  std::optional<Replay> replay;

  // Where each setting came from ("--rate", "run.toml:3:1"), by setting key,
  // so that resolution errors can point at it.
  std::map<std::string, std::string> origins;

  PoolSettings& pool() { return pools.front(); }
  const PoolSettings& pool() const { return pools.front(); }
  // "--rate" or "run.toml:3:1: rate": how a message names setting `key`.
  std::string where(const std::string& key) const;
  // Where item `i` of a repeatable setting (pools, events, ...) was given:
  // its own place ("run.toml:7:1: pools", "--pool", a policy file's line),
  // kept in origins as "KEY#I"; else where(key).
  std::string item_where(const std::string& key, size_t i) const;
  // The place of record setting `key` (item `i` of a repeatable one; npos
  // for lifecycle and autoscaler) with its fields' own places, kept in
  // origins as "KEY#I.FIELD" ("KEY.FIELD").
  RecordPlace record_place(const std::string& key, size_t i = static_cast<size_t>(-1)) const;
};

}  // namespace blis
