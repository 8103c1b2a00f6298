#include "cluster/pd_flow.hpp"

#include "cluster/fleet.hpp"
#include "cluster/rerouting.hpp"
#include "cluster/routing.hpp"

#include "kernel/events.hpp"

#include <spdlog/spdlog.h>

#include <cmath>

namespace blis {
namespace {

uint32_t slot_of(uint64_t payload) { return static_cast<uint32_t>(payload); }
uint32_t incarnation_of(uint64_t payload) { return static_cast<uint32_t>(payload >> 32); }

}  // namespace

PdFlow::PdFlow(const ClusterCore& core, PdMetrics& metrics, Routing& routing, Fleet& fleet, Rerouting& rerouting)
    : core_(core), metrics_(metrics), routing_(routing), fleet_(fleet), rerouting_(rerouting),
      link_(core.cfg.pd.bytes_per_us, core.cfg.pd.base_latency_us, core.cfg.pd.contention) {}

bool PdFlow::route(uint32_t slot) {
  const blis_route_input& in = routing_.state_of_role(slot, kPdDecode);
  if (in.count == 0) {
    rerouting_.reject(slot, "no decode instance takes traffic");
    return false;
  }
  Request& r = core_.pool[slot];
  const int32_t position = routing_.route(routing_.decode_router(), in);
  const blis_instance_snapshot& d = routing_.at(position);
  const int32_t decode = d.index;
  const bool split = pd_disaggregate(core_.cfg.pd.decider, core_.cfg.pd.prefix_threshold, r.spec.input_tokens,
                                     d.cached_blocks, core_.cfg.engine.block_size);
  // E/P/D (cluster/epd.hpp): the encode stage follows the P/D decision.
  const bool encode = encodes(slot);
  if (encode && !routing_.any_routable(kPdEncode)) {
    rerouting_.reject(slot, "no encode instance takes traffic");
    return false;
  }
  if (!split) {
    core_.instances[static_cast<size_t>(decode)]->inject(slot, core_.kernel.now());
    core_.signals.routed(r, routing_.choice(position, in));
    // After the signal, which reads the decode choice's state: the encode
    // choice sees only encode instances, which the injection left alone.
    if (encode) encode_route(slot);
    return true;
  }
  if (encode) encode_route(slot);
  r.pd = PdStage::Prefill;
  route_of(slot) = Route{decode};
  if (!r.pd_split) metrics_.disaggregated();
  r.pd_split = true;
  schedule(core_.kernel, core_.kernel.now() + core_.cfg.routing_latency, EventKind::PdPrefillRouting, 0, slot);
  return false;
}

// The encode decider's answer for the request in `slot` (false without an
// encode pool).
bool PdFlow::encodes(uint32_t slot) {
  EncodeDecider* decider = core_.cfg.pd.encode_decider.get();
  if (decider == nullptr) return false;
  Request& r = core_.pool[slot];
  blis_request_view view = request_view(r, core_.cfg.engine.block_size, core_.pool);
  view.block_hashes = nullptr;
  view.num_blocks = 0;
  return decider->encode(encode_input(r.spec, &view, core_.kernel.now(), routing_.routable_count(kPdEncode), encoded_));
}

// The cluster's router picks an encode instance; nothing is sent there (the
// encode takes no time), but the router's state moves as HEAD's does.
void PdFlow::encode_route(uint32_t slot) {
  ++encoded_;
  const blis_route_input& in = routing_.state_of_role(slot, kPdEncode);
  routing_.route(routing_.router(), in);
}

void PdFlow::prefill_route(uint32_t slot) {
  const blis_route_input& in = routing_.state_of_role(slot, kPdPrefill);
  if (in.count == 0) {
    rerouting_.reject(slot, "no prefill instance takes traffic");
    return;
  }
  Request& r = core_.pool[slot];
  const int32_t position = routing_.route(routing_.prefill_router(), in);
  const int32_t target = routing_.at(position).index;
  core_.instances[static_cast<size_t>(target)]->inject(slot, core_.kernel.now());
  core_.signals.routed(r, routing_.choice(position, in));
}

// The prefill instance finished the prompt: the request leaves it, and its
// KV leaves for the decode instance, which reserves room for the whole
// prompt first (none: the request is dropped there).
void PdFlow::prefilled(uint64_t payload) {
  const uint32_t slot = slot_of(payload);
  Request& r = core_.pool[slot];
  if (r.incarnation != incarnation_of(payload)) return;  // timed out at the end of its prefill
  const SimTime now = core_.kernel.now();
  const int32_t source = r.instance;
  metrics_.prefilled(source);
  core_.signals.departed(r, now);
  fleet_.departed(static_cast<size_t>(source));
  // Scenario events: the decode instance chosen at routing failed or left
  // meanwhile; the KV goes to another one (docs/disaggregation.md).
  if (!decode_takes(static_cast<size_t>(route_of(slot).decode))) {
    const blis_route_input& in = routing_.state_of_role(slot, kPdDecode);
    if (in.count == 0) {
      rerouting_.reroute(slot);  // from the start: rejected there unless a decode instance takes traffic again
      return;
    }
    route_of(slot).decode = routing_.at(routing_.route(routing_.decode_router(), in)).index;
  }
  const auto d = static_cast<size_t>(route_of(slot).decode);
  r.instance = route_of(slot).decode;
  route_of(slot).prefill = source;
  r.pd = PdStage::Decode;
  core_.in_flight.add(d);
  metrics_.transfer_started();
  if (!core_.instances[d]->reserve_transfer(r, now)) {
    spdlog::debug("instance_{}: dropping request_{} after its prefill: no room for its {} prompt tokens' KV", d,
                 r.spec.id, r.spec.input_tokens);
    metrics_.dropped_at_decode();
    core_.signals.dropped(r, now);
    core_.signals.departed(r, now);
    core_.pool.release(slot);
    fleet_.departed(d);
    return;
  }
  route_of(slot).transfer_start = now;
  route_of(slot).transfer = ++transfers_;
  const int64_t b = core_.cfg.engine.block_size;
  const int64_t blocks = (r.spec.input_tokens + b - 1) / b;
  done_.clear();
  link_.start(transfer_tag(r), static_cast<double>(blocks * b) * core_.cfg.pd.kv_bytes_per_token, now, done_);
  schedule_link();
}

// Transfers the link reports done, and its next check.
void PdFlow::schedule_link() {
  for (const KvTransferLink::Done& d : done_) schedule(core_.kernel, d.at, EventKind::PdTransferDone, 0, d.id);
  done_.clear();
  if (const SimTime t = link_.next_check(); t != kForever)
    schedule(core_.kernel, t, EventKind::PdTransferCheck, 0, ++generation_);
}

void PdFlow::check(uint64_t generation) {
  if (generation != generation_) return;  // the link changed since this check was set
  link_.advance(core_.kernel.now(), done_);
  schedule_link();
}

void PdFlow::transfer_done(uint64_t payload) {
  const uint32_t slot = slot_of(payload);
  Request& r = core_.pool[slot];
  // Timed out on the wire, or the transfer was abandoned (pd_abandon).
  if (r.state != RequestState::Transfer || r.pd != PdStage::Decode || transfer_tag(r) != payload) return;
  const SimTime now = core_.kernel.now();
  metrics_.transfer_done(now - route_of(slot).transfer_start);
  core_.budget.started(r);  // the decode holds a slot of its own, as the prefill did (HEAD)
  // A destination drained meanwhile takes it (it was routed there before);
  // a failed or removed one abandoned its transfers when it went.
  core_.instances[static_cast<size_t>(r.instance)]->enqueue_transferred(slot, now);
}

uint64_t PdFlow::transfer_tag(const Request& r) const {
  return (static_cast<uint64_t>(routes_[r.slot].transfer) << 32) | r.slot;
}

// Whether decode instance d may still receive a request's KV: not failed,
// and in service (a drained one still finishes what was sent to it).
bool PdFlow::decode_takes(size_t d) const {
  const InstanceRecord& rec = fleet_.record(d);
  return !rec.down && (rec.life == Life::Active || rec.life == Life::Draining);
}

// Instance i failed or left without waiting: the transfers it was the
// source or the destination of are abandoned (the KV on the wire is read
// from the source and written to the destination's memory). Their requests
// are re-routed from the start (their prefill again) or failed; how many.
int64_t PdFlow::abandon(size_t i, bool reroute) {
  const SimTime now = core_.kernel.now();
  done_.clear();
  std::vector<uint32_t> lost;
  for (size_t s = 0; s < core_.pool.capacity(); ++s) {
    Request& r = core_.pool[static_cast<uint32_t>(s)];
    if (r.state != RequestState::Transfer || r.pd != PdStage::Decode) continue;
    if (static_cast<size_t>(r.instance) != i && static_cast<size_t>(routes_[r.slot].prefill) != i) continue;
    link_.cancel(transfer_tag(r), now, done_);
    core_.instances[static_cast<size_t>(r.instance)]->release_transfer(r);
    lost.push_back(r.slot);
  }
  schedule_link();
  for (uint32_t slot : lost) {
    const size_t d = static_cast<size_t>(core_.pool[slot].instance);
    rerouting_.lose(slot, reroute);
    if (d != i) fleet_.departed(d);
  }
  return static_cast<int64_t>(lost.size());
}

// A deadline passing while the request is between instances, or after it
// moved on from the instance whose queue set the timeout.
bool PdFlow::timeout(const Event& e) {
  Request& r = core_.pool[slot_of(e.payload)];
  if (r.incarnation != incarnation_of(e.payload)) return false;  // gone: the instance ignores it
  if (r.state == RequestState::Transfer) {
    const auto at = static_cast<size_t>(r.instance);
    if (r.pd == PdStage::Decode) core_.instances[at]->release_transfer(r);
    core_.signals.timed_out(r, core_.kernel.now());
    core_.signals.departed(r, core_.kernel.now());
    core_.pool.release(r.slot);
    fleet_.departed(at);
    return true;
  }
  if (r.instance >= 0 && static_cast<uint32_t>(r.instance) != e.target) {
    core_.instances[static_cast<size_t>(r.instance)]->on_event(e);
    return true;
  }
  return false;
}

void PdFlow::finish() {
  if (core_.cfg.pd.contention) metrics_.contention(link_.peak(), link_.mean_depth());
}

}  // namespace blis
