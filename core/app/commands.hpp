// Subcommands of `blis`: each registers its flags on construction and runs
// from execute() after parsing. This is command-line wiring only: what a
// command does lives in the core (blis/run.hpp, blis/plugin_inspect.hpp).
#pragma once

#include <blis/run.hpp>
#include <blis/trace.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blis {
struct SettingDef;
}

namespace blis::app {

struct ServeCli;  // `blis serve` (app/serve_cmd.cpp)
std::shared_ptr<ServeCli> add_serve_command(CLI::App& app);
bool serve_parsed(const ServeCli& s);
const std::map<std::string, CLI::Option*>& serve_options(const ServeCli& s);
int run_serve(ServeCli& s);

std::string version_text();

// Where the values an option accepts come from, for --help and completion.
struct ValueSource {
  const SettingDef* setting = nullptr;  // the row of the settings table the option was made from
  std::function<std::vector<std::string>()> values;
  std::string help_label{};  // "GPUs": --help lists the values after it; "" = the help says them already
};
using ValueSources = std::map<const CLI::Option*, ValueSource>;

// `blis completion SHELL` (bash, zsh, fish): a script over every command and
// flag of `app`, with the values of `sources`.
std::string completion_script(const CLI::App& app, const std::string& shell, const ValueSources& sources);

// CLI11's message rewritten in blis's one-line style, with a suggestion:
// "unknown flag --num-instance; did you mean --num-instances? ...".
std::string explain_parse_error(CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

// `blis replay` and `blis calibrate` (app/trace_cmds.cpp): BLIS HEAD's
// commands over TraceV2 files.
class TraceCommands {
 public:
  explicit TraceCommands(CLI::App& app);
  // The exit status when one of them parsed, nothing otherwise.
  std::optional<int> execute();
  const std::map<std::string, CLI::Option*>& replay_options() const { return replay_options_; }

 private:
  void fit();      // blis calibrate --fit
  void compare();  // blis calibrate
  void add_observe(CLI::App& app);
  CLI::App* replay_ = nullptr;
  CLI::App* calibrate_ = nullptr;
  CLI::App* observe_ = nullptr;
  std::map<std::string, CLI::Option*> observe_options_;
  ObserveRequest observe_req_;
  std::map<std::string, CLI::Option*> replay_options_;
  std::string header_, data_, results_path_, metrics_path_, session_mode_ = "fixed";
  std::string cal_header_, cal_data_, cal_sim_, cal_report_, cal_itl_;
  int64_t cal_warmup_ = -1, cal_rtt_ = -1;
  double cal_bandwidth_ = 0, cal_ttft_threshold_ = 0.15;
  std::map<std::string, CLI::Option*> fit_options_;  // calibrate --fit's run settings
  std::string fit_kind_, fit_output_, fit_format_ = "table";
  int64_t fit_max_evals_ = 1000;
};

class Commands {
 public:
  explicit Commands(CLI::App& app);
  int execute();
  // Adds the names the bundled data and plugins offer to the help of the
  // options that take them (GPUs, models, policies, scorers); done only when
  // help is shown, since it opens the plugin libraries.
  void describe_values();

 private:
  CLI::App* app_ = nullptr;
  CLI::App* completion_ = nullptr;
  std::string completion_shell_;
  ValueSources value_sources_;
  CLI::App* run_ = nullptr;
  CLI::App* plugins_list_ = nullptr;
  CLI::App* plugins_inspect_ = nullptr;
  CLI::App* version_ = nullptr;
  CLI::App* models_ = nullptr;
  CLI::App* hardware_ = nullptr;
  CLI::App* plugins_ = nullptr;
  CLI::App* plan_ = nullptr;
  CLI::App* merge_ = nullptr;
  CLI::App* convert_ = nullptr;
  CLI::App* compose_ = nullptr;
  std::shared_ptr<ServeCli> serve_;
  std::optional<TraceCommands> trace_;
  // blis convert SUBCOMMAND / blis compose: the subcommand that parsed fills
  // the request, its name is the kind.
  std::vector<CLI::App*> convert_kinds_;
  blis::ConvertRequest convert_req_;
  std::vector<std::string> merge_files_;
  std::string merge_csv_, merge_json_;
  std::map<std::string, CLI::Option*> plan_options_;
  std::string plan_slo_, plan_duration_, plan_format_ = "table";
  bool plan_max_rate_ = false;
  int64_t plan_max_instances_ = 512, plan_jobs_ = 1;
  std::vector<std::string> plan_hardware_;
  std::vector<int64_t> plan_tp_;
  std::string plan_gpu_cost_, plan_report_, plan_policies_;
  int64_t plan_replicates_ = 1;
  bool plan_quiet_ = false;
  bool plan_search_ = false;
  std::vector<std::string> plan_max_num_seqs_, plan_max_num_batched_tokens_;
  std::string plan_search_pd_;
  int64_t plan_top_ = 5;
  // blis run: one CLI11 option per row of the settings table, by key.
  std::map<std::string, CLI::Option*> run_options_;
  std::string scenario_;
  bool dump_config_ = false;
  std::vector<std::string> plugin_dirs_;
  std::vector<std::string> script_dirs_;
  std::string inspect_path_;
  std::vector<std::string> inspect_config_;
};

// Implemented per command.
int run_plugins_list(const std::vector<std::string>& plugin_dirs, const std::vector<std::string>& script_dirs);
int run_plugins_inspect(const std::string& path, const std::vector<std::string>& config);
// Registers one option per setting (blis/settings.hpp) on `run`, but for
// the keys in `skip` (a command with options of its own by those names).
std::map<std::string, CLI::Option*> add_run_flags(CLI::App& run, const std::vector<std::string>& skip = {});
// The settings the command line gave, in table order.
std::vector<std::pair<std::string, std::vector<std::string>>> given_run_flags(
    const std::map<std::string, CLI::Option*>& options);

}  // namespace blis::app
