// --trace-output (docs/cli.md "Traces"): every request that arrived at the
// cluster, with its first and last token times as a client sees them, for
// the TraceV2 rows of run/trace_output.cpp. Off (and free) unless the run
// writes a trace.
#pragma once

#include "engine/request.hpp"
#include "metrics/observer.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace blis {

class TraceRecorder : public LifecycleSubscriber, public ReportPart {
 public:
  struct Entry {
    WorkloadRequest spec;  // without its content
    int64_t first_token = -1;  // µs from arrival
    int64_t last_token = -1;   // µs from arrival: the last token as the client sees it
    enum Status : uint8_t { kIncomplete, kOk, kTimeout } status = kIncomplete;
  };

  explicit TraceRecorder(const ObserverSetup& setup) : on_(setup.trace_requests) {}

  // A request arrives once and meets admission once (or the horizon before it).
  void on_admitted(Request& r) { arrive(r); }
  void on_rejected(Request& r, std::string_view) { arrive(r); }
  void on_stopped(Request& r) {
    if (!on_) return;
    Entry* e = arrive(r);
    if (e && r.timing.ttft() >= 0 && e->first_token < 0) {
      e->first_token = r.timing.ttft();
      e->last_token = std::max(r.timing.last_token(), e->first_token);
    }
  }
  void on_completed(Request& r, SimTime) {
    Entry* e = arrive(r);
    if (!e) return;
    e->status = Entry::kOk;
    e->first_token = r.timing.ttft();
    e->last_token = r.timing.last_token();
  }
  void on_timed_out(Request& r, SimTime) {
    Entry* e = arrive(r);
    if (!e) return;
    e->status = Entry::kTimeout;
    if (r.timing.ttft() >= 0) {
      e->first_token = r.timing.ttft();
      e->last_token = std::max(r.timing.last_token(), e->first_token);
    }
  }

  // The entries in arrival order (ties: by id).
  std::vector<Entry> entries() const;

 private:
  Entry* arrive(const Request& r) {
    if (!on_) return nullptr;
    auto [it, fresh] = index_.try_emplace(r.spec.id, entries_.size());
    if (fresh) {
      Entry e;
      e.spec.id = r.spec.id;
      e.spec.arrival_us = r.spec.arrival_us;
      e.spec.input_tokens = r.spec.input_tokens;
      e.spec.output_tokens = r.spec.output_tokens;
      e.spec.max_output_tokens = r.spec.max_output_tokens;
      e.spec.slo_class = r.spec.slo_class;
      e.spec.deadline_us = r.spec.deadline_us;
      e.spec.slo_target_us = r.spec.slo_target_us;
      e.spec.user = r.spec.user;
      e.spec.round = r.spec.round;
      e.spec.session = r.spec.session;
      e.spec.source = r.spec.source;
      e.spec.tenant_id = r.spec.tenant_id;
      e.spec.model = r.spec.model;
      e.spec.adapter = r.spec.adapter;
      entries_.push_back(std::move(e));
    }
    return &entries_[it->second];
  }

  bool on_;
  std::vector<Entry> entries_;
  std::unordered_map<uint64_t, size_t> index_;
};

}  // namespace blis
