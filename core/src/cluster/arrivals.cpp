#include "cluster/arrivals.hpp"

#include "kernel/events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace blis {

void Arrivals::pull() {
  uint32_t slot = pool_.acquire();
  Request& r = pool_[slot];
  for (;;) {
    const bool more = source_->next(r.spec);
    if (more) {
      r.spec.follow_up = false;
      r.spec.arrival_us += phase_start_;
      r.spec.id += id_offset_;
      if (warped_) r.spec.arrival_us = warp(r.spec.arrival_us);
    }
    // The next workload phase starts before this arrival (or this workload
    // is exhausted): the arrival never comes, the phase's first one does.
    if (next_phase_ < phases_.size() && (!more || r.spec.arrival_us >= phases_[next_phase_].first)) {
      const SimTime at = phases_[next_phase_].first;
      source_ = phases_[next_phase_++].second;
      phase_start_ = at;
      id_offset_ = next_id_;
      if (warped_) {  // the rate factor applies to the new workload's gaps, from its start
        warp_src_ = static_cast<double>(at);
        warp_dst_ = static_cast<double>(at);
      }
      continue;
    }
    if (!more) {
      pool_.release(slot);
      source_done_ = true;
      pool_.drain();
      return;
    }
    break;
  }
  next_id_ = std::max(next_id_, r.spec.id + 1);
  pending_arrival_ = r.spec.arrival_us;
  if (r.spec.arrival_us > kernel_.horizon()) {
    pool_.release(slot);  // beyond the horizon: never processed
    source_done_ = true;
    pool_.drain();
    return;
  }
  schedule(kernel_, r.spec.arrival_us, EventKind::ClusterArrival, 0, slot);
}

// spec head §4.2: a closed-loop user's next request, after its previous one
// completed at t. It arrives outside the source's lazy chain of arrivals
// (arrived() pulls only for requests of that chain).
void Arrivals::completed(const Request& r, SimTime t) {
  const uint32_t slot = pool_.acquire();
  Request& next = pool_[slot];
  if (!source_->follow_up(r.spec, t, next.spec) || next.spec.arrival_us > kernel_.horizon()) {
    pool_.release(slot);
    return;
  }
  next.spec.follow_up = true;
  ++follow_ups_;
  if (cfg_.head_report)  // the results file's names, and the order of the goodput's per-class sums
    names_.emplace(next.spec.id, fmt::format("session_{}_round_{}_{}", source_->session_name(next.spec),
                                             next.spec.round, follow_ups_));
  schedule(kernel_, next.spec.arrival_us, EventKind::ClusterArrival, 0, slot);
}

// Anchored at the arrival already scheduled: the change applies from the one
// after it.
double Arrivals::change_rate(double factor) {
  const double src = warped_ ? static_cast<double>(pending_source_time_) : static_cast<double>(pending_arrival_);
  if (!warped_) pending_source_time_ = pending_arrival_;
  warp_src_ = src;
  warp_dst_ = static_cast<double>(std::max(pending_arrival_, kernel_.now()));
  rate_factor_ *= factor;
  warped_ = true;
  return rate_factor_;
}

bool Arrivals::has_tenant(const std::string& tenant) const {
  if (source_->has_tenant(tenant)) return true;
  return std::any_of(phases_.begin() + static_cast<std::ptrdiff_t>(next_phase_), phases_.end(),
                     [&](const auto& p) { return p.second->has_tenant(tenant); });
}

// Anchored, as change_rate() is, at the arrival already scheduled (or now,
// when it is past): its time in the source's own terms (before the phase's
// start and the rate warp) is where the tenant's gaps change.
std::string Arrivals::change_tenant_rate(const std::string& tenant, double factor) {
  const double at = static_cast<double>(std::max(pending_arrival_, kernel_.now()));
  const double global = warped_ ? warp_src_ + (at - warp_dst_) * rate_factor_ : at;
  const double f = source_->change_tenant_rate(tenant, factor, global - static_cast<double>(phase_start_));
  if (f <= 0) return fmt::format("no client of tenant {} in the current workload", tenant);
  return fmt::format("arrival rate x{} of tenant {}'s clients", f, tenant);
}

// Arrival times after a rate change: the source's gaps divided by the
// accumulated factor, from the anchor (warp_src_, warp_dst_).
SimTime Arrivals::warp(SimTime source_time) {
  pending_source_time_ = source_time;
  const double t = warp_dst_ + (static_cast<double>(source_time) - warp_src_) / rate_factor_;
  return std::max<SimTime>(static_cast<SimTime>(std::llround(t)), kernel_.now());
}

}  // namespace blis
