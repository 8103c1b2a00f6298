#include "engine/lora.hpp"

#include <blis/policies.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace blis {

std::map<int64_t, LoraTier> default_lora_tiers() { return {{8, {0.02, 1.0}}, {16, {0.035, 1.0}}, {32, {0.06, 1.0}}}; }

const LoraAdapter* LoraConfig::find(const Label& id) const {
  for (const LoraAdapter& a : adapters)
    if (a.id == id) return &a;
  return nullptr;
}

double LoraConfig::load_latency_us(const Label& id) const {
  const LoraAdapter* a = id.empty() ? nullptr : find(id);
  if (a == nullptr) return 0;
  const double footprint = footprint_bytes_per_rank * static_cast<double>(a->rank);
  return load_base_latency_us + std::ceil(footprint / load_bandwidth_bytes_us);
}

double LoraConfig::step_factor(int64_t distinct, int64_t max_rank) const {
  if (distinct == 0 || tiers.empty()) return 1.0;
  // The tier of max_rank, or the nearest (ties: the lower rank).
  auto best = tiers.begin();
  if (auto exact = tiers.find(max_rank); exact != tiers.end()) {
    best = exact;
  } else {
    for (auto it = std::next(tiers.begin()); it != tiers.end(); ++it)
      if (std::llabs(max_rank - it->first) < std::llabs(max_rank - best->first)) best = it;
  }
  return 1.0 + (best->second.k6 / best->second.k7) * static_cast<double>(distinct);
}

double LoraConfig::reserved_bytes() const {
  if (!active()) return 0;
  int64_t max_rank = 0;
  for (const LoraAdapter& a : adapters) max_rank = std::max(max_rank, a.rank);
  return static_cast<double>(*capacity) * footprint_bytes_per_rank * static_cast<double>(max_rank);
}

std::string LoraConfig::problem() const {
  if (!adapters.empty() && capacity && *capacity <= 0)
    return fmt::format("adapter_capacity must be > 0 when adapters are declared, got {}", *capacity);
  for (size_t i = 0; i < adapters.size(); ++i) {
    const LoraAdapter& a = adapters[i];
    if (a.id.empty()) return fmt::format("adapter {} has an empty id", i);
    if (a.rank <= 0) return fmt::format("adapter \"{}\": rank must be > 0, got {}", a.id.str(), a.rank);
    for (size_t j = 0; j < i; ++j)
      if (adapters[j].id == a.id) return fmt::format("duplicate adapter id \"{}\"", a.id.str());
  }
  if (!std::isfinite(load_base_latency_us) || load_base_latency_us < 0)
    return fmt::format("load_base_latency_us must be finite and >= 0, got {}", load_base_latency_us);
  if (!std::isfinite(load_bandwidth_bytes_us) || load_bandwidth_bytes_us <= 0)
    return fmt::format("load_bandwidth_bytes_us must be finite and > 0, got {}", load_bandwidth_bytes_us);
  if (!std::isfinite(footprint_bytes_per_rank) || footprint_bytes_per_rank <= 0)
    return fmt::format("footprint_bytes_per_rank must be finite and > 0, got {}", footprint_bytes_per_rank);
  for (const auto& [rank, t] : tiers) {
    if (rank <= 0) return fmt::format("step_overhead_tiers: rank key must be > 0, got {}", rank);
    if (!std::isfinite(t.k6) || t.k6 < 0)
      return fmt::format("step_overhead_tiers[{}].k6 must be finite and >= 0, got {}", rank, t.k6);
    if (!std::isfinite(t.k7) || t.k7 <= 0)
      return fmt::format("step_overhead_tiers[{}].k7 must be finite and > 0, got {}", rank, t.k7);
  }
  // HEAD's bounds: a load under ~31.7 years, a reservation under 1 EB.
  for (const LoraAdapter& a : adapters)
    if (const double us = load_latency_us(a.id); !std::isfinite(us) || us > 1e15)
      return fmt::format("adapter \"{}\" rank {} yields an unusable load latency ({} µs); reduce the rank or "
                         "footprint_bytes_per_rank",
                         a.id.str(), a.rank, us);
  if (const double b = reserved_bytes(); !std::isfinite(b) || b > 1e18)
    return fmt::format("the adapters' HBM reservation ({} bytes) is unusable; reduce adapter_capacity, "
                       "footprint_bytes_per_rank or the largest rank",
                       b);
  return "";
}

LoraSlots::Slot* LoraSlots::find(const Label& id) {
  for (Slot& s : slots_)
    if (s.id == id) return &s;
  return nullptr;
}

const LoraSlots::Slot* LoraSlots::find(const Label& id) const {
  for (const Slot& s : slots_)
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<LoraSlots::Slot>::iterator LoraSlots::victim(const Label& loading, int64_t now_us) {
  const auto first = std::find_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.pins == 0; });
  if (config_->eviction == nullptr || first == slots_.end()) return first;
  // The policy chooses among the unpinned adapters, least recently used first.
  std::vector<std::vector<Slot>::iterator> at;
  std::vector<const char*> ids;
  for (auto it = first; it != slots_.end(); ++it)
    if (it->pins == 0) at.push_back(it), ids.push_back(it->id.c_str());
  if (at.size() < 2) return first;
  const blis_adapter_eviction_input in{sizeof(blis_adapter_eviction_input), instance_, now_us, loading.c_str(),
                                       ids.data(), ids.size(), *config_->capacity};
  return at[config_->eviction->choose(in)];
}

int64_t LoraSlots::start_load(const Label& id, int64_t now_us) {
  if (static_cast<int64_t>(slots_.size()) >= *config_->capacity) {
    // The victim is committed now (HEAD: at load start): by default the
    // least recently used adapter no running request pins.
    const auto out = victim(id, now_us);
    if (out == slots_.end()) return -1;
    ++events_[out->id.str()].evictions;
    slots_.erase(out);
  }
  loading_ = id;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(config_->load_latency_us(id))));
}

void LoraSlots::finish_load() {
  if (loading_.empty()) return;
  if (Slot* s = find(loading_)) {
    // Resident already: touched.
    const Slot moved = *s;
    slots_.erase(slots_.begin() + (s - slots_.data()));
    slots_.push_back(moved);
  } else {
    slots_.push_back(Slot{loading_, 0});
  }
  ++events_[loading_.str()].loads;
  loading_.clear();
}

bool LoraSlots::unload(const Label& id) {
  Slot* s = find(id);
  if (s == nullptr || s->pins > 0) return false;
  slots_.erase(slots_.begin() + (s - slots_.data()));
  return true;
}

void LoraSlots::touch(const Label& id) {
  Slot* s = find(id);
  if (s == nullptr || s == &slots_.back()) return;
  const Slot moved = *s;
  slots_.erase(slots_.begin() + (s - slots_.data()));
  slots_.push_back(moved);
}

void LoraSlots::pin(const Label& id) {
  if (Slot* s = find(id)) ++s->pins;
}

void LoraSlots::unpin(const Label& id) {
  if (Slot* s = find(id); s != nullptr && s->pins > 0) --s->pins;
}

std::vector<Label> LoraSlots::resident_ids() const {
  std::vector<Label> out;
  out.reserve(slots_.size());
  for (const Slot& s : slots_) out.push_back(s.id);
  return out;
}

}  // namespace blis
