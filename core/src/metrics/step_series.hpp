// The cluster over time, for `blis run --report` (report/report.hpp): the
// wait-queue depth, the running batch and the KV blocks held, summed over the
// instances and averaged over each time bucket (each step weighs its
// duration, so idle time counts as empty). A lifecycle subscriber that keeps
// at most 512 buckets: they start at 100 ms and double in width, merging
// pairs, when the run outgrows them. Off unless asked for.
#pragma once

#include "engine/lifecycle.hpp"

#include <cstdint>
#include <vector>

namespace blis {

struct TimeSeriesPoint {
  double t_s = 0;          // the bucket's middle
  double waiting = 0;      // requests in the wait queues
  double running = 0;      // requests in the running batches
  double kv_blocks = 0;    // KV blocks held
};

class TimeSeriesProbe : public LifecycleSubscriber {
 public:
  explicit TimeSeriesProbe(bool enabled) : enabled_(enabled) {}
  void on_step(const StepSample& x) {
    if (!enabled_) return;
    Bucket& b = at(x.start);
    const double d = static_cast<double>(x.duration);
    b.waiting += d * static_cast<double>(x.waiting);
    b.running += d * static_cast<double>(x.running);
    b.kv += d * static_cast<double>(x.used_kv_blocks);
  }
  std::vector<TimeSeriesPoint> series() const;

 private:
  struct Bucket {
    double waiting = 0, running = 0, kv = 0;  // Σ value × µs
  };
  static constexpr size_t kMaxBuckets = 512;
  Bucket& at(int64_t t);

  bool enabled_;
  int64_t width_ = 100'000;  // µs
  std::vector<Bucket> buckets_;
};

}  // namespace blis
