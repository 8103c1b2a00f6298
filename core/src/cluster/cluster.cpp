#include "cluster/cluster.hpp"

#include "kernel/events.hpp"

#include <blis/errors.hpp>

#include <spdlog/spdlog.h>

namespace blis {

ClusterSimulation::ClusterSimulation(const ClusterConfig& cfg, WorkloadSource& source,
                                     const LatencyFactory& latency, ClusterPolicies policies)
    : cfg_(cfg), source_(source), kernel_(cfg.engine.horizon), policies_(std::move(policies)) {
  if (!policies_.router)
    policies_.router = std::make_unique<Router>(RoutingPolicy::RoundRobin, std::vector<WeightedScorer>{}, 0);
  if (cfg.num_instances < 1) throw InputError("--num-instances", "must be >= 1");
  const size_t n = static_cast<size_t>(cfg.num_instances);
  metrics_.resize(n);
  in_flight_.assign(n, 0);
  cached_.assign(n, blis_instance_snapshot{});
  for (size_t i = 0; i < n; ++i) cached_[i].index = static_cast<int32_t>(i);
  last_refresh_.assign(n, 0);
  state_.resize(n);
  trace_.targets.assign(n, 0);
  for (int32_t i = 0; i < cfg.num_instances; ++i) {
    metrics_[i].keep_records = cfg.keep_records;
    metrics_[i].keep_completions = cfg.keep_completions;
    instances_.push_back(
        std::make_unique<Instance>(i, cfg.engine, latency(i), pool_, kernel_, metrics_[i]));
  }
}

ClusterSimulation::~ClusterSimulation() = default;

// Arrivals are generated lazily: the next one is scheduled when the previous
// is processed, which gives the same order as scheduling all of them up front.
void ClusterSimulation::pull_next_arrival() {
  uint32_t slot = pool_.acquire();
  Request& r = pool_[slot];
  if (!source_.next(r.spec)) {
    pool_.release(slot);
    return;
  }
  r.instance = -1;
  if (r.spec.arrival_us > kernel_.horizon()) {
    pool_.release(slot);  // beyond the horizon: never processed
    return;
  }
  schedule(kernel_, r.spec.arrival_us, EventKind::ClusterArrival, 0, slot);
}

ClusterResult ClusterSimulation::run() {
  pull_next_arrival();
  kernel_.run(*this);
  ClusterResult out;
  for (auto& inst : instances_) inst->finalize();
  if (cfg_.keep_records) {
    // Requests routed but not yet queued when the run stopped still get a line.
    for (size_t s = 0; s < pool_.capacity(); ++s) {
      const Request& r = pool_[static_cast<uint32_t>(s)];
      if (r.state == RequestState::Pending && r.instance >= 0) {
        RequestRecord rec;
        rec.id = r.spec.id;
        rec.arrival_us = r.spec.arrival_us;
        rec.input_tokens = r.spec.input_tokens;
        rec.output_tokens = r.spec.output_tokens;
        rec.slo_class = r.spec.slo_class;
        rec.instance = r.instance;
        rec.tenant_id = r.spec.tenant_id;
        rec.model = r.spec.model;
        metrics_[r.instance].records.push_back(std::move(rec));
      }
    }
  }
  out.rejected = rejected_;
  out.trace = trace_;
  out.events = kernel_.processed();
  for (const auto& m : metrics_) out.steps += static_cast<uint64_t>(m.steps);
  out.instances = std::move(metrics_);
  if (out.instances.empty()) return out;
  int64_t completed = 0;
  for (const auto& m : out.instances) completed += m.completed;
  if (completed == 0) {
    if (rejected_ > 0)
      spdlog::warn("all {} requests rejected by the admission policy; no requests completed", rejected_);
    else
      spdlog::warn("no requests completed: the horizon may be too short or the workload too small");
  }
  return out;
}

void ClusterSimulation::handle(const Event& e) {
  switch (kind_of(e)) {
    case EventKind::ClusterArrival: on_cluster_arrival(static_cast<uint32_t>(e.payload)); return;
    case EventKind::Admission: on_admission(static_cast<uint32_t>(e.payload)); return;
    case EventKind::Routing: on_routing(static_cast<uint32_t>(e.payload)); return;
    default: break;
  }
  // An instance event: in-flight counts drop by what left during it.
  Instance& inst = *instances_[e.target];
  const int64_t before = inst.departures();
  inst.on_event(e);
  const int64_t delta = inst.departures() - before;
  if (delta > 0) {
    in_flight_[e.target] -= delta;
    if (in_flight_[e.target] < 0) in_flight_[e.target] = 0;
  }
}

void ClusterSimulation::on_cluster_arrival(uint32_t slot) {
  pull_next_arrival();
  schedule(kernel_, kernel_.now() + cfg_.admission_latency, EventKind::Admission, 0, slot);
}

// The instances as the router sees them now (spec cluster §4.2): periodic
// refresh of instance-reported signals, live in-flight counts.
const blis_route_input& ClusterSimulation::router_state(uint32_t slot) {
  const SimTime now = kernel_.now();
  for (size_t i = 0; i < instances_.size(); ++i) {
    if (cfg_.snapshot_refresh_interval == 0 || now - last_refresh_[i] >= cfg_.snapshot_refresh_interval) {
      const Instance& inst = *instances_[i];
      blis_instance_snapshot& c = cached_[i];
      c.queue_depth = inst.queue_depth();
      c.batch_size = inst.batch_size();
      c.total_kv_blocks = inst.kv().total_blocks();
      c.free_kv_blocks = inst.kv().free_blocks();
      c.kv_utilization = static_cast<double>(inst.kv().used_blocks()) /
                         static_cast<double>(inst.kv().total_blocks());
      c.cache_hit_rate = inst.kv().hit_rate();
      last_refresh_[i] = now;
    }
    state_[i] = cached_[i];
    state_[i].in_flight = static_cast<int32_t>(in_flight_[i]);
  }
  view_ = request_view(pool_[slot], cfg_.engine.block_size);
  input_ = blis_route_input{sizeof(blis_route_input), sizeof(blis_instance_snapshot), now, &view_,
                            state_.data(), static_cast<int64_t>(state_.size())};
  return input_;
}

void ClusterSimulation::on_admission(uint32_t slot) {
  bool admitted = true;
  if (policies_.admission) {
    std::string reason;
    admitted = policies_.admission->admit(router_state(slot), reason);
  }
  if (cfg_.trace_decisions) ++(admitted ? trace_.admitted : trace_.rejected);
  if (!admitted) {
    ++rejected_;
    pool_.release(slot);
    return;
  }
  schedule(kernel_, kernel_.now() + cfg_.routing_latency, EventKind::Routing, 0, slot);
}

void ClusterSimulation::on_routing(uint32_t slot) {
  const blis_route_input& in = router_state(slot);
  const int32_t target = policies_.router->route(in, scores_);
  if (cfg_.trace_decisions) trace_routing(target, scores_);
  ++in_flight_[static_cast<size_t>(target)];
  instances_[static_cast<size_t>(target)]->inject(slot, kernel_.now());
}

// spec cluster §5.3: regret = best score - chosen score, where a policy
// without scores is judged by negated effective load.
void ClusterSimulation::trace_routing(int32_t chosen, const std::vector<double>& scores) {
  ++trace_.routings;
  ++trace_.targets[static_cast<size_t>(chosen)];
  if (cfg_.counterfactual_k <= 0) return;
  auto score = [&](size_t i) {
    return scores.empty() ? -static_cast<double>(effective_load(state_[i])) : scores[i];
  };
  double best = score(0);
  for (size_t i = 1; i < state_.size(); ++i) best = std::max(best, score(i));
  const double regret = std::max(0.0, best - score(static_cast<size_t>(chosen)));
  trace_.regret_sum += regret;
  trace_.regret_max = std::max(trace_.regret_max, regret);
}

}  // namespace blis
