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
inline constexpr const char* kEvents = "events";
inline constexpr const char* kPools = "pools";
inline constexpr const char* kNodePools = "node-pools";
// A scenario event written as a table (TOML [[events]], a Lua `events` entry)
// as the text the `events` setting reads (blis/scenario_events.hpp): its
// key=value pairs, `at`/`when` and `action` first, then the rest by name.
std::string event_text(std::vector<std::pair<std::string, std::string>> fields);

// The groups, for error messages.
std::string group_names();

// A number as command-line (and JSON) text: integral values without a
// fraction, others in the shortest form that reads back exactly.
std::string number_text(double v);

// The configurations of a product sweep: each axis lists one setting per
// value; the first axis varies slowest.
std::vector<Settings> product(const std::vector<Settings>& axes);

}  // namespace blis::scenario
