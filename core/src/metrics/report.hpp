// The stdout report (spec cluster §7.3-§7.7) and the results file (§7.8).
#pragma once

#include "metrics/collector.hpp"
#include "metrics/stats.hpp"

#include <map>
#include <string>
#include <vector>

namespace blis {

// Inter-token latencies of completed requests, as (value, count), sorted.
WeightedValues itl_values(const InstanceMetrics& m);

// Concatenation/sums over instances (spec cluster §7.2).
InstanceMetrics merge_metrics(const std::vector<const InstanceMetrics*>& parts);

// Every request that reached an instance (or waits in the cluster's pipeline,
// once merged): completed, queued, running, dropped or timed out.
int64_t injected_requests(const InstanceMetrics& m);

// One number of the metrics JSON object, in the object's order.
struct MetricField {
  std::string name;
  double value = 0;
  bool integer = false;  // printed without a fraction
};
std::vector<MetricField> metrics_fields(const InstanceMetrics& m);
// The medians the reference does not print (--format json and table).
std::vector<MetricField> median_fields(const InstanceMetrics& m);
// The value as the JSON object prints it.
std::string metric_text(const MetricField& f);

// The metrics JSON object; with `with_requests` the per-request array too;
// then `members` (each ",\n  \"key\": value"), the observers' (metrics/observer.hpp).
// HEAD's "adapters" object of a metrics block (LoRA), keys sorted.
std::string adapters_json(const InstanceMetrics& m);
std::string metrics_json(const InstanceMetrics& m, const std::string& instance_id,
                         bool with_requests, const std::string& members = {});

struct ReportContext {
  bool priority_policy_constant = true;
  int64_t rejected = 0;
  // HEAD's split of `rejected` (printed when the run reports timeouts, as
  // every HEAD run does): at routing, and the admission policy's by class.
  int64_t routing_rejected = 0;
  std::map<int32_t, int64_t> admission_rejected_by_class;
  bool per_slo_always = false;  // SLO targets set: the per-SLO block prints for one class too
  // The gateway's counts with --flow-control (cluster/gateway.hpp): still
  // queued at the end, shed, rejected by a full queue, evicted in flight, expired.
  int64_t gateway_depth = 0, gateway_shed = 0, gateway_rejected = 0, gateway_evicted = 0, gateway_expired = 0;
};

// "=== Anomaly Counters ===", "=== KV Cache Metrics ===", "=== Per-SLO
// Metrics ===" blocks, each only when its condition holds.
std::string text_blocks(const std::vector<const InstanceMetrics*>& instances,
                        const InstanceMetrics& cluster, const ReportContext& ctx);

// Counts pairs (earlier i, later j) of one SLO class with E2E_i > 2·E2E_j.
int64_t priority_inversions(std::vector<CompletionSample> samples);

const char* slo_class_name(int32_t slo);  // "" for the default class

// Jain's fairness index over per-tenant throughputs (spec cluster §7.9):
// (Σx)² / (n·Σx²), summed in key order; 0 for no tenants, 1 when all are 0.
double jain_fairness(const std::map<std::string, double>& per_tenant);

// Fraction of completed requests whose E2E (µs) meets its class's target;
// classes without a target always meet it (spec cluster §7.9).
double slo_attainment(const InstanceMetrics& m, const std::map<int32_t, int64_t>& e2e_targets);

}  // namespace blis
