// `blis run` as the core offers it to a front end: settings in, report out.
// The command line (core/app) only turns flags into Settings; everything
// else — scenario files, sweeps and searches, resolution, simulation, output
// files — happens here.
#pragma once

#include <blis/scenario.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace blis {

struct RunRequest {
  Settings command_line;    // flags as given, each Setting's `where` the flag
  std::string scenario;     // a .toml or .lua scenario file, or ""
  bool dump_config = false; // print the resolved configuration instead of running
};

// Runs the request and writes its results to `out` (stdout). Logs, warnings
// and progress go to stderr as they happen. Output files (--results-path,
// --rows-csv, --rows-json) are checked before anything runs and written
// after the results reached `out`, so a failing write never loses them.
// Throws blis::Error (exit status 2 for configuration, plugin and script
// errors; 1 for failures while simulating or writing).
void run(const RunRequest& request, std::ostream& out);

// `blis merge`: the shard reports of `blis run SWEEP --shard I/N` assembled
// into exactly the report the unsharded sweep prints (rows files too).
// ConfigError when a configuration is missing or appears twice.
void merge(const std::vector<std::string>& shard_files, const std::string& rows_csv, const std::string& rows_json,
           std::ostream& out);

// `blis models` and `blis hardware`: tables of what the bundled data holds.
std::string models_listing();
std::string hardware_listing();

struct SettingDef;
// The values a setting accepts, for --help and shell completion: its fixed
// choices, or what the bundled data and plugins offer (SettingDef::values_from:
// the GPUs, the models, the registered plugins of a kind), sorted. Empty for
// free text. Opens the bundled plugin libraries, so call it only to show help.
std::vector<std::string> setting_values(const SettingDef& def);

// `blis convert SUBCOMMAND` and `blis compose`: a workload spec built from
// another input, validated and printed as YAML (spec cli.md §4-§5).
struct ConvertRequest {
  std::string kind;               // csv-trace, preset, servegen, inference-perf, compose
  std::string file;               // csv-trace --file, inference-perf --spec, servegen --path
  int64_t horizon = 0;            // csv-trace: µs, 0 = whole file
  std::string name;               // preset
  double rate = 1.0;              // preset
  int64_t num_requests = 100;     // preset
  std::string defaults_filepath;  // preset: the reference's defaults.yaml over the bundled data
  std::vector<std::string> from;  // compose
};
// Writes the YAML to `out` only once the spec is complete and valid.
void convert_workload(const ConvertRequest& request, std::ostream& out);

// Sets the level of the log on stderr; InputError on an unknown level.
void set_log_level(const std::string& level);

}  // namespace blis
