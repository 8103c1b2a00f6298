#include "cluster/routing.hpp"

#include <algorithm>

namespace blis {

Routing::Routing(const ClusterCore& core, const std::vector<InstanceRecord>& slots, ClusterPolicies policies)
    : core_(core), slots_(slots), policies_(std::move(policies)),
      routed_once_(!core.cfg.pd.enabled() && core.cfg.events.empty() && core.cfg.code == nullptr &&
                   !core.cfg.fleet.enabled()) {
  if (!policies_.router)
    policies_.router = std::make_unique<Router>(RoutingPolicy::RoundRobin, std::vector<WeightedScorer>{}, 0);
  const ClusterConfig& cfg = core.cfg;
  const size_t n = static_cast<size_t>(std::max(cfg.num_instances, 1));
  cached_.assign(n, blis_instance_snapshot{});
  for (size_t i = 0; i < n; ++i) {
    cached_[i].index = static_cast<int32_t>(i);
    cached_[i].pool = cfg.pool_of.empty() ? 0 : cfg.pool_of[i];
    cached_[i].tp = cfg.pool_tp.empty() ? cfg.tp : cfg.pool_tp[static_cast<size_t>(cached_[i].pool)];
  }
  last_refresh_.assign(n, 0);
  snapshot_changes_.assign(n, UINT64_MAX);
  lora_ = cfg.engine.lora && cfg.engine.lora->active();
  for (blis_instance_snapshot& c : cached_) c.adapter_resident = -1;
  if (lora_) resident_.resize(n);  // more as instances are added
  state_.resize(n);
  if (cfg.cache_query && cfg.cache_signal_delay > 0) cache_copies_.resize(n);
  if (!cfg.cache_query)  // no plugin asked for the cache signal
    for (blis_instance_snapshot& c : cached_) c.cached_blocks = -1;
  reads_ = run_reads();
}

// The policies' reads, unless something else may look: the gateway and P/D
// read the snapshots themselves, scenario events and code may change the
// policy (whose snapshots must then have been refreshed as always), and the
// cache signal and LoRA fill fields from the request.
uint32_t Routing::run_reads() const {
  const ClusterConfig& cfg = core_.cfg;
  if (cfg.gateway.enabled || cfg.pd.enabled() || !cfg.events.empty() || cfg.code != nullptr ||
      cfg.fleet.enabled() || cfg.cache_query || lora_)
    return kReadsAll;
  uint32_t reads = policies_.router->reads();
  if (policies_.admission) reads |= policies_.admission_reads;
  if (cfg.trace_decisions && cfg.counterfactual_k > 0) reads |= kReadsSnapshots;  // regret from the loads
  return reads;
}

// spec head §7.2: the delayed view starts as the caches at construction.
void Routing::start() {
  for (size_t i = 0; i < cache_copies_.size(); ++i) core_.instances[i]->copy_prefix_index(cache_copies_[i]);
}

// The instances as the router sees them now (spec cluster §4.2): periodic
// refresh of instance-reported signals, live in-flight counts.
const blis_route_input& Routing::state(uint32_t slot) {
  const SimTime now = core_.kernel.now();
  if ((reads_ & kReadsSnapshots) != 0)
    snapshots(now);
  else
    indexes();
  const blis_request_view* request = nullptr;
  if ((reads_ & kReadsRequest) != 0) {
    RequestPool& pool = core_.pool;
    view_ = request_view(pool[slot], core_.cfg.engine.block_size, pool);
    if (routed_once_)
      view_.own_blocks = std::max<int64_t>(view_.num_blocks - pool[slot].spec.shareable_blocks, 0);
    fill_cached_blocks(now);
    if (lora_) fill_adapter_resident(pool[slot].spec.adapter);
    request = &view_;
  }
  input_ = blis_route_input{
      sizeof(blis_route_input), sizeof(blis_instance_snapshot), now, request, state_.data(), routable_count_};
  return input_;
}

// No policy reads the snapshots (round-robin, say): which instances take
// traffic is all a decision needs. Only the fleet, scenario events and code
// change that, and with those every decision reads everything (run_reads):
// the indexes are taken once.
void Routing::indexes() {
  if (indexed_) return;
  indexed_ = true;
  size_t k = 0;
  for (size_t i = 0; i < core_.instances.size(); ++i)
    if (slots_[i].routable) state_[k++].index = static_cast<int32_t>(i);
  routable_count_ = static_cast<int64_t>(k);
}

// The gateway's view (cluster/gateway.cpp): the snapshots without a
// request; the delayed cache view is re-taken when due, as at every look.
const blis_route_input& Routing::gate_state() {
  const SimTime now = core_.kernel.now();
  snapshots(now);
  if (core_.cfg.cache_query && core_.cfg.cache_signal_delay > 0 &&
      now - last_cache_refresh_ >= core_.cfg.cache_signal_delay) {
    for (size_t i = 0; i < core_.instances.size(); ++i) core_.instances[i]->copy_prefix_index(cache_copies_[i]);
    last_cache_refresh_ = now;
  }
  gate_input_ = blis_route_input{sizeof(blis_route_input), sizeof(blis_instance_snapshot), now, nullptr,
                                 state_.data(), routable_count_};
  return gate_input_;
}

void Routing::snapshots(SimTime now) {
  const SimTime interval = core_.cfg.snapshot_refresh_interval;
  const std::vector<std::unique_ptr<Instance>>& instances = core_.instances;
  size_t k = 0;  // instances that take traffic: all of them unless scenario events removed some
  for (size_t i = 0; i < instances.size(); ++i) {
    if (interval == 0 || now - last_refresh_[i] >= interval) {
      last_refresh_[i] = now;
      const Instance& inst = *instances[i];
      if (inst.changes() != snapshot_changes_[i]) {  // else the snapshot is the same
        snapshot_changes_[i] = inst.changes();
        blis_instance_snapshot& c = cached_[i];
        c.queue_depth = inst.queue_depth();
        c.batch_size = inst.batch_size();
        c.total_kv_blocks = inst.kv().total_blocks();
        c.free_kv_blocks = inst.kv().free_blocks();
        c.kv_utilization = static_cast<double>(inst.kv().used_blocks()) /
                           static_cast<double>(inst.kv().total_blocks());
        c.cache_hit_rate = inst.kv().hit_rate();
        if (lora_ && inst.lora() != nullptr) {
          if (resident_.size() <= i) resident_.resize(i + 1);
          resident_[i] = inst.lora()->resident_ids();
        }
      }
    }
    if (!slots_[i].routable) continue;
    state_[k] = cached_[i];
    state_[k].in_flight = static_cast<int32_t>(core_.in_flight[i]);
    ++k;
  }
  routable_count_ = static_cast<int64_t>(k);
}

// spec head §7.2: each instance's cached leading blocks of the request, from
// the live caches (delay 0) or from copies re-taken, all together, once the
// last ones are `cache_signal_delay` old.
void Routing::fill_cached_blocks(SimTime now) {
  const size_t count = static_cast<size_t>(routable_count_);
  if (!core_.cfg.cache_query) return;  // the snapshots hold -1 (the constructor)
  const uint64_t* hashes = view_.block_hashes;
  const int64_t n = hashes == nullptr ? 0 : view_.num_blocks;
  if (core_.cfg.cache_signal_delay == 0) {
    for (size_t k = 0; k < count; ++k)
      state_[k].cached_blocks = core_.instances[static_cast<size_t>(state_[k].index)]->cached_prefix_length(hashes, n);
    return;
  }
  if (now - last_cache_refresh_ >= core_.cfg.cache_signal_delay) {
    for (size_t i = 0; i < core_.instances.size(); ++i) core_.instances[i]->copy_prefix_index(cache_copies_[i]);
    last_cache_refresh_ = now;
  }
  for (size_t k = 0; k < count; ++k)
    state_[k].cached_blocks = cache_copies_[static_cast<size_t>(state_[k].index)].cached_prefix(hashes, n);
}

void Routing::fill_adapter_resident(const Label& adapter) {
  for (size_t k = 0; k < static_cast<size_t>(routable_count_); ++k) {
    const auto i = static_cast<size_t>(state_[k].index);
    bool warm = false;
    if (!adapter.empty() && i < resident_.size())
      warm = std::find(resident_[i].begin(), resident_[i].end(), adapter) != resident_[i].end();
    state_[k].adapter_resident = warm ? 1 : 0;
  }
}

// The routable instances with `role`, as the router sees them.
const blis_route_input& Routing::state_of_role(uint32_t slot, uint8_t role) {
  state(slot);
  size_t k = 0;
  for (size_t j = 0; j < static_cast<size_t>(routable_count_); ++j)
    if (core_.cfg.pd.roles[static_cast<size_t>(state_[j].index)] & role) state_[k++] = state_[j];
  routable_count_ = static_cast<int64_t>(k);
  input_.count = routable_count_;
  return input_;
}

bool Routing::any_routable(uint8_t role) const {
  for (size_t i = 0; i < core_.instances.size(); ++i)
    if (slots_[i].routable && (core_.cfg.pd.roles[i] & role)) return true;
  return false;
}

int64_t Routing::routable_count(uint8_t role) const {
  int64_t n = 0;
  for (size_t i = 0; i < core_.instances.size(); ++i)
    if (slots_[i].routable && (core_.cfg.pd.roles[i] & role)) ++n;
  return n;
}

bool Routing::admit(uint32_t slot, std::string& reason) {
  if (!policies_.admission) return true;
  return policies_.admission->admit(state(slot), reason);
}

bool Routing::has_scorer(const std::string& name) const {
  return policies_.router->has_scorer(name) || (policies_.prefill_router && policies_.prefill_router->has_scorer(name)) ||
         (policies_.decode_router && policies_.decode_router->has_scorer(name));
}

void Routing::set_weight(const std::string& name, double weight) {
  for (Router* router : {policies_.router.get(), policies_.prefill_router.get(), policies_.decode_router.get()})
    if (router != nullptr) router->set_weight(name, weight);
}

void Routing::set_policy(RoutingPolicy policy) {
  for (Router* router : {policies_.router.get(), policies_.prefill_router.get(), policies_.decode_router.get()})
    if (router != nullptr) router->set_policy(policy);
}

}  // namespace blis
