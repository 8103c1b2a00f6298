#include "metrics/time_series.hpp"

#include <fmt/format.h>

namespace blis {

TimeSeries::TimeSeries(SimTime interval, std::vector<std::string> pools, std::vector<int32_t> pool_of)
    : interval_(interval),
      pools_(std::move(pools)),
      pool_of_(std::move(pool_of)),
      counts_(pools_.size()),
      header_("time_s,pool,instances,queue_depth,running,kv_usage,arrivals,completions,failed,events") {}

void TimeSeries::add_columns(SeriesColumns& columns) {
  if (!enabled()) return;
  const std::string names = columns.series_header();
  if (names.empty()) return;
  header_ += names;
  columns.series_start(pool_of_, pools_.size());
  columns_.push_back(&columns);
}

// Arrivals and scenario events belong to no pool: they are written on the
// first pool's row and as 0 on the others, so that a column's sum is the
// run's total.
void TimeSeries::close(SimTime end, const std::vector<PoolGauges>& gauges) {
  for (size_t p = 0; p < pools_.size(); ++p) {
    const PoolGauges& g = gauges[p];
    const double kv = g.total_kv_blocks > 0
                          ? static_cast<double>(g.used_kv_blocks) / static_cast<double>(g.total_kv_blocks)
                          : 0.0;
    const Counts& c = counts_[p];
    rows_ += fmt::format("{:.6f},{},{},{},{},{:.4f},{},{},{},{}", static_cast<double>(end) / 1e6, pools_[p],
                         g.instances, g.queue_depth, g.running, kv, p == 0 ? current_.arrivals : 0,
                         c.completions, c.failed, p == 0 ? current_.events : 0);
    for (const SeriesColumns* columns : columns_) columns->series_cells(p, rows_);
    rows_ += '\n';
    counts_[p] = Counts{};
  }
  current_ = Counts{};
  for (SeriesColumns* columns : columns_) columns->series_next();
}

std::string TimeSeries::csv() const { return header_ + "\n" + rows_; }

}  // namespace blis
