#include "cluster/cluster.hpp"

#include "kernel/events.hpp"
#include "metrics/report.hpp"

#include <blis/errors.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace blis {

ClusterSimulation::ClusterSimulation(const ClusterConfig& cfg, WorkloadSource& source,
                                     const LatencyFactory& latency, ClusterPolicies policies)
    : cfg_(cfg), source_(&source), kernel_(cfg.engine.horizon),
      metrics_(static_cast<size_t>(std::max(cfg.num_instances, 1))),
      collector_(cfg.keep_completions),
      records_(cfg.keep_records, metrics_),
      in_flight_(metrics_.size()),
      trace_(cfg.trace_decisions, cfg.counterfactual_k, metrics_.size()),
      timed_(cfg.keep_timed_samples),
      saturation_(cfg.judge_saturation),
      step_series_(cfg.keep_series),
      closed_loop_(*this),
      series_(cfg.timeseries_interval,
              cfg.pool_names.empty() ? std::vector<std::string>{cfg.pool_name} : cfg.pool_names,
              cfg.pool_of.empty() ? std::vector<int32_t>(static_cast<size_t>(std::max(cfg.num_instances, 1)), 0)
                                  : cfg.pool_of),
      pd_metrics_(cfg.pd.roles),
      observers_(cfg.observers),
      signals_(collector_, records_, in_flight_, trace_, steady_, timed_, saturation_, step_series_, closed_loop_, series_,
               pd_metrics_, observers_),
      policies_(std::move(policies)) {
  if (!policies_.router)
    policies_.router = std::make_unique<Router>(RoutingPolicy::RoundRobin, std::vector<WeightedScorer>{}, 0);
  if (cfg.num_instances < 1) throw InputError("--num-instances", "must be >= 1");
  const size_t n = static_cast<size_t>(cfg.num_instances);
  cached_.assign(n, blis_instance_snapshot{});
  for (size_t i = 0; i < n; ++i) {
    cached_[i].index = static_cast<int32_t>(i);
    cached_[i].pool = cfg.pool_of.empty() ? 0 : cfg.pool_of[i];
    cached_[i].tp = cfg.pool_tp.empty() ? cfg.tp : cfg.pool_tp[static_cast<size_t>(cached_[i].pool)];
  }
  collector_.keep_timed_itl(cfg.keep_timed_samples);
  last_refresh_.assign(n, 0);
  snapshot_changes_.assign(n, UINT64_MAX);
  state_.resize(n);
  if (cfg.cache_query && cfg.cache_signal_delay > 0) cache_copies_.resize(n);
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
  // spec head §7.2: the delayed view starts as the caches at construction.
  for (size_t i = 0; i < cache_copies_.size(); ++i) instances_[i]->copy_prefix_index(cache_copies_[i]);
  slots_.assign(n, InstanceRecord{});
  setup_scenario();
  setup_fleet();
  if (cfg.pd.enabled()) pd_link_.emplace(cfg.pd.bytes_per_us, cfg.pd.base_latency_us, cfg.pd.contention);
}

ClusterSimulation::~ClusterSimulation() = default;

// Arrivals are generated lazily: the next one is scheduled when the previous
// is processed, which gives the same order as scheduling all of them up front.
void ClusterSimulation::pull_next_arrival() {
  uint32_t slot = pool_.acquire();
  Request& r = pool_[slot];
  for (;;) {
    const bool more = source_->next(r.spec);
    if (more) {
      r.spec.arrival_us += phase_start_;
      r.spec.id += id_offset_;
      if (warped_) r.spec.arrival_us = warp_arrival(r.spec.arrival_us);
    }
    // The next workload phase starts before this arrival (or this workload
    // is exhausted): the arrival never comes, the phase's first one does.
    if (next_phase_ < phases_.size() && (!more || r.spec.arrival_us >= phases_[next_phase_].first)) {
      const SimTime at = phases_[next_phase_].first;
      source_ = phases_[next_phase_++].second;
      phase_start_ = at;
      id_offset_ = next_id_;
      if (warped_) {  // the rate factor applies to the new workload's gaps, from its start
        warp_src_ = static_cast<double>(at);
        warp_dst_ = static_cast<double>(at);
      }
      continue;
    }
    if (!more) {
      pool_.release(slot);
      source_done_ = true;
      pool_.drain();
      return;
    }
    break;
  }
  next_id_ = std::max(next_id_, r.spec.id + 1);
  pending_arrival_ = r.spec.arrival_us;
  if (r.spec.arrival_us > kernel_.horizon()) {
    pool_.release(slot);  // beyond the horizon: never processed
    source_done_ = true;
    pool_.drain();
    return;
  }
  schedule(kernel_, r.spec.arrival_us, EventKind::ClusterArrival, 0, slot);
}

// spec head §4.2: a closed-loop user's next request, after its previous one
// completed at t. It arrives outside the source's lazy chain of arrivals
// (on_cluster_arrival pulls only for requests of that chain).
void ClusterSimulation::completed(const Request& r, SimTime t) {
  const uint32_t slot = pool_.acquire();
  Request& next = pool_[slot];
  if (!source_->follow_up(r.spec, t, next.spec) || next.spec.arrival_us > kernel_.horizon()) {
    pool_.release(slot);
    return;
  }
  schedule(kernel_, next.spec.arrival_us, EventKind::ClusterArrival, 0, slot);
}

ClusterResult ClusterSimulation::run() {
  if (cfg_.code) cfg_.code->start(*this);
  pull_next_arrival();
  kernel_.run(*this);
  finish_timeseries();
  ClusterResult out;
  for (auto& inst : instances_) inst->finalize();
  // Whatever is still inside, wherever it is, in pool order.
  for (size_t s = 0; s < pool_.capacity(); ++s) {
    Request& r = pool_[static_cast<uint32_t>(s)];
    if (r.state != RequestState::Free) signals_.stopped(r);
  }
  out.rejected = collector_.rejected();
  out.routing_rejected = unroutable_;
  out.admission_rejected_by_class = collector_.rejected_by_class();
  for (const auto& [slo, n] : unroutable_by_class_) out.admission_rejected_by_class[slo] -= n;
  out.in_pipeline = collector_.in_pipeline();
  out.trace = trace_.summary();
  out.steady = steady_.judge();
  out.observers = observers_.release();
  if (saturation_.enabled()) out.saturation = judge_saturation(saturation_.sorted());
  out.series = step_series_.series();
  out.events = kernel_.processed();
  for (const auto& m : metrics_) {
    out.steps += static_cast<uint64_t>(m.steps);
    out.member_steps += static_cast<uint64_t>(m.member_steps);
    out.member_updates += static_cast<uint64_t>(m.member_updates);
  }
  if (timed_.enabled()) {
    out.timed = timed_.release();
    for (auto& m : metrics_) {
      out.timed.itl.insert(out.timed.itl.end(), m.timed_itl.begin(), m.timed_itl.end());
      m.timed_itl = {};
    }
  }
  out.instances = std::move(metrics_);
  if (series_.enabled()) out.timeseries = series_.csv();
  out.event_log = std::move(event_log_);
  out.rerouted = rerouted_;
  out.initial_instances = static_cast<int64_t>(out.instances.size()) -
                          std::count(cfg_.fleet.absent.begin(), cfg_.fleet.absent.end(), uint8_t{1});
  out.spans = std::move(spans_);
  out.scaling = std::move(applied_);
  out.nodes = std::move(nodes_);
  out.unplaced_waits = unplaced_waits_;
  out.unplaced_at_end = static_cast<int64_t>(unplaced_.size());
  if (pd_metrics_.enabled()) {
    if (cfg_.pd.contention) pd_metrics_.contention(pd_link_->peak(), pd_link_->mean_depth());
    out.pd = std::move(pd_metrics_);
  }
  if (out.instances.empty()) return out;
  int64_t completed = 0;
  for (const auto& m : out.instances) completed += m.completed;
  if (completed == 0) {
    const int64_t by_admission = out.rejected - unroutable_;
    if (unroutable_ > 0 && by_admission == 0)
      spdlog::warn("all {} requests rejected because no instance took traffic (every instance failed, drained or "
                   "was removed); no requests completed",
                   unroutable_);
    else if (unroutable_ > 0)
      spdlog::warn("no requests completed: {} requests rejected by the admission policy, {} because no instance took "
                   "traffic (every instance failed, drained or was removed)",
                   by_admission, unroutable_);
    else if (out.rejected > 0)
      spdlog::warn("all {} requests rejected by the admission policy; no requests completed", out.rejected);
    else if (cfg_.engine.horizon < 1'000'000)  // under a second: likely seconds written as a bare number
      spdlog::warn("no requests completed within the horizon of {} µs (a bare number is µs; {}s means {} seconds)",
                   cfg_.engine.horizon, cfg_.engine.horizon, cfg_.engine.horizon);
    else
      spdlog::warn("no requests completed: the horizon may be too short or the workload too small");
  }
  return out;
}

void ClusterSimulation::handle(const Event& e) {
  if (e.time >= next_probe_) probe(e.time);
  switch (kind_of(e)) {
    case EventKind::ClusterArrival: on_cluster_arrival(static_cast<uint32_t>(e.payload)); return;
    case EventKind::Admission: on_admission(static_cast<uint32_t>(e.payload)); return;
    case EventKind::Routing: on_routing(static_cast<uint32_t>(e.payload)); return;
    case EventKind::Scenario: scenario_event(e.payload); return;
    case EventKind::InstanceReady: on_instance_ready(e.payload); return;
    case EventKind::NodeReady: on_node_ready(e.payload); return;
    case EventKind::ScalingTick: scaling_tick(); return;
    case EventKind::ScaleActuation: actuate(static_cast<size_t>(e.payload)); return;
    case EventKind::PdPrefillRouting: pd_prefill_route(static_cast<uint32_t>(e.payload)); return;
    case EventKind::PdPrefilled: pd_prefilled(e.payload); return;
    case EventKind::PdTransferCheck: pd_check(e.payload); return;
    case EventKind::PdTransferDone: pd_transfer_done(e.payload); return;
    case EventKind::Step: break;
    case EventKind::Timeout:  // the instance checks the request is still its own
      if (pd_link_ && pd_timeout(e)) return;
      break;
    default:
      // A request still on its way to an instance that failed meanwhile.
      if (any_down_ && slots_[e.target].down) {
        lose(static_cast<uint32_t>(e.payload), slots_[e.target].down_reroutes);
        if (draining_ > 0) check_drained(e.target);
        return;
      }
  }
  instances_[e.target]->on_event(e);
  if (draining_ > 0) check_drained(e.target);
}

void ClusterSimulation::on_cluster_arrival(uint32_t slot) {
  if ((++arrived_ & 1023) == 0 && cfg_.on_progress) cfg_.on_progress(arrived_, kernel_.now());
  series_.arrival();
  if (pool_[slot].spec.round == 0) pull_next_arrival();
  schedule(kernel_, kernel_.now() + cfg_.admission_latency, EventKind::Admission, 0, slot);
}

// The instances as the router sees them now (spec cluster §4.2): periodic
// refresh of instance-reported signals, live in-flight counts.
const blis_route_input& ClusterSimulation::router_state(uint32_t slot) {
  const SimTime now = kernel_.now();
  size_t k = 0;  // instances that take traffic: all of them unless scenario events removed some
  for (size_t i = 0; i < instances_.size(); ++i) {
    if (cfg_.snapshot_refresh_interval == 0 || now - last_refresh_[i] >= cfg_.snapshot_refresh_interval) {
      last_refresh_[i] = now;
      const Instance& inst = *instances_[i];
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
      }
    }
    if (!slots_[i].routable) continue;
    state_[k] = cached_[i];
    state_[k].in_flight = static_cast<int32_t>(in_flight_[i]);
    ++k;
  }
  routable_count_ = static_cast<int64_t>(k);
  view_ = request_view(pool_[slot], cfg_.engine.block_size, pool_);
  // The blocks past the shareable ones are the request's own; the router
  // sees them only once unless something may route the request again.
  const bool routed_once = !cfg_.pd.enabled() && cfg_.events.empty() && cfg_.code == nullptr && !cfg_.fleet.enabled();
  if (routed_once) view_.own_blocks = std::max<int64_t>(view_.num_blocks - pool_[slot].spec.shareable_blocks, 0);
  fill_cached_blocks(now);
  input_ = blis_route_input{sizeof(blis_route_input), sizeof(blis_instance_snapshot), now, &view_,
                            state_.data(), routable_count_};
  return input_;
}

// spec head §7.2: each instance's cached leading blocks of the request, from
// the live caches (delay 0) or from copies re-taken, all together, once the
// last ones are `cache_signal_delay` old.
void ClusterSimulation::fill_cached_blocks(SimTime now) {
  const size_t count = static_cast<size_t>(routable_count_);
  if (!cfg_.cache_query) {
    for (size_t k = 0; k < count; ++k) state_[k].cached_blocks = -1;
    return;
  }
  const uint64_t* hashes = view_.block_hashes;
  const int64_t n = hashes == nullptr ? 0 : view_.num_blocks;
  if (cfg_.cache_signal_delay == 0) {
    for (size_t k = 0; k < count; ++k)
      state_[k].cached_blocks = instances_[static_cast<size_t>(state_[k].index)]->cached_prefix_length(hashes, n);
    return;
  }
  if (now - last_cache_refresh_ >= cfg_.cache_signal_delay) {
    for (size_t i = 0; i < instances_.size(); ++i) instances_[i]->copy_prefix_index(cache_copies_[i]);
    last_cache_refresh_ = now;
  }
  for (size_t k = 0; k < count; ++k)
    state_[k].cached_blocks = cache_copies_[static_cast<size_t>(state_[k].index)].cached_prefix(hashes, n);
}

void ClusterSimulation::on_admission(uint32_t slot) {
  bool admitted = true;
  std::string reason;  // the policy's word on a rejection (the decision trace counts them)
  if (policies_.admission) admitted = policies_.admission->admit(router_state(slot), reason);
  Request& r = pool_[slot];
  if (!admitted) {
    signals_.rejected(r, reason);
    pool_.release(slot);
    return;
  }
  signals_.admitted(r);
  schedule(kernel_, kernel_.now() + cfg_.routing_latency, EventKind::Routing, 0, slot);
}

void ClusterSimulation::reject_unroutable(Request& r, std::string_view reason) {
  const int32_t slo = r.spec.slo_class;  // read before the signal: it may release nothing, but be safe
  signals_.rejected(r, reason);
  ++unroutable_;
  ++unroutable_by_class_[slo];
}

void ClusterSimulation::on_routing(uint32_t slot) {
  if (pd_link_) {
    pd_route(slot);
    return;
  }
  const blis_route_input& in = router_state(slot);
  if (in.count == 0) {  // every instance failed or drained (scenario events)
    reject_unroutable(pool_[slot], "no instance takes traffic");
    pool_.release(slot);
    return;
  }
  const int32_t position = policies_.router->route(in, scores_);
  const int32_t target = state_[static_cast<size_t>(position)].index;
  if (warm_up_on_) {  // spec head §6.2 warm-up
    int32_t& left = slots_[static_cast<size_t>(target)].warm_left;
    pool_[slot].timing.warm_up = left > 0;
    if (left > 0) --left;
  }
  instances_[static_cast<size_t>(target)]->inject(slot, kernel_.now());
  signals_.routed(pool_[slot], RoutingChoice{target, scores_, in, position});
}

InstanceMetrics cluster_metrics(const ClusterResult& result) {
  std::vector<const InstanceMetrics*> parts;
  for (const auto& m : result.instances) parts.push_back(&m);
  InstanceMetrics out = merge_metrics(parts);
  out.still_queued += result.in_pipeline;
  return out;
}

}  // namespace blis
