// Subcommands of `blis`: each registers its flags on construction and runs
// from execute() after parsing.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blis::app {

std::string version_text();

struct RunOptions;  // run_cmd.cpp

class Commands {
 public:
  explicit Commands(CLI::App& app);
  ~Commands();
  int execute();

 private:
  CLI::App* run_ = nullptr;
  CLI::App* plugins_list_ = nullptr;
  CLI::App* plugins_inspect_ = nullptr;
  CLI::App* version_ = nullptr;
  std::vector<std::string> plugin_dirs_;
  std::string inspect_path_;
  std::vector<std::string> inspect_config_;
  std::unique_ptr<RunOptions> run_options_;
};

// Implemented per command.
int run_plugins_list(const std::vector<std::string>& plugin_dirs);
int run_plugins_inspect(const std::string& path, const std::vector<std::string>& config);
void add_run_flags(CLI::App& run, RunOptions& options);
int run_simulation(RunOptions& options);
int run_scenario(CLI::App& run, RunOptions& bound);
std::unique_ptr<RunOptions> make_run_options();

}  // namespace blis::app
