// `blis models` and `blis hardware`: what the bundled data tables hold.
#include <blis/environment.hpp>
#include <blis/model_data.hpp>
#include <blis/plugin_kinds.hpp>
#include <blis/registry.hpp>
#include <blis/run.hpp>
#include <blis/settings.hpp>

#include "util/json_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace blis {
namespace {

DataCatalog bundled_data() { return DataCatalog::load(Environment::load({}, 42).data_dir); }

std::string short_name(const std::string& model) {
  const auto slash = model.find('/');
  return slash == std::string::npos ? model : model.substr(slash + 1);
}

}  // namespace

std::string models_listing() {
  const DataCatalog data = bundled_data();
  const std::vector<std::string> archs = data.architecture_names();
  std::set<std::string> names(archs.begin(), archs.end());
  std::set<std::string> covered;  // architecture short names with a full model name
  for (const auto& n : data.model_names()) {
    names.insert(n);
    covered.insert(short_name(n));
  }
  std::string out = fmt::format("{:<58} {:<9} {:>3}  {:<5} {}\n", "MODEL", "GPU", "TP", "ARCH",
                                "TRAINED COEFFICIENTS (GPU/TP: KV blocks)");
  for (const auto& name : names) {
    if (name.find('/') == std::string::npos && covered.count(name)) continue;
    const auto d = data.defaults_for(name);
    const bool arch = std::binary_search(archs.begin(), archs.end(), short_name(name));
    std::vector<std::string> coeffs;
    for (const auto& e : data.coefficient_entries())
      if (e.id == name) {
        const std::string c = fmt::format("{}/{}: {}", e.gpu, e.tensor_parallelism, e.total_kv_blocks);
        if (std::find(coeffs.begin(), coeffs.end(), c) == coeffs.end()) coeffs.push_back(c);
      }
    out += fmt::format("{:<58} {:<9} {:>3}  {:<5} {}\n", name, d ? d->gpu : "-",
                       d && d->tensor_parallelism > 0 ? std::to_string(d->tensor_parallelism) : "-",
                       arch ? "yes" : "no", coeffs.empty() ? "-" : fmt::format("{}", fmt::join(coeffs, ", ")));
  }
  out += "\nGPU and TP: the defaults used when --hardware and --tp are not given. ARCH: the model's\n"
         "architecture is bundled, so the analytical latency models can simulate it on any GPU of\n"
         "`blis hardware`. TRAINED COEFFICIENTS: the GPU/TP pairs with fitted coefficients, for the\n"
         "latency models that need them, with their KV blocks per instance.\n";
  return out;
}

std::string hardware_listing() {
  const DataCatalog data = bundled_data();
  std::string out = fmt::format("{:<10} {:>12} {:>14} {:>12} {:>11} {:>11}\n", "GPU", "TFLOPS peak",
                                "HBM TB/s peak", "memory GiB", "MFU prefill", "MFU decode");
  for (const auto& [name, h] : data.gpus())
    out += fmt::format("{:<10} {:>12} {:>14} {:>12} {:>11} {:>11}\n", name, go_float(h.tflops_peak),
                       go_float(h.bw_peak_tbs), go_float(h.memory_gib), go_float(h.mfu_prefill),
                       go_float(h.mfu_decode));
  out += "\nNames are case-insensitive (--hardware h100). --hardware-config FILE replaces this table.\n";
  return out;
}

std::vector<std::string> setting_values(const SettingDef& def) {
  if (def.values_from.empty()) return def.choices;
  // Several settings draw from one source (--hardware, --prefill-hardware...).
  static std::map<std::string, std::vector<std::string>> cache;
  if (auto it = cache.find(def.values_from); it != cache.end()) return it->second;
  std::set<std::string> names;
  if (def.values_from == "gpus" || def.values_from == "models") {
    const DataCatalog data = bundled_data();
    if (def.values_from == "gpus")
      for (const auto& [name, gpu] : data.gpus()) names.insert(name);
    else
      for (const auto& n : data.model_names()) names.insert(n);
    std::set<std::string> covered;
    for (const auto& n : names) covered.insert(short_name(n));
    if (def.values_from == "models")
      for (const auto& n : data.architecture_names())
        if (!covered.count(n)) names.insert(n);
  } else {
    Environment env = Environment::load({}, 42);
    env.registries->open_all_candidates();
    for (const PluginKindRow& kind : plugin_kinds())
      if (def.values_from == kind.name)
        for (const PluginListing& p : kind.registry(*env.registries).listing()) names.insert(p.name);
  }
  return cache[def.values_from] = {names.begin(), names.end()};
}

}  // namespace blis
