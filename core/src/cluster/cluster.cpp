#include "cluster/cluster.hpp"

#include "kernel/events.hpp"
#include "metrics/report.hpp"

#include <blis/errors.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace blis {

ClusterSimulation::ClusterSimulation(const ClusterConfig& cfg, WorkloadSource& source,
                                     const LatencyFactory& latency, ClusterPolicies policies)
    : cfg_(cfg), kernel_(cfg.engine.horizon), arrivals_(cfg_, kernel_, pool_, source),
      metrics_(static_cast<size_t>(std::max(cfg.num_instances, 1))),
      collector_(cfg.keep_completions),
      records_(cfg.keep_records, metrics_),
      in_flight_(metrics_.size()),
      budget_(cfg.tenant_budgets, int64_t{cfg.num_instances} * cfg.engine.max_running),
      trace_(cfg.trace_decisions, cfg.counterfactual_k, metrics_.size()),
      timed_(cfg.keep_timed_samples),
      saturation_(cfg.judge_saturation, cfg.head_report),
      step_series_(cfg.keep_series),
      closed_loop_(arrivals_),
      series_(cfg.timeseries_interval,
              cfg.pool_names.empty() ? std::vector<std::string>{cfg.pool_name} : cfg.pool_names,
              cfg.pool_of.empty() ? std::vector<int32_t>(static_cast<size_t>(std::max(cfg.num_instances, 1)), 0)
                                  : cfg.pool_of),
      pd_metrics_(cfg.pd.roles),
      observers_(cfg.observers),
      live_(cfg.live),
      signals_(collector_, records_, in_flight_, budget_, trace_, steady_, timed_, saturation_, step_series_,
               closed_loop_, series_, pd_metrics_, observers_, live_),
      core_{cfg_, kernel_, pool_, instances_, signals_, in_flight_, budget_},
      fleet_(core_),
      scaling_(core_, fleet_, arrivals_, series_),
      routing_(core_, fleet_.records(), std::move(policies)),
      rerouting_(core_),
      driver_(core_, fleet_, routing_, arrivals_, rerouting_, series_, metrics_, collector_) {
  if (cfg.num_instances < 1) throw InputError("--num-instances", "must be >= 1");
  if (cfg.num_instances > kMaxInstances)
    throw InputError("--num-instances", "must be <= " + std::to_string(kMaxInstances) + ", got " +
                                            std::to_string(cfg.num_instances));
  observers_.add_series_columns(series_);
  collector_.keep_timed_itl(cfg.keep_timed_samples);
  for (int32_t i = 0; i < cfg.num_instances; ++i) {
    metrics_[static_cast<size_t>(i)].reports_timeouts = cfg.deadlines || cfg.head_report;
    metrics_[static_cast<size_t>(i)].head_form = cfg.head_report;
    std::unique_ptr<LatencyModel> model = latency(i);
    collector_.add_instance(metrics_[static_cast<size_t>(i)], model->output_token_time(),
                            model->post_decode_overhead());
    instances_.push_back(
        std::make_unique<Instance>(i, cfg.engines.empty() ? cfg.engine : cfg.engines[static_cast<size_t>(i)],
                                   std::move(model), pool_, kernel_, signals_));
  }
  routing_.start();
  if (cfg.pd.enabled()) pd_.emplace(core_, pd_metrics_, routing_, fleet_, rerouting_);
  if (cfg.gateway.enabled) driver_.attach_gateway(&gateway_.emplace(core_, routing_));
  PdFlow* pd = pd_ ? &*pd_ : nullptr;
  rerouting_.set_pd(pd);
  fleet_.connect(routing_, rerouting_, pd);
  // Kernel events scheduled at setup keep this order: the scenario's, the
  // fleet's, the autoscaler's.
  driver_.setup();
  fleet_.setup(collector_);
  scaling_.setup();
}

ClusterSimulation::~ClusterSimulation() = default;

void ClusterSimulation::start() {
  if (cfg_.code) cfg_.code->start(driver_);
  arrivals_.pull();
}

uint64_t ClusterSimulation::inject(const WorkloadRequest& spec) {
  const uint32_t slot = pool_.acquire();
  Request& r = pool_[slot];
  r.spec = spec;
  r.spec.arrival_us = kernel_.now();
  schedule(kernel_, kernel_.now(), EventKind::ClusterArrival, 0, slot);
  return (static_cast<uint64_t>(r.incarnation) << 32) | slot;
}

void ClusterSimulation::cancel(uint64_t handle) {
  const auto slot = static_cast<uint32_t>(handle);
  Request& r = pool_[slot];
  if (r.incarnation != static_cast<uint32_t>(handle >> 32) || r.state == RequestState::Free ||
      r.state == RequestState::Completed)
    return;
  // On its way, it times out as it is enqueued (Instance::on_queued); at its
  // instance, or with its KV on the wire (P/D: PdFlow::timeout), now.
  r.spec.deadline_us = std::max<SimTime>(kernel_.now(), 1);
  if ((r.state == RequestState::Queued || r.state == RequestState::Running || r.state == RequestState::Transfer) &&
      r.instance >= 0)
    schedule(kernel_, kernel_.now(), EventKind::Timeout, r.instance, handle);
}

std::vector<ClusterSimulation::InstanceLoad> ClusterSimulation::loads() const {
  std::vector<InstanceLoad> out;
  for (const auto& inst : instances_) {
    const KVCache& kv = inst->kv();
    out.push_back(InstanceLoad{inst->batch_size(), inst->queue_depth(), kv.used_blocks(), kv.total_blocks(),
                               kv.hits(), kv.misses()});
  }
  return out;
}

// HEAD's results file names each request as HEAD numbers it (a session's
// follow-up rounds by their session: metrics/request_names.hpp) and every
// session request's session (Arrivals::session_name).
void ClusterSimulation::name_records(const RequestNames& names) {
  WorkloadRequest probe;
  for (InstanceMetrics& m : metrics_)
    for (RequestRecord& rec : m.records) {
      std::string name = names(rec.id);
      if (name != "request_" + std::to_string(rec.id)) rec.name = std::move(name);
      if (rec.session < 0 && rec.user < 0) continue;
      probe.session = rec.session;
      probe.user = rec.user;
      rec.session_id = arrivals_.session_name(probe);
    }
}

ClusterResult ClusterSimulation::run() {
  start();
  // Plain steps may run without events (Instance::allow_lazy_steps()) when
  // nothing reads an instance's state but its own events: no policy reads
  // the snapshots (the gateway, P/D, fleets, scenarios and the cache signal
  // make every decision read them: Routing::run_reads()), and neither the
  // time series nor the report's step series sample the instances.
  if (cfg_.lazy_steps && (routing_.reads() & kReadsSnapshots) == 0 && !series_.enabled() && !cfg_.keep_series)
    for (auto& inst : instances_) inst->allow_lazy_steps();
  kernel_.run(*this);
  for (auto& inst : instances_) inst->run_lazy_through(kernel_.horizon());
  driver_.finish();
  ClusterResult out;
  for (auto& inst : instances_) inst->finalize();
  if (gateway_) out.gateway = gateway_->finish();  // its queue leaves uncounted (HEAD)
  // Whatever is still inside, wherever it is, in pool order.
  for (size_t s = 0; s < pool_.capacity(); ++s) {
    Request& r = pool_[static_cast<uint32_t>(s)];
    if (r.state != RequestState::Free) signals_.stopped(r);
  }
  out.rejected = collector_.rejected();
  out.routing_rejected = rerouting_.unroutable();
  out.admission_rejected_by_class = collector_.rejected_by_class();
  for (const auto& [slo, n] : rerouting_.unroutable_by_class()) out.admission_rejected_by_class[slo] -= n;
  if (gateway_)  // HEAD's "Shed (class)" counts the gateway's shed and expired requests too
    for (const auto& [slo, n] : gateway_->dropped_by_class()) out.admission_rejected_by_class[slo] += n;
  out.in_pipeline = collector_.in_pipeline();
  out.trace = trace_.summary();
  out.steady = steady_.judge();
  // HEAD's names of sessions' follow-up rounds: the results file's, and the
  // order of the goodput's per-class sums.
  const RequestNames names(cfg_.head_report ? arrivals_.take_follow_up_names()
                                            : std::unordered_map<uint64_t, std::string>{});
  if (cfg_.head_report) observers_.get<GoodputTracker>().name_requests(names);
  out.observers = observers_.release();
  if (saturation_.enabled()) {
    const std::vector<SaturationEvent> events = saturation_.sorted();
    out.saturation = judge_saturation(events, cfg_.saturation);
    if (!cfg_.saturation_report.empty())
      out.saturation_report = blis::saturation_report(events, cfg_.saturation_report, cfg_.saturation);
  }
  out.series = step_series_.series();
  // Steps run without events count as the events they stand for.
  out.events = kernel_.processed();
  for (const auto& inst : instances_) out.lazy_steps += inst->lazy_steps();
  out.events += out.lazy_steps;
  for (const auto& m : metrics_) {
    out.steps += static_cast<uint64_t>(m.steps);
    out.member_steps += static_cast<uint64_t>(m.member_steps);
    out.member_updates += static_cast<uint64_t>(m.member_updates);
  }
  if (timed_.enabled()) {
    out.timed = timed_.release();
    out.timed.itl_steps = collector_.take_timed_steps();
  }
  if (cfg_.keep_records && cfg_.head_report) name_records(names);
  out.instances = std::move(metrics_);
  if (series_.enabled()) out.timeseries = series_.csv();
  out.event_log = driver_.take_log();
  out.rerouted = rerouting_.rerouted();
  out.initial_instances = static_cast<int64_t>(out.instances.size()) -
                          std::count(cfg_.fleet.absent.begin(), cfg_.fleet.absent.end(), uint8_t{1});
  fleet_.report(out);
  out.scaling = scaling_.take_actions();
  if (pd_metrics_.enabled()) {
    if (pd_) pd_->finish();
    out.pd = std::move(pd_metrics_);
  }
  if (out.instances.empty()) return out;
  warn_if_none_completed(out);
  return out;
}

void ClusterSimulation::warn_if_none_completed(const ClusterResult& out) const {
  int64_t completed = 0;
  for (const auto& m : out.instances) completed += m.completed;
  if (completed != 0) return;
  const int64_t unroutable = rerouting_.unroutable();
  const int64_t by_admission = out.rejected - unroutable;
  if (unroutable > 0 && by_admission == 0)
    spdlog::warn("all {} requests rejected because no instance took traffic (every instance failed, drained or "
                 "was removed); no requests completed",
                 unroutable);
  else if (unroutable > 0)
    spdlog::warn("no requests completed: {} requests rejected by the admission policy, {} because no instance took "
                 "traffic (every instance failed, drained or was removed)",
                 by_admission, unroutable);
  else if (out.rejected > 0)
    spdlog::warn("all {} requests rejected by the admission policy; no requests completed", out.rejected);
  else if (cfg_.engine.horizon < 1'000'000)  // under a second: likely seconds written as a bare number
    spdlog::warn("no requests completed within the horizon of {} µs (a bare number is µs; {}s means {} seconds)",
                 cfg_.engine.horizon, cfg_.engine.horizon, cfg_.engine.horizon);
  else
    spdlog::warn("no requests completed: the horizon may be too short or the workload too small");
}

// Every kernel event to the part it belongs to; the instances' own events
// (and requests reaching a failed instance) here.
void ClusterSimulation::handle(const Event& e) {
  driver_.before(e.time);
  switch (kind_of(e)) {
    case EventKind::ClusterArrival: on_cluster_arrival(static_cast<uint32_t>(e.payload)); return;
    case EventKind::Admission: on_admission(static_cast<uint32_t>(e.payload)); return;
    case EventKind::Routing: on_routing(static_cast<uint32_t>(e.payload)); return;
    case EventKind::Scenario: driver_.on_event(e.payload); return;
    case EventKind::InstanceReady: fleet_.on_instance_ready(e.payload); return;
    case EventKind::NodeReady: fleet_.on_node_ready(e.payload); return;
    case EventKind::GatewayEviction:
      if (const int32_t left = gateway_->on_eviction(e.payload); left >= 0) fleet_.departed(static_cast<size_t>(left));
      return;
    case EventKind::GatewayExpiry: gateway_->on_expiry(e.payload); return;
    case EventKind::GatewayTick: gateway_->on_tick(); return;
    case EventKind::ScalingTick: scaling_.tick(); return;
    case EventKind::ScaleActuation: scaling_.actuate(static_cast<size_t>(e.payload)); return;
    case EventKind::PdPrefillRouting: pd_->prefill_route(static_cast<uint32_t>(e.payload)); return;
    case EventKind::PdPrefilled: pd_->prefilled(e.payload); return;
    case EventKind::PdTransferCheck: pd_->check(e.payload); return;
    case EventKind::PdTransferDone: pd_->transfer_done(e.payload); return;
    case EventKind::Step:
    case EventKind::AdapterLoad: break;
    case EventKind::Timeout:  // the instance checks the request is still its own
      if (pd_ && pd_->timeout(e)) return;
      break;
    default:
      // A request still on its way to an instance that failed meanwhile.
      if (fleet_.any_down() && fleet_.record(e.target).down) {
        rerouting_.lose(static_cast<uint32_t>(e.payload), fleet_.record(e.target).down_reroutes);
        fleet_.departed(e.target);
        return;
      }
  }
  instances_[e.target]->on_event(e);
  fleet_.departed(e.target);
}

void ClusterSimulation::on_cluster_arrival(uint32_t slot) {
  series_.arrival();
  arrivals_.arrived(slot);
  schedule(kernel_, kernel_.now() + cfg_.admission_latency, EventKind::Admission, 0, slot);
}

void ClusterSimulation::on_admission(uint32_t slot) {
  // Tenant budgets come first, the gateway's queue or the policy after (HEAD).
  if (const Request& r = pool_[slot];
      budget_.over(r.spec.tenant_id) && cfg_.slo_priorities.sheddable(r.spec.slo_class)) {
    routing_.state(slot);  // a look at the instances, as every decision takes
    return reject(slot, "tenant-budget-shed");
  }
  if (gateway_) {  // the gateway's queue is the admission decision (HEAD)
    routing_.state(slot);  // a look at the instances, as every decision takes
    signals_.admitted(pool_[slot]);
    gateway_->enqueue(slot);
    return;
  }
  std::string reason;  // the policy's word on a rejection (the decision trace counts them)
  if (!routing_.admit(slot, reason)) return reject(slot, reason);
  signals_.admitted(pool_[slot]);
  schedule(kernel_, kernel_.now() + cfg_.routing_latency, EventKind::Routing, 0, slot);
}

void ClusterSimulation::reject(uint32_t slot, std::string_view reason) {
  signals_.rejected(pool_[slot], reason);
  pool_.release(slot);
}

void ClusterSimulation::on_routing(uint32_t slot) {
  if (pd_) {
    if (pd_->route(slot) && cfg_.gateway.eviction) gateway_->routed(slot);
    return;
  }
  const blis_route_input& in = routing_.state(slot);
  if (in.count == 0) {  // every instance failed or drained (scenario events)
    rerouting_.reject(slot, "no instance takes traffic");
    return;
  }
  const int32_t position = routing_.route(routing_.router(), in);
  const int32_t target = routing_.at(position).index;
  fleet_.warm_up(static_cast<size_t>(target), pool_[slot]);
  instances_[static_cast<size_t>(target)]->inject(slot, kernel_.now());
  signals_.routed(pool_[slot], routing_.choice(position, in));
  if (cfg_.gateway.eviction) gateway_->routed(slot);
}

InstanceMetrics cluster_metrics(const ClusterResult& result) {
  std::vector<const InstanceMetrics*> parts;
  for (const auto& m : result.instances) parts.push_back(&m);
  InstanceMetrics out = merge_metrics(parts);
  out.still_queued += result.in_pipeline;
  return out;
}

}  // namespace blis
