// The reference's defaults.yaml (c9ca689b or HEAD layout) read over the
// bundled data tables (--defaults-filepath): each model default, preset,
// coefficient entry and global coefficient set the file gives replaces the
// bundled one of the same key; the rest of the bundled data stays. Read
// strictly: keys the reference never wrote are errors at file:line:col.
#include <blis/errors.hpp>
#include <blis/model_data.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "config/strict_yaml.hpp"
#include "util/text.hpp"

namespace blis {

namespace {

using config::StrictYaml;

std::vector<double> numbers(const StrictYaml& y, const YAML::Node& v, const std::string& path) {
  std::vector<double> out;
  const YAML::Node& seq = y.sequence(v, path);
  for (size_t i = 0; i < seq.size(); ++i) out.push_back(y.number(seq[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

ModelDefaults model_defaults(const StrictYaml& y, const YAML::Node& v, const std::string& path) {
  static constexpr std::array<std::string_view, 4> kKeys = {"GPU", "tensor_parallelism", "vllm_version", "hf_repo"};
  ModelDefaults d;
  for (const auto& [key, w] : y.entries(y.mapping(v, path), path, kKeys)) {
    if (w.IsNull()) continue;
    const std::string p = config::child_path(path, key);
    if (key == "GPU") d.gpu = y.string(w, p);
    else if (key == "tensor_parallelism") d.tensor_parallelism = y.integer(w, p);
    else if (key == "vllm_version") d.vllm_version = y.string(w, p);
    else d.hf_repo = y.string(w, p);
  }
  return d;
}

PresetWorkload preset_workload(const StrictYaml& y, const YAML::Node& v, const std::string& path) {
  PresetWorkload p;
  const std::array<std::pair<std::string_view, int64_t*>, 9> fields = {{
      {"prefix_tokens", &p.prefix_tokens},
      {"prompt_tokens", &p.prompt_tokens},
      {"prompt_tokens_stdev", &p.prompt_tokens_stdev},
      {"prompt_tokens_min", &p.prompt_tokens_min},
      {"prompt_tokens_max", &p.prompt_tokens_max},
      {"output_tokens", &p.output_tokens},
      {"output_tokens_stdev", &p.output_tokens_stdev},
      {"output_tokens_min", &p.output_tokens_min},
      {"output_tokens_max", &p.output_tokens_max}}};
  std::array<std::string_view, 9> keys;
  std::transform(fields.begin(), fields.end(), keys.begin(), [](const auto& f) { return f.first; });
  for (const auto& [entry_key, w] : y.entries(y.mapping(v, path), path, keys)) {
    const auto& key = entry_key;  // named: clang before 16 cannot capture a structured binding
    if (w.IsNull()) continue;
    const auto f = std::find_if(fields.begin(), fields.end(), [&](const auto& x) { return x.first == key; });
    *f->second = y.integer(w, config::child_path(path, key));
  }
  return p;
}

CoefficientEntry coefficient_entry(const StrictYaml& y, const YAML::Node& v, const std::string& path) {
  static constexpr std::array<std::string_view, 8> kKeys = {
      "id", "GPU", "tensor_parallelism", "vllm_version", "alpha_coeffs", "beta_coeffs", "total_kv_blocks",
      "best_loss"};  // best_loss: the fit's loss, informational
  CoefficientEntry e;
  bool has_id = false;
  for (const auto& [key, w] : y.entries(y.mapping(v, path), path, kKeys)) {
    if (w.IsNull()) continue;
    const std::string p = config::child_path(path, key);
    if (key == "id") e.id = text::lower(y.string(w, p)), has_id = true;
    else if (key == "GPU") e.gpu = y.string(w, p);
    else if (key == "tensor_parallelism") e.tensor_parallelism = y.integer(w, p);
    else if (key == "vllm_version") e.vllm_version = y.string(w, p);
    else if (key == "alpha_coeffs") e.alpha = numbers(y, w, p);
    else if (key == "beta_coeffs") e.beta = numbers(y, w, p);
    else if (key == "total_kv_blocks") e.total_kv_blocks = y.integer(w, p);
    else y.number(w, p);
  }
  if (!has_id) throw ConfigError(y.where(v.Mark()), path + ": a coefficient entry needs an id (the model name)");
  return e;
}

GlobalCoefficients global(const StrictYaml& y, const YAML::Node& v, const std::string& path) {
  static constexpr std::array<std::string_view, 2> kKeys = {"alpha_coeffs", "beta_coeffs"};
  GlobalCoefficients g;
  for (const auto& [key, w] : y.entries(y.mapping(v, path), path, kKeys)) {
    if (w.IsNull()) continue;
    const std::string p = config::child_path(path, key);
    (key == "alpha_coeffs" ? g.alpha : g.beta) = numbers(y, w, p);
  }
  return g;
}

}  // namespace

void DataCatalog::apply_reference_defaults(const std::string& path) {
  const std::string text = config::read_text_file(path, "defaults file");
  const StrictYaml y(path, StrictYaml::Position::kLineColumn);
  const auto doc = y.first_document(text);
  if (!doc || doc->IsNull()) throw ConfigError(path, "empty defaults file (no YAML document)");
  // Both layouts: c9ca689b (models, crossmodel_defaults,
  // trained_roofline_defaults) and HEAD (trained_physics_coefficients, lora,
  // kv_offload_devices). lora and kv_offload_devices configure features blis
  // does not model; version is the file's own.
  static constexpr std::array<std::string_view, 9> kTop = {
      "defaults", "workloads", "models", "crossmodel_defaults", "trained_roofline_defaults",
      "trained_physics_coefficients", "lora", "kv_offload_devices", "version"};
  for (const auto& [key, v] : y.entries(y.mapping(*doc, ""), "", kTop)) {
    if (v.IsNull()) continue;
    if (key == "defaults") {
      for (const auto& [model, e] : y.entries(y.mapping(v, key), key, {}))
        defaults_[text::lower(model)] = model_defaults(y, e, "defaults." + model);
    } else if (key == "workloads") {
      for (const auto& [name, e] : y.entries(y.mapping(v, key), key, {}))
        presets_[name] = preset_workload(y, e, "workloads." + name);
    } else if (key == "models") {
      const YAML::Node& seq = y.sequence(v, key);
      std::vector<CoefficientEntry> given;
      for (size_t i = 0; i < seq.size(); ++i)
        given.push_back(coefficient_entry(y, seq[i], "models[" + std::to_string(i) + "]"));
      // The file's entries replace bundled ones of the same (model, GPU, TP,
      // vLLM) and come first, so that they are the ones found.
      std::erase_if(entries_, [&](const CoefficientEntry& b) {
        return std::any_of(given.begin(), given.end(), [&](const CoefficientEntry& g) {
          return g.id == b.id && g.gpu == b.gpu && g.tensor_parallelism == b.tensor_parallelism &&
                 g.vllm_version == b.vllm_version;
        });
      });
      entries_.insert(entries_.begin(), given.begin(), given.end());
    } else if (key == "crossmodel_defaults") {
      plugin_coefficients_["crossmodel"] = global(y, v, key);
    } else if (key == "trained_roofline_defaults") {
      plugin_coefficients_["trained-roofline"] = global(y, v, key);
    } else if (key == "trained_physics_coefficients") {
      plugin_coefficients_["trained-physics"] = global(y, v, key);
    }
  }
}

}  // namespace blis
