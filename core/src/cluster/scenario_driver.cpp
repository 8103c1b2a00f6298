// The cluster's side of scenario events (blis/scenario_events.hpp) and of the
// time series (metrics/time_series.hpp): both look at the cluster at instants
// of virtual time. Timed events are kernel events (EventKind::Scenario);
// interval boundaries and threshold checks are "probes" taken before the
// first event at or after their time, so they add no kernel events and cost
// one comparison per event when neither is used.
#include "cluster/cluster.hpp"

#include "kernel/events.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace blis {

void ClusterSimulation::setup_scenario() {
  for (size_t k = 0; k < cfg_.events.size(); ++k) {
    const ScenarioEvent& e = cfg_.events[k];
    check_event(e, e.where);
    if (e.at >= 0)
      schedule(kernel_, e.at, EventKind::Scenario, 0, k);
    else
      triggers_.push_back(k);
  }
  if (series_.enabled()) next_sample_ = series_.interval();
  if (!triggers_.empty()) next_check_ = kTriggerCheckInterval;
  next_probe_ = std::min(next_sample_, next_check_);
}

// What the cluster must have for event `e`; InputError naming `where`.
void ClusterSimulation::check_event(const ScenarioEvent& e, const std::string& where) const {
  const size_t n = instances_.size();
  if (e.instance >= static_cast<int32_t>(n))
    throw InputError(where, fmt::format("event '{}': instance {} does not exist (the cluster has {} "
                                        "instance(s), indexed from 0)",
                                        e.text, e.instance, n));
  if ((e.action == EventAction::Add || e.action == EventAction::Remove) && !cfg_.fleet.enabled())
    throw InputError(where, fmt::format("event '{}': internal: instance lifecycle is off", e.text));
  if (e.action == EventAction::Weight && !policies_.router->has_scorer(e.scorer) &&
      !(policies_.prefill_router && policies_.prefill_router->has_scorer(e.scorer)) &&
      !(policies_.decode_router && policies_.decode_router->has_scorer(e.scorer)))
    throw InputError(where, fmt::format("event '{}': the router has no scorer '{}'; name one of "
                                        "--routing-scorers",
                                        e.text, e.scorer));
  if (e.action == EventAction::Routing) {
    try {
      parse_routing_policy(e.policy);
    } catch (const InputError& err) {
      throw InputError(where, fmt::format("event '{}': {}", e.text, err.what()));
    }
  }
}

// A kernel Scenario event: a data event (payload: its index) or a call of
// the scenario's code (payload: kCodeCall | the call's id).
constexpr uint64_t kCodeCall = uint64_t{1} << 63;

void ClusterSimulation::scenario_event(uint64_t payload) {
  if ((payload & kCodeCall) != 0) {
    --code_calls_;
    cfg_.code->fire(payload & ~kCodeCall, *this);
    return;
  }
  apply_event(static_cast<size_t>(payload));
}

void ClusterSimulation::call_at(SimTime at, uint64_t id) {
  schedule(kernel_, std::max(at, kernel_.now()), EventKind::Scenario, 0, kCodeCall | id);
  ++code_calls_;
}

bool ClusterSimulation::only_code_left() {
  return kernel_.horizon() == kForever && source_done_ && kernel_.queue().size() == code_calls_;
}

// An event of the scenario's code: applied now, or at its at=TIME.
void ClusterSimulation::apply_text(const std::string& text, const std::string& where) {
  const SimTime now = kernel_.now();
  ScenarioEvent e = parse_scenario_event(text, where, now);
  if (e.at < 0)
    throw InputError(where, fmt::format("event '{}': scenario code cannot set a when= trigger; read the metric in "
                                        "an every() callback and act on it there",
                                        e.text));
  if (e.action == EventAction::Workload)
    throw InputError(where, fmt::format("event '{}': a workload change cannot come from scenario code (its arrivals "
                                        "are drawn before the run starts); list it in the scenario's events",
                                        e.text));
  if (e.at < now)
    throw InputError(where, fmt::format("event '{}': at= is before now ({:.6f} s)", e.text,
                                        static_cast<double>(now) / 1e6));
  if ((e.action == EventAction::Add || e.action == EventAction::Remove) && !cfg_.fleet.enabled())
    throw InputError(where, fmt::format("event '{}': adding or removing instances from scenario code needs room "
                                        "for them: set lifecycle (e.g. lifecycle = \"max=8\"), whose max bounds "
                                        "each pool",
                                        e.text));
  check_event(e, where);
  if (cfg_.fleet.enabled()) event_pool_.push_back(pool_of_event(e, where));
  const SimTime at = e.at;
  cfg_.events.push_back(std::move(e));
  const size_t k = cfg_.events.size() - 1;
  if (at == now)
    apply_event(k);
  else
    schedule(kernel_, at, EventKind::Scenario, 0, k);
}

void ClusterSimulation::snapshot(ClusterSnapshot& out) const {
  out.now = kernel_.now();
  const std::vector<std::string> names = cfg_.pool_names.empty() ? std::vector<std::string>{cfg_.pool_name}
                                                                 : cfg_.pool_names;
  out.pools.assign(names.size(), ClusterSnapshot::Pool{});
  for (size_t p = 0; p < names.size(); ++p) out.pools[p].name = names[p];
  out.instances.clear();
  out.completed = out.failed = out.timed_out = out.dropped = 0;
  for (size_t i = 0; i < instances_.size(); ++i) {
    const InstanceMetrics& m = metrics_[i];
    out.completed += m.completed;
    out.failed += m.failed;
    out.timed_out += m.timed_out;
    out.dropped += m.dropped_unservable;
    const InstanceRecord& rec = slots_[i];
    if (rec.life == Life::Absent) continue;
    const Instance& inst = *instances_[i];
    ClusterSnapshot::Instance s;
    s.index = static_cast<int32_t>(i);
    s.pool = static_cast<int32_t>(pool_index(i));
    s.state = rec.life == Life::Starting   ? "starting"
              : rec.life == Life::Draining ? "leaving"
              : rec.down                   ? "failed"
              : !rec.routable              ? "drained"
                                           : "active";
    s.queue = static_cast<int32_t>(inst.queue_depth());
    s.running = static_cast<int32_t>(inst.batch_size());
    s.in_flight = static_cast<int64_t>(in_flight_[i]);
    s.kv = inst.kv().total_blocks() > 0
               ? static_cast<double>(inst.kv().used_blocks()) / static_cast<double>(inst.kv().total_blocks())
               : 0;
    ClusterSnapshot::Pool& pool = out.pools[static_cast<size_t>(s.pool)];
    ++pool.present;
    pool.instances += rec.routable ? 1 : 0;
    out.instances.push_back(s);
  }
  out.arrived = arrived_;
  out.rejected = collector_.rejected();
  out.rerouted = rerouted_;
}

// Interval boundaries and threshold checks up to `now`, each seeing the
// cluster as every earlier event left it.
void ClusterSimulation::probe(SimTime now) {
  while (std::min(next_sample_, next_check_) <= now) {
    if (next_sample_ <= next_check_) {
      series_.close(next_sample_, gauges());
      next_sample_ += series_.interval();
      continue;
    }
    // Threshold triggers, in the order they were given; each fires once, as
    // a kernel event now.
    size_t keep = 0;
    for (size_t k : triggers_) {
      const ScenarioEvent& e = cfg_.events[k];
      const double v = trigger_value(e.metric);
      if (e.above ? v > e.threshold : v < e.threshold)
        schedule(kernel_, kernel_.now(), EventKind::Scenario, 0, k);
      else
        triggers_[keep++] = k;
    }
    triggers_.resize(keep);
    next_check_ = triggers_.empty() ? kForever : next_check_ + kTriggerCheckInterval;
  }
  next_probe_ = std::min(next_sample_, next_check_);
}

// The last boundaries, and the interval in which the run ended.
void ClusterSimulation::finish_timeseries() {
  if (!series_.enabled()) return;
  const SimTime now = kernel_.now();
  next_check_ = kForever;
  probe(now);
  if (now > next_sample_ - series_.interval()) series_.close(next_sample_, gauges());
}

std::vector<PoolGauges> ClusterSimulation::gauges() const {
  std::vector<PoolGauges> out(std::max<size_t>(cfg_.pool_names.size(), 1));
  for (size_t i = 0; i < instances_.size(); ++i) {
    PoolGauges& g = out[cfg_.pool_of.empty() ? 0 : static_cast<size_t>(cfg_.pool_of[i])];
    const Instance& inst = *instances_[i];
    const InstanceRecord& rec = slots_[i];
    g.instances += rec.routable ? 1 : 0;
    g.queue_depth += inst.queue_depth();
    g.running += inst.batch_size();
    if (rec.down || rec.life == Life::Starting || rec.life == Life::Absent) continue;
    g.used_kv_blocks += inst.kv().used_blocks();
    g.total_kv_blocks += inst.kv().total_blocks();
  }
  return out;
}

double ClusterSimulation::trigger_value(TriggerMetric m) const {
  double sum = 0, used = 0, total = 0;
  for (size_t i = 0; i < instances_.size(); ++i) {
    const InstanceRecord& rec = slots_[i];
    if (rec.down || rec.life == Life::Starting || rec.life == Life::Absent) continue;
    const Instance& inst = *instances_[i];
    switch (m) {
      case TriggerMetric::QueueDepth: sum += inst.queue_depth(); break;
      case TriggerMetric::Running: sum += inst.batch_size(); break;
      case TriggerMetric::InFlight: sum += static_cast<double>(in_flight_[i]); break;
      case TriggerMetric::KvUsage:
        used += static_cast<double>(inst.kv().used_blocks());
        total += static_cast<double>(inst.kv().total_blocks());
        break;
    }
  }
  if (m == TriggerMetric::KvUsage) return total > 0 ? used / total : 0;
  return sum;
}

// A request that lost its instance: back to routing if it is to be re-routed
// and has delivered no token yet (a client mid-stream sees its stream break:
// it fails either way), else failed.
void ClusterSimulation::lose(uint32_t slot, bool reroute) {
  Request& r = pool_[slot];
  const SimTime now = kernel_.now();
  if (reroute && r.step.emitted == 0) {
    signals_.departed(r, now);
    this->reroute(slot);
    return;
  }
  signals_.failed(r, now);
  signals_.departed(r, now);
  pool_.release(slot);
}

// Back to routing, as it arrived (P/D: decided and split again).
void ClusterSimulation::reroute(uint32_t slot) {
  Request& r = pool_[slot];
  r.state = RequestState::Pipeline;
  r.step = StepState{};
  r.pd = PdStage::None;
  if (slot < pd_routes_.size()) pd_routes_[slot] = PdRoute{};
  ++rerouted_;
  schedule(kernel_, kernel_.now() + cfg_.routing_latency, EventKind::Routing, 0, slot);
}

// Arrival times after a rate change: the source's gaps divided by the
// accumulated factor, from the anchor (warp_src_, warp_dst_).
SimTime ClusterSimulation::warp_arrival(SimTime source_time) {
  pending_source_time_ = source_time;
  const double t = warp_dst_ + (static_cast<double>(source_time) - warp_src_) / rate_factor_;
  return std::max<SimTime>(static_cast<SimTime>(std::llround(t)), kernel_.now());
}

// A `fail` event: instance i's requests are lost, re-routed or failed.
std::string ClusterSimulation::fail_instance(const ScenarioEvent& e, size_t i) {
  InstanceRecord& rec = slots_[i];
  if (rec.down) return "already failed";
  rec.down = true;
  rec.down_reroutes = e.reroute;
  rec.routable = false;
  any_down_ = true;
  evicted_.clear();
  instances_[i]->evict(evicted_);
  const int64_t before = rerouted_;
  for (uint32_t slot : evicted_) lose(slot, e.reroute);
  int64_t lost = static_cast<int64_t>(evicted_.size());
  if (pd_link_) {  // P/D: the transfers from or to it, too
    const int64_t in_transfer = pd_abandon(i, e.reroute);
    lost += in_transfer;
  }
  const int64_t moved = rerouted_ - before;
  return fmt::format("{} request(s) re-routed, {} failed", moved, lost - moved);
}

// A `remove` event: the instance it names, or `count` of its pool, leave.
std::string ClusterSimulation::remove_by_event(size_t index) {
  const ScenarioEvent& e = cfg_.events[index];
  const size_t i = static_cast<size_t>(std::max(e.instance, 0));
  const int64_t before = rerouted_;
  int32_t n = 0;
  if (e.instance >= 0) {
    if (slots_[i].life == Life::Active || slots_[i].life == Life::Starting) {
      remove_instance(i, e.drain);
      n = 1;
    }
  } else {
    n = remove_instances(static_cast<size_t>(event_pool_[index]), e.count, e.drain);
  }
  return fmt::format("{} instance(s) leaving; {} request(s) re-routed", n, rerouted_ - before);
}

void ClusterSimulation::apply_event(size_t index) {
  const ScenarioEvent& e = cfg_.events[index];
  const SimTime now = kernel_.now();
  const size_t i = static_cast<size_t>(std::max(e.instance, 0));
  std::string note;
  switch (e.action) {
    case EventAction::Fail: note = fail_instance(e, i); break;
    case EventAction::Drain:
      slots_[i].routable = false;
      note = fmt::format("{} queued and {} running finish there", instances_[i]->queue_depth(),
                         instances_[i]->batch_size());
      break;
    case EventAction::Restore: {
      InstanceRecord& rec = slots_[i];
      if (rec.life != Life::Active) {
        note = "not in service: removed or not started";
        break;
      }
      rec.routable = true;
      rec.down = false;
      any_down_ = std::any_of(slots_.begin(), slots_.end(), [](const InstanceRecord& s) { return s.down; });
      break;
    }
    case EventAction::Slow: instances_[i]->set_slowdown(e.factor); break;
    case EventAction::Rate: {
      // Anchored at the arrival already scheduled: the change applies from
      // the one after it.
      const double src = warped_ ? static_cast<double>(pending_source_time_) : static_cast<double>(pending_arrival_);
      if (!warped_) pending_source_time_ = pending_arrival_;
      warp_src_ = src;
      warp_dst_ = static_cast<double>(std::max(pending_arrival_, now));
      rate_factor_ *= e.factor;
      warped_ = true;
      note = fmt::format("arrival rate x{} of the workload's", rate_factor_);
      break;
    }
    // P/D: every router that has the scorer (the pools' and the cluster's).
    case EventAction::Weight:
      for (Router* router : {policies_.router.get(), policies_.prefill_router.get(), policies_.decode_router.get()})
        if (router != nullptr) router->set_weight(e.scorer, e.weight);
      break;
    case EventAction::Routing:
      for (Router* router : {policies_.router.get(), policies_.prefill_router.get(), policies_.decode_router.get()})
        if (router != nullptr) router->set_policy(parse_routing_policy(e.policy));
      break;
    case EventAction::Workload: note = "arrivals from now on: " + e.spec; break;  // pull_next_arrival switches
    case EventAction::Add: {
      const int32_t n = add_instances(static_cast<size_t>(event_pool_[index]), e.count);
      note = n == e.count ? fmt::format("{} instance(s) starting", n)
                          : fmt::format("{} of {} instance(s) starting: no free slot", n, e.count);
      break;
    }
    case EventAction::Remove: note = remove_by_event(index); break;
  }
  if (draining_ > 0 && e.action == EventAction::Fail) check_drained(i);
  series_.scenario_event();
  event_log_.push_back(fmt::format("{}: {}{}", text::seconds_text(now), e.text,
                                   note.empty() ? "" : " (" + note + ")"));
  spdlog::info("scenario event at {} µs: {}", now, event_log_.back());
}

}  // namespace blis
