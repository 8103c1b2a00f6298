// `blis calibrate` (blis/trace.hpp): reads the trace, the SimResults and the
// optional ITL file, writes HEAD's report (workload/calibrate.cpp) and its
// summary on stderr.
#include <blis/errors.hpp>
#include <blis/trace.hpp>

#include "util/output_file.hpp"
#include "workload/trace_v2.hpp"

#include <cmath>
#include <iostream>

namespace blis {

void calibrate(const CalibrateRequest& req) {
  if (req.network_rtt_us < -1)
    throw InputError("--network-rtt-us", "must be >= 0 (or omit it to use the trace header's), got " +
                                             std::to_string(req.network_rtt_us));
  if (!std::isfinite(req.network_bandwidth_mbps) || req.network_bandwidth_mbps < 0)
    throw InputError("--network-bandwidth-mbps", "must be a finite number >= 0");
  if (!std::isfinite(req.ttft_mape_threshold) || req.ttft_mape_threshold < 0)
    throw InputError("--ttft-mape-threshold", "must be a finite number >= 0");
  if (req.warmup_requests < -1)
    throw InputError("--warmup-requests", "must be >= 0 (or omit it to use the trace header's)");
  check_writable(req.report, "--report");
  const workload::TraceV2 trace = workload::load_trace_v2(req.trace_header, req.trace_data);
  const std::vector<workload::SimResult> sim = workload::load_sim_results(req.sim_results);
  if (sim.empty())
    throw InputError(req.sim_results, "no sim results: cannot calibrate with empty data");
  std::vector<workload::ItlRecord> itl;
  if (!req.itl_data.empty()) itl = workload::load_itl(req.itl_data);
  workload::CalibrationInput in;
  in.warm_up_requests = req.warmup_requests == -1 ? trace.header.warm_up_requests : req.warmup_requests;
  if (req.network_rtt_us == -1)
    in.network_rtt_us = trace.header.measured_rtt_ms > 0 ? static_cast<int64_t>(trace.header.measured_rtt_ms * 1000) : 0;
  else
    in.network_rtt_us = req.network_rtt_us;
  in.bandwidth_mbps = req.network_bandwidth_mbps;
  in.ttft_mape_threshold = req.ttft_mape_threshold;
  const workload::CalibrationOutcome outcome = workload::calibrate_report(trace, sim, itl, in, req.sim_results);
  write_output(req.report, outcome.report_json, std::cout);
  std::cerr << "Calibration report written to " << req.report << "\n";
  for (const std::string& line : outcome.log_lines) std::cerr << line << "\n";
}

}  // namespace blis
