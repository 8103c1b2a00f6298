// Where requests come from: the workload source and its later phases (a
// scenario's `workload` events), drawn lazily — the next arrival is
// scheduled when the previous one is processed, which gives the same order
// as scheduling all of them up front — the time warp of `rate` events, and
// closed-loop users' follow-up requests (spec head §4.2).
#pragma once

#include "cluster/closed_loop.hpp"
#include "cluster/cluster_config.hpp"
#include "engine/request.hpp"

#include <blis/kernel.hpp>
#include <blis/workload.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace blis {

class Arrivals final : public FollowUps {
 public:
  // `source` outlives it.
  Arrivals(const ClusterConfig& cfg, Kernel& kernel, RequestPool& pool, WorkloadSource& source)
      : cfg_(cfg), kernel_(kernel), pool_(pool), source_(&source) {}

  // From virtual time `at` on, arrivals come from `source` (see
  // ClusterSimulation::add_workload_phase).
  void add_phase(SimTime at, WorkloadSource& source) { phases_.emplace_back(at, &source); }

  // Takes the next arrival into a pool slot and schedules its ClusterArrival.
  void pull();
  // A request arrived at the cluster (its ClusterArrival): counted, progress
  // reported every 1024, and the next one of the source's chain drawn.
  void arrived(uint32_t slot) {
    if ((++arrived_ & 1023) == 0 && cfg_.on_progress) cfg_.on_progress(arrived_, kernel_.now());
    // The next of the source's chain, unless this was a closed-loop user's
    // follow-up, which came from completed() (a replayed trace's later
    // session rounds are the chain's own).
    if (!pool_[slot].spec.follow_up && !source_done_) pull();  // (online runs inject once it is done)
  }
  // A closed-loop user's next request (FollowUps).
  void completed(const Request& r, SimTime t) override;

  // A scenario `rate` event: arrivals after the one already scheduled come
  // `factor` times as often; the accumulated factor.
  double change_rate(double factor);
  // A scenario `rate` event for one tenant: the arrivals of its clients
  // after the one already scheduled come `factor` times as often (the
  // current workload's; a later `workload` phase starts at its own rate).
  // The event log's note.
  std::string change_tenant_rate(const std::string& tenant, double factor);
  // Whether a client of the workload (or of a later phase) has that tenant.
  bool has_tenant(const std::string& tenant) const;

  int64_t count() const { return arrived_; }
  // The session a request of the current workload belongs to, as HEAD names it.
  std::string session_name(const WorkloadRequest& r) const { return source_->session_name(r); }
  // HEAD's ids of the follow-ups, by request id, under HEAD's output
  // (ClusterConfig::head_report; its results file and the order of the
  // goodput's per-class sums use them): "session_<session>_round_<round>_<n>",
  // n counting follow-ups from 1.
  std::unordered_map<uint64_t, std::string> take_follow_up_names() { return std::move(names_); }
  // The workload is exhausted (or past the horizon): no arrival of its chain is left.
  bool done() const { return source_done_; }

 private:
  SimTime warp(SimTime source_time);

  const ClusterConfig& cfg_;
  Kernel& kernel_;
  RequestPool& pool_;
  WorkloadSource* source_;
  // Workload phases still to come, and the offsets of the current one: its
  // arrival times count from phase_start_, its ids from id_offset_.
  std::vector<std::pair<SimTime, WorkloadSource*>> phases_;
  size_t next_phase_ = 0;
  SimTime phase_start_ = 0;
  uint64_t id_offset_ = 0, next_id_ = 0;
  int64_t arrived_ = 0;
  bool source_done_ = false;
  // The arrival time warp of rate changes: arrivals after source time
  // warp_src_ come 1/rate_factor_ as far apart, from warp_dst_.
  double warp_src_ = 0, warp_dst_ = 0, rate_factor_ = 1;
  bool warped_ = false;
  SimTime pending_source_time_ = 0, pending_arrival_ = 0;
  int64_t follow_ups_ = 0;
  std::unordered_map<uint64_t, std::string> names_;
};

}  // namespace blis
