// Prefill/decode disaggregation in the cluster (spec head §5.2): a request
// is routed to a decode instance first; the decider then sends it there, or
// splits it: a prefill on the prefill pool, its KV over the link
// (cluster/pd.hpp), its decode on the chosen decode instance. The request
// keeps its slot, id and metrics slot all along, so it counts once: arrival,
// one completion (its first token and E2E from the decode instance).
#include "cluster/cluster.hpp"

#include "kernel/events.hpp"

#include <spdlog/spdlog.h>

#include <cmath>

namespace blis {
namespace {

uint32_t slot_of(uint64_t payload) { return static_cast<uint32_t>(payload); }
uint32_t incarnation_of(uint64_t payload) { return static_cast<uint32_t>(payload >> 32); }

}  // namespace

// The routable instances with `role`, as the router sees them.
const blis_route_input& ClusterSimulation::pd_pool_state(uint32_t slot, uint8_t role) {
  router_state(slot);
  size_t k = 0;
  for (size_t j = 0; j < static_cast<size_t>(routable_count_); ++j)
    if (cfg_.pd.roles[static_cast<size_t>(state_[j].index)] & role) state_[k++] = state_[j];
  routable_count_ = static_cast<int64_t>(k);
  input_.count = routable_count_;
  return input_;
}

void ClusterSimulation::pd_route(uint32_t slot) {
  const blis_route_input& in = pd_pool_state(slot, kPdDecode);
  Request& r = pool_[slot];
  if (in.count == 0) {
    reject_unroutable(r, "no decode instance takes traffic");
    pool_.release(slot);
    return;
  }
  Router& router = policies_.decode_router ? *policies_.decode_router : *policies_.router;
  const int32_t position = router.route(in, scores_);
  const blis_instance_snapshot& d = state_[static_cast<size_t>(position)];
  if (!pd_disaggregate(cfg_.pd.decider, cfg_.pd.prefix_threshold, r.spec.input_tokens, d.cached_blocks,
                       cfg_.engine.block_size)) {
    instances_[static_cast<size_t>(d.index)]->inject(slot, kernel_.now());
    signals_.routed(r, RoutingChoice{d.index, scores_, in, position});
    return;
  }
  r.pd = PdStage::Prefill;
  pd_route_of(slot) = PdRoute{d.index};
  if (!r.pd_split) pd_metrics_.disaggregated();
  r.pd_split = true;
  schedule(kernel_, kernel_.now() + cfg_.routing_latency, EventKind::PdPrefillRouting, 0, slot);
}

void ClusterSimulation::pd_prefill_route(uint32_t slot) {
  const blis_route_input& in = pd_pool_state(slot, kPdPrefill);
  Request& r = pool_[slot];
  if (in.count == 0) {
    reject_unroutable(r, "no prefill instance takes traffic");
    pool_.release(slot);
    return;
  }
  Router& router = policies_.prefill_router ? *policies_.prefill_router : *policies_.router;
  const int32_t position = router.route(in, scores_);
  const int32_t target = state_[static_cast<size_t>(position)].index;
  instances_[static_cast<size_t>(target)]->inject(slot, kernel_.now());
  signals_.routed(r, RoutingChoice{target, scores_, in, position});
}

// The prefill instance finished the prompt: the request leaves it, and its
// KV leaves for the decode instance, which reserves room for the whole
// prompt first (none: the request is dropped there).
void ClusterSimulation::pd_prefilled(uint64_t payload) {
  const uint32_t slot = slot_of(payload);
  Request& r = pool_[slot];
  if (r.incarnation != incarnation_of(payload)) return;  // timed out at the end of its prefill
  const SimTime now = kernel_.now();
  const int32_t source = r.instance;
  pd_metrics_.prefilled(source);
  signals_.departed(r, now);
  if (draining_ > 0) check_drained(static_cast<size_t>(source));
  // Scenario events: the decode instance chosen at routing failed or left
  // meanwhile; the KV goes to another one (docs/disaggregation.md).
  if (!pd_decode_takes(static_cast<size_t>(pd_route_of(slot).decode))) {
    const blis_route_input& in = pd_pool_state(slot, kPdDecode);
    if (in.count == 0) {
      reroute(slot);  // from the start: rejected there unless a decode instance takes traffic again
      return;
    }
    Router& router = policies_.decode_router ? *policies_.decode_router : *policies_.router;
    pd_route_of(slot).decode = state_[static_cast<size_t>(router.route(in, scores_))].index;
  }
  const auto d = static_cast<size_t>(pd_route_of(slot).decode);
  r.instance = pd_route_of(slot).decode;
  pd_route_of(slot).prefill = source;
  r.pd = PdStage::Decode;
  in_flight_.add(d);
  pd_metrics_.transfer_started();
  if (!instances_[d]->reserve_transfer(r, now)) {
    spdlog::debug("instance_{}: dropping request_{} after its prefill: no room for its {} prompt tokens' KV", d,
                 r.spec.id, r.spec.input_tokens);
    pd_metrics_.dropped_at_decode();
    signals_.dropped(r, now);
    signals_.departed(r, now);
    pool_.release(slot);
    if (draining_ > 0) check_drained(d);
    return;
  }
  pd_route_of(slot).transfer_start = now;
  pd_route_of(slot).transfer = ++pd_transfers_;
  const int64_t b = cfg_.engine.block_size;
  const int64_t blocks = (r.spec.input_tokens + b - 1) / b;
  pd_done_.clear();
  pd_link_->start(transfer_tag(r), static_cast<double>(blocks * b) * cfg_.pd.kv_bytes_per_token, now, pd_done_);
  pd_schedule();
}

// Transfers the link reports done, and its next check.
void ClusterSimulation::pd_schedule() {
  for (const KvTransferLink::Done& d : pd_done_) schedule(kernel_, d.at, EventKind::PdTransferDone, 0, d.id);
  pd_done_.clear();
  if (const SimTime t = pd_link_->next_check(); t != kForever)
    schedule(kernel_, t, EventKind::PdTransferCheck, 0, ++pd_generation_);
}

void ClusterSimulation::pd_check(uint64_t generation) {
  if (generation != pd_generation_) return;  // the link changed since this check was set
  pd_link_->advance(kernel_.now(), pd_done_);
  pd_schedule();
}

void ClusterSimulation::pd_transfer_done(uint64_t payload) {
  const uint32_t slot = slot_of(payload);
  Request& r = pool_[slot];
  // Timed out on the wire, or the transfer was abandoned (pd_abandon).
  if (r.state != RequestState::Transfer || r.pd != PdStage::Decode || transfer_tag(r) != payload) return;
  const SimTime now = kernel_.now();
  pd_metrics_.transfer_done(now - pd_route_of(slot).transfer_start);
  // A destination drained meanwhile takes it (it was routed there before);
  // a failed or removed one abandoned its transfers when it went.
  instances_[static_cast<size_t>(r.instance)]->enqueue_transferred(slot, now);
}

uint64_t ClusterSimulation::transfer_tag(const Request& r) const {
  return (static_cast<uint64_t>(pd_routes_[r.slot].transfer) << 32) | r.slot;
}

// Whether decode instance d may still receive a request's KV: not failed,
// and in service (a drained one still finishes what was sent to it).
bool ClusterSimulation::pd_decode_takes(size_t d) const {
  const InstanceRecord& rec = slots_[d];
  return !rec.down && (rec.life == Life::Active || rec.life == Life::Draining);
}

// Instance i failed or left without waiting: the transfers it was the
// source or the destination of are abandoned (the KV on the wire is read
// from the source and written to the destination's memory). Their requests
// are re-routed from the start (their prefill again) or failed; how many.
int64_t ClusterSimulation::pd_abandon(size_t i, bool reroute) {
  const SimTime now = kernel_.now();
  pd_done_.clear();
  std::vector<uint32_t> lost;
  for (size_t s = 0; s < pool_.capacity(); ++s) {
    Request& r = pool_[static_cast<uint32_t>(s)];
    if (r.state != RequestState::Transfer || r.pd != PdStage::Decode) continue;
    if (static_cast<size_t>(r.instance) != i && static_cast<size_t>(pd_routes_[r.slot].prefill) != i) continue;
    pd_link_->cancel(transfer_tag(r), now, pd_done_);
    instances_[static_cast<size_t>(r.instance)]->release_transfer(r);
    lost.push_back(r.slot);
  }
  pd_schedule();
  for (uint32_t slot : lost) {
    const size_t d = static_cast<size_t>(pool_[slot].instance);
    lose(slot, reroute);
    if (draining_ > 0 && d != i) check_drained(d);
  }
  return static_cast<int64_t>(lost.size());
}

// A deadline passing while the request is between instances, or after it
// moved on from the instance whose queue set the timeout.
bool ClusterSimulation::pd_timeout(const Event& e) {
  Request& r = pool_[slot_of(e.payload)];
  if (r.incarnation != incarnation_of(e.payload)) return false;  // gone: the instance ignores it
  if (r.state == RequestState::Transfer) {
    const auto at = static_cast<size_t>(r.instance);
    if (r.pd == PdStage::Decode) instances_[at]->release_transfer(r);
    signals_.timed_out(r, kernel_.now());
    signals_.departed(r, kernel_.now());
    pool_.release(r.slot);
    if (draining_ > 0) check_drained(at);
    return true;
  }
  if (r.instance >= 0 && static_cast<uint32_t>(r.instance) != e.target) {
    instances_[static_cast<size_t>(r.instance)]->on_event(e);
    return true;
  }
  return false;
}

}  // namespace blis
