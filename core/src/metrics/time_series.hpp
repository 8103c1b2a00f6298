// The time series of a run (--timeseries FILE): per interval of simulated
// time and per pool, the instance count, queue depth, running batch and KV
// usage at the interval's end, and the arrivals, completions, failures and
// scenario events within it. A lifecycle subscriber for the counts; the
// cluster hands it the gauges at each interval boundary (cluster/probes.cpp).
// Off (interval 0), it keeps nothing and every handler returns at once.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"

#include <blis/kernel.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace blis {

// The state of one pool at an instant.
struct PoolGauges {
  int64_t instances = 0;  // routable instances
  int64_t queue_depth = 0, running = 0;
  int64_t used_kv_blocks = 0, total_kv_blocks = 0;  // over the routable instances
};

class TimeSeries : public LifecycleSubscriber {
 public:
  // `pools` names the pools; `pool_of` gives each instance's pool.
  TimeSeries(SimTime interval, std::vector<std::string> pools, std::vector<int32_t> pool_of);

  bool enabled() const { return interval_ > 0; }
  SimTime interval() const { return interval_; }

  void arrival() { ++current_.arrivals; }
  void scenario_event() { ++current_.events; }
  void on_completed(Request& r, SimTime) {
    if (enabled()) ++counts_[pool(r)].completions;
  }
  void on_failed(Request& r, SimTime) {
    if (enabled()) ++counts_[pool(r)].failed;
  }

  // Closes the interval ending at `end` with each pool's gauges (one per pool).
  void close(SimTime end, const std::vector<PoolGauges>& gauges);
  // The CSV text: a header, then one row per interval and pool.
  std::string csv() const;

 private:
  struct Counts {
    int64_t arrivals = 0, completions = 0, failed = 0, events = 0;
  };
  size_t pool(const Request& r) const { return static_cast<size_t>(pool_of_[static_cast<size_t>(r.instance)]); }

  SimTime interval_;
  std::vector<std::string> pools_;
  std::vector<int32_t> pool_of_;
  Counts current_;              // cluster-wide counts: arrivals and events
  std::vector<Counts> counts_;  // per pool: completions and failures
  std::string rows_;
};

}  // namespace blis
