// The fleet (cluster/fleet.hpp, docs/autoscaling.md): instances added (after
// their provisioning and loading delays), failed and removed (drained) by
// scenario events and by the autoscaler's loop of spec head §6.3. All of it
// runs as kernel events.
#include "cluster/fleet.hpp"

#include "cluster/arrivals.hpp"
#include "cluster/cluster.hpp"
#include "cluster/pd_flow.hpp"
#include "cluster/rerouting.hpp"
#include "cluster/routing.hpp"

#include "kernel/events.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace blis {
namespace {

// spec head §6.1 delay sampling: the mean without a spread, else a normal
// draw around it, clamped at 0; whole microseconds.
SimTime sample_delay(const DelaySpec& d, GoRand& rng) {
  double s = d.mean_s;
  if (d.stddev_s > 0) s = rng.norm_float64() * d.stddev_s + d.mean_s;
  if (!std::isfinite(s) || s < 0) s = 0;
  return static_cast<SimTime>(s * 1e6);
}

}  // namespace

ScalingDecision decide_scaling(std::vector<VariantLoad> variants, double pending_supply, const AutoscalerConfig& a) {
  ScalingDecision d;
  // Cheapest first (cost, then pool order).
  std::stable_sort(variants.begin(), variants.end(),
                   [](const VariantLoad& x, const VariantLoad& y) { return x.cost_per_hour < y.cost_per_hour; });
  double supply = 0, demand = 0, max_supply = 0;
  int32_t count = 0;
  for (const VariantLoad& v : variants) {
    supply += v.supply, demand += v.demand, count += v.count;
    max_supply = std::max(max_supply, v.max_supply);
  }
  if (count == 0) return d;  // no instance to judge by: pending supply is not evaluated
  d.required = demand / a.scale_up_threshold - (supply + pending_supply);
  if (d.required > 0) {
    double each = 0;
    for (const VariantLoad& v : variants)
      if (v.count > 0 && v.supply > 0) {
        each = v.supply / v.count;
        break;
      }
    const int32_t n = each > 0 ? std::max(1, static_cast<int32_t>(std::ceil(d.required / each))) : 1;
    for (const VariantLoad& v : variants)
      if (v.room > 0) {
        d.pool = v.pool;
        d.delta = std::min(n, v.room);
        return d;
      }
    return d;
  }
  if (count <= 1) return d;
  d.spare = supply - demand / a.scale_down_boundary;
  if (d.spare <= 0 || supply - max_supply <= demand / a.scale_down_boundary) return d;
  for (auto v = variants.rbegin(); v != variants.rend(); ++v) {
    if (v->count == 0 || v->above_min <= 0) continue;
    const int32_t n = std::clamp(static_cast<int32_t>(std::floor(d.spare / (v->supply / v->count))), 1, v->count);
    d.pool = v->pool;
    // Never the group's last instance: with none left, no demand is seen
    // and the group could never scale up again (differences row 32).
    d.delta = -std::min({n, v->above_min, count - 1});
    return d;
  }
  return d;
}

Fleet::Fleet(const ClusterCore& core, TimeSeries& series)
    : core_(core), series_(series) {}

void Fleet::connect(Routing& routing, Rerouting& rerouting, PdFlow* pd, const Arrivals& arrivals) {
  routing_ = &routing;
  rerouting_ = &rerouting;
  pd_ = pd;
  arrivals_ = &arrivals;
}

void Fleet::setup(MetricsCollector& collector) {
  slots_.assign(core_.instances.size(), InstanceRecord{});
  if (!core_.cfg.fleet.enabled()) return;
  const size_t n = core_.instances.size();
  const FleetConfig& f = core_.cfg.fleet;
  for (size_t i = 0; i < n; ++i) {
    const PoolLifecycle& pl = f.pools[std::min(pool_of(i), f.pools.size() - 1)];
    if (pl.warm_up_requests > 0) warm_up_on_ = true;
    collector.set_warm_up_factor(i, pl.warm_up_ttft_factor);
  }
  for (size_t i = 0; i < n; ++i) {
    InstanceRecord& rec = slots_[i];
    if (i < f.absent.size() && f.absent[i]) {
      rec.life = Life::Absent;
      rec.routable = false;
      continue;
    }
    rec.open_span = static_cast<int64_t>(spans_.size());
    spans_.push_back(InstanceSpan{static_cast<int32_t>(i), static_cast<int32_t>(pool_of(i)), 0, -1});
    if (warm_up_on_) rec.warm_left = f.pools[pool_of(i)].warm_up_requests;
  }
  lifecycle_rng_ = std::make_unique<GoRand>(derive_seed(f.seed, "instance-lifecycle"));
  autoscaler_rng_ = std::make_unique<GoRand>(derive_seed(f.seed, "autoscaler"));
  setup_nodes();
  // Initial instances that load first (warm_start=false): billed from t=0,
  // taking traffic once loaded, in slot order of their draws.
  for (size_t i = 0; i < n; ++i) {
    InstanceRecord& rec = slots_[i];
    if (rec.life != Life::Active) continue;
    const PoolLifecycle& pl = f.pools[pool_of(i)];
    if (pl.warm_start) continue;
    const SimTime delay = sample_delay(pl.loading, *lifecycle_rng_);
    if (delay == 0) continue;
    rec.life = Life::Starting;
    rec.routable = false;
    schedule(core_.kernel, delay, EventKind::InstanceReady, 0, (static_cast<uint64_t>(rec.generation) << 32) | i);
  }
  if (f.autoscaler.enabled()) {
    // Scaling groups: the pools of one model (P/D: and one role), in pool order.
    for (size_t p = 0; p < f.pools.size(); ++p) {
      auto g = std::find_if(groups_.begin(), groups_.end(), [&](const ScalingGroup& x) {
        const PoolLifecycle& first = f.pools[static_cast<size_t>(x.pools.front())];
        return first.model == f.pools[p].model && first.pd_role == f.pools[p].pd_role;
      });
      if (g == groups_.end()) g = groups_.insert(groups_.end(), ScalingGroup{});
      g->pools.push_back(static_cast<int32_t>(p));
    }
    schedule(core_.kernel, f.autoscaler.interval, EventKind::ScalingTick);
  }
}

// Node pools (spec head §6.2): the initial nodes, ready at t=0, then the
// initial instances placed on them in slot order. An initial instance that
// finds no room asks for a node (it then starts once the node is ready and
// it has loaded) or, with its node pool at its maximum, waits for GPUs.
void Fleet::setup_nodes() {
  const FleetConfig& f = core_.cfg.fleet;
  if (f.node_pools.empty()) return;
  const size_t n = core_.instances.size();
  nodes_on_ = true;
  node_rng_ = std::make_unique<GoRand>(derive_seed(f.seed, "node-provisioning"));
  for (size_t np = 0; np < f.node_pools.size(); ++np)
    for (int32_t k = 0; k < f.node_pools[np].initial_nodes; ++k) {
      nodes_.push_back(NodeSpan{static_cast<int32_t>(np), 0, 0, -1});
      node_free_.push_back(f.node_pools[np].gpus_per_node);
    }
  for (size_t i = 0; i < n; ++i) {
    InstanceRecord& rec = slots_[i];
    if (rec.life != Life::Active || f.pools[pool_of(i)].node_pool < 0) continue;
    const bool placed = place(i);
    if (placed && !rec.awaits_node) continue;
    rec.life = Life::Starting;
    rec.routable = false;
    if (placed) continue;
    unplaced_.push_back(i);
    ++unplaced_waits_;
    warn_unplaced(i);
  }
}

// Puts instance i on the first node of its pool's node pool with TP free
// GPUs, ready nodes before those still provisioning; else asks for a node
// when the node pool is below its maximum. False: no room (it must wait).
bool Fleet::place(size_t i) {
  const PoolLifecycle& pl = core_.cfg.fleet.pools[pool_of(i)];
  if (pl.node_pool < 0) return true;
  const SimTime now = core_.kernel.now();
  int32_t chosen = -1;
  for (int pass = 0; pass < 2 && chosen < 0; ++pass)
    for (size_t k = 0; k < nodes_.size(); ++k) {
      const NodeSpan& node = nodes_[k];
      if (node.node_pool != pl.node_pool || node.end >= 0 || node_free_[k] < pl.tp) continue;
      if ((pass == 0) != (node.ready <= now)) continue;
      chosen = static_cast<int32_t>(k);
      break;
    }
  if (chosen < 0) chosen = provision_node(pl.node_pool);
  if (chosen < 0) return false;
  node_free_[static_cast<size_t>(chosen)] -= pl.tp;
  slots_[i].node = chosen;
  slots_[i].awaits_node = nodes_[static_cast<size_t>(chosen)].ready > now;
  return true;
}

// A new node of node pool np, ready after its provisioning delay; its index,
// or -1 at the node pool's maximum.
int32_t Fleet::provision_node(int32_t np) {
  const NodePoolConfig& c = core_.cfg.fleet.node_pools[static_cast<size_t>(np)];
  int32_t live = 0;
  for (const NodeSpan& node : nodes_) live += node.node_pool == np && node.end < 0;
  if (live >= c.max_nodes) return -1;
  const SimTime now = core_.kernel.now();
  const SimTime ready = now + sample_delay(c.provisioning, *node_rng_);
  const auto k = static_cast<int32_t>(nodes_.size());
  nodes_.push_back(NodeSpan{np, now, ready, -1});
  node_free_.push_back(c.gpus_per_node);
  if (ready > now) schedule(core_.kernel, ready, EventKind::NodeReady, 0, static_cast<uint64_t>(k));
  spdlog::info("node pool {}: node {} provisioned at {} µs, ready at {} µs", c.name, k, now, ready);
  return k;
}

void Fleet::warn_unplaced(size_t i) const {
  const PoolLifecycle& pl = core_.cfg.fleet.pools[pool_of(i)];
  const NodePoolConfig& c = core_.cfg.fleet.node_pools[static_cast<size_t>(pl.node_pool)];
  spdlog::warn(
      "at {} µs instance {} waits for {} free GPU(s): node pool {} has no room and is at its maximum of {} "
      "node(s)",
      core_.kernel.now(), i, pl.tp, c.name, c.max_nodes);
}

// Instance i is on a ready node: it loads, then takes traffic.
void Fleet::start_loading(size_t i) {
  slots_[i].awaits_node = false;
  const SimTime delay = sample_delay(core_.cfg.fleet.pools[pool_of(i)].loading, *lifecycle_rng_);
  if (delay == 0) {
    instance_ready(i);
    return;
  }
  schedule(core_.kernel, core_.kernel.now() + delay, EventKind::InstanceReady, 0,
           (static_cast<uint64_t>(slots_[i].generation) << 32) | i);
}

void Fleet::on_node_ready(uint64_t k) {
  if (nodes_[static_cast<size_t>(k)].end >= 0) return;  // released before it was ready
  for (size_t i = 0; i < slots_.size(); ++i) {
    const InstanceRecord& rec = slots_[i];
    if (rec.node == static_cast<int32_t>(k) && rec.awaits_node && rec.life == Life::Starting) start_loading(i);
  }
}

// Instance i has left (drained or cancelled): its GPUs are free again, the
// instances waiting for GPUs are placed in the order they asked, and the
// nodes left without instances are released, newest first, down to the node
// pool's minimum.
void Fleet::release_gpus(size_t i) {
  if (!nodes_on_) return;
  if (const auto u = std::find(unplaced_.begin(), unplaced_.end(), i); u != unplaced_.end())
    unplaced_.erase(u);
  InstanceRecord& rec = slots_[i];
  if (rec.node < 0) return;
  const auto node = static_cast<size_t>(rec.node);
  const int32_t np = nodes_[node].node_pool;
  node_free_[node] += core_.cfg.fleet.pools[pool_of(i)].tp;
  rec.node = -1;
  rec.awaits_node = false;
  std::vector<size_t> waiting;
  waiting.swap(unplaced_);
  for (size_t w : waiting) {
    if (!place(w)) {
      unplaced_.push_back(w);
      continue;
    }
    if (!slots_[w].awaits_node) start_loading(w);
  }
  const NodePoolConfig& c = core_.cfg.fleet.node_pools[static_cast<size_t>(np)];
  int32_t live = 0;
  for (const NodeSpan& node : nodes_) live += node.node_pool == np && node.end < 0;
  for (size_t k = nodes_.size(); k-- > 0 && live > c.min_nodes;) {
    NodeSpan& node = nodes_[k];
    if (node.node_pool != np || node.end >= 0 || node_free_[k] != c.gpus_per_node) continue;
    node.end = core_.kernel.now();
    --live;
    spdlog::info("node pool {}: node {} released at {} µs", c.name, k, node.end);
  }
}

// Live instances of pool p: taking traffic or on their way to it.
int32_t Fleet::live_instances(size_t p) const {
  int32_t n = 0;
  for (size_t i = 0; i < core_.instances.size(); ++i)
    if (pool_of(i) == p && (slots_[i].life == Life::Active || slots_[i].life == Life::Starting)) ++n;
  return n;
}

// Starts up to `count` instances of pool p in free slots; how many started.
int32_t Fleet::add(size_t p, int32_t count) {
  const SimTime now = core_.kernel.now();
  const PoolLifecycle& pl = core_.cfg.fleet.pools[p];
  int32_t started = 0;
  for (size_t i = 0; i < core_.instances.size() && started < count; ++i) {
    InstanceRecord& rec = slots_[i];
    if (pool_of(i) != p || rec.life != Life::Absent) continue;
    rec.life = Life::Starting;
    rec.routable = false;
    rec.down = false;
    any_down_ = std::any_of(slots_.begin(), slots_.end(), [](const InstanceRecord& s) { return s.down; });
    core_.instances[i]->set_slowdown(1.0);
    ++rec.generation;
    rec.open_span = static_cast<int64_t>(spans_.size());
    spans_.push_back(InstanceSpan{static_cast<int32_t>(i), static_cast<int32_t>(p), now, -1});
    ++started;
    if (pl.node_pool >= 0) {  // its node's provisioning delay, not its own
      if (!place(i)) {
        unplaced_.push_back(i);
        ++unplaced_waits_;
        warn_unplaced(i);
      } else if (!rec.awaits_node) {
        start_loading(i);
      }
      continue;
    }
    const SimTime delay =
        sample_delay(pl.provisioning, *lifecycle_rng_) + sample_delay(pl.loading, *lifecycle_rng_);
    if (delay == 0) {
      instance_ready(i);
      continue;
    }
    schedule(core_.kernel, now + delay, EventKind::InstanceReady, 0, (static_cast<uint64_t>(rec.generation) << 32) | i);
  }
  return started;
}

void Fleet::on_instance_ready(uint64_t payload) {
  const size_t i = static_cast<size_t>(payload & 0xffffffffu);
  const InstanceRecord& rec = slots_[i];
  if (rec.life != Life::Starting || rec.generation != static_cast<uint32_t>(payload >> 32)) return;  // cancelled
  instance_ready(i);
}

void Fleet::instance_ready(size_t i) {
  InstanceRecord& rec = slots_[i];
  rec.life = Life::Active;
  if (warm_up_on_) rec.warm_left = core_.cfg.fleet.pools[pool_of(i)].warm_up_requests;
  rec.routable = true;
  routing_->refresh_next(i);
}

// Removes up to `count` instances of pool p, the lowest-indexed (oldest)
// active ones first; how many.
int32_t Fleet::remove(size_t p, int32_t count, DrainMode mode) {
  int32_t removed = 0;
  for (size_t i = 0; i < core_.instances.size() && removed < count; ++i) {
    if (pool_of(i) != p || slots_[i].life != Life::Active) continue;
    remove_instance(i, mode);
    ++removed;
  }
  return removed;
}

void Fleet::remove_instance(size_t i, DrainMode mode) {
  InstanceRecord& rec = slots_[i];
  if (rec.life == Life::Starting) {  // not there yet: cancelled
    close_span(i);
    rec.life = Life::Absent;
    release_gpus(i);
    return;
  }
  rec.life = Life::Draining;
  rec.routable = false;
  ++draining_;
  if (mode != DrainMode::Wait) {
    evicted_.clear();
    if (mode == DrainMode::Redirect)
      core_.instances[i]->evict_waiting(evicted_);
    else
      core_.instances[i]->evict(evicted_);
    for (uint32_t slot : evicted_) rerouting_->lose(slot, true);
    if (pd_ != nullptr) pd_->abandon(i, true);
  }
  check_drained(i);
}

void Fleet::close_span(size_t i) {
  InstanceRecord& rec = slots_[i];
  if (rec.open_span < 0) return;
  spans_[static_cast<size_t>(rec.open_span)].end = core_.kernel.now();
  rec.open_span = -1;
}

// A draining instance leaves once nothing routed to it remains.
void Fleet::check_drained(size_t i) {
  InstanceRecord& rec = slots_[i];
  if (rec.life != Life::Draining || core_.in_flight[i] != 0) return;
  rec.life = Life::Absent;
  --draining_;
  close_span(i);
  release_gpus(i);
}

// spec head §6.3, one tick: collect, analyze, optimize per scaling group,
// stabilise, then actuate (now, or after the actuation delay).
void Fleet::scaling_tick() {
  const SimTime now = core_.kernel.now();
  // The loop stops when nothing else can happen before an unbounded horizon:
  // the run is over, there is nothing to scale for.
  if (core_.kernel.horizon() == kForever && core_.kernel.queue().empty() && arrivals_->done()) return;
  for (size_t g = 0; g < groups_.size(); ++g) scale_group(g, now);
  // The loop stops when nothing else can happen before an unbounded horizon.
  if (core_.kernel.horizon() == kForever && core_.kernel.queue().empty() && arrivals_->done()) return;
  schedule(core_.kernel, now + core_.cfg.fleet.autoscaler.interval, EventKind::ScalingTick);
}

std::vector<VariantLoad> Fleet::group_load(size_t group, double& pending_capacity) const {
  const AutoscalerConfig& a = core_.cfg.fleet.autoscaler;
  const double block = static_cast<double>(core_.cfg.engine.block_size);
  std::vector<VariantLoad> variants;
  for (int32_t p : groups_[group].pools) {
    const PoolLifecycle& pl = core_.cfg.fleet.pools[static_cast<size_t>(p)];
    VariantLoad v;
    v.pool = p;
    v.cost_per_hour = pl.cost_per_hour;
    v.room = pl.max - live_instances(static_cast<size_t>(p));
    variants.push_back(v);
  }
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    auto v = std::find_if(variants.begin(), variants.end(),
                          [&](const VariantLoad& x) { return static_cast<size_t>(x.pool) == pool_of(i); });
    if (v == variants.end()) continue;
    const Instance& inst = *core_.instances[i];
    const double capacity = static_cast<double>(inst.kv().total_blocks()) * block;
    const InstanceRecord& rec = slots_[i];
    if (rec.life == Life::Starting) {
      pending_capacity += capacity;
      continue;
    }
    if (rec.life != Life::Active || !rec.routable || capacity <= 0) continue;
    const double supply = capacity * a.kv_cache_threshold;
    v->supply += supply;
    v->demand += static_cast<double>(inst.kv().used_blocks()) * block +
                 static_cast<double>(inst.queue_depth()) * a.avg_input_tokens;
    v->max_supply = std::max(v->max_supply, supply);
    v->queue_depth += inst.queue_depth();
    v->in_flight += core_.in_flight[i];
    ++v->count;
  }
  for (VariantLoad& v : variants) v.above_min = v.count - core_.cfg.fleet.pools[static_cast<size_t>(v.pool)].min;
  return variants;
}

void Fleet::scale_group(size_t group, SimTime now) {
  const AutoscalerConfig& a = core_.cfg.fleet.autoscaler;
  ScalingGroup& g = groups_[group];
  double pending_capacity = 0;
  const std::vector<VariantLoad> variants = group_load(group, pending_capacity);
  const double pending_supply = pending_capacity * a.kv_cache_threshold;
  int32_t pool = -1, delta = 0;
  std::string why;
  double demand = 0;
  for (const VariantLoad& v : variants) demand += v.demand;
  if (a.rule) {
    std::tie(pool, delta) = ask_rule(variants, pending_supply);
    if (delta != 0) why = fmt::format("{} with KV demand {:.0f} tokens", a.policy, demand);
  } else {
    const ScalingDecision d = decide_scaling(variants, pending_supply, a);
    pool = d.pool, delta = d.delta;
    if (delta > 0) why = fmt::format("KV demand {:.0f} tokens needs {:.0f} more", demand, d.required);
    if (delta < 0) why = fmt::format("KV demand {:.0f} tokens leaves {:.0f} spare", demand, d.spare);
  }
  // Stabilisation (spec head §6.3 step 4).
  SimTime& since = delta > 0 ? g.up_since : g.down_since;
  (delta > 0 ? g.down_since : g.up_since) = -1;
  if (delta == 0) {
    g.up_since = g.down_since = -1;
    return;
  }
  const SimTime window = delta > 0 ? a.up_window : a.down_window;
  if (since < 0) since = now;
  if (now - since < window) return;
  since = -1;
  decisions_.push_back(ScalingAction{now, pool, delta, why});
  const SimTime delay = sample_delay(a.actuation, *autoscaler_rng_);
  if (delay == 0)
    actuate(decisions_.size() - 1);
  else
    schedule(core_.kernel, now + delay, EventKind::ScaleActuation, 0, decisions_.size() - 1);
}

// A registered autoscaler's decision over the group's pools (cheapest
// first), held to the pools' limits; PluginError on a pool outside the group.
std::pair<int32_t, int32_t> Fleet::ask_rule(std::vector<VariantLoad> variants, double pending_supply) {
  std::stable_sort(variants.begin(), variants.end(),
                   [](const VariantLoad& x, const VariantLoad& y) { return x.cost_per_hour < y.cost_per_hour; });
  std::vector<blis_scaling_variant> in;
  in.reserve(variants.size());
  for (const VariantLoad& v : variants)
    in.push_back(blis_scaling_variant{v.pool, v.count, v.room, v.above_min, v.cost_per_hour, v.supply, v.demand,
                                      v.max_supply, v.queue_depth, v.in_flight});
  const blis_scaling_input input{sizeof(blis_scaling_input), sizeof(blis_scaling_variant), core_.kernel.now(),
                                 pending_supply, in.data(), static_cast<int64_t>(in.size())};
  const AutoscalerConfig& a = core_.cfg.fleet.autoscaler;
  const blis_scaling_decision d = a.rule->decide(input);
  if (d.delta == 0) return {-1, 0};
  const auto v = std::find_if(variants.begin(), variants.end(), [&](const VariantLoad& x) { return x.pool == d.pool; });
  if (v == variants.end())
    throw PluginError(a.policy, fmt::format("autoscaler '{}' returned pool {} at {} µs, which is not one of the "
                                            "pools it was given",
                                            a.policy, d.pool, core_.kernel.now()));
  int32_t active = 0;
  for (const VariantLoad& x : variants) active += x.count;
  const int32_t delta = d.delta > 0 ? std::clamp(d.delta, 0, std::max(v->room, 0))
                                    : -std::clamp(-d.delta, 0, std::max(std::min(v->above_min, active - 1), 0));
  if (delta == 0) return {-1, 0};
  return {d.pool, delta};
}

void Fleet::actuate(size_t k) {
  ScalingAction& d = decisions_[k];
  const size_t p = static_cast<size_t>(d.pool);
  const int32_t want = d.delta;
  if (want > 0) {
    const int32_t room = core_.cfg.fleet.pools[p].max - live_instances(p);
    d.delta = add(p, std::min(want, std::max(room, 0)));
  } else {
    d.delta = -remove(p, -want, DrainMode::Wait);
  }
  if (d.delta != want) d.why += fmt::format("; {} of {} possible", std::abs(d.delta), std::abs(want));
  d.time = core_.kernel.now();
  applied_.push_back(d);
  series_.scenario_event();
  spdlog::info("autoscaler at {} µs: pool {} {:+d} ({})", d.time, d.pool, d.delta, d.why);
}

// A `fail` event: instance i's requests are lost, re-routed or failed.
std::string Fleet::fail(size_t i, bool reroute) {
  InstanceRecord& rec = slots_[i];
  if (rec.down) return "already failed";
  rec.down = true;
  rec.down_reroutes = reroute;
  rec.routable = false;
  any_down_ = true;
  evicted_.clear();
  core_.instances[i]->evict(evicted_);
  const int64_t before = rerouting_->rerouted();
  for (uint32_t slot : evicted_) rerouting_->lose(slot, reroute);
  int64_t lost = static_cast<int64_t>(evicted_.size());
  if (pd_ != nullptr) {  // P/D: the transfers from or to it, too
    const int64_t in_transfer = pd_->abandon(i, reroute);
    lost += in_transfer;
  }
  const int64_t moved = rerouting_->rerouted() - before;
  return fmt::format("{} request(s) re-routed, {} failed", moved, lost - moved);
}

std::string Fleet::drain(size_t i) {
  slots_[i].routable = false;
  return fmt::format("{} queued and {} running finish there", core_.instances[i]->queue_depth(),
                     core_.instances[i]->batch_size());
}

std::string Fleet::restore(size_t i) {
  InstanceRecord& rec = slots_[i];
  if (rec.life != Life::Active) return "not in service: removed or not started";
  rec.routable = true;
  rec.down = false;
  any_down_ = std::any_of(slots_.begin(), slots_.end(), [](const InstanceRecord& s) { return s.down; });
  return "";
}

bool Fleet::remove_one(size_t i, DrainMode mode) {
  if (slots_[i].life != Life::Active && slots_[i].life != Life::Starting) return false;
  remove_instance(i, mode);
  return true;
}

void Fleet::report(ClusterResult& out) {
  out.spans = std::move(spans_);
  out.scaling = std::move(applied_);
  out.nodes = std::move(nodes_);
  out.unplaced_waits = unplaced_waits_;
  out.unplaced_at_end = static_cast<int64_t>(unplaced_.size());
}

}  // namespace blis
