// The SLO-class vocabulary of workloads (spec workload §5.3) and its mapping
// onto the plugin ABI's blis_slo_class.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "blis/plugin.h"

namespace blis::workload {

inline std::optional<int> slo_class_from_name(std::string_view name) {
  if (name.empty()) return BLIS_SLO_DEFAULT;
  if (name == "critical") return BLIS_SLO_CRITICAL;
  if (name == "standard") return BLIS_SLO_STANDARD;
  if (name == "sheddable") return BLIS_SLO_SHEDDABLE;
  if (name == "batch") return BLIS_SLO_BATCH;
  if (name == "background") return BLIS_SLO_BACKGROUND;
  return std::nullopt;
}

// The name of a blis_slo_class ("" for the default class).
inline const char* slo_class_name(int slo) {
  static const char* const kNames[] = {"", "critical", "standard", "sheddable", "batch", "background"};
  return slo >= 0 && slo < 6 ? kNames[slo] : "";
}

// Each class's priority (GIE's and BLIS HEAD's SLOPriorityMap): higher is
// more urgent, negative is sheddable. The defaults are GIE's; --slo-priorities
// (the policy file's admission.slo_priorities) changes them, the default
// class keeps 3 whatever `standard` becomes, as in HEAD.
struct SloPriorities {
  std::array<int, 6> of{3, 4, 3, -2, -1, -3};  // by blis_slo_class
  int priority(int32_t slo) const { return slo >= 0 && slo < 6 ? of[static_cast<size_t>(slo)] : of[0]; }
  bool sheddable(int32_t slo) const { return priority(slo) < 0; }
};

inline constexpr const char* kSloClassChoices =
    "critical, standard, sheddable, batch, background or empty";

}  // namespace blis::workload
