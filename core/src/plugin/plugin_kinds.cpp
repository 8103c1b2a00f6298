// The table of plugin kinds (blis/plugin_kinds.hpp): one row per kind, and
// the per-kind functions its rows point to.
#include <blis/plugin_kinds.hpp>
#include <blis/registry.hpp>

#include "lua/lua_host.hpp"
#include "plugin/library_adapters.hpp"

#include <array>
#include <cstddef>

namespace blis {
namespace {

const ConfigTable& config_of(const CreateArgs& args) {
  static const ConfigTable kEmpty;
  return args.config != nullptr ? *args.config : kEmpty;
}

// Registers a library plugin or a script in the registry `Member` of
// Registries through the adapter `make`.
template <class T, Registry<T> Registries::*Member,
          std::unique_ptr<T> (*Make)(const LibraryPlugin&, const CreateArgs&)>
void add_library_plugin(Registries& reg, const LibraryPlugin& p) {
  (reg.*Member).add({p.name, p.version, p.summary, p.path, [p](const CreateArgs& a) { return Make(p, a); },
                     p.needs});
}

template <class T, Registry<T> Registries::*Member,
          std::unique_ptr<T> (*Make)(LuaVm&, const lua::ScriptSource&, const ConfigTable&)>
void add_script(Registries& reg, const ScriptPlugin& s) {
  // The factory ignores CreateArgs::seed: the VM was created with the run's
  // seed, and math.random streams derive from it and the registry name.
  (reg.*Member).add({s.name, s.version, s.summary, s.path,
                     [vm = s.vm, source = s.source](const CreateArgs& a) {
                       return Make(*vm, *source, config_of(a));
                     }});
}

template <class T, Registry<T> Registries::*Member>
RegistryBase& registry_of(Registries& reg) {
  return reg.*Member;
}

// A small fixed input for the smoke calls of `plugins inspect`.
struct SmokeInput {
  uint64_t hashes[4] = {1, 2, 3, 4};
  blis_request_view request{sizeof(blis_request_view), 16, 0, 0, 64, 0, hashes, 4, 0, 0, "", "", 0, ""};
  blis_instance_snapshot snapshots[2] = {{0, 1, 2, 3, 100, 200, 0.5, 0.1, 2, 0, 1, -1, 0},
                                         {1, 0, 0, 0, 200, 200, 0.0, 0.0, 0, 0, 1, -1, 0}};
  blis_route_input route{sizeof(blis_route_input), sizeof(blis_instance_snapshot), 0, &request,
                         snapshots, 2};
  blis_batch_entry entries[2] = {{512, 0, 512, 0, 512, BLIS_PHASE_PREFILL},
                                 {1024, 1024, 1024, 0, 1, BLIS_PHASE_DECODE}};
  blis_step_batch batch{sizeof(blis_step_batch), sizeof(blis_batch_entry), 0, 2, entries};
};

void smoke_latency(Registries& reg, const std::string& name, const ConfigTable& config) {
  SmokeInput in;
  auto m = reg.latency.create(name, CreateArgs{&config, 42});
  m->step_time(in.batch);
  m->queueing_time(in.request);
  m->output_token_time();
  m->post_decode_overhead();
}

void smoke_scorer(Registries& reg, const std::string& name, const ConfigTable& config) {
  SmokeInput in;
  auto s = reg.scorers.create(name, CreateArgs{&config, 42});
  double scores[2];
  s->score(in.route, scores);
  if (s->observes()) s->observe(in.route, 0);
}

void smoke_admission(Registries& reg, const std::string& name, const ConfigTable& config) {
  SmokeInput in;
  std::string reason;
  reg.admission.create(name, CreateArgs{&config, 42})->admit(in.route, reason);
}

void smoke_autoscaler(Registries& reg, const std::string& name, const ConfigTable& config) {
  const blis_scaling_variant variants[2] = {{0, 2, 3, 2, 1.0, 160000, 150240, 80000, 20, 40},
                                            {1, 1, 0, 1, 3.0, 80000, 10000, 80000, 0, 2}};
  const blis_scaling_input in{sizeof(blis_scaling_input), sizeof(blis_scaling_variant), 0, 0, variants, 2};
  reg.autoscalers.create(name, CreateArgs{&config, 42})->decide(in);
}

void smoke_saturation(Registries& reg, const std::string& name, const ConfigTable& config) {
  SmokeInput in;
  blis_route_input gate = in.route;
  gate.request = nullptr;  // the gateway asks about the instances only
  reg.saturation.create(name, CreateArgs{&config, 42})->saturation(gate);
}

void smoke_dispatch(Registries& reg, const std::string& name, const ConfigTable& config) {
  SmokeInput in;
  const blis_dispatch_input entering{sizeof(blis_dispatch_input), 3, 0, &in.request, 0};
  reg.dispatch.create(name, CreateArgs{&config, 42})->key(entering);
}

void smoke_encode(Registries& reg, const std::string& name, const ConfigTable& config) {
  SmokeInput in;
  const blis_encode_input asked{sizeof(blis_encode_input), 0, 0, &in.request, 576, 0, 0, 1, 0};
  reg.encode.create(name, CreateArgs{&config, 42})->encode(asked);
}

void smoke_fairness(Registries& reg, const std::string& name, const ConfigTable& config) {
  SmokeInput in;
  const blis_fairness_flow flows[2] = {{"a", 2, 1, &in.request}, {"b", 1, 2, &in.request}};
  const blis_fairness_input band{sizeof(blis_fairness_input), sizeof(blis_fairness_flow), 0, 3, -1, flows, 2};
  reg.fairness.create(name, CreateArgs{&config, 42})->pick(band);
}

void smoke_shedding(Registries& reg, const std::string& name, const ConfigTable& config) {
  SmokeInput in;
  const blis_shedding_candidate queued[2] = {{3, 0, 1, "a", &in.request}, {-2, 0, 2, "b", &in.request}};
  const blis_shedding_input full{
      sizeof(blis_shedding_input), sizeof(blis_shedding_candidate), 0, 4, 0, 3, &in.request, queued, 2};
  reg.shedding.create(name, CreateArgs{&config, 42})->victim(full);
}

void smoke_adapter_eviction(Registries& reg, const std::string& name, const ConfigTable& config) {
  const char* const resident[2] = {"a", "b"};
  const blis_adapter_eviction_input full{sizeof(blis_adapter_eviction_input), 0, 0, "c", resident, 2, 2};
  reg.adapter_eviction.create(name, CreateArgs{&config, 42})->choose(full);
}

void smoke_offload_eviction(Registries& reg, const std::string& name, const ConfigTable& config) {
  const blis_offload_block blocks[2] = {{11, -1, 0}, {12, 0, 0}};
  const blis_offload_eviction_input full{sizeof(blis_offload_eviction_input), sizeof(blis_offload_block), 0, 4, 4,
                                         blocks, 2};
  reg.offload_eviction.create(name, CreateArgs{&config, 42})->choose(full);
}

constexpr uint32_t end_of(size_t offset) { return static_cast<uint32_t>(offset + sizeof(void*)); }

const std::array<PluginKindRow, 11> kKinds = {{
    {PluginKind::LatencyModel, "latency-model", "latency", "step_time", "step_time(n)",
     end_of(offsetof(blis_latency_model_vtable, post_decode_overhead)), "post_decode_overhead", 6, true,
     &registry_of<LatencyModel, &Registries::latency>,
     &add_library_plugin<LatencyModel, &Registries::latency, &make_library_latency_model>,
     &add_script<LatencyModel, &Registries::latency, &lua::make_latency_from_source>, &smoke_latency},
    {PluginKind::RoutingScorer, "routing-scorer", "scorers", "score", "score(n)",
     end_of(offsetof(blis_routing_scorer_vtable, score)), "score", 3, false,
     &registry_of<RoutingScorer, &Registries::scorers>,
     &add_library_plugin<RoutingScorer, &Registries::scorers, &make_library_scorer>,
     &add_script<RoutingScorer, &Registries::scorers, &lua::make_scorer_from_source>, &smoke_scorer},
    {PluginKind::AdmissionPolicy, "admission-policy", "admission", "admit", "admit()",
     end_of(offsetof(blis_admission_policy_vtable, admit)), "admit", 3, false,
     &registry_of<AdmissionPolicy, &Registries::admission>,
     &add_library_plugin<AdmissionPolicy, &Registries::admission, &make_library_admission>,
     &add_script<AdmissionPolicy, &Registries::admission, &lua::make_admission_from_source>,
     &smoke_admission},
    {PluginKind::Autoscaler, "autoscaler", "autoscalers", "decide", "decide(n)",
     end_of(offsetof(blis_autoscaler_vtable, decide)), "decide", 3, false,
     &registry_of<Autoscaler, &Registries::autoscalers>,
     &add_library_plugin<Autoscaler, &Registries::autoscalers, &make_library_autoscaler>,
     &add_script<Autoscaler, &Registries::autoscalers, &lua::make_autoscaler_from_source>, &smoke_autoscaler},
    {PluginKind::SaturationDetector, "saturation-detector", "saturation", "saturation", "saturation(n)",
     end_of(offsetof(blis_saturation_detector_vtable, saturation)), "saturation", 3, false,
     &registry_of<SaturationDetector, &Registries::saturation>,
     &add_library_plugin<SaturationDetector, &Registries::saturation, &make_library_saturation>,
     &add_script<SaturationDetector, &Registries::saturation, &lua::make_saturation_from_source>,
     &smoke_saturation},
    {PluginKind::DispatchOrder, "dispatch-order", "dispatch", "order_key",
     "order_key(priority, slo_target_us)", end_of(offsetof(blis_dispatch_order_vtable, key)), "key", 3, false,
     &registry_of<DispatchOrder, &Registries::dispatch>,
     &add_library_plugin<DispatchOrder, &Registries::dispatch, &make_library_dispatch>,
     &add_script<DispatchOrder, &Registries::dispatch, &lua::make_dispatch_from_source>, &smoke_dispatch},
    {PluginKind::EncodeDecider, "encode-decider", "encode", "encode_request",
     "encode_request(image, audio, video, encoders, encoded)",
     end_of(offsetof(blis_encode_decider_vtable, decide)), "decide", 3, false,
     &registry_of<EncodeDecider, &Registries::encode>,
     &add_library_plugin<EncodeDecider, &Registries::encode, &make_library_encode>,
     &add_script<EncodeDecider, &Registries::encode, &lua::make_encode_from_source>, &smoke_encode},
    {PluginKind::FairnessPolicy, "fairness-policy", "fairness", "pick_flow", "pick_flow(priority)",
     end_of(offsetof(blis_fairness_policy_vtable, pick)), "pick", 3, false,
     &registry_of<FairnessPolicy, &Registries::fairness>,
     &add_library_plugin<FairnessPolicy, &Registries::fairness, &make_library_fairness>,
     &add_script<FairnessPolicy, &Registries::fairness, &lua::make_fairness_from_source>, &smoke_fairness},
    {PluginKind::SheddingPolicy, "shedding-policy", "shedding", "shed_victim",
     "shed_victim(queued, arriving)", end_of(offsetof(blis_shedding_policy_vtable, victim)), "victim", 3,
     false, &registry_of<SheddingPolicy, &Registries::shedding>,
     &add_library_plugin<SheddingPolicy, &Registries::shedding, &make_library_shedding>,
     &add_script<SheddingPolicy, &Registries::shedding, &lua::make_shedding_from_source>, &smoke_shedding},
    {PluginKind::AdapterEviction, "adapter-eviction", "eviction", "evict_adapter",
     "evict_adapter(loading, candidates)", end_of(offsetof(blis_adapter_eviction_vtable, choose)), "choose", 3, false,
     &registry_of<AdapterEviction, &Registries::adapter_eviction>,
     &add_library_plugin<AdapterEviction, &Registries::adapter_eviction, &make_library_adapter_eviction>,
     &add_script<AdapterEviction, &Registries::adapter_eviction, &lua::make_adapter_eviction_from_source>,
     &smoke_adapter_eviction},
    {PluginKind::OffloadEviction, "offload-eviction", "offload", "evict_block", "evict_block(candidates)",
     end_of(offsetof(blis_offload_eviction_vtable, choose)), "choose", 3, false,
     &registry_of<OffloadEviction, &Registries::offload_eviction>,
     &add_library_plugin<OffloadEviction, &Registries::offload_eviction, &make_library_offload_eviction>,
     &add_script<OffloadEviction, &Registries::offload_eviction, &lua::make_offload_eviction_from_source>,
     &smoke_offload_eviction},
}};

}  // namespace

std::span<const PluginKindRow> plugin_kinds() { return kKinds; }

const PluginKindRow* find_kind(int32_t blis_kind) {
  for (const auto& row : kKinds)
    if (static_cast<int32_t>(row.kind) == blis_kind) return &row;
  return nullptr;
}

const PluginKindRow* find_kind(std::string_view name) {
  for (const auto& row : kKinds)
    if (name == row.name) return &row;
  return nullptr;
}

const PluginKindRow& kind_row(PluginKind kind) { return *find_kind(static_cast<int32_t>(kind)); }

const char* kind_name(PluginKind kind) { return kind_row(kind).name; }

}  // namespace blis
