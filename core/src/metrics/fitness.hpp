// Fitness evaluation (spec cluster §6): a weighted sum of normalised metrics,
// for comparing configurations with one number.
#pragma once

#include "metrics/collector.hpp"

#include <map>
#include <string>

namespace blis {

// Parses "key:value,key:value" given at `where` (a flag or a file position);
// InputError(where, ...) on a bad piece, value or key. Keys: throughput, tokens_per_sec, p99_ttft, p50_ttft,
// mean_ttft, p99_e2e, p50_e2e, mean_e2e.
std::map<std::string, double> parse_fitness_weights(const std::string& text, const std::string& where);

struct Fitness {
  double score = 0;
  std::map<std::string, double> components;  // normalised, unweighted
};

Fitness evaluate_fitness(const InstanceMetrics& cluster, const std::map<std::string, double>& weights);

// "=== Fitness Evaluation ===" block.
std::string fitness_block(const Fitness& f);

}  // namespace blis
