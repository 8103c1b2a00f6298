// The readers of the settings written as short lists (blis/run_config.hpp):
// --tenant-budgets, --slo-priorities, --slo-targets, --shard and
// --memory-limit. The settings table calls them when a value is given, so a
// configuration holds what they read and an error names where the value was
// given (`place.where`: "--tenant-budgets", "run.toml:3:18: tenant-budgets").
#pragma once

#include <blis/record_place.hpp>
#include <blis/run_config.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace blis {

// "tenant=fraction,...": a non-empty tenant once, a fraction in [0, 1].
TenantBudgetList parse_tenant_budgets(const std::string& text, const RecordPlace& place);
// "class=priority,...": a known SLO class, an integer in [-100, 100].
SloClassValues parse_slo_priorities(const std::string& text, const RecordPlace& place);
// "class=µs,...": a known SLO class, a whole number of µs > 0.
SloClassValues parse_gateway_slo_targets(const std::string& text, const RecordPlace& place);
// --slo-ttft, --slo-itl, --slo-e2e: "class=duration,..." (metrics/goodput.hpp).
SloClassMs parse_slo_durations(const std::string& text, const RecordPlace& place);
// --detectors: "all" or names of the roster (metrics/saturation.hpp).
std::vector<std::string> parse_detectors(const std::string& text, const RecordPlace& place);
// --fitness-weights: "key:weight,..." (metrics/fitness.hpp).
std::map<std::string, double> parse_fitness(const std::string& text, const RecordPlace& place);
// "I/N" with 0 <= I < N.
ShardSpec parse_shard(const std::string& text, const RecordPlace& place);
// A size: bytes, or with a unit (16GiB, 512MiB, 2GB, 4k).
int64_t parse_memory_limit(const std::string& text, const RecordPlace& place);

// A size as --memory-limit writes it, in bytes; nullopt if it is none.
std::optional<int64_t> parse_bytes(const std::string& text);

}  // namespace blis
