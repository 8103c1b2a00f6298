// What the metrics keep of one request while it lives: its slot in the
// Request (DESIGN §10: listeners keep their state beside the request, the
// engine never reads it). Written by the MetricsCollector, read by the
// per-request records and the other subscribers.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace blis {

struct RequestTiming {
  // The figures of a request that was scheduled. Made by the first write
  // (its first admission to a batch): a request waiting in a queue, which is
  // most of them in a saturated run, holds one null pointer instead.
  struct Detail {
    int64_t ttft = -1;              // µs from arrival, once it has a first token
    int64_t scheduling_delay = -1;  // µs from arrival to its first admission to a batch
    int64_t e2e = -1;               // µs from arrival, once completed with a token
    int64_t last_token = -1;        // e2e without the post-decode overhead: the last token a client sees
    double itl_avg = 0;             // mean inter-token latency (µs), once completed
    int64_t first_token_end = 0;    // end of the step that produced the first token
    int64_t ttft_sample = -1;       // its TTFT's index among the samples of ttft_instance
    int32_t ttft_instance = -1;
    int64_t delay_sample = -1;      // its scheduling delay's index among the samples of delay_instance
    int32_t delay_instance = -1;
    bool restarted = false;         // preempted under restart: its next admission counts instead
    // --flow-control, with per-request records: µs it waited in the
    // gateway's queue, as HEAD counts it (RequestRecords::on_dispatched).
    int64_t gateway_wait = 0;
    // Inter-token latencies, counted only if the request completes: closed
    // runs of standard values (steps [first, end)) and individual gaps.
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    std::vector<int64_t> gaps;
  };
  std::unique_ptr<Detail> detail;

  // For writers: the detail, made if it is not yet.
  Detail& set() {
    if (!detail) detail = std::make_unique<Detail>();
    return *detail;
  }
  // For readers: the figures, or their "not yet" values.
  int64_t ttft() const { return detail ? detail->ttft : -1; }
  int64_t scheduling_delay() const { return detail ? detail->scheduling_delay : -1; }
  int64_t e2e() const { return detail ? detail->e2e : -1; }
  int64_t last_token() const { return detail ? detail->last_token : -1; }
  double itl_avg() const { return detail ? detail->itl_avg : 0; }
  int64_t gateway_wait() const { return detail ? detail->gateway_wait : 0; }
  int64_t first_token_end() const { return detail ? detail->first_token_end : 0; }
};

// What the metrics mark on every request, queued ones too: beside the
// engine's own flags in the Request, where they fill its padding.
struct RequestMarks {
  bool admitted = false;       // passed admission (goodput counts arrivals)
  bool input_counted = false;  // its input tokens are in its instance's metrics
  bool warm_up = false;        // routed to an instance still warming up (spec head §6.2)
};

}  // namespace blis
