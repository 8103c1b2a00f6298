#include "run/lora_setup.hpp"

#include "config/strict_yaml.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cmath>
#include <map>
#include <string_view>

namespace blis {
namespace {

using config::StrictYaml;

// step_overhead_tiers: rank -> {k6, k7}, k7 required.
std::map<int64_t, LoraTier> read_tiers(const StrictYaml& y, const YAML::Node& v, const std::string& p) {
  static constexpr std::array<std::string_view, 2> kTier = {"k6", "k7"};
  std::map<int64_t, LoraTier> tiers;
  for (const auto& [rank, t] : y.entries(y.mapping(v, p), p, {})) {
    const std::string tp = config::child_path(p, rank);
    int64_t r = 0;
    try {
      r = std::stoll(rank);
    } catch (const std::exception&) {
      throw ConfigError(y.where(t.Mark()), tp + ": the key must be a rank (an integer)");
    }
    LoraTier tier;
    bool k7 = false;
    for (const auto& [k, w] : y.entries(y.mapping(t, tp), tp, kTier)) {
      if (k == "k6") tier.k6 = y.number(w, config::child_path(tp, k));
      if (k == "k7") tier.k7 = y.number(w, config::child_path(tp, k)), k7 = true;
    }
    if (!k7) throw ConfigError(y.where(t.Mark()), tp + ".k7 must be set (finite and > 0)");
    tiers[r] = tier;
  }
  return tiers;
}

// adapters: [{id, rank, base_model}], each one's place in `places`.
void read_adapters(const StrictYaml& y, const YAML::Node& v, const std::string& p, LoraConfig& out,
                   std::vector<std::string>& places) {
  static constexpr std::array<std::string_view, 3> kAdapter = {"id", "rank", "base_model"};
  const YAML::Node& seq = y.sequence(v, p);
  for (size_t i = 0; i < seq.size(); ++i) {
    const std::string ap = fmt::format("{}[{}]", p, i);
    LoraAdapter a;
    for (const auto& [k, w] : y.entries(y.mapping(seq[i], ap), ap, kAdapter)) {
      const std::string kp = config::child_path(ap, k);
      if (k == "id") a.id = Label(y.string(w, kp));
      else if (k == "rank") a.rank = y.integer(w, kp);
      else a.base_model = y.string(w, kp);
    }
    out.adapters.push_back(a);
    places.push_back(y.where(seq[i].Mark()));
  }
}

// The lora: block of a --lora-config file (HEAD's schema, strictly: unknown
// keys are errors) into `out`; the place of each adapter in `places`.
void read_lora_file(const std::string& path, LoraConfig& out, std::optional<double>& base,
                    std::optional<double>& bandwidth, std::optional<double>& footprint,
                    std::vector<std::string>& places, std::map<std::string, std::string>& key_places) {
  const std::string text = config::read_text_file(path, "LoRA config");
  const StrictYaml y(path, StrictYaml::Position::kLine);
  const auto doc = y.first_document(text);
  if (!doc || doc->IsNull()) return;
  static constexpr std::array<std::string_view, 1> kTop = {"lora"};
  static constexpr std::array<std::string_view, 6> kKeys = {
      "adapter_capacity", "load_base_latency_us", "load_bandwidth_bytes_us",
      "step_overhead_tiers", "footprint_bytes_per_rank", "adapters"};
  for (const auto& [top, block] : y.entries(y.mapping(*doc, ""), "", kTop)) {
    if (block.IsNull()) continue;
    for (const auto& [key, v] : y.entries(y.mapping(block, top), top, kKeys)) {
      const std::string p = config::child_path(top, key);
      if (v.IsNull()) continue;
      key_places[key] = y.where(v.Mark());
      if (key == "adapter_capacity") {
        out.capacity = y.integer(v, p);
      } else if (key == "load_base_latency_us") {
        base = y.number(v, p);
      } else if (key == "load_bandwidth_bytes_us") {
        bandwidth = y.number(v, p);
      } else if (key == "footprint_bytes_per_rank") {
        footprint = y.number(v, p);
      } else if (key == "step_overhead_tiers") {
        out.tiers = read_tiers(y, v, p);
      } else {
        read_adapters(y, v, p, out, places);
      }
    }
  }
}

// Each problem where it was written: an adapter at its line, a number at
// its flag or its line in the file (a place is "" for a value not given).
void check_lora(const LoraConfig& c, const std::vector<std::string>& places, const std::string& capacity,
                const std::string& base, const std::string& bandwidth, const std::string& footprint,
                const std::string& rest) {
  for (size_t i = 0; i < c.adapters.size(); ++i) {
    LoraConfig one;
    one.adapters.assign(c.adapters.begin(), c.adapters.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    if (const std::string p = one.problem(); !p.empty()) throw InputError(places[i], p);
  }
  const std::string p = c.problem();
  if (p.empty()) return;
  auto bad = [](const std::string& where, double x, bool zero_ok) {
    return !where.empty() && !(std::isfinite(x) && (zero_ok ? x >= 0 : x > 0));
  };
  const std::string where = !c.adapters.empty() && c.capacity && *c.capacity <= 0 ? capacity
                            : bad(base, c.load_base_latency_us, true)               ? base
                            : bad(bandwidth, c.load_bandwidth_bytes_us, false)      ? bandwidth
                            : bad(footprint, c.footprint_bytes_per_rank, false)     ? footprint
                                                                                    : rest;
  throw InputError(where, p);
}

}  // namespace

std::shared_ptr<const LoraConfig> resolve_lora(const RunConfig& c) {
  const LoraSettings& s = c.lora;
  if (!s.config && !s.adapter_capacity && !s.load_base_latency_us && !s.load_bandwidth_bytes_us &&
      !s.footprint_bytes_per_rank)
    return nullptr;
  auto out = std::make_shared<LoraConfig>();
  std::optional<double> base, bandwidth, footprint;
  std::vector<std::string> places;
  std::map<std::string, std::string> key_places;
  if (s.config) read_lora_file(*s.config, *out, base, bandwidth, footprint, places, key_places);
  // The flags win over the file, the file over HEAD's defaults.
  auto place = [&](const char* key) {
    const auto it = key_places.find(key);
    return it != key_places.end() ? it->second : c.where("lora_config");
  };
  std::string capacity_place = place("adapter_capacity"), base_place = place("load_base_latency_us"),
              bandwidth_place = place("load_bandwidth_bytes_us"), footprint_place = place("footprint_bytes_per_rank");
  if (s.adapter_capacity) out->capacity = *s.adapter_capacity, capacity_place = c.where("lora_adapter_capacity");
  if (s.load_base_latency_us) base = s.load_base_latency_us, base_place = c.where("lora_load_base_latency_us");
  if (s.load_bandwidth_bytes_us)
    bandwidth = s.load_bandwidth_bytes_us, bandwidth_place = c.where("lora_load_bandwidth_bytes_us");
  if (s.footprint_bytes_per_rank)
    footprint = s.footprint_bytes_per_rank, footprint_place = c.where("lora_footprint_bytes_per_rank");
  if (base) out->load_base_latency_us = *base;
  if (bandwidth) out->load_bandwidth_bytes_us = *bandwidth;
  if (footprint) out->footprint_bytes_per_rank = *footprint;

  check_lora(*out, places, capacity_place, base ? base_place : "", bandwidth ? bandwidth_place : "",
             footprint ? footprint_place : "", s.config ? place("step_overhead_tiers") : capacity_place);
  if (!out->adapters.empty() && !out->capacity)
    spdlog::warn("{}: adapters declared but adapter_capacity is not set; resident-adapter tracking is off and "
                 "adapter metrics will be zero (set --lora-adapter-capacity)",
                 s.config ? c.where("lora_config") : std::string("--lora-config"));
  return out;
}

void check_adapter_references(const LoraConfig* lora, const WorkloadSpec& spec, const std::string& where) {
  auto check = [&](const char* kind, const TrafficSource& t) {
    if (t.adapter.empty()) return;
    const LoraAdapter* a = lora != nullptr ? lora->find(Label(t.adapter)) : nullptr;
    if (lora == nullptr || lora->adapters.empty())
      throw InputError(where, fmt::format("{} \"{}\" references adapter \"{}\" but no adapters are declared "
                                          "(--lora-config)",
                                          kind, t.id, t.adapter));
    if (a == nullptr)
      throw InputError(where, fmt::format("{} \"{}\" references unknown adapter \"{}\" (not declared in "
                                          "--lora-config)",
                                          kind, t.id, t.adapter));
    if (!a->base_model.empty() && a->base_model != t.model)
      throw InputError(where, fmt::format("{} \"{}\" model \"{}\" does not match adapter \"{}\" base model \"{}\"",
                                          kind, t.id, t.model, t.adapter, a->base_model));
  };
  for (const ClientSpec& cl : spec.clients) check("client", cl);
  for (const CohortSpec& co : spec.cohorts) check("cohort", co);
}

void check_trace_adapters(const LoraConfig* lora, const std::vector<workload::TraceRecord>& records,
                          const std::string& data_path) {
  if (lora == nullptr || lora->adapters.empty()) return;
  for (const workload::TraceRecord& t : records) {
    if (t.adapter.empty()) continue;
    const std::string where = fmt::format("{}:{}", data_path, t.line);
    const LoraAdapter* a = lora->find(Label(t.adapter));
    if (a == nullptr)
      throw InputError(where,
                       fmt::format("request {} names adapter \"{}\", which --lora-config does not declare; "
                                   "declare it, or replay without adapters (no --lora-config)",
                                   t.request_id, t.adapter));
    if (!a->base_model.empty() && !t.model.empty() && a->base_model != t.model)
      throw InputError(where,
                       fmt::format("request {} model \"{}\" does not match adapter \"{}\" base model \"{}\"",
                                   t.request_id, t.model, t.adapter, a->base_model));
  }
}

}  // namespace blis
