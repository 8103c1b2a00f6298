#include "cluster/gateway.hpp"

#include "kernel/events.hpp"

#include <algorithm>
#include <limits>

namespace blis {

Gateway::Gateway(const ClusterCore& core, Routing& routing)
    : core_(core), routing_(routing), cfg_(core.cfg.gateway) {}

// HEAD's detectors: utilization is the mean over instances of the larger of
// queue depth / its threshold and KV use / its threshold; concurrency the
// requests in flight over what the instances may hold. No instance: 1.
double Gateway::saturation(const GatewayConfig& cfg, const blis_route_input& in) {
  if (cfg.detector == GatewayConfig::Detector::Never) return 0;
  if (in.count == 0) return 1;
  const auto* snap = in.instances;
  if (cfg.detector == GatewayConfig::Detector::Utilization) {
    double sum = 0;
    for (int64_t k = 0; k < in.count; ++k) {
      const double q = static_cast<double>(snap[k].queue_depth) / cfg.queue_depth_threshold;
      const double kv = snap[k].kv_utilization / cfg.kv_util_threshold;
      sum += std::max(q, kv);
    }
    return sum / static_cast<double>(in.count);
  }
  int64_t in_flight = 0;
  for (int64_t k = 0; k < in.count; ++k) in_flight += snap[k].in_flight;
  return static_cast<double>(in_flight) / static_cast<double>(in.count * cfg.max_concurrency);
}

Gateway::Band* Gateway::find_band(int priority) {
  for (Band& b : bands_)
    if (b.priority == priority) return &b;
  return nullptr;
}

Gateway::Band& Gateway::band_of(int priority) {
  auto at = std::find_if(bands_.begin(), bands_.end(), [&](const Band& b) { return b.priority <= priority; });
  if (at != bands_.end() && at->priority == priority) return *at;
  Band b;
  b.priority = priority;
  return *bands_.insert(at, std::move(b));
}

void Gateway::enqueue(uint32_t slot) {
  Request& r = core_.pool[slot];
  const int priority = core_.cfg.slo_priorities.priority(r.spec.slo_class);
  const int64_t seq = ++seq_;
  const std::string& tenant = r.spec.tenant_id.empty() ? std::string("default") : r.spec.tenant_id.str();
  Band& band = band_of(priority);  // made even when the request is refused (HEAD)
  auto refuse = [&] {
    ++counts_.rejected;
    core_.pool.release(slot);
  };
  if (cfg_.per_band_capacity > 0 && band.len >= cfg_.per_band_capacity) return refuse();
  if (cfg_.max_depth > 0 && len_ >= cfg_.max_depth && !(cfg_.shedding && shed_for(priority, seq)))
    return refuse();
  const SimTime now = core_.kernel.now();
  // The request's own target (a client's slo_target_us), else its class's.
  const int64_t target =
      r.spec.slo_target_us > 0 ? r.spec.slo_target_us : cfg_.slo_target_us[static_cast<size_t>(r.spec.slo_class)];
  Band& b = band;  // still valid: bands are never erased
  b.flows[tenant].push_back(
      Entry{slot, seq, r.spec.id, target > 0 ? now + target : std::numeric_limits<int64_t>::max(), r.spec.slo_class});
  ++b.len;
  ++len_;
  where_[r.spec.id] = Where{priority, tenant};
  if (cfg_.ttl > 0) schedule(core_.kernel, now + cfg_.ttl, EventKind::GatewayExpiry, 0, r.spec.id);
  try_dispatch();
}

// --queue-shedding: the least urgent sheddable request queued (the latest of
// them on a tie) leaves for a more urgent one.
bool Gateway::shed_for(int priority, int64_t seq) {
  Band* vb = nullptr;
  std::map<std::string, Flow>::iterator vf;
  size_t vi = 0;
  const Entry* best = nullptr;
  int best_pri = 0;
  for (Band& b : bands_)
    for (auto f = b.flows.begin(); f != b.flows.end(); ++f)
      for (size_t i = 0; i < f->second.size(); ++i) {
        const Entry& e = f->second[i];
        const int p = core_.cfg.slo_priorities.priority(e.slo_class);
        if (p >= 0) continue;
        if (best == nullptr || p < best_pri || (p == best_pri && e.seq > best->seq)) {
          best = &e, best_pri = p, vb = &b, vf = f, vi = i;
        }
      }
  if (best == nullptr || !(priority > best_pri || (priority == best_pri && seq < best->seq))) return false;
  const Entry victim = take_from(*vb, vf, vi);
  ++counts_.shed;
  drop(victim);
  return true;
}

void Gateway::drop(const Entry& e) {
  ++dropped_by_class_[e.slo_class];
  core_.pool.release(e.slot);
}

Gateway::Entry Gateway::take_from(Band& band, std::map<std::string, Flow>::iterator flow, size_t at) {
  Entry e = flow->second[at];
  flow->second.erase(flow->second.begin() + static_cast<std::ptrdiff_t>(at));
  if (flow->second.empty()) band.flows.erase(flow);
  --band.len;
  --len_;
  where_.erase(e.id);
  return e;
}

// The band's flow to serve next: global-strict, the flow whose head came
// first; round-robin, the tenant after the last one picked (in name order).
std::map<std::string, Gateway::Flow>::iterator Gateway::pick(Band& band) {
  if (!cfg_.round_robin) {
    auto best = band.flows.end();
    for (auto f = band.flows.begin(); f != band.flows.end(); ++f)
      if (best == band.flows.end() || f->second.front().seq < best->second.front().seq) best = f;
    return best;
  }
  auto f = band.flows.begin();
  if (!band.cursor.empty()) {
    auto last = band.flows.find(band.cursor);
    if (last != band.flows.end()) {
      f = std::next(last);
      if (f == band.flows.end()) f = band.flows.begin();
    }
  }
  band.cursor = f->first;
  return f;
}

// HEAD's gated dispatch: bands from the most urgent; band i (of n) may send
// while the saturation is below its ceiling, 1 for the first, falling
// linearly to --usage-limit-threshold for the last; the first band over its
// ceiling stops the search. fifo takes the earliest request of the bands
// allowed; priority and slo-deadline the first non-empty band's, from the
// flow its fairness policy picks: its head, or its earliest deadline.
bool Gateway::take(double sat, Entry& out) {
  const size_t n = bands_.size();
  const bool fifo = cfg_.order == GatewayConfig::Order::Fifo;
  Band* fifo_band = nullptr;
  std::map<std::string, Flow>::iterator fifo_flow;
  for (size_t i = 0; i < n; ++i) {
    Band& band = bands_[i];
    const double ceiling =
        n > 1 ? 1.0 - static_cast<double>(i) * (1.0 - cfg_.usage_limit) / static_cast<double>(n - 1) : 1.0;
    if (sat >= ceiling) break;
    if (band.len == 0) continue;
    if (fifo) {
      for (auto f = band.flows.begin(); f != band.flows.end(); ++f)
        if (fifo_band == nullptr || f->second.front().seq < fifo_flow->second.front().seq)
          fifo_band = &band, fifo_flow = f;
      continue;
    }
    auto flow = pick(band);
    size_t at = 0;
    if (cfg_.order == GatewayConfig::Order::SloDeadline) {
      const Flow& q = flow->second;
      for (size_t k = 1; k < q.size(); ++k)
        if (q[k].deadline < q[at].deadline || (q[k].deadline == q[at].deadline && q[k].seq < q[at].seq)) at = k;
    }
    out = take_from(band, flow, at);
    return true;
  }
  if (fifo_band == nullptr) return false;
  out = take_from(*fifo_band, fifo_flow, 0);
  return true;
}

// One dispatch, if the detector lets one through (HEAD's tryDispatch): the
// tick starts with the first attempt on a non-empty queue.
bool Gateway::try_dispatch() {
  if (len_ == 0) return false;
  const SimTime now = core_.kernel.now();
  if (!tick_pending_) {
    tick_pending_ = true;
    schedule(core_.kernel, now + cfg_.tick, EventKind::GatewayTick);
  }
  const double sat = saturation(cfg_, routing_.gate_state());
  // --in-flight-eviction: saturated with a non-sheddable request waiting,
  // one routed sheddable request is evicted instead of a dispatch.
  if (cfg_.eviction && sat >= 1.0 && non_sheddable_waiting() && evict_one()) return false;
  Entry e{};
  if (!take(sat, e)) return false;
  schedule(core_.kernel, now + core_.cfg.routing_latency, EventKind::Routing, 0, e.slot);
  return true;
}

bool Gateway::non_sheddable_waiting() const {
  for (const Band& b : bands_)
    if (b.priority >= 0 && b.len > 0) return true;
  return false;
}

void Gateway::routed(uint32_t slot) {
  const Request& r = core_.pool[slot];
  const int priority = core_.cfg.slo_priorities.priority(r.spec.slo_class);
  if (priority >= 0) return;
  routed_.push_back(Routed{slot, r.incarnation, r.instance, priority,
                           core_.kernel.now() - core_.cfg.routing_latency});
}

// HEAD's choice: the least urgent, among those the latest dispatched (the
// latest routed on a tie). Its event comes at once, after this time's
// routing decisions.
bool Gateway::evict_one() {
  size_t best = routed_.size();
  size_t live = 0;
  for (size_t k = 0; k < routed_.size(); ++k) {
    const Routed& t = routed_[k];
    const Request& r = core_.pool[t.slot];
    if (r.incarnation != t.incarnation || r.instance != t.instance ||
        (r.state != RequestState::Routed && r.state != RequestState::Queued && r.state != RequestState::Running))
      continue;  // left meanwhile
    routed_[live] = t;
    if (best == routed_.size() || t.priority < routed_[best].priority ||
        (t.priority == routed_[best].priority && t.dispatched >= routed_[best].dispatched))
      best = live;
    ++live;
  }
  routed_.resize(live);
  if (best >= live) return false;
  const Routed t = routed_[best];
  routed_.erase(routed_.begin() + static_cast<std::ptrdiff_t>(best));
  schedule(core_.kernel, core_.kernel.now(), EventKind::GatewayEviction, 0,
           (uint64_t{t.incarnation} << 32) | t.slot);
  return true;
}

int32_t Gateway::on_eviction(uint64_t payload) {
  const auto slot = static_cast<uint32_t>(payload);
  Request& r = core_.pool[slot];
  if (r.incarnation != static_cast<uint32_t>(payload >> 32) || r.instance < 0) return -1;
  const int32_t instance = r.instance;
  const int32_t slo = r.spec.slo_class;
  if (!core_.instances[static_cast<size_t>(instance)]->evict_one(slot)) return -1;
  ++counts_.evicted;
  ++dropped_by_class_[slo];
  return instance;
}

void Gateway::on_tick() {
  if (len_ > 0) try_dispatch();
  if (len_ > 0)
    schedule(core_.kernel, core_.kernel.now() + cfg_.tick, EventKind::GatewayTick);
  else
    tick_pending_ = false;
}

void Gateway::on_expiry(uint64_t id) {
  auto w = where_.find(id);
  if (w == where_.end()) return;  // dispatched or shed meanwhile
  Band* band = find_band(w->second.priority);
  auto flow = band->flows.find(w->second.tenant);
  Flow& q = flow->second;
  size_t at = 0;
  while (q[at].id != id) ++at;
  const Entry e = take_from(*band, flow, at);
  ++counts_.expired;
  drop(e);
}

GatewayCounts Gateway::finish() {
  counts_.depth = len_;
  for (Band& b : bands_)
    for (auto& [tenant, q] : b.flows)
      for (const Entry& e : q) core_.pool.release(e.slot);
  bands_.clear();
  where_.clear();
  len_ = 0;
  return counts_;
}

}  // namespace blis
