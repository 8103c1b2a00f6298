// `blis plan`: the capacity-planning answer in one command. Given a model,
// traffic and SLO targets, it finds the fewest instances that meet every
// target in steady state (or, with --max-rate, the highest rate a given
// number of instances sustains), choosing the run length itself so that a
// transient never passes for an answer. docs/planning.md explains the method.
#pragma once

#include <blis/scenario.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace blis {

struct PlanRequest {
  Settings command_line;        // the `blis run` flags given (model, rate, workload, policies...)
  std::string slo;              // "ttft_p99<500ms,e2e_p99<20s"
  bool max_rate = false;        // find the highest rate for the configured instance count
  std::string duration;         // seconds of arrivals per run, "" = automatic
  int64_t max_instances = 512;  // the search's upper bound
  int64_t jobs = 1;             // simulations in parallel
  std::string format = "table";  // table or json
  // Candidates: the product of GPUs and TPs (one of each: the run's own).
  std::vector<std::string> hardware;  // --hardware H100,A100-80
  std::vector<int64_t> tp;            // --tp 1,2,4
  std::string gpu_cost;               // "H100=3.0,A100-80=1.8": $ per GPU-hour
  // Policies to compare, each at its own minimum count: ';'-separated items,
  // each of space-separated run settings KEY=VALUE ("routing-policy=weighted
  // routing-scorers=queue-depth:1; routing-policy=round-robin").
  std::string policies;
  // --search: the cheapest deployment over GPUs, TPs, batch limits and P/D
  // (docs/planning.md, "The cheapest deployment"). Lists of the run settings'
  // values as given (checked by the settings table); one value without
  // --search is that setting.
  bool search = false;
  std::vector<std::string> max_num_seqs;            // --max-num-seqs 64,128,256
  std::vector<std::string> max_num_batched_tokens;  // --max-num-batched-tokens 2048,8192
  std::string search_pd;                            // "colocated,1:1,1:2"; "" = co-located only
  std::optional<int64_t> top;                       // configurations listed, cheapest first (5)
  std::string report;                 // a folder for report.html and its charts, "" = none
  int64_t replicates = 1;             // seeds per trial
  bool quiet = false;                 // no progress on stderr
};

// Runs the search and prints the answer to `out`; progress goes to stderr.
// False when there is no answer (no count, rate or candidate meets the
// targets: `blis plan` exits 3). Throws blis::Error on bad input (exit 2).
bool plan(const PlanRequest& request, std::ostream& out);

}  // namespace blis
