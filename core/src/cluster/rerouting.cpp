#include "cluster/rerouting.hpp"

#include "cluster/pd_flow.hpp"
#include "kernel/events.hpp"

namespace blis {

void Rerouting::lose(uint32_t slot, bool reroute) {
  Request& r = core_.pool[slot];
  const SimTime now = core_.kernel.now();
  if (reroute && r.step().emitted == 0) {
    core_.signals.departed(r, now);
    this->reroute(slot);
    return;
  }
  core_.signals.failed(r, now);
  core_.signals.departed(r, now);
  core_.pool.release(slot);
}

void Rerouting::reroute(uint32_t slot) {
  Request& r = core_.pool[slot];
  r.state = RequestState::Pipeline;
  r.drop_step();
  r.pd = PdStage::None;
  if (pd_ != nullptr) pd_->forget(slot);
  ++rerouted_;
  schedule(core_.kernel, core_.kernel.now() + core_.cfg.routing_latency, EventKind::Routing, 0, slot);
}

void Rerouting::reject(uint32_t slot, std::string_view reason) {
  Request& r = core_.pool[slot];
  const int32_t slo = r.spec.slo_class;  // read before the signal: it may release nothing, but be safe
  core_.signals.rejected(r, reason);
  ++unroutable_;
  ++unroutable_by_class_[slo];
  core_.pool.release(slot);
}

}  // namespace blis
