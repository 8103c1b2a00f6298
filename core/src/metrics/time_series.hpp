// The time series of a run (--timeseries FILE): per interval of simulated
// time and per pool, the instance count, queue depth, running batch and KV
// usage at the interval's end, and the arrivals, completions, failures and
// scenario events within it, then the columns the observers add
// (SeriesColumns). A lifecycle subscriber for the counts; the scenario driver
// hands it the gauges at each interval boundary (cluster/scenario_driver.cpp).
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

// Columns an observer (metrics/observer.hpp) adds to the time series, after
// the built-in ones: per pool, what it counted in each interval. The time
// series turns it on (series_start) only when the file is asked for, so an
// observer counts nothing per interval otherwise.
class SeriesColumns {
 public:
  SeriesColumns() = default;
  SeriesColumns(const SeriesColumns&) = default;
  SeriesColumns(SeriesColumns&&) = default;
  SeriesColumns& operator=(const SeriesColumns&) = default;
  SeriesColumns& operator=(SeriesColumns&&) = default;
  virtual ~SeriesColumns() = default;

  // Its column names, each after a comma (",good_completions"); "" adds none.
  virtual std::string series_header() const = 0;
  // From now on, count per interval; `pool_of` gives each instance's pool.
  virtual void series_start(const std::vector<int32_t>& pool_of, size_t pools) = 0;
  // Its cells of `pool` for the interval that just ended, each after a comma.
  virtual void series_cells(size_t pool, std::string& out) const = 0;
  // The interval's rows are written: count the next one from zero.
  virtual void series_next() = 0;
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

  // Adds `columns` after the built-in ones (and after those added before);
  // nothing when the time series is off. It outlives the last close().
  void add_columns(SeriesColumns& columns);

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
  std::vector<SeriesColumns*> columns_;  // the observers' columns, in order
  std::string header_;                   // the CSV's first line, without its newline
  std::string rows_;
};

}  // namespace blis
