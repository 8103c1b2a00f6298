// Every flag of `blis run`, as parsed (before resolution against defaults).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace blis::app {

struct RunOptions {
  // Simulation control and files.
  int64_t seed = 42;
  int64_t horizon = std::numeric_limits<int64_t>::max();
  std::string log_level = "warn";
  std::string results_path;
  bool profile = false;
  std::vector<std::string> script_dirs;  // --script-dir

  // Model, hardware, latency backend.
  std::string model;
  std::string hardware;
  int64_t tp = 0;
  std::string vllm_version;
  std::string latency_model = "roofline";
  std::vector<double> alpha_coeffs{0, 0, 0};
  std::vector<double> beta_coeffs{0, 0, 0};
  int64_t max_model_len = 0;
  std::string model_config_folder;
  std::string hardware_config;

  // KV cache and batch formation.
  int64_t total_kv_blocks = 1000000;
  int64_t block_size = 16;
  int64_t max_running = 256;
  int64_t max_scheduled_tokens = 2048;
  int64_t long_prefill_threshold = 0;
  int64_t kv_cpu_blocks = 0;
  double kv_offload_threshold = 0.9;
  double kv_transfer_bandwidth = 100.0;
  int64_t kv_transfer_base_latency = 0;

  // Workload.
  std::string workload = "distribution";
  std::string workload_spec;  // the reference's v2 YAML; wins over `workload`
  std::string workload_trace;
  double rate = 1.0;
  int64_t num_requests = 100;
  int64_t prefix_tokens = 0;
  int64_t prompt_tokens = 512, prompt_tokens_stdev = 256, prompt_tokens_min = 2,
          prompt_tokens_max = 7000;
  int64_t output_tokens = 512, output_tokens_stdev = 256, output_tokens_min = 2,
          output_tokens_max = 7000;

  // Cluster and scheduling.
  int64_t num_instances = 1;
  std::string scheduler = "fcfs";
  std::string priority_policy = "constant";
  std::string admission_policy = "always-admit";
  int64_t admission_latency = 0;
  int64_t routing_latency = 0;
  double token_bucket_capacity = 10000;
  double token_bucket_refill_rate = 1000;
  std::string routing_policy = "round-robin";
  std::string routing_scorers;
  int64_t snapshot_refresh_interval = 0;
  std::string policy_config;
  std::vector<std::string> plugin_config;  // NAME.KEY=VALUE, repeatable

  // Decision tracing and fitness.
  std::string trace_level = "none";
  int64_t counterfactual_k = 0;
  bool summarize_trace = false;
  std::string fitness_weights;

  // Scenario files and sweeps.
  std::string scenario;
  int64_t jobs = 1;
  std::string rows_csv;
  std::string rows_json;

  std::vector<std::string> plugin_dirs;

  // Which flags were given explicitly, by the command line or a scenario
  // (precedence and pairing rules), under every long name of the flag.
  std::set<std::string> given_flags;
  bool given(const std::string& flag) const { return given_flags.count(flag) > 0; }
};

// Records every option of `run` that the parse filled in.
void mark_given(const CLI::App& run, RunOptions& options);

}  // namespace blis::app
