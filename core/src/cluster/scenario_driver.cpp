#include "cluster/scenario_driver.hpp"

#include "cluster/arrivals.hpp"
#include "cluster/fleet.hpp"
#include "cluster/gateway.hpp"
#include "cluster/rerouting.hpp"
#include "cluster/routing.hpp"

#include "kernel/events.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace blis {

ScenarioDriver::ScenarioDriver(const ClusterCore& core, Fleet& fleet, Routing& routing, Arrivals& arrivals,
                               Rerouting& rerouting, TimeSeries& series, const std::vector<InstanceMetrics>& metrics,
                               const MetricsCollector& collector)
    : core_(core), fleet_(fleet), routing_(routing), arrivals_(arrivals), rerouting_(rerouting), series_(series),
      metrics_(metrics), collector_(collector), events_(core.cfg.events) {}

void ScenarioDriver::setup() {
  for (size_t k = 0; k < events_.size(); ++k) {
    ScenarioEvent& e = events_[k];
    resolve_pool_instance(e, e.where);
    check_event(e, e.where);
    if (e.at >= 0)
      schedule(core_.kernel, e.at, EventKind::Scenario, 0, k);
    else
      triggers_.push_back(k);
  }
  if (series_.enabled()) next_sample_ = series_.interval();
  if (!triggers_.empty()) next_check_ = kTriggerCheckInterval;
  next_probe_ = std::min(next_sample_, next_check_);
  // The pools named by add and remove events.
  if (!core_.cfg.fleet.enabled()) return;
  event_pool_.assign(events_.size(), 0);
  for (size_t k = 0; k < events_.size(); ++k) event_pool_[k] = pool_of_event(events_[k], events_[k].where);
}

// What the cluster must have for event `e`; InputError naming `where`.
void ScenarioDriver::check_event(const ScenarioEvent& e, const std::string& where) const {
  const size_t n = core_.instances.size();
  if (e.instance >= static_cast<int32_t>(n))
    throw InputError(where, fmt::format("event '{}': instance {} does not exist (the cluster has {} "
                                        "instance(s), indexed from 0)",
                                        e.text, e.instance, n));
  if ((e.action == EventAction::Add || e.action == EventAction::Remove) && !core_.cfg.fleet.enabled())
    throw InputError(where, fmt::format("event '{}': internal: instance lifecycle is off", e.text));
  if (e.action == EventAction::Weight && !routing_.has_scorer(e.scorer))
    throw InputError(where, fmt::format("event '{}': the router has no scorer '{}'; name one of "
                                        "--routing-scorers",
                                        e.text, e.scorer));
  if (e.action == EventAction::Adapter) check_adapter_event(e, where);
  if (e.action == EventAction::Tier) check_tier_event(e, where);
  if (e.action == EventAction::Gateway && gateway_ == nullptr)
    throw InputError(where,
                     fmt::format("event '{}': the gateway's limits change only with --flow-control", e.text));
  if (e.action == EventAction::Rate && !e.tenant.empty() && !arrivals_.has_tenant(e.tenant))
    throw InputError(where,
                     fmt::format("event '{}': no client of the workload has tenant_id '{}' (a tenant's rate "
                                 "changes with a workload spec whose clients name it)",
                                 e.text, e.tenant));
  if (e.action == EventAction::Routing) {
    try {
      parse_routing_policy(e.policy);
    } catch (const InputError& err) {
      throw InputError(where, fmt::format("event '{}': {}", e.text, err.what()));
    }
  }
}

// An `adapter` event names a declared adapter, and its instance (or some
// instance, for every one) holds adapter slots.
void ScenarioDriver::check_adapter_event(const ScenarioEvent& e, const std::string& where) const {
  const LoraSlots* slots = nullptr;
  for (size_t i = 0; i < core_.instances.size() && slots == nullptr; ++i)
    if (e.instance < 0 || static_cast<size_t>(e.instance) == i) slots = core_.instances[i]->lora();
  if (slots == nullptr)
    throw InputError(where, fmt::format("event '{}': {} adapter slots; declare adapters and a capacity "
                                        "(--lora-config, --lora-adapter-capacity)",
                                        e.text, e.instance < 0 ? "no instance has" : "the instance has no"));
  if (slots->config().find(Label(e.adapter)) == nullptr)
    throw InputError(
        where, fmt::format("event '{}': adapter '{}' is not declared in --lora-config", e.text, e.adapter));
}

// An `adapter` event on its instance, or on every instance with slots.
std::string ScenarioDriver::adapter_by_event(const ScenarioEvent& e, SimTime now) {
  const Label id(e.adapter);
  std::string note;
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    if (e.instance >= 0 && static_cast<size_t>(e.instance) != i) continue;
    Instance& inst = *core_.instances[i];
    if (inst.lora() == nullptr) continue;
    const std::string what = e.load ? inst.lora_preload(id, now) : inst.lora_unload(id);
    text::append(note, ", ", e.instance >= 0 ? what : fmt::format("instance {}: {}", i, what));
  }
  return note;
}

namespace {

// Why instance `inst` cannot take a `tier` event on `tier` ("" if it can).
std::string tier_problem(const Instance& inst, int32_t tier) {
  const OffloadChain* chain = inst.offload();
  if (chain == nullptr && !inst.has_cpu_tier())
    return "has no KV offload tier; give --kv-offload-config (or --kv-cpu-blocks for a CPU tier)";
  const int32_t secondary = chain != nullptr ? chain->secondary_tiers() : 0;
  if (tier == 0) {
    if (chain == nullptr || chain->cpu_reloads_timed()) return "";
    return secondary == 0 ? "reloads from its CPU tier without a transfer time (--kv-offload-config, as HEAD "
                            "does): slowing it changes nothing, and it has no secondary tier"
                          : fmt::format(
                                "reloads from its CPU tier without a transfer time (--kv-offload-config, "
                                "as HEAD does): slowing it changes nothing; name a secondary tier "
                                "(tier=1..{})",
                                secondary);
  }
  if (tier <= secondary) return "";
  if (secondary == 0) return "has no secondary tier: its only offload tier is tier=cpu";
  return fmt::format("has {} secondary tier(s) in --kv-offload-config (tier=1..{})", secondary, secondary);
}

}  // namespace

// A `tier` event names a tier its instance has (or, for every instance, a
// tier some instance has).
void ScenarioDriver::check_tier_event(const ScenarioEvent& e, const std::string& where) const {
  std::string problem = "has no KV offload tier";
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    if (e.instance >= 0 && static_cast<size_t>(e.instance) != i) continue;
    const std::string p = tier_problem(*core_.instances[i], e.tier);
    if (p.empty()) return;
    if (i == 0 || e.instance >= 0) problem = p;
  }
  const std::string tier = e.tier == 0 ? "cpu" : std::to_string(e.tier);
  throw InputError(where, fmt::format("event '{}': tier {}: {} {}", e.text, tier,
                                      e.instance >= 0 ? fmt::format("instance {}", e.instance)
                                                      : std::string("no instance has it; instance 0"),
                                      problem));
}

// A `tier` event on its instance, or on every instance that has the tier.
std::string ScenarioDriver::tier_by_event(const ScenarioEvent& e) {
  int32_t n = 0;
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    if (e.instance >= 0 && static_cast<size_t>(e.instance) != i) continue;
    Instance& inst = *core_.instances[i];
    if (!tier_problem(inst, e.tier).empty()) continue;
    inst.set_tier_slowdown(e.tier, e.factor);
    ++n;
  }
  return e.instance >= 0 ? "" : fmt::format("{} instance(s)", n);
}

std::vector<std::string> ScenarioDriver::pool_names() const {
  const ClusterConfig& cfg = core_.cfg;
  return cfg.pool_names.empty() ? std::vector<std::string>{cfg.pool_name} : cfg.pool_names;
}

void ScenarioDriver::resolve_pool_instance(ScenarioEvent& e, const std::string& where) const {
  if (e.pool.empty() || e.instance < 0 || e.action == EventAction::Add || e.action == EventAction::Remove)
    return;
  const std::vector<std::string> names = pool_names();
  const auto it = std::find(names.begin(), names.end(), e.pool);
  if (it == names.end())
    throw InputError(
        where, fmt::format("event '{}': no pool '{}'; pools are {}", e.text, e.pool, fmt::join(names, ", ")));
  const auto p = static_cast<size_t>(it - names.begin());
  int32_t k = 0;
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    if (fleet_.pool_of(i) != p) continue;
    if (k++ == e.instance) {
      e.instance = static_cast<int32_t>(i);
      return;
    }
  }
  throw InputError(where,
                   fmt::format("event '{}': pool '{}' has {} instance(s); instance={} is not one of them "
                               "(with pool=, instance= counts from 0 within the pool)",
                               e.text, e.pool, k, e.instance));
}

// The pool an add or remove event names (0 for other events).
int32_t ScenarioDriver::pool_of_event(const ScenarioEvent& e, const std::string& where) const {
  if (e.action != EventAction::Add && e.action != EventAction::Remove) return 0;
  if (e.action == EventAction::Remove && e.instance >= 0) return 0;
  const std::vector<std::string> names = pool_names();
  if (e.pool.empty()) {
    if (names.size() > 1)
      throw InputError(where, fmt::format("event '{}': the cluster has {} pools; name one with pool=NAME", e.text,
                                          names.size()));
    return 0;
  }
  const auto it = std::find(names.begin(), names.end(), e.pool);
  if (it == names.end())
    throw InputError(where, fmt::format("event '{}': no pool '{}'; pools are {}", e.text, e.pool, fmt::join(names, ", ")));
  return static_cast<int32_t>(it - names.begin());
}

// A kernel Scenario event: a data event (payload: its index) or a call of
// the scenario's code (payload: kCodeCall | the call's id).
constexpr uint64_t kCodeCall = uint64_t{1} << 63;

void ScenarioDriver::on_event(uint64_t payload) {
  if ((payload & kCodeCall) != 0) {
    --code_calls_;
    core_.cfg.code->fire(payload & ~kCodeCall, *this);
    return;
  }
  apply_event(static_cast<size_t>(payload));
}

void ScenarioDriver::call_at(SimTime at, uint64_t id) {
  schedule(core_.kernel, std::max(at, core_.kernel.now()), EventKind::Scenario, 0, kCodeCall | id);
  ++code_calls_;
}

bool ScenarioDriver::only_code_left() {
  return core_.kernel.horizon() == kForever && arrivals_.done() && core_.kernel.queue().size() == code_calls_;
}

// An event of the scenario's code: applied now, or at its at=TIME.
void ScenarioDriver::apply_text(const std::string& text, const std::string& where) {
  const SimTime now = core_.kernel.now();
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
  if ((e.action == EventAction::Add || e.action == EventAction::Remove) && !core_.cfg.fleet.enabled())
    throw InputError(where, fmt::format("event '{}': adding or removing instances from scenario code needs room "
                                        "for them: set lifecycle (e.g. lifecycle = \"max=8\"), whose max bounds "
                                        "each pool",
                                        e.text));
  resolve_pool_instance(e, where);
  check_event(e, where);
  if (core_.cfg.fleet.enabled()) event_pool_.push_back(pool_of_event(e, where));
  const SimTime at = e.at;
  events_.push_back(std::move(e));
  const size_t k = events_.size() - 1;
  if (at == now)
    apply_event(k);
  else
    schedule(core_.kernel, at, EventKind::Scenario, 0, k);
}

void ScenarioDriver::snapshot(ClusterSnapshot& out) const {
  out.now = core_.kernel.now();
  const std::vector<std::string> names = pool_names();
  out.pools.assign(names.size(), ClusterSnapshot::Pool{});
  for (size_t p = 0; p < names.size(); ++p) out.pools[p].name = names[p];
  out.instances.clear();
  out.completed = out.failed = out.timed_out = out.dropped = 0;
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    const InstanceMetrics& m = metrics_[i];
    out.completed += m.completed;
    out.failed += m.failed;
    out.timed_out += m.timed_out;
    out.dropped += m.dropped_unservable;
    const InstanceRecord& rec = fleet_.record(i);
    if (rec.life == Life::Absent) continue;
    const Instance& inst = *core_.instances[i];
    ClusterSnapshot::Instance s;
    s.index = static_cast<int32_t>(i);
    s.pool = static_cast<int32_t>(fleet_.pool_of(i));
    s.state = rec.life == Life::Starting   ? "starting"
              : rec.life == Life::Draining ? "leaving"
              : rec.down                   ? "failed"
              : !rec.routable              ? "drained"
                                           : "active";
    s.queue = static_cast<int32_t>(inst.queue_depth());
    s.running = static_cast<int32_t>(inst.batch_size());
    s.in_flight = static_cast<int64_t>(core_.in_flight[i]);
    s.kv = inst.kv().total_blocks() > 0
               ? static_cast<double>(inst.kv().used_blocks()) / static_cast<double>(inst.kv().total_blocks())
               : 0;
    ClusterSnapshot::Pool& pool = out.pools[static_cast<size_t>(s.pool)];
    ++pool.present;
    pool.instances += rec.routable ? 1 : 0;
    out.instances.push_back(s);
  }
  out.arrived = arrivals_.count();
  out.rejected = collector_.rejected();
  out.rerouted = rerouting_.rerouted();
}

// Interval boundaries and threshold checks up to `now`, each seeing the
// cluster as every earlier event left it.
void ScenarioDriver::probe(SimTime now) {
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
      const ScenarioEvent& e = events_[k];
      const double v = trigger_value(e.metric);
      if (e.above ? v > e.threshold : v < e.threshold)
        schedule(core_.kernel, core_.kernel.now(), EventKind::Scenario, 0, k);
      else
        triggers_[keep++] = k;
    }
    triggers_.resize(keep);
    next_check_ = triggers_.empty() ? kForever : next_check_ + kTriggerCheckInterval;
  }
  next_probe_ = std::min(next_sample_, next_check_);
}

// The last boundaries, and the interval in which the run ended.
void ScenarioDriver::finish() {
  if (!series_.enabled()) return;
  const SimTime now = core_.kernel.now();
  next_check_ = kForever;
  probe(now);
  if (now > next_sample_ - series_.interval()) series_.close(next_sample_, gauges());
}

std::vector<PoolGauges> ScenarioDriver::gauges() const {
  std::vector<PoolGauges> out(std::max<size_t>(core_.cfg.pool_names.size(), 1));
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    PoolGauges& g = out[core_.cfg.pool_of.empty() ? 0 : static_cast<size_t>(core_.cfg.pool_of[i])];
    const Instance& inst = *core_.instances[i];
    const InstanceRecord& rec = fleet_.record(i);
    g.instances += rec.routable ? 1 : 0;
    g.queue_depth += inst.queue_depth();
    g.running += inst.batch_size();
    if (rec.down || rec.life == Life::Starting || rec.life == Life::Absent) continue;
    g.used_kv_blocks += inst.kv().used_blocks();
    g.total_kv_blocks += inst.kv().total_blocks();
  }
  return out;
}

double ScenarioDriver::trigger_value(TriggerMetric m) const {
  double sum = 0, used = 0, total = 0;
  for (size_t i = 0; i < core_.instances.size(); ++i) {
    const InstanceRecord& rec = fleet_.record(i);
    if (rec.down || rec.life == Life::Starting || rec.life == Life::Absent) continue;
    const Instance& inst = *core_.instances[i];
    switch (m) {
      case TriggerMetric::QueueDepth: sum += inst.queue_depth(); break;
      case TriggerMetric::Running: sum += inst.batch_size(); break;
      case TriggerMetric::InFlight: sum += static_cast<double>(core_.in_flight[i]); break;
      case TriggerMetric::KvUsage:
        used += static_cast<double>(inst.kv().used_blocks());
        total += static_cast<double>(inst.kv().total_blocks());
        break;
    }
  }
  if (m == TriggerMetric::KvUsage) return total > 0 ? used / total : 0;
  return sum;
}

// A `remove` event: the instance it names, or `count` of its pool, leave.
std::string ScenarioDriver::remove_by_event(size_t index) {
  const ScenarioEvent& e = events_[index];
  const size_t i = static_cast<size_t>(std::max(e.instance, 0));
  const int64_t before = rerouting_.rerouted();
  int32_t n = 0;
  if (e.instance >= 0)
    n = fleet_.remove_one(i, e.drain) ? 1 : 0;
  else
    n = fleet_.remove(static_cast<size_t>(event_pool_[index]), e.count, e.drain);
  return fmt::format("{} instance(s) leaving; {} request(s) re-routed", n, rerouting_.rerouted() - before);
}

void ScenarioDriver::apply_event(size_t index) {
  const ScenarioEvent& e = events_[index];
  const SimTime now = core_.kernel.now();
  const size_t i = static_cast<size_t>(std::max(e.instance, 0));
  std::string note;
  switch (e.action) {
    case EventAction::Fail: note = fleet_.fail(i, e.reroute); break;
    case EventAction::Drain: note = fleet_.drain(i); break;
    case EventAction::Restore: note = fleet_.restore(i); break;
    case EventAction::Slow: core_.instances[i]->set_slowdown(e.factor); break;
    case EventAction::Rate:
      note = e.tenant.empty()
                 ? fmt::format("arrival rate x{} of the workload's", arrivals_.change_rate(e.factor))
                 : arrivals_.change_tenant_rate(e.tenant, e.factor);
      break;
    // P/D: every router that has the scorer (the pools' and the cluster's).
    case EventAction::Weight: routing_.set_weight(e.scorer, e.weight); break;
    case EventAction::Routing: routing_.set_policy(parse_routing_policy(e.policy)); break;
    case EventAction::Workload: note = "arrivals from now on: " + e.spec; break;  // Arrivals::pull switches
    case EventAction::Add: {
      const int32_t n = fleet_.add(static_cast<size_t>(event_pool_[index]), e.count);
      note = n == e.count ? fmt::format("{} instance(s) starting", n)
                          : fmt::format("{} of {} instance(s) starting: no free slot", n, e.count);
      break;
    }
    case EventAction::Remove: note = remove_by_event(index); break;
    case EventAction::Adapter: note = adapter_by_event(e, now); break;
    case EventAction::Tier: note = tier_by_event(e); break;
    case EventAction::Gateway: note = gateway_->set_capacity(e.band_capacity, e.queue_depth); break;
  }
  if (e.action == EventAction::Fail) fleet_.departed(i);
  series_.scenario_event();
  event_log_.push_back(fmt::format("{}: {}{}", text::seconds_text(now), e.text,
                                   note.empty() ? "" : " (" + note + ")"));
  spdlog::info("scenario event at {} µs: {}", now, event_log_.back());
}

}  // namespace blis
