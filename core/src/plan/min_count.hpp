// The steady-state search of `blis plan` for one configuration, as a part the
// deployment search (plan/search.hpp) asks: the fewest instances, or P/D
// units, that meet every target. The method is plan.cpp's Planner
// (docs/planning.md, "How blis plan searches"); this is its narrow face.
#pragma once

#include "metrics/report.hpp"
#include "report/report.hpp"

#include <blis/plan.hpp>
#include <blis/run_config.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace blis {

class Progress;

// A P/D unit of the deployment search: `prefill` prefill-only and `decode`
// decode-only instances; a count of units is that many of each. Off (both
// 0): a count is of co-located instances.
struct PdUnit {
  int64_t prefill = 0, decode = 0;
  bool on() const { return prefill > 0; }
  int64_t instances() const { return on() ? prefill + decode : 1; }
};

// Sets `config`'s count: `n` co-located instances, or `n` P/D units (split
// by the decider "always" unless one was given).
void set_count(RunConfig& config, int64_t n, const PdUnit& unit);

// "H100=3.0,A100-80=1.8" -> $ per GPU-hour by lower-case GPU name
// (--gpu-cost); InputError naming the flag.
std::map<std::string, double> parse_gpu_costs(const std::string& text);

class MinCountSearch {
 public:
  // `request` is copied; `progress` must outlive the search. Throws
  // InputError for bad settings, as `blis plan` does.
  MinCountSearch(const PlanRequest& request, const PdUnit& unit, Progress& progress);
  ~MinCountSearch();
  MinCountSearch(const MinCountSearch&) = delete;
  MinCountSearch& operator=(const MinCountSearch&) = delete;

  // The capacity probe that plan's bound runs: one instance or unit sent
  // 2,000 requests per instance at once.
  RunConfig probe_config() const;
  // The configuration as the command line built it (unresolved).
  const RunConfig& base() const;
  // The fewest units meeting every target in steady state (0: none up to
  // --max-instances units).
  int64_t run();
  // The metrics and verdict of the trial of `units` (a count run() tried).
  const std::vector<MetricField>& metrics(int64_t units) const;
  const std::string& verdict(int64_t units) const;
  // The configuration of `units` as the TOML `blis run` reads.
  std::string configuration(int64_t units) const;
  // The report's data of the search (report/report.hpp), `units` its answer.
  PlanReport report_data(int64_t units) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace blis
