// `blis run` as the core offers it to a front end: settings in, report out.
// The command line (core/app) only turns flags into Settings; everything
// else — scenario files, sweeps and searches, resolution, simulation, output
// files — happens here.
#pragma once

#include <blis/scenario.hpp>

#include <string>

namespace blis {

struct RunRequest {
  Settings command_line;    // flags as given, each Setting's `where` the flag
  std::string scenario;     // a .toml or .lua scenario file, or ""
  bool dump_config = false; // print the resolved configuration instead of running
};

// Runs the request and returns what goes to stdout. Logs, warnings and
// progress go to stderr as they happen. Output files (--results-path,
// --rows-csv, --rows-json) are written atomically, and only when everything
// succeeded. Throws blis::Error (exit status 2 for configuration, plugin and
// script errors; 1 for failures while simulating).
std::string run(const RunRequest& request);

// Sets the level of the log on stderr; InputError on an unknown level.
void set_log_level(const std::string& level);

// Writes `text` to `path` atomically: a temporary file renamed into place.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace blis
