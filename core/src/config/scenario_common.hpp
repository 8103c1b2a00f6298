// What the TOML and Lua scenario readers share: section names that only group
// settings, and numbers written as command-line text.
#pragma once

#include <string>

namespace blis::scenario {

// Sections that only group settings ([model], [workload], ...): their keys are
// read as if written at the top level.
bool is_group(const std::string& key);
// Keys with a meaning of their own.
inline constexpr const char* kSweep = "sweep";
inline constexpr const char* kSearch = "search";
inline constexpr const char* kPluginConfig = "plugin-config";
// The groups, for error messages.
const char* group_names();

// A number as command-line text: integral values without a fraction, others
// in the shortest form that reads back exactly.
std::string number_text(double v);

}  // namespace blis::scenario
