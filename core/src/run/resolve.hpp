// Resolution of a RunConfig (docs/design/configuration.md): defaults, data
// tables, the policy file, plugin names and what plugins need, checked, with
// errors naming the setting and where it was given.
#pragma once

#include "engine/kv_offload.hpp"
#include "cluster/router.hpp"
#include "engine/lora.hpp"
#include "engine/wait_queue.hpp"
#include "metrics/goodput.hpp"
#include "metrics/saturation.hpp"
#include "workload/trace_v2.hpp"

#include <blis/environment.hpp>
#include <blis/model_data.hpp>
#include <blis/plugin_overrides.hpp>
#include <blis/policy_config.hpp>
#include <blis/run_config.hpp>
#include <blis/scenario.hpp>
#include <blis/scenario_events.hpp>
#include <blis/workload.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blis {

class LuaVm;

// What one simulation needs besides its configuration: the plugin registries,
// a Lua VM for scripts and the data tables. The VM outlives every object made
// from its scripts, so it is declared before anything created from them.
struct RunContext {
  Environment env;
  std::unique_ptr<LuaVm> vm;
  DataCatalog data;

  static RunContext open(const RunConfig& config);
  RunContext(RunContext&&) noexcept;
  ~RunContext();

 private:
  RunContext() = default;
};

struct ResolvedRun {
  RunConfig given;   // as the writers left it (after the policy file)
  RunConfig config;  // every setting resolved; what --dump-config prints

  // Facts derived while resolving.
  std::string latency_model;  // registry name
  uint32_t latency_needs = 0;
  bool analytical = false;    // needs the model and the hardware
  std::optional<ModelArch> arch;
  std::optional<HardwareSpec> hardware;
  std::vector<double> alpha, beta;  // what the latency model gets (may be empty)
  std::vector<ScorerWeight> scorers;
  std::string saturation_detector;  // registry name; empty without --flow-control
  std::string dispatch_order;       // registry name; empty without --flow-control
  std::string encode_decider;       // registry name (never unless given)
  std::string fairness_policy;      // registry name; empty without --flow-control
  std::string shedding_policy;      // registry name; empty without --flow-control --queue-shedding
  std::string lora_eviction;        // registry name (lru unless given); empty without adapter slots
  std::string offload_eviction;     // registry name; empty for lru or without --kv-offload-config
  bool cache_query = false;  // a plugin reads the snapshots' cached_blocks
  RoutingPolicy routing = RoutingPolicy::RoundRobin;
  QueueOrder order = QueueOrder::Fcfs;
  std::map<std::string, double> fitness_weights;
  SloTargetMap slo_targets;  // goodput (spec head §2); empty = off
  std::vector<std::string> detectors;  // --detectors, in roster order; empty = none printed
  SaturationConfig saturation;         // --saturation-config, --saturation-final-window
  PluginOverrides overrides;
  int64_t seed = 42;                      // the simulator's streams
  int64_t horizon = kNoHorizon;
  int64_t request_cap = 0;                // 0 = unbounded (spec, trace)
  std::optional<WorkloadSpec> spec;       // spec file or synthesized distribution
  // The distribution or preset workload the spec was synthesized from (open
  // loop only): with seed, timeout, horizon and block size, all that makes
  // its requests (run/workload_reuse.hpp keys its cache on them).
  std::optional<DistributionWorkload> distribution;
  std::shared_ptr<const workload::TraceV2> replay;  // `blis replay`'s trace: the workload
  bool deadlines = false;                 // some client has a timeout: timed_out_requests is reported
  std::shared_ptr<const OffloadChainConfig> offload;  // --kv-offload-config (run/kv_offload_setup.hpp)
  // NAME.KEY=VALUE entries of the profile set: they reach the plugins of the
  // run only, under any key a writer gave (resolve.cpp:apply_profile_set).
  std::vector<std::string> profile_plugin_config;
  std::shared_ptr<const LoraConfig> lora;  // LoRA adapters (run/lora_setup.hpp); null = none
};

// Applies the policy file named by `config` (if any) to the policy settings
// that no other writer set (spec cluster §8.2: an explicit flag wins, even
// when equal to its default).
void apply_policy_file(RunConfig& config);

// A run's configuration from the writers' settings, lowest precedence first
// (a scenario's base, a configuration's own, the command line), then the
// policy file under them. `script_dir`, when given, is the scenario's folder.
RunConfig build_config(const std::vector<const Settings*>& layers, const std::string& script_dir = "");

// Resolves and checks everything; InputError/ConfigError/PluginError naming
// the setting (and file:line when it came from a file).
ResolvedRun resolve(const RunConfig& config, RunContext& ctx);

// Only what resolve() does for the workload and the goodput targets (`blis
// observe`, which sends the workload to a server): no model, policies or
// plugins are needed.
ResolvedRun resolve_workload_only(const RunConfig& config, RunContext& ctx);

// The workload the resolved run simulates. `events`: the run's scenario
// events, whose `rate` events that speed arrivals up (factor > 1) stretch
// the workload's own horizon by their factors, so that its arrivals last to
// the run's horizon (the arrivals past it are cut there).
std::unique_ptr<WorkloadSource> make_workload(const ResolvedRun& run,
                                              const std::vector<ScenarioEvent>& events = {});

// The workloads of the run's `workload` events (docs/cli.md "Scenario
// events"), in time order: each spec read, checked and bounded by what is
// left of the horizon. Sets `deadlines` when a phase's requests may time out.
struct WorkloadPhase {
  SimTime at = 0;
  std::unique_ptr<WorkloadSource> source;
};
std::vector<WorkloadPhase> make_workload_phases(const ResolvedRun& run, const std::vector<ScenarioEvent>& events,
                                                bool& deadlines);

}  // namespace blis
