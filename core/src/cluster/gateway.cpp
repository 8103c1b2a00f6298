#include "cluster/gateway.hpp"

#include "kernel/events.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace blis {

namespace {

template <class T>
T& required(const std::shared_ptr<T>& policy, const char* what) {
  if (!policy) throw RuntimeError(std::string("flow control without a ") + what);
  return *policy;
}

}  // namespace

Gateway::Gateway(const ClusterCore& core, Routing& routing)
    : core_(core),
      routing_(routing),
      cfg_(core.cfg.gateway),
      detector_(required(core.cfg.gateway.detector, "saturation detector")),
      order_(required(core.cfg.gateway.order, "dispatch order")),
      fairness_(required(core.cfg.gateway.fairness, "fairness policy")),
      shedding_(core.cfg.gateway.shedding ? &required(core.cfg.gateway.shedding_policy, "shedding policy")
                                          : nullptr),
      across_(order_.across_bands()),
      band_capacity_(core.cfg.gateway.per_band_capacity),
      max_depth_(core.cfg.gateway.max_depth) {}

std::string Gateway::set_capacity(int64_t band_capacity, int64_t queue_depth) {
  if (band_capacity >= 0) band_capacity_ = band_capacity;
  if (queue_depth >= 0) max_depth_ = queue_depth;
  return fmt::format("{} queued at the gateway", len_);
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
  if (band_capacity_ > 0 && band.len >= band_capacity_) return refuse();
  if (max_depth_ > 0 && len_ >= max_depth_ && !(cfg_.shedding && shed_for(r, priority, seq))) return refuse();
  const SimTime now = core_.kernel.now();
  const double key = key_of(r, priority, now);
  Band& b = band;  // still valid: bands are never erased
  Flow& flow = b.flows[tenant];
  flow.sorted = flow.sorted && (flow.q.empty() || !(key < flow.q.back().key));
  flow.q.push_back(Entry{slot, r.spec.slo_class, seq, r.spec.id, key, now});
  ++b.len;
  ++len_;
  where_[r.spec.id] = Where{priority, tenant};
  if (cfg_.ttl > 0) schedule(core_.kernel, now + cfg_.ttl, EventKind::GatewayExpiry, 0, r.spec.id);
  try_dispatch();
}

double Gateway::key_of(const Request& r, int priority, SimTime now) {
  const blis_request_view view = request_view(r, core_.cfg.engine.block_size, core_.pool);
  return order_.key(blis_dispatch_input{sizeof(blis_dispatch_input), priority, now, &view, r.spec.slo_target_us});
}

// --queue-shedding: the shedding policy picks the queued request that
// leaves for the arriving one `r` (HEAD's lowest-priority: the least urgent
// sheddable one, the latest of them on a tie, if less urgent than `r`), or
// none. It sees every queued request, bands from the most urgent, tenants in
// name order, oldest first.
bool Gateway::shed_for(const Request& r, int priority, int64_t seq) {
  const auto block_size = core_.cfg.engine.block_size;
  views_.clear();
  queued_.clear();
  for (const Band& b : bands_)
    for (const auto& [tenant, flow] : b.flows)
      for (const Entry& e : flow.q) {
        views_.push_back(request_view_without_blocks(core_.pool[e.slot], block_size));
        queued_.push_back(blis_shedding_candidate{b.priority, 0, e.seq, tenant.c_str(), nullptr});
      }
  for (size_t k = 0; k < queued_.size(); ++k) queued_[k].request = &views_[k];
  const blis_request_view arriving = request_view(r, block_size, core_.pool);
  const int64_t at = shedding_->victim(
      blis_shedding_input{sizeof(blis_shedding_input), sizeof(blis_shedding_candidate), core_.kernel.now(),
                          priority, 0, seq, &arriving, queued_.data(), queued_.size()});
  if (at < 0) return false;
  // The victim by its place in the listing above.
  auto left = static_cast<size_t>(at);
  for (Band& b : bands_)
    for (auto f = b.flows.begin(); f != b.flows.end(); ++f) {
      if (left >= f->second.q.size()) {
        left -= f->second.q.size();
        continue;
      }
      const Entry victim = take_from(b, f, left);
      ++counts_.shed;
      drop(victim);
      return true;
    }
  return false;
}

void Gateway::drop(const Entry& e) {
  ++dropped_by_class_[e.slo_class];
  core_.pool.release(e.slot);
}

Gateway::Entry Gateway::take_from(Band& band, std::map<std::string, Flow>::iterator flow, size_t at) {
  std::deque<Entry>& q = flow->second.q;
  Entry e = q[at];
  q.erase(q.begin() + static_cast<std::ptrdiff_t>(at));
  if (q.empty()) band.flows.erase(flow);
  --band.len;
  --len_;
  where_.erase(e.id);
  return e;
}

// The band's flow to serve next, as the fairness policy picks it among the
// band's flows in tenant order (global-strict: the flow whose head came
// first; round-robin: the tenant after the one picked last). A band of one
// flow has no choice to make.
std::map<std::string, Gateway::Flow>::iterator Gateway::pick(Band& band) {
  if (band.flows.size() == 1) {
    band.cursor = band.flows.begin()->first;
    return band.flows.begin();
  }
  flows_.clear();
  heads_.clear();
  int32_t last = -1;
  for (const auto& [tenant, flow] : band.flows) {
    if (tenant == band.cursor) last = static_cast<int32_t>(flows_.size());
    heads_.push_back(
        request_view_without_blocks(core_.pool[flow.q.front().slot], core_.cfg.engine.block_size));
    flows_.push_back(
        blis_fairness_flow{tenant.c_str(), static_cast<int64_t>(flow.q.size()), flow.q.front().seq, nullptr});
  }
  for (size_t k = 0; k < flows_.size(); ++k) flows_[k].head = &heads_[k];
  const size_t at = fairness_.pick(blis_fairness_input{sizeof(blis_fairness_input),
                                                       sizeof(blis_fairness_flow), core_.kernel.now(),
                                                       band.priority, last, flows_.data(), flows_.size()});
  auto f = std::next(band.flows.begin(), static_cast<std::ptrdiff_t>(at));
  band.cursor = f->first;
  return f;
}

// The flow's request of the lowest key (the earliest on a tie).
size_t Gateway::lowest(const Flow& flow) {
  if (flow.sorted) return 0;
  size_t at = 0;
  for (size_t k = 1; k < flow.q.size(); ++k)
    if (flow.q[k].key < flow.q[at].key) at = k;
  return at;
}

// HEAD's gated dispatch: bands from the most urgent; band i (of n) may send
// while the saturation is below its ceiling, 1 for the first, falling
// linearly to --usage-limit-threshold for the last; the first band over its
// ceiling stops the search. An order by band (priority, slo-deadline) takes
// from the first non-empty band allowed, from the flow its fairness policy
// picks, the lowest key (the head for priority, the earliest deadline for
// slo-deadline); an order across bands (fifo) the lowest key of the bands
// allowed (with fifo's equal keys, the earliest arrival).
bool Gateway::take(double sat, Entry& out) {
  const size_t n = bands_.size();
  size_t allowed = 0;
  for (; allowed < n; ++allowed) {
    const double ceiling =
        n > 1 ? 1.0 - static_cast<double>(allowed) * (1.0 - cfg_.usage_limit) / static_cast<double>(n - 1) : 1.0;
    if (sat >= ceiling) break;
    if (across_) continue;
    Band& band = bands_[allowed];
    if (band.len == 0) continue;
    auto flow = pick(band);
    out = take_from(band, flow, lowest(flow->second));
    return true;
  }
  return across_ && take_across(allowed, out);
}

// The lowest key of the first `allowed` bands (the earliest on a tie).
bool Gateway::take_across(size_t allowed, Entry& out) {
  Band* best_band = nullptr;
  std::map<std::string, Flow>::iterator best_flow;
  const Entry* best = nullptr;
  size_t best_at = 0;
  for (size_t i = 0; i < allowed; ++i)
    for (auto f = bands_[i].flows.begin(); f != bands_[i].flows.end(); ++f) {
      const size_t at = lowest(f->second);
      const Entry& e = f->second.q[at];
      if (best == nullptr || e.key < best->key || (e.key == best->key && e.seq < best->seq))
        best = &e, best_band = &bands_[i], best_flow = f, best_at = at;
    }
  if (best == nullptr) return false;
  out = take_from(*best_band, best_flow, best_at);
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
  const double sat = detector_.saturation(routing_.gate_state());
  // --in-flight-eviction: saturated with a non-sheddable request waiting,
  // one routed sheddable request is evicted instead of a dispatch.
  if (cfg_.eviction && sat >= 1.0 && non_sheddable_waiting() && evict_one()) return false;
  Entry e{};
  if (!take(sat, e)) return false;
  core_.signals.dispatched(core_.pool[e.slot], e.enqueued, now);
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
  const std::deque<Entry>& q = flow->second.q;
  size_t at = 0;
  while (q[at].id != id) ++at;
  const Entry e = take_from(*band, flow, at);
  ++counts_.expired;
  drop(e);
}

GatewayCounts Gateway::finish() {
  counts_.depth = len_;
  for (Band& b : bands_)
    for (auto& [tenant, flow] : b.flows)
      for (const Entry& e : flow.q) core_.pool.release(e.slot);
  bands_.clear();
  where_.clear();
  len_ = 0;
  return counts_;
}

}  // namespace blis
