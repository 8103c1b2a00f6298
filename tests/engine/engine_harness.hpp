// Test harness: runs the real cluster driver over hand-made requests with the
// built-in latency-model plugins loaded from the build's stage directory.
#pragma once

#include "cluster/cluster.hpp"
#include "metrics/report.hpp"

#include <blis/block_hash.hpp>
#include <blis/config_table.hpp>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>
#include <blis/workload.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blis::test {

// Requests from a list, in order.
class VectorSource final : public WorkloadSource {
 public:
  explicit VectorSource(std::vector<WorkloadRequest> reqs) : reqs_(std::move(reqs)) {}
  bool next(WorkloadRequest& out) override {
    if (at_ >= reqs_.size()) return false;
    out = reqs_[at_++];
    return true;
  }

 private:
  std::vector<WorkloadRequest> reqs_;
  size_t at_ = 0;
};

// Chained content hashes of every complete block of `seq`, as the workload
// generator computes them.
inline std::vector<uint64_t> block_hashes_of(const std::vector<uint32_t>& seq, int32_t block_size) {
  std::vector<uint64_t> out;
  const size_t b_size = static_cast<size_t>(block_size);
  uint64_t prev = kEmptyPrefixHash;
  for (size_t b = 0; b + b_size <= seq.size(); b += b_size) {
    BlockHasher h(prev);
    for (size_t k = b; k < b + b_size; ++k) h.add(seq[k]);
    prev = h.finish();
    out.push_back(prev);
  }
  return out;
}

// A request whose input tokens are `first_token .. first_token+input-1` and
// whose output tokens are distinct from every input token.
inline WorkloadRequest make_request(uint64_t id, int64_t arrival, int32_t input, int32_t output,
                                    uint32_t first_token, int32_t block_size = 16) {
  WorkloadRequest r;
  r.id = id;
  r.arrival_us = arrival;
  r.input_tokens = input;
  r.output_tokens = output;
  r.max_output_tokens = 0;
  std::vector<uint32_t> seq;
  for (int32_t i = 0; i < input; ++i) seq.push_back(first_token + static_cast<uint32_t>(i));
  for (int32_t i = 0; i < output; ++i) seq.push_back(1000000 + static_cast<uint32_t>(id * 10000 + i));
  r.block_hashes = block_hashes_of(seq, block_size);
  return r;
}

inline Registries& builtin_registries() {
  static Registries* reg = [] {
    auto* r = new Registries();
    scan_plugin_dirs(*r, {std::string(BLIS_TEST_STAGE) + "/lib/blis/plugins"});
    return r;
  }();
  return *reg;
}

struct RunOutcome {
  ClusterResult result;
  InstanceMetrics cluster;
  std::string json;
};

inline RunOutcome run_cluster(const ClusterConfig& cfg, WorkloadSource& src,
                              const std::string& model, const ConfigTable& latency_cfg,
                              ClusterPolicies policies = {}) {
  ClusterSimulation sim(cfg, src, [&](int32_t) {
    return builtin_registries().latency.create(model, CreateArgs{&latency_cfg, 42});
  }, std::move(policies));
  RunOutcome out;
  out.result = sim.run();
  out.cluster = cluster_metrics(out.result);
  out.json = metrics_json(out.cluster, "cluster", cfg.keep_records);
  return out;
}

inline ConfigTable blackbox_config(std::vector<double> alpha, std::vector<double> beta) {
  ConfigTable c;
  c.set("alpha_coeffs", std::move(alpha));
  c.set("beta_coeffs", std::move(beta));
  return c;
}

// The cluster tests' model: a step takes 1000 µs + 10 µs per prefill token +
// 5 µs per decode token, with no queueing or output overhead.
inline const ConfigTable& step_1000_10_5() {
  static const ConfigTable c = blackbox_config({0, 0, 0}, {1000, 10, 5});
  return c;
}

// `count` requests `gap` µs apart (the first at 0), each with its own prompt.
inline std::vector<WorkloadRequest> evenly_spaced(int64_t gap, int count, int32_t input = 256, int32_t output = 200) {
  std::vector<WorkloadRequest> out;
  for (int i = 0; i < count; ++i)
    out.push_back(make_request(static_cast<uint64_t>(i), i * gap, input, output, static_cast<uint32_t>(i) * 1000));
  return out;
}

}  // namespace blis::test
