#include "app/commands.hpp"

#include <blis/plan.hpp>
#include <blis/plugin.h>
#include <blis/run.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>
#include <luajit.h>

#include <filesystem>
#include <iostream>
#include <utility>

namespace blis::app {

std::string version_text() {
  return fmt::format("blis {} (plugin ABI {}.{}, {})", BLIS_VERSION, BLIS_ABI_MAJOR, BLIS_ABI_MINOR,
                     LUAJIT_VERSION);
}

namespace {

// A folder that must exist, refused in the words the run uses for its folders
// ("DIR: no such folder"), not CLI11's "Directory does not exist".
CLI::Validator existing_folder() {
  return CLI::Validator(
      [](std::string& dir) {
        std::error_code ec;  // a name too long is no folder, not an exception
        return std::filesystem::is_directory(dir, ec) && !ec ? std::string() : dir + ": no such folder";
      },
      "DIR");
}

// What --help calls the values of a setting drawn from the bundled data.
std::string value_label(const SettingDef& def) {
  if (def.values_from.empty()) return "";
  if (def.values_from == "gpus") return "GPUs";
  if (def.values_from == "models") return "Bundled models";
  return "Bundled " + def.values_from + " plugins";
}

}  // namespace

Commands::Commands(CLI::App& app) : app_(&app) {
  run_ = app.add_subcommand("run", "Run a simulation, or the sweep or search of a scenario file, "
                                   "and print its metrics (JSON) on stdout");
  run_->add_option("scenario", scenario_,
                   "Scenario file (.toml or .lua): its settings are flags without the dashes; "
                   "flags on the command line win. It may sweep or search over configurations")
      ->type_name("FILE")->group("Scenarios");
  run_->add_flag("--dump-config", dump_config_,
                 "Print the resolved configuration as a TOML scenario file that reproduces the "
                 "run (GPU, TP, KV blocks, latency model, policies), and exit")
      ->group("Scenarios");
  // The settings after the command's own arguments, so that --help shows those first.
  run_options_ = add_run_flags(*run_);

  plan_ = app.add_subcommand("plan", "Find the fewest instances that serve the traffic within SLO targets "
                                     "in steady state (or, with --max-rate, the highest rate they sustain)");
  plan_->add_option("--hardware", plan_hardware_,
                    "GPU type, or several comma-separated to compare (H100,A100-80): the fewest instances "
                    "of each, and the cheapest")
      ->delimiter(',')->group("Plan");
  plan_->add_option("--tp", plan_tp_, "Tensor parallelism, or several comma-separated to compare (1,2,4)")
      ->delimiter(',')->group("Plan");
  plan_->add_option("--gpu-cost", plan_gpu_cost_,
                    "$ per GPU-hour by GPU, GPU=cost,... (H100=3.0,A100-80=1.8): adds $/hour and $ per million "
                    "output tokens to the comparison and picks the cheapest by cost")
      ->group("Plan");
  plan_->add_option("--policies", plan_policies_,
                    "Policies to compare, each at its own minimum count: ';'-separated candidates of "
                    "space-separated run settings, e.g. \"routing-policy=round-robin; routing-policy=weighted "
                    "routing-scorers=prefix-affinity:3,queue-depth:2\" (any blis run setting: admission, "
                    "scorers, Lua scripts, plugins)")
      ->group("Plan");
  plan_->add_option("--slo", plan_slo_,
                    "Targets, comma-separated: METRIC_STAT<VALUE with METRIC ttft, itl, e2e and STAT mean, "
                    "p90, p95, p99, VALUE in us, ms or s, e.g. \"ttft_p99<500ms,e2e_p99<20s\"; none = steady "
                    "state without rejections")
      ->group("Plan");
  plan_->add_flag("--max-rate", plan_max_rate_,
                  "Find the highest --rate that --num-instances instances sustain within the targets")
      ->group("Plan");
  plan_->add_option("--duration", plan_duration_,
                    "Arrivals of the first trials, a duration (120s, 5m); default: 60 s, or three times a request's "
                    "decode time at a full batch when longer (on the ladder 60, 120, 240, 480, 960 s). Whatever is "
                    "given, each trial is doubled (up to 960 s) while it cannot be judged: too short, a "
                    "target not converged in steady state, or a backlog still growing")
      ->group("Plan");
  plan_->add_option("--max-instances", plan_max_instances_, "Largest instance count the search tries")
      ->capture_default_str()->group("Plan");
  plan_->add_option("--jobs,-j", plan_jobs_, "Trials simulated in parallel; the answer is the same for every value")
      ->capture_default_str()->group("Plan");
  plan_->add_option("--format", plan_format_, "table (a human table and the answer) or json (one document)")
      ->capture_default_str()->group("Plan");
  plan_->add_option("--report", plan_report_,
                    "Also write a report to this folder: report.html (charts inline, no script, nothing fetched) "
                    "and its SVG charts (p99 against the count with the targets and the answer, latency CDFs "
                    "around the answer, served against offered load, cost per candidate; with --search, the Pareto "
                    "frontier and the top list)")
      ->type_name("DIR")->group("Plan");
  plan_->add_option("--replicates", plan_replicates_,
                    "Seeds per trial (--seed, --seed+1, ...): a trial meets the targets only if every replicate "
                    "does; percentiles are reported as the mean with a 95 % confidence interval")
      ->capture_default_str()->group("Plan");
  plan_->add_flag("--quiet,-q", plan_quiet_, "No progress on stderr")->group("Plan");
  plan_->add_flag("--search", plan_search_,
                  "Find the cheapest deployment over every --hardware, --tp, --max-num-seqs, "
                  "--max-num-batched-tokens and --search-pd value: each setting screened by a capacity probe, the "
                  "cheapest and the Pareto frontier (tokens/s per GPU against tokens/s per user) verified in "
                  "steady state; prints the best, the top --top and the frontier")
      ->group("Plan");
  plan_->add_option("--max-num-seqs,--max-num-running-reqs", plan_max_num_seqs_,
                    "Maximum requests in a running batch; with --search, several comma-separated to search "
                    "(64,128,256)")
      ->delimiter(',')->group("Plan");
  plan_->add_option("--max-num-batched-tokens,--max-num-scheduled-tokens", plan_max_num_batched_tokens_,
                    "Maximum tokens scheduled per step; with --search, several comma-separated to search "
                    "(2048,8192)")
      ->delimiter(',')->group("Plan");
  plan_->add_option("--search-pd", plan_search_pd_,
                    "With --search: co-located serving and P/D units to try, comma-separated: colocated, or "
                    "PREFILL:DECODE instances per unit (colocated,1:1,1:2); default colocated. A P/D count is of "
                    "units, split by --pd-decider always unless given")
      ->group("Plan");
  plan_->add_option("--top", plan_top_, "With --search: configurations listed, cheapest first [default: 5]")
      ->group("Plan");
  // The run settings after the plan's own flags, so that --help shows those first.
  plan_options_ = add_run_flags(*plan_, {"format", "jobs", "results_path", "rows_csv", "rows_json", "hardware", "tp",
                                         "shard", "resume", "report", "detectors", "quiet",
                                         "max_num_running_reqs", "max_num_scheduled_tokens"});

  merge_ = app.add_subcommand("merge", "Assemble the shard reports of `blis run SWEEP --shard I/N` into the "
                                       "sweep's report, exactly as an unsharded run prints it");
  merge_->add_option("FILES", merge_files_, "Shard reports (the stdout or --rows-json of each shard)")
      ->required()->type_name("FILE ...");
  merge_->add_option("--rows-csv", merge_csv_, "Also write the rows as CSV")->type_name("FILE");
  merge_->add_option("--rows-json", merge_json_, "Also write the report to this file")->type_name("FILE");

  convert_ = app.add_subcommand("convert", "Print a workload spec (the reference's YAML, v2) made from a trace, "
                                           "a preset, a ServeGen directory or an inference-perf section; "
                                           "`blis run --workload-spec FILE` reads it");
  convert_->require_subcommand(1);
  CLI::App* csv = convert_->add_subcommand(
      "csv-trace", "The legacy request-trace CSV, lossily: one client at the trace's average rate with "
                   "its mean prompt and output lengths, evenly spaced arrivals");
  csv->add_option("--file", convert_req_.file, "Trace CSV: header row, then arrival time (s), two ignored "
                                              "columns, prompt token ids and output token ids as JSON arrays")
      ->required()->type_name("FILE");
  csv->add_option("--horizon", convert_req_.horizon, "Keep the rows up to the first one arriving after this "
                                                     "time (µs); 0 = the whole file")
      ->capture_default_str();
  CLI::App* preset = convert_->add_subcommand("preset", "A preset workload of the data tables "
                                                        "(chatbot, summarization, contentgen, multidoc)");
  preset->add_option("--name", convert_req_.name, "Preset name")->required();
  preset->add_option("--rate", convert_req_.rate, "Arrival rate, requests per second")->capture_default_str();
  preset->add_option("--num-requests", convert_req_.num_requests, "Number of requests")->capture_default_str();
  preset->add_option("--defaults-filepath", convert_req_.defaults_filepath,
                     "The reference's defaults.yaml: its presets replace the bundled ones of the same name")
      ->type_name("FILE");
  CLI::App* servegen = convert_->add_subcommand(
      "servegen", "A ServeGen directory (chunk-*-trace.csv, chunk-*-dataset.json): one client per chunk; "
                  "the total rate is written as 1 req/s, edit aggregate_rate");
  servegen->add_option("--path", convert_req_.file, "ServeGen data directory")->required()->type_name("DIR");
  CLI::App* iperf = convert_->add_subcommand(
      "inference-perf", "The inference_perf section of a workload spec expanded into clients (the file's "
                        "num_requests and horizon are not kept: run it with --num-requests or --horizon)");
  iperf->add_option("--spec", convert_req_.file, "Workload spec with an inference_perf section")
      ->required()->type_name("FILE");
  convert_kinds_ = {csv, preset, servegen, iperf};
  compose_ = app.add_subcommand("compose", "Print one workload spec merging several: their clients in order, "
                                           "at the sum of their rates, each keeping its absolute rate");
  compose_->add_option("--from", convert_req_.from, "Workload spec to merge (repeatable, in order)")
      ->required()->type_name("FILE");

  serve_ = add_serve_command(app);
  trace_.emplace(app);

  models_ = app.add_subcommand("models", "List the bundled models: default GPU and TP, bundled "
                                          "architecture, trained coefficients");
  hardware_ = app.add_subcommand("hardware", "List the bundled GPUs and their figures");
  CLI::App* plugins = plugins_ = app.add_subcommand("plugins", "List or inspect plugins");
  plugins->require_subcommand(0, 1);
  plugins_list_ = plugins->add_subcommand(
      "list", "Show every plugin and Lua script a run can name: kind, name, version, source and "
              "summary; files that cannot be loaded get one line each");
  plugins_list_->add_option("--plugin-dir", plugin_dirs_,
                            "Also load plugins (lib*.so) from this directory (repeatable); "
                            "BLIS_PLUGIN_PATH adds more, colon-separated")
      ->type_name("DIR")
      ->check(existing_folder());
  plugins_list_->add_option("--script-dir", script_dirs_,
                            "Also list the Lua scripts of this directory, at its top or in its "
                            "folder of each kind (repeatable); BLIS_SCRIPT_DIR adds more, "
                            "colon-separated")
      ->type_name("DIR")
      ->check(existing_folder());
  plugins_inspect_ = plugins->add_subcommand(
      "inspect", "Check a plugin library or a Lua script (FILE.lua): load it, create each plugin "
                 "once, call it once, and print its ABI version (libraries) and plugins");
  plugins_inspect_->add_option("FILE", inspect_path_, "Path of the shared library or Lua script")
      ->required();
  plugins_inspect_->add_option("--config", inspect_config_,
                               "KEY=VALUE added to the configuration of the smoke test "
                               "(each plugin is created once and called once; repeatable)")
      ->type_name("KEY=VALUE");

  version_ = app.add_subcommand("version", "Print version, plugin ABI and LuaJIT version");

  completion_ = app.add_subcommand("completion", "Print a shell completion script for blis: "
                                                 "source <(blis completion bash); zsh and fish too");
  CLI::Option* shell = completion_->add_option("SHELL", completion_shell_, "bash, zsh or fish")
                           ->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));

  using Options = std::map<std::string, CLI::Option*>;
  for (const Options* options : std::initializer_list<const Options*>{&run_options_, &plan_options_,
                                                                      &serve_options(*serve_),
                                                                      &trace_->replay_options()})
    for (const auto& [key, opt] : *options) {
      const SettingDef* def = find_setting(key);
      value_sources_[opt] = {def, [def] { return setting_values(*def); }, value_label(*def)};
    }
  const SettingDef* gpu = find_setting("hardware");
  value_sources_[plan_->get_option("--hardware")] = {nullptr, [gpu] { return setting_values(*gpu); }, "GPUs"};
  value_sources_[plan_->get_option("--format")] = {nullptr, [] { return std::vector<std::string>{"json", "table"}; }};
  value_sources_[shell] = {nullptr, [] { return std::vector<std::string>{"bash", "fish", "zsh"}; }};
}

void Commands::describe_values() {
  for (auto& [opt, source] : value_sources_) {
    if (source.help_label.empty()) continue;
    const std::vector<std::string> values = source.values();
    if (values.empty()) continue;
    const_cast<CLI::Option*>(opt)->description(
        fmt::format("{}. {}: {}", opt->get_description(), source.help_label, fmt::join(values, ", ")));
  }
}

int Commands::execute() {
  if (run_->parsed()) {
    RunRequest req;
    for (const auto& [key, values] : given_run_flags(run_options_)) {
      const std::string flag = find_setting(key)->flag();
      for (const auto& v : values) req.command_line.push_back(Setting{key, v, flag});
    }
    req.scenario = scenario_;
    req.dump_config = dump_config_;
    blis::run(req, std::cout);
    return 0;
  }
  if (plan_->parsed()) {
    PlanRequest req;
    for (const auto& [key, values] : given_run_flags(plan_options_)) {
      const std::string flag = find_setting(key)->flag();
      for (const auto& v : values) req.command_line.push_back(Setting{key, v, flag});
    }
    req.slo = plan_slo_;
    req.max_rate = plan_max_rate_;
    req.duration = plan_duration_;
    req.max_instances = plan_max_instances_;
    req.jobs = plan_jobs_;
    req.format = plan_format_;
    req.hardware = plan_hardware_;
    req.tp = plan_tp_;
    req.gpu_cost = plan_gpu_cost_;
    req.policies = plan_policies_;
    req.report = plan_report_;
    req.replicates = plan_replicates_;
    req.quiet = plan_quiet_;
    req.search = plan_search_;
    req.max_num_seqs = plan_max_num_seqs_;
    req.max_num_batched_tokens = plan_max_num_batched_tokens_;
    req.search_pd = plan_search_pd_;
    if (plan_->count("--top") > 0) req.top = plan_top_;
    // 3: no answer (docs/planning.md), a status a script can tell from a failure.
    return blis::plan(req, std::cout) ? 0 : 3;
  }
  if (serve_parsed(*serve_)) return run_serve(*serve_);
  if (merge_->parsed()) {
    blis::merge(merge_files_, merge_csv_, merge_json_, std::cout);
    return 0;
  }
  for (CLI::App* kind : convert_kinds_)
    if (kind->parsed()) {
      convert_req_.kind = kind->get_name();
      blis::convert_workload(convert_req_, std::cout);
      return 0;
    }
  if (compose_->parsed()) {
    convert_req_.kind = "compose";
    blis::convert_workload(convert_req_, std::cout);
    return 0;
  }
  if (auto status = trace_->execute()) return *status;
  if (models_->parsed()) {
    std::cout << blis::models_listing();
    return 0;
  }
  if (hardware_->parsed()) {
    std::cout << blis::hardware_listing();
    return 0;
  }
  if (plugins_list_->parsed()) return run_plugins_list(plugin_dirs_, script_dirs_);
  if (plugins_inspect_->parsed()) return run_plugins_inspect(inspect_path_, inspect_config_);
  if (plugins_->parsed()) {  // `blis plugins` alone: its help
    std::cout << plugins_->help();
    return 0;
  }
  if (completion_->parsed()) {
    std::cout << completion_script(*app_, completion_shell_, value_sources_);
    return 0;
  }
  if (version_->parsed()) {
    std::cout << version_text() << "\n";
    return 0;
  }
  return 0;
}

}  // namespace blis::app
