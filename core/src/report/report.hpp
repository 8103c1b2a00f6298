// `--report DIR` of `blis run` and `blis plan`: a self-contained report.html
// (inline SVG, no script, nothing fetched) and each chart beside it as an
// SVG file. Same inputs, same bytes: nothing in a report depends on the
// clock, the host or --jobs. Files are written atomically
// (run/output_file.hpp); the folder is created when missing.
#pragma once

#include "metrics/collector.hpp"
#include "metrics/step_series.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace blis {

// Latency quantiles at cdf_levels(), in ms; empty when nothing completed.
struct LatencyCdf {
  std::vector<double> ttft_ms, itl_ms, e2e_ms;
};

// 0, 0.01, ..., 0.99, 0.995, 0.999, 1.
const std::vector<double>& cdf_levels();

// The cluster's latency distributions (linear interpolation between closest
// ranks, as the percentiles of the metrics).
LatencyCdf latency_cdf(const InstanceMetrics& cluster);

// Fails (InputError naming `where`) when `dir` cannot be a report folder: it
// is a file, or it is missing and its parent cannot be written. Checked
// before anything runs.
void check_report_dir(const std::string& dir, const std::string& where);

struct RunReport {
  std::string title;    // "qwen/qwen3-14b on 4 x H100 (TP 1), 40 req/s"
  std::string summary;  // one line of figures
  LatencyCdf cdf;
  std::vector<TimeSeriesPoint> series;
  double kv_capacity = 0;  // blocks over all instances, to show usage as a share
};

void write_run_report(const std::string& dir, const RunReport& report);

struct PlanReportTrial {
  int64_t instances = 0;
  double rate = 0;  // offered req/s
  std::string verdict, why;
  bool pass = false;
  double ttft_p99 = 0, itl_p99 = 0, e2e_p99 = 0;  // ms
  double served_rps = 0;  // first tokens per second while traffic was offered (the steady-state window)
  double offered_rps = 0;  // arrivals per second over the same window
  const LatencyCdf* cdf = nullptr;  // for the answer and its neighbours
};

struct PlanReportTarget {
  std::string metric;  // "ttft_p99_ms"
  double limit_ms = 0;
  std::string text;    // "ttft_p99<500ms"
};

struct PlanReportCandidate {
  std::string label;  // "H100 TP 1"
  int64_t instances = 0, gpus = 0;  // 0 instances: none meets the targets
  double dollars_per_hour = -1;     // < 0: no price
};

// `blis plan --search`: what was screened, the cheapest verified and the
// Pareto frontier. Points are (tokens/s per user, tokens/s per GPU).
struct PlanReportSearch {
  bool on = false;
  std::vector<std::string> lines;  // the space, the screen, how exact the list is
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> top, frontier_rows;  // table cells, as on stdout
  std::vector<std::pair<double, double>> screened;           // estimates of the settings the bound allows
  std::vector<std::pair<double, double>> verified, frontier;
  std::vector<std::string> frontier_labels;
  std::pair<double, double> best{-1, -1};  // < 0: none
};

struct PlanReport {
  std::string title;    // the question
  std::string answer;   // the answer line of the table
  std::string run_length;  // with replicates: the answer's run-length check line, or ""
  bool by_rate = false;  // --max-rate: trials vary the rate, not the count
  int64_t answer_instances = 0;
  double answer_rate = 0;
  std::vector<PlanReportTarget> targets;
  std::vector<PlanReportTrial> trials;  // in the order of the table
  std::vector<PlanReportCandidate> candidates;  // with --hardware/--tp comparisons
  int cheapest = -1;
  PlanReportSearch search;  // with --search; the other charts are then the best's search
  // Provenance: the table's setup line, how trials were run and judged, and
  // the answer's configuration as the TOML `blis run` reproduces ("" when a
  // TOML cannot hold it).
  std::string setup, trial_rule, configuration;
};

void write_plan_report(const std::string& dir, const PlanReport& report);

}  // namespace blis
