#include "cluster/cluster.hpp"

#include <blis/errors.hpp>

#include <spdlog/spdlog.h>

namespace blis {

namespace {

// Cluster events run before instance events at the same time, arrivals before
// admissions before routings (spec cluster §1.4).
enum ClusterEvent : uint32_t { kEvClusterArrival = 100, kEvAdmission = 101, kEvRouting = 102 };
constexpr uint64_t kPrioArrival = 0, kPrioAdmission = 1, kPrioRouting = 2;

}  // namespace

ClusterSimulation::ClusterSimulation(const ClusterConfig& cfg, WorkloadSource& source,
                                     const LatencyFactory& latency)
    : cfg_(cfg), source_(source), kernel_(cfg.engine.horizon) {
  if (cfg.num_instances < 1) throw InputError("--num-instances", "must be >= 1");
  metrics_.resize(static_cast<size_t>(cfg.num_instances));
  in_flight_.assign(static_cast<size_t>(cfg.num_instances), 0);
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
  kernel_.schedule(r.spec.arrival_us, kPrioArrival, kEvClusterArrival, 0, slot);
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
  switch (e.kind) {
    case kEvClusterArrival: on_cluster_arrival(static_cast<uint32_t>(e.payload)); return;
    case kEvAdmission: on_admission(static_cast<uint32_t>(e.payload)); return;
    case kEvRouting: on_routing(static_cast<uint32_t>(e.payload)); return;
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
  kernel_.schedule(kernel_.now() + cfg_.admission_latency, kPrioAdmission, kEvAdmission, 0, slot);
}

void ClusterSimulation::on_admission(uint32_t slot) {
  kernel_.schedule(kernel_.now() + cfg_.routing_latency, kPrioRouting, kEvRouting, 0, slot);
}

void ClusterSimulation::on_routing(uint32_t slot) {
  const int32_t target = route(slot);
  ++in_flight_[static_cast<size_t>(target)];
  instances_[static_cast<size_t>(target)]->inject(slot, kernel_.now());
}

int32_t ClusterSimulation::route(uint32_t) {
  return static_cast<int32_t>(round_robin_++ % static_cast<uint64_t>(cfg_.num_instances));
}

}  // namespace blis
