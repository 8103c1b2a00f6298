// What the workload-spec pipeline shares between its files: the v1 upgrade,
// error placement, and the expansion of a spec into the generator's client
// list (spec workload §5.10, §5.12, §6.1-§6.2).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "blis/errors.hpp"
#include "blis/workload.hpp"

namespace blis::workload {

// Go's wrapping int64 arithmetic, without C++'s undefined overflow.
inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// spec workload §5.1 step 4: version "" or "1" becomes "2" and the clients'
// v1 SLO names are mapped, with one deprecation warning per mapped client.
void upgrade_legacy_version(WorkloadSpec& spec);

// Throws `e` again; for a spec read from a file, as a ConfigError placed at
// the position of its field (or of the nearest enclosing field written).
[[noreturn]] void rethrow_located(const SpecSource& source, const InputError& e);

// spec workload §5.12: replaces the spec's empty client list by the
// inference-perf clients (+ category and aggregate rate). Errors name
// inference_perf fields.
void expand_inference_perf(WorkloadSpec& spec);

// spec workload §5.11: one client per chunk of a ServeGen directory. Errors
// name servegen_data.path.
std::vector<ClientSpec> load_servegen_clients(const ServeGenDataSpec& data);

// Cohort lifecycle windows (spec workload §5.10).
std::vector<LifecycleWindow> diurnal_windows(const DiurnalSpec& d);
std::vector<LifecycleWindow> drain_windows(const DrainSpec& d);

// One client of the generator (spec workload §6.2) and the field path that
// names it in errors. Cohort members of one cohort share one description.
struct ClientEntry {
  const ClientSpec* client;
  std::string where;  // "clients[2]", "cohorts[0]"
};

// Explicit clients in file order, then each cohort's members in order.
// `members` receives the cohorts' shared member descriptions (the entries
// point into it and into spec.clients).
std::vector<ClientEntry> all_clients(const WorkloadSpec& spec, std::deque<ClientSpec>& members);

}  // namespace blis::workload
