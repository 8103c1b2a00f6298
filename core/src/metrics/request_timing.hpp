// What the metrics keep of one request while it lives: its slot in the
// Request (DESIGN §10: listeners keep their state beside the request, the
// engine never reads it). Written by the MetricsCollector, read by the
// per-request records.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace blis {

struct RequestTiming {
  int64_t ttft = -1;              // µs from arrival, once it has a first token
  int64_t scheduling_delay = -1;  // µs from arrival to its first admission to a batch
  int64_t e2e = -1;               // µs from arrival, once completed with a token
  double itl_avg = 0;             // mean inter-token latency (µs), once completed
  int64_t first_token_end = 0;    // end of the step that produced the first token
  bool admitted = false;          // passed admission (goodput counts arrivals)
  bool input_counted = false;     // its input tokens are in its instance's metrics
  bool warm_up = false;           // routed to an instance still warming up (spec head §6.2)
  // Inter-token latencies, counted only if the request completes: closed
  // runs of standard values (steps [first, end)) and individual gaps. Made
  // at the first of them: a request waiting in a queue holds one pointer,
  // not two empty vectors.
  struct Itls {
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    std::vector<int64_t> gaps;
  };
  std::unique_ptr<Itls> itls;
  Itls& token_itls() {
    if (!itls) itls = std::make_unique<Itls>();
    return *itls;
  }
};

}  // namespace blis
