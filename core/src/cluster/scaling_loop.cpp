#include "cluster/scaling_loop.hpp"

#include "cluster/arrivals.hpp"
#include "cluster/fleet.hpp"
#include "kernel/events.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace blis {

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

void ScalingLoop::setup() {
  const FleetConfig& f = core_.cfg.fleet;
  if (!f.enabled()) return;
  rng_ = std::make_unique<GoRand>(derive_seed(f.seed, "autoscaler"));
  if (!f.autoscaler.enabled()) return;
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

// spec head §6.3, one tick: collect, analyze, optimize per scaling group,
// stabilise, then actuate (now, or after the actuation delay).
void ScalingLoop::tick() {
  const SimTime now = core_.kernel.now();
  // The loop stops when nothing else can happen before an unbounded horizon:
  // the run is over, there is nothing to scale for.
  if (core_.kernel.horizon() == kForever && core_.kernel.queue().empty() && arrivals_.done()) return;
  for (size_t g = 0; g < groups_.size(); ++g) scale_group(g, now);
  const SimTime interval = core_.cfg.fleet.autoscaler.interval;
  const bool idle = core_.kernel.queue().empty() && arrivals_.done();
  // The loop stops when nothing else can happen before an unbounded horizon.
  if (idle && core_.kernel.horizon() == kForever) return;
  if (!idle || core_.cfg.fleet.autoscaler.rule) {
    schedule(core_.kernel, now + interval, EventKind::ScalingTick);
    return;
  }
  // Nothing else can happen before the horizon: the load the loop sees stays
  // as it is, so only a stabilisation window still running can act. The next
  // tick is the first on the loop's grid at which one ends; with none, the
  // loop stops (ticking on would change nothing, at one event per interval).
  // A registered rule is asked at every tick: it may look at the time.
  const SimTime due = next_window_end();
  if (due == kForever || due > core_.kernel.horizon()) return;
  const SimTime steps = std::max<SimTime>(1, (due - now + interval - 1) / interval);
  schedule(core_.kernel, now + steps * interval, EventKind::ScalingTick);
}

// The earliest time a running stabilisation window ends, or kForever.
SimTime ScalingLoop::next_window_end() const {
  const AutoscalerConfig& a = core_.cfg.fleet.autoscaler;
  SimTime due = kForever;
  for (const ScalingGroup& g : groups_) {
    if (g.up_since >= 0) due = std::min(due, g.up_since + a.up_window);
    if (g.down_since >= 0) due = std::min(due, g.down_since + a.down_window);
  }
  return due;
}

std::vector<VariantLoad> ScalingLoop::group_load(size_t group, double& pending_capacity) const {
  const AutoscalerConfig& a = core_.cfg.fleet.autoscaler;
  const double block = static_cast<double>(core_.cfg.engine.block_size);
  std::vector<VariantLoad> variants;
  for (int32_t p : groups_[group].pools) {
    const PoolLifecycle& pl = core_.cfg.fleet.pools[static_cast<size_t>(p)];
    VariantLoad v;
    v.pool = p;
    v.cost_per_hour = pl.cost_per_hour;
    v.room = pl.max - fleet_.live_instances(static_cast<size_t>(p));
    variants.push_back(v);
  }
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    const size_t pool = fleet_.pool_of(i);
    auto v = std::find_if(variants.begin(), variants.end(),
                          [&](const VariantLoad& x) { return static_cast<size_t>(x.pool) == pool; });
    if (v == variants.end()) continue;
    const Instance& inst = *core_.instances[i];
    const double capacity = static_cast<double>(inst.kv().total_blocks()) * block;
    const InstanceRecord& rec = fleet_.record(i);
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

void ScalingLoop::scale_group(size_t group, SimTime now) {
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
  const SimTime delay = sample_delay(a.actuation, *rng_);
  if (delay == 0)
    actuate(decisions_.size() - 1);
  else
    schedule(core_.kernel, now + delay, EventKind::ScaleActuation, 0, decisions_.size() - 1);
}

// A registered autoscaler's decision over the group's pools (cheapest
// first), held to the pools' limits; PluginError on a pool outside the group.
std::pair<int32_t, int32_t> ScalingLoop::ask_rule(std::vector<VariantLoad> variants, double pending_supply) {
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

void ScalingLoop::actuate(size_t k) {
  ScalingAction& d = decisions_[k];
  const size_t p = static_cast<size_t>(d.pool);
  const int32_t want = d.delta;
  if (want > 0) {
    const int32_t room = core_.cfg.fleet.pools[p].max - fleet_.live_instances(p);
    d.delta = fleet_.add(p, std::min(want, std::max(room, 0)));
  } else {
    d.delta = -fleet_.remove(p, -want, DrainMode::Wait);
  }
  if (d.delta != want) d.why += fmt::format("; {} of {} possible", std::abs(d.delta), std::abs(want));
  d.time = core_.kernel.now();
  applied_.push_back(d);
  series_.scenario_event();
  spdlog::info("autoscaler at {} µs: pool {} {:+d} ({})", d.time, d.pool, d.delta, d.why);
}

}  // namespace blis
