// One simulation of a resolved `blis run` configuration, as a value: the
// report `blis run` prints and the cluster's metrics for sweep rows. Safe to
// call from several threads at once: each call builds its own environment,
// Lua VM, plugins and simulation.
#pragma once

#include "app/run_options.hpp"
#include "metrics/report.hpp"

#include <string>
#include <vector>

namespace blis::app {

struct RunOutcome {
  std::string report;                // what `blis run` prints on stdout
  std::string results_json;          // the --results-path file, "" without one
  std::vector<MetricField> metrics;  // the cluster's metrics, then rejected_requests
                                     // (and fitness_score with --fitness-weights)
  std::string profile;               // the --profile line, "" without --profile
};

// Validates and resolves `options` (policy files included), then simulates.
// Throws blis::Error on bad configuration or a failing plugin or script.
RunOutcome simulate(RunOptions& options);

// Sets spdlog's level from --log; throws InputError on an unknown level.
void set_log_level(const std::string& level);

// Writes `text` to `path` atomically: a temporary file renamed into place.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace blis::app
