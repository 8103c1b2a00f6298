// The fleet (cluster/fleet.hpp, docs/autoscaling.md): instances added (after
// their provisioning and loading delays and on nodes), failed and removed
// (drained) by scenario events and by the autoscaler's loop
// (cluster/scaling_loop.cpp). All of it runs as kernel events.
#include "cluster/fleet.hpp"

#include "cluster/cluster.hpp"
#include "cluster/pd_flow.hpp"
#include "cluster/rerouting.hpp"
#include "cluster/routing.hpp"

#include "kernel/events.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace blis {

SimTime sample_delay(const DelaySpec& d, GoRand& rng) {
  double s = d.mean_s;
  if (d.stddev_s > 0) s = rng.norm_float64() * d.stddev_s + d.mean_s;
  if (!std::isfinite(s) || s < 0) s = 0;
  return static_cast<SimTime>(s * 1e6);
}

void Fleet::connect(Routing& routing, Rerouting& rerouting, PdFlow* pd) {
  routing_ = &routing;
  rerouting_ = &rerouting;
  pd_ = pd;
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
  out.nodes = std::move(nodes_);
  out.unplaced_waits = unplaced_waits_;
  out.unplaced_at_end = static_cast<int64_t>(unplaced_.size());
}

}  // namespace blis
