// The per-request records of the results file (--results-path, spec cluster
// §7.8): one for every request that reached an instance, whether it
// completed, was dropped, timed out, failed with its instance, was evicted by
// the gateway, or was still inside when the run stopped.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/collector.hpp"

#include <vector>

namespace blis {

// Appends to the records of the request's instance. Reads the request's
// metrics slot, so it listens after the MetricsCollector.
class RequestRecords : public LifecycleSubscriber {
 public:
  // `metrics` per instance, kept by reference; nothing is kept unless `keep`.
  RequestRecords(bool keep, std::vector<InstanceMetrics>& metrics) : keep_(keep), metrics_(metrics) {}

  // HEAD's gateway_queue_delay_ms: the wait from the admission decision to
  // the dispatch, kept only when the request entered the queue after time 0
  // (HEAD takes a zero enqueue time for none) and waited.
  void on_dispatched(Request& r, SimTime enqueued, SimTime t) {
    if (keep_ && enqueued > 0 && t > enqueued) r.timing.set().gateway_wait = t - enqueued;
  }
  void on_completed(Request& r, SimTime) {
    if (keep_) add(r);
  }
  void on_dropped(Request& r, SimTime) {
    if (keep_) add(r, End::Dropped);
  }
  void on_timed_out(Request& r, SimTime) {
    if (keep_) add(r, End::TimedOut);
  }
  // Lost with an instance that failed (a scenario's `fail` event).
  void on_failed(Request& r, SimTime) {
    if (keep_) add(r, End::Failed);
  }
  void on_evicted(Request& r, SimTime) {
    if (keep_) add(r, End::Evicted);
  }
  void on_stopped(Request& r) {
    if (keep_ && r.instance >= 0) add(r);
  }

 private:
  // How the request left: completed (or still inside at the stop), or the
  // flag its record carries.
  enum class End { Completed, Dropped, TimedOut, Failed, Evicted };
  void add(const Request& r, End end = End::Completed);

  bool keep_;
  std::vector<InstanceMetrics>& metrics_;
};

}  // namespace blis
