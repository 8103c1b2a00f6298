// lora-affinity routing scorer (docs/lora.md; HEAD's): instances holding the
// request's LoRA adapter resident score 1, the others 0, min-max normalised,
// so every instance scores 1 when all or none hold it, or when the request
// names no adapter.
#include <blis/plugin.hpp>

#include <cstddef>
#include <cstdint>

namespace {

class LoraAffinity {
 public:
  explicit LoraAffinity(blis::sdk::Context&) {}

  void score(const blis_route_input& input, double* scores) const {
    const blis_request_view* r = input.request;
    const bool named = r != nullptr && r->struct_size >= offsetof(blis_request_view, adapter) + sizeof(r->adapter) &&
                       r->adapter != nullptr && r->adapter[0] != '\0';
    const bool has_field = input.snapshot_size >= offsetof(blis_instance_snapshot, adapter_resident) + sizeof(int32_t);
    bool any = false, all = true;
    for (int64_t i = 0; i < input.count; ++i) {
      const bool warm = named && has_field && blis::sdk::instance_at(input, i).adapter_resident == 1;
      any = any || warm;
      all = all && warm;
    }
    for (int64_t i = 0; i < input.count; ++i) {
      const bool warm = named && has_field && blis::sdk::instance_at(input, i).adapter_resident == 1;
      scores[i] = any && !all ? (warm ? 1.0 : 0.0) : 1.0;
    }
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<LoraAffinity>(
    "lora-affinity", "1.0.0", "1 where the request's LoRA adapter is resident, 0 elsewhere (all 1 when uniform)"))
