// Adapters from the C vtables of a library's plugins to the internal
// interfaces (blis/policies.hpp). Every call runs behind the same guard: a
// status error carries the plugin's message (read with strnlen from a buffer
// the host owns), an escaping C++ exception is caught, and returned values
// are checked, so each failure becomes a PluginError naming the file.
#pragma once

#include <blis/plugin_kinds.hpp>
#include <blis/registry.hpp>

#include <memory>

namespace blis {

std::unique_ptr<LatencyModel> make_library_latency_model(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<RoutingScorer> make_library_scorer(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<AdmissionPolicy> make_library_admission(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<Autoscaler> make_library_autoscaler(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<SaturationDetector> make_library_saturation(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<DispatchOrder> make_library_dispatch(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<EncodeDecider> make_library_encode(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<FairnessPolicy> make_library_fairness(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<SheddingPolicy> make_library_shedding(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<AdapterEviction> make_library_adapter_eviction(const LibraryPlugin& p, const CreateArgs& args);
std::unique_ptr<OffloadEviction> make_library_offload_eviction(const LibraryPlugin& p, const CreateArgs& args);

}  // namespace blis
