// lowest-priority shedding policy (BLIS HEAD's --queue-shedding): the least
// urgent sheddable request queued (negative priority), the latest of them on
// a tie, leaves for an arriving request that is more urgent (or as urgent
// and earlier, which an arriving request never is); else none
// (docs/gateway.md).
#include <blis/plugin.hpp>

namespace {

class LowestPriority {
 public:
  explicit LowestPriority(blis::sdk::Context&) {}

  int64_t victim(const blis_shedding_input& in) {
    const auto* bytes = static_cast<const unsigned char*>(static_cast<const void*>(in.queued));
    const blis_shedding_candidate* best = nullptr;
    int64_t at = -1;
    for (uint64_t k = 0; k < in.count; ++k) {
      const auto* c = reinterpret_cast<const blis_shedding_candidate*>(bytes + k * in.candidate_size);
      if (c->priority >= 0) continue;
      if (best == nullptr || c->priority < best->priority ||
          (c->priority == best->priority && c->seq > best->seq)) {
        best = c;
        at = static_cast<int64_t>(k);
      }
    }
    if (best == nullptr) return -1;
    const bool more_urgent =
        in.priority > best->priority || (in.priority == best->priority && in.seq < best->seq);
    return more_urgent ? at : -1;
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::shedding_policy<LowestPriority>(
    "lowest-priority", "1.0.0",
    "The least urgent sheddable request, the latest on a tie, for a more urgent one"))
