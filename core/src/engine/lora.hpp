// LoRA adapters (docs/lora.md; HEAD's LoRA control plane): the registry of
// declared adapters with their cost model, and each instance's resident
// adapter slots. Inert unless adapters are declared with a capacity: an
// instance then holds a LoraSlots and nothing else changes.
//
// The model, as HEAD has it:
// - a request names its adapter (the workload's `adapter` key); "" is the
//   base model;
// - an instance holds at most `capacity` adapters, in LRU order; an adapter
//   used by a running request is pinned and never evicted;
// - when the wait queue's head needs an adapter not resident, the instance
//   loads it (one load at a time, base + ceil(rank * footprint / bandwidth)
//   µs), evicting the least recently used unpinned adapter when full; until
//   the load completes, admissions stop at the head (head-of-line);
// - a step whose scheduled members use A distinct adapters of largest rank r
//   lasts base * (1 + k6(r) / k7(r) * A), the tier nearest r (ties: lower);
// - on the auto-sized KV path, capacity * footprint * max rank bytes of HBM
//   are reserved from the KV budget.
#pragma once

#include <blis/label.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blis {

class AdapterEviction;

struct LoraAdapter {
  Label id;
  int64_t rank = 0;
  std::string base_model;  // "" = any
};

struct LoraTier {
  double k6 = 0, k7 = 1;
};

// HEAD's shipped defaults (its defaults.yaml `lora:` block).
inline constexpr double kLoraLoadBaseLatencyUs = 1500.0;
inline constexpr double kLoraLoadBandwidthBytesUs = 2.0e6;
inline constexpr double kLoraFootprintBytesPerRank = 2.0e6;
std::map<int64_t, LoraTier> default_lora_tiers();

// The resolved configuration: the registry and the cost model.
struct LoraConfig {
  std::vector<LoraAdapter> adapters;  // in the order declared
  std::optional<int64_t> capacity;    // per-instance slots
  double load_base_latency_us = kLoraLoadBaseLatencyUs;
  double load_bandwidth_bytes_us = kLoraLoadBandwidthBytesUs;
  double footprint_bytes_per_rank = kLoraFootprintBytesPerRank;
  std::map<int64_t, LoraTier> tiers = default_lora_tiers();
  // Which resident adapter a load evicts when the slots are full (an
  // adapter-eviction plugin, --lora-eviction); null: the least recently used
  // (the built-in lru's answer, without the call).
  std::shared_ptr<AdapterEviction> eviction;

  // Adapters declared with a capacity: the instances track them.
  bool active() const { return !adapters.empty() && capacity.has_value() && *capacity > 0; }
  // The declared adapter `id`, or null.
  const LoraAdapter* find(const Label& id) const;
  // µs to load adapter `id` (0 for the base model or an unknown id).
  double load_latency_us(const Label& id) const;
  // The step-time factor for `distinct` adapters of largest rank `max_rank` (>= 1).
  double step_factor(int64_t distinct, int64_t max_rank) const;
  // HBM held for the adapter slots: capacity x footprint x max rank (0 when inactive).
  double reserved_bytes() const;
  // Checks the numbers (HEAD's rules); returns the first problem, or "".
  std::string problem() const;
};

// Per-adapter counts of one instance: cold loads and evictions.
struct LoraEvents {
  int64_t loads = 0, evictions = 0;
};

// One instance's resident adapter slots and its load in progress.
class LoraSlots {
 public:
  explicit LoraSlots(std::shared_ptr<const LoraConfig> config, int32_t instance = 0)
      : config_(std::move(config)), instance_(instance) {}

  const LoraConfig& config() const { return *config_; }
  bool resident(const Label& id) const { return find(id) != nullptr; }
  bool loading() const { return !loading_.empty(); }
  // The head of the wait queue needs `id` (not resident) and nothing is
  // loading: frees a slot if needed (the eviction policy's choice among the
  // unpinned adapters) and starts the load; its µs, or -1 when every slot is
  // pinned.
  int64_t start_load(const Label& id, int64_t now_us);
  // The load in progress completed: its adapter is resident.
  void finish_load();
  // An operator's unload (a scenario event): `id` leaves its slot unless a
  // running request pins it. Whether it left (not counted as an eviction).
  bool unload(const Label& id);
  // The adapter being loaded ("" = none).
  const Label& loading_id() const { return loading_; }
  // A request of adapter `id` joins the batch (touched; pinned once per request).
  void touch(const Label& id);
  void pin(const Label& id);
  void unpin(const Label& id);
  // The resident adapters, least recently used first.
  std::vector<Label> resident_ids() const;
  const std::map<std::string, LoraEvents>& events() const { return events_; }

 private:
  struct Slot {
    Label id;
    uint32_t pins = 0;
  };
  Slot* find(const Label& id);
  const Slot* find(const Label& id) const;
  // The slot a load evicts: slots_.end() when every slot is pinned.
  std::vector<Slot>::iterator victim(const Label& loading, int64_t now_us);
  std::shared_ptr<const LoraConfig> config_;
  int32_t instance_ = 0;
  std::vector<Slot> slots_;  // LRU first
  Label loading_;
  std::map<std::string, LoraEvents> events_;
};

}  // namespace blis
