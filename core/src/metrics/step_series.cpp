#include "metrics/step_series.hpp"

#include <algorithm>

namespace blis {

TimeSeriesProbe::Bucket& TimeSeriesProbe::at(int64_t t) {
  size_t i = static_cast<size_t>(std::max<int64_t>(t, 0) / width_);
  while (i >= kMaxBuckets) {
    std::vector<Bucket> merged((buckets_.size() + 1) / 2);
    for (size_t k = 0; k < buckets_.size(); ++k) {
      merged[k / 2].waiting += buckets_[k].waiting;
      merged[k / 2].running += buckets_[k].running;
      merged[k / 2].kv += buckets_[k].kv;
    }
    buckets_ = std::move(merged);
    width_ *= 2;
    i = static_cast<size_t>(std::max<int64_t>(t, 0) / width_);
  }
  if (i >= buckets_.size()) buckets_.resize(i + 1);
  return buckets_[i];
}

std::vector<TimeSeriesPoint> TimeSeriesProbe::series() const {
  std::vector<TimeSeriesPoint> out;
  const double w = static_cast<double>(width_);
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[i];
    out.push_back({(static_cast<double>(i) + 0.5) * w / 1e6, b.waiting / w, b.running / w, b.kv / w});
  }
  return out;
}

}  // namespace blis
