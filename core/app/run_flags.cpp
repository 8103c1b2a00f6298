// The flags of `blis run`, and which of them a parse filled in.
#include "app/commands.hpp"
#include "app/run_options.hpp"

namespace blis::app {

std::unique_ptr<RunOptions> make_run_options() { return std::make_unique<RunOptions>(); }

void add_run_flags(CLI::App& run, RunOptions& o) {
  auto g = [&](const char* group) { return group; };
  // Simulation control and files.
  run.add_option("--seed", o.seed, "Seed of the workload and of every random stream")
      ->capture_default_str()->group(g("Simulation"));
  run.add_option("--horizon", o.horizon,
                 "Stop at the first event after this time (µs); also bounds arrivals")
      ->group(g("Simulation"));
  run.add_option("--log", o.log_level, "Log level on stderr: trace, debug, info, warn, error, off")
      ->capture_default_str()->group(g("Simulation"));
  run.add_option("--results-path", o.results_path,
                 "Also write the metrics and one record per request to this JSON file")
      ->group(g("Simulation"));
  run.add_flag("--profile", o.profile, "Print events, steps, wall time and events/s to stderr")
      ->group(g("Simulation"));
  // Model and latency.
  run.add_option("--model", o.model, "Model name, e.g. qwen/qwen3-14b (case-insensitive)")
      ->group(g("Model and latency"));
  run.add_option("--hardware", o.hardware, "GPU type (H100, A100-SXM, A100-80); default from the model's defaults")
      ->group(g("Model and latency"));
  run.add_option("--tp", o.tp, "Tensor parallelism per instance; 0 = the model's default")
      ->group(g("Model and latency"));
  run.add_option("--vllm-version", o.vllm_version, "vLLM version key of the coefficient table")
      ->group(g("Model and latency"));
  run.add_option("--latency-model", o.latency_model,
                 "Latency model: roofline, blackbox, crossmodel, trained-roofline, any plugin "
                 "name, a plugin library path (path/lib.so[:name]) or a Lua script (model.lua)")
      ->capture_default_str()->group(g("Model and latency"));
  run.add_option("--alpha-coeffs", o.alpha_coeffs, "Alpha coefficients (comma-separated); needs --beta-coeffs")
      ->delimiter(',')->group(g("Model and latency"));
  run.add_option("--beta-coeffs", o.beta_coeffs, "Beta coefficients (comma-separated); needs --alpha-coeffs")
      ->delimiter(',')->group(g("Model and latency"));
  run.add_option("--max-model-len", o.max_model_len,
                 "Max input + output tokens per request; 0 = derived from the model (analytical models) or unlimited")
      ->group(g("Model and latency"));
  run.add_option("--model-config-folder", o.model_config_folder,
                 "Folder with a HuggingFace config.json for the model")
      ->group(g("Model and latency"));
  run.add_option("--hardware-config", o.hardware_config,
                 "GPU table (TOML, or the reference's hardware_config.json)")
      ->group(g("Model and latency"));
  // KV cache and batching.
  run.add_option("--total-kv-blocks", o.total_kv_blocks,
                 "KV blocks per instance (default: from the defaults table, else computed from GPU memory)")
      ->group(g("KV cache and batching"));
  run.add_option("--block-size-in-tokens", o.block_size, "Tokens per KV block")
      ->capture_default_str()->group(g("KV cache and batching"));
  run.add_option("--max-num-running-reqs,--max-num-seqs", o.max_running,
                 "Max requests in the running batch")
      ->capture_default_str()->group(g("KV cache and batching"));
  run.add_option("--max-num-scheduled-tokens,--max-num-batched-tokens", o.max_scheduled_tokens,
                 "Max new tokens per step")
      ->capture_default_str()->group(g("KV cache and batching"));
  run.add_option("--long-prefill-token-threshold", o.long_prefill_threshold,
                 "Chunked prefill: max prefill tokens of one request per step (0 = off)")
      ->capture_default_str()->group(g("KV cache and batching"));
  run.add_option("--kv-cpu-blocks", o.kv_cpu_blocks,
                 "CPU-tier KV blocks per instance; > 0 enables offloading to CPU memory")
      ->capture_default_str()->group(g("KV cache and batching"));
  run.add_option("--kv-offload-threshold", o.kv_offload_threshold,
                 "GPU KV usage above which cached blocks are offloaded to the CPU tier")
      ->capture_default_str()->group(g("KV cache and batching"));
  run.add_option("--kv-transfer-bandwidth", o.kv_transfer_bandwidth,
                 "CPU-GPU transfer bandwidth in blocks per µs")
      ->capture_default_str()->group(g("KV cache and batching"));
  run.add_option("--kv-transfer-base-latency", o.kv_transfer_base_latency,
                 "Fixed µs added to every block transfer between tiers")
      ->capture_default_str()->group(g("KV cache and batching"));
  // Workload.
  run.add_option("--workload", o.workload,
                 "distribution, or a preset: chatbot, contentgen, summarization, multidoc")
      ->capture_default_str()->group(g("Workload"));
  run.add_option("--workload-spec", o.workload_spec,
                 "Workload spec in the reference's YAML (v2, or v1 upgraded); wins over --workload. "
                 "Its seed is used unless --seed is given; --rate and the token flags are ignored")
      ->type_name("FILE")->group(g("Workload"));
  run.add_option("--workload-trace", o.workload_trace,
                 "Replay a CSV trace exactly (arrival_time_us,input_tokens,output_tokens[,...])")
      ->group(g("Workload"));
  run.add_option("--rate", o.rate, "Arrival rate, requests per second (constant spacing)")
      ->capture_default_str()->group(g("Workload"));
  run.add_option("--num-requests", o.num_requests, "Number of requests")
      ->capture_default_str()->group(g("Workload"));
  run.add_option("--prefix-tokens", o.prefix_tokens, "Shared prefix prepended to every prompt")
      ->capture_default_str()->group(g("Workload"));
  run.add_option("--prompt-tokens", o.prompt_tokens, "Mean prompt length")->capture_default_str()->group(g("Workload"));
  run.add_option("--prompt-tokens-stdev", o.prompt_tokens_stdev, "Std-dev of prompt length")->capture_default_str()->group(g("Workload"));
  run.add_option("--prompt-tokens-min", o.prompt_tokens_min, "Min prompt length")->capture_default_str()->group(g("Workload"));
  run.add_option("--prompt-tokens-max", o.prompt_tokens_max, "Max prompt length")->capture_default_str()->group(g("Workload"));
  run.add_option("--output-tokens", o.output_tokens, "Mean output length")->capture_default_str()->group(g("Workload"));
  run.add_option("--output-tokens-stdev", o.output_tokens_stdev, "Std-dev of output length")->capture_default_str()->group(g("Workload"));
  run.add_option("--output-tokens-min", o.output_tokens_min, "Min output length")->capture_default_str()->group(g("Workload"));
  run.add_option("--output-tokens-max", o.output_tokens_max, "Max output length")->capture_default_str()->group(g("Workload"));
  // Cluster and scheduling.
  run.add_option("--num-instances", o.num_instances, "Number of identical instances")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--scheduler", o.scheduler, "Wait-queue order: fcfs, priority-fcfs, sjf, reverse-priority")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--priority-policy", o.priority_policy, "Priority: constant, slo-based, inverted-slo")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--admission-policy", o.admission_policy,
                 "Admission: always-admit, token-bucket, reject-all, any admission plugin, or a Lua script (guard.lua)")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--admission-latency", o.admission_latency, "µs from arrival to the admission decision")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--routing-latency", o.routing_latency, "µs from admission to the routing decision")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--token-bucket-capacity", o.token_bucket_capacity, "Token bucket size, in input tokens")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--token-bucket-refill-rate", o.token_bucket_refill_rate, "Token bucket refill, tokens per second")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--routing-policy", o.routing_policy, "Routing: round-robin, least-loaded, weighted, always-busiest")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--routing-scorers", o.routing_scorers,
                 "Scorers of weighted routing, \"name:weight,...\"; a name may be a Lua script path "
                 "(default prefix-affinity:3,queue-depth:2,kv-utilization:2)")
      ->group(g("Cluster and scheduling"));
  run.add_option("--snapshot-refresh-interval", o.snapshot_refresh_interval,
                 "µs between refreshes of the queue/batch/KV signals the router sees (0 = always fresh)")
      ->capture_default_str()->group(g("Cluster and scheduling"));
  run.add_option("--policy-config", o.policy_config,
                 "Policy file (TOML, or the reference's YAML); explicit flags win over it")
      ->group(g("Cluster and scheduling"));
  run.add_option("--trace-level", o.trace_level, "Decision tracing: none or decisions")
      ->capture_default_str()->group(g("Tracing and fitness"));
  run.add_option("--counterfactual-k", o.counterfactual_k,
                 "With tracing: rank this many candidates per routing decision and compute regret")
      ->capture_default_str()->group(g("Tracing and fitness"));
  run.add_flag("--summarize-trace", o.summarize_trace, "Print the decision-trace summary")
      ->group(g("Tracing and fitness"));
  run.add_option("--fitness-weights", o.fitness_weights,
                 "Fitness score weights, \"key:value,...\" (throughput, tokens_per_sec, p99_ttft, "
                 "p50_ttft, mean_ttft, p99_e2e, p50_e2e, mean_e2e)")
      ->group(g("Tracing and fitness"));
  // Scenario files and sweeps (docs/scenarios.md).
  run.add_option("scenario", o.scenario,
                 "Scenario file (.toml or .lua): its settings are flags without the dashes; "
                 "flags on the command line win. It may sweep or search over configurations")
      ->type_name("FILE")->group(g("Scenarios and sweeps"));
  run.add_option("--jobs,-j", o.jobs,
                 "Configurations of a sweep or search simulated in parallel; results are "
                 "identical for every value")
      ->capture_default_str()->group(g("Scenarios and sweeps"));
  run.add_option("--rows-csv", o.rows_csv, "Also write a sweep's rows (one per configuration) to this CSV file")
      ->type_name("FILE")->group(g("Scenarios and sweeps"));
  run.add_option("--rows-json", o.rows_json, "Also write a sweep's report (the JSON on stdout) to this file")
      ->type_name("FILE")->group(g("Scenarios and sweeps"));
  run.add_option("--plugin-config", o.plugin_config,
                 "Configuration key of one plugin of the run, NAME.KEY=VALUE (repeatable); "
                 "VALUE is typed like TOML: 42, 0.5, true, \"text\", 1,2,3")
      ->type_name("NAME.KEY=VALUE")->group(g("Plugins and scripts"));
  run.add_option("--script-dir", o.script_dirs,
                 "Look here first for Lua scripts named by name or relative path (repeatable); "
                 "BLIS_SCRIPT_DIR adds more, colon-separated")
      ->type_name("DIR")->group(g("Plugins and scripts"));
  run.add_option("--plugin-dir", o.plugin_dirs,
                 "Also load plugins (lib*.so) from this directory (repeatable); "
                 "BLIS_PLUGIN_PATH adds more, colon-separated")
      ->type_name("DIR")->group(g("Plugins and scripts"));
}

void mark_given(const CLI::App& run, RunOptions& options) {
  for (const CLI::Option* opt : run.get_options()) {
    if (opt->count() == 0) continue;
    for (const std::string& name : opt->get_lnames()) options.given_flags.insert("--" + name);
  }
}

}  // namespace blis::app
