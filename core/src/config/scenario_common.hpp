// What the TOML and Lua scenario readers share: section names that only group
// settings, and numbers written as command-line text.
#pragma once

#include <blis/scenario.hpp>

#include <string>
#include <vector>

namespace blis::scenario {

// Sections that only group settings ([model], [workload], ...): their keys are
// read as if written at the top level.
bool is_group(const std::string& key);
// Keys with a meaning of their own.
inline constexpr const char* kSweep = "sweep";
inline constexpr const char* kSearch = "search";
inline constexpr const char* kPluginConfig = "plugin-config";
// A record (a pool, node pool, event, lifecycle, autoscaler: kRecord)
// written as a table (TOML, Lua) as the compact text its setting reads:
// `at`/`when`/`name` first, then `action`, then the rest by name, values
// quoted where they need it (util/compact_text.hpp).
std::string record_text(std::vector<std::pair<std::string, std::string>> fields);

// The groups, for error messages.
std::string group_names();

// A number as command-line (and JSON) text: integral values without a
// fraction, others in the shortest form that reads back exactly.
std::string number_text(double v);

// The most configurations a sweep may hold (docs/scenarios.md, "Bounds"): a
// sweep is built in memory before it runs, about 1 KiB per configuration.
constexpr size_t kMaxSweepConfigurations = 100000;

// The configurations of a product sweep: each axis lists one setting per
// value; the first axis varies slowest. ConfigError naming `where`, before
// anything is allocated, when there would be more than
// kMaxSweepConfigurations.
std::vector<Settings> product(const std::vector<Settings>& axes, const std::string& where);

// ConfigError naming `where` when a sweep of `count` configurations is too large.
void check_sweep_size(double count, const std::string& how, const std::string& where);

}  // namespace blis::scenario
