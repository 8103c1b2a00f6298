// The --saturation-config file (docs/cli.md, "Saturation detectors"): HEAD's
// strict YAML with optional threshold: and backlog_drift: blocks, its keys,
// checks and defaults. A block for a detector that --detectors does not
// select is an error, as in HEAD; every error is a ConfigError at the
// offending node ("file:line:col: saturation config: ...").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blis::config {

struct SaturationFile {
  bool has_backlog_drift_window = false;  // backlog_drift.window_size_sec was given
  double threshold_ms = 5000;
  int64_t window_size_sec = 0;  // 0: not given
  int64_t min_windows = 5;
  int64_t warmup_windows = 2;
  int64_t tail_windows = 1;
  double saturated_drain_ratio = 0.95;
  double transient_drain_ratio = 0.98;
  // Checked and kept, as HEAD does, though no detector reads them.
  double peak_ratio = 2.0, peak_ratio_band = 0.2, confidence_ci = 0.95;
};

// Reads and checks the file for the selected detectors (roster names). An
// empty file (or only blanks and comments) is the defaults.
SaturationFile read_saturation_file(const std::string& path, const std::vector<std::string>& detectors);

}  // namespace blis::config
