// DataCatalog: the defaults, coefficient and hardware tables shipped in
// share/blis/data (converted from the reference's defaults.yaml and
// hardware_config.json), read strictly.
#include <blis/errors.hpp>
#include <blis/model_data.hpp>

#include "toml_util.hpp"
#include "util/text.hpp"
#include "util/files.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

namespace blis {

namespace {

namespace fs = std::filesystem;
using toml_util::check_keys;
using toml_util::get_int;
using toml_util::get_number;
using toml_util::get_numbers;
using toml_util::get_string;
using toml_util::where;

GlobalCoefficients read_global(const std::string& path, const toml::table& t,
                               const std::string& name) {
  check_keys(path, t, "[" + name + "]", {"alpha_coeffs", "beta_coeffs"});
  GlobalCoefficients g;
  if (const auto* n = t.get("alpha_coeffs")) g.alpha = get_numbers(path, *n, name + ".alpha_coeffs");
  if (const auto* n = t.get("beta_coeffs")) g.beta = get_numbers(path, *n, name + ".beta_coeffs");
  return g;
}

ModelDefaults read_defaults_entry(const std::string& path, const toml::table& t,
                                  const std::string& ctx) {
  check_keys(path, t, ctx, {"GPU", "tensor_parallelism", "vllm_version", "hf_repo"});
  ModelDefaults d;
  if (const auto* n = t.get("GPU")) d.gpu = get_string(path, *n, "GPU");
  if (const auto* n = t.get("tensor_parallelism"))
    d.tensor_parallelism = get_int(path, *n, "tensor_parallelism");
  if (const auto* n = t.get("vllm_version")) d.vllm_version = get_string(path, *n, "vllm_version");
  if (const auto* n = t.get("hf_repo")) d.hf_repo = get_string(path, *n, "hf_repo");
  return d;
}

PresetWorkload read_preset(const std::string& path, const toml::table& t, const std::string& ctx) {
  check_keys(path, t, ctx,
             {"prefix_tokens", "prompt_tokens", "prompt_tokens_stdev", "prompt_tokens_min",
              "prompt_tokens_max", "output_tokens", "output_tokens_stdev", "output_tokens_min",
              "output_tokens_max"});
  PresetWorkload p;
  auto field = [&](const char* key, int64_t& out) {
    if (const auto* n = t.get(key)) out = get_int(path, *n, key);
  };
  field("prefix_tokens", p.prefix_tokens);
  field("prompt_tokens", p.prompt_tokens);
  field("prompt_tokens_stdev", p.prompt_tokens_stdev);
  field("prompt_tokens_min", p.prompt_tokens_min);
  field("prompt_tokens_max", p.prompt_tokens_max);
  field("output_tokens", p.output_tokens);
  field("output_tokens_stdev", p.output_tokens_stdev);
  field("output_tokens_min", p.output_tokens_min);
  field("output_tokens_max", p.output_tokens_max);
  return p;
}

CoefficientEntry read_entry(const std::string& path, const toml::table& t) {
  check_keys(path, t, "[[models]]",
             {"id", "GPU", "tensor_parallelism", "vllm_version", "alpha_coeffs", "beta_coeffs",
              "total_kv_blocks"});
  auto required = [&](const char* key) -> const toml::node& {
    if (const auto* n = t.get(key)) return *n;
    throw ConfigError(where(path, t.source()), std::string("[[models]] entry lacks '") + key + "'");
  };
  CoefficientEntry e;
  e.id = get_string(path, required("id"), "id");
  e.gpu = get_string(path, required("GPU"), "GPU");
  e.tensor_parallelism = get_int(path, required("tensor_parallelism"), "tensor_parallelism");
  e.vllm_version = get_string(path, required("vllm_version"), "vllm_version");
  if (const auto* n = t.get("alpha_coeffs")) e.alpha = get_numbers(path, *n, "alpha_coeffs");
  if (const auto* n = t.get("beta_coeffs")) e.beta = get_numbers(path, *n, "beta_coeffs");
  if (const auto* n = t.get("total_kv_blocks")) e.total_kv_blocks = get_int(path, *n, "total_kv_blocks");
  return e;
}

HardwareSpec read_hardware_toml_entry(const std::string& path, const std::string& name,
                                      const toml::table& t) {
  const std::string ctx = "[" + name + "]";
  check_keys(path, t, ctx, {"TFlopsPeak", "TFlopsFP8", "BwPeakTBs", "mfuPrefill", "mfuDecode", "MemoryGiB"});
  auto required = [&](const char* key) -> double {
    if (const auto* n = t.get(key)) return get_number(path, *n, name + "." + key);
    throw ConfigError(where(path, t.source()), ctx + " lacks '" + key + "'");
  };
  HardwareSpec h;
  h.name = name;
  h.tflops_peak = required("TFlopsPeak");
  h.bw_peak_tbs = required("BwPeakTBs");
  h.mfu_prefill = required("mfuPrefill");
  h.mfu_decode = required("mfuDecode");
  // Optional (spec head.md §0.1): 0 or absent means no FP8 peak.
  if (const auto* n = t.get("TFlopsFP8")) h.tflops_fp8 = get_number(path, *n, name + ".TFlopsFP8");
  // Optional: without it the KV capacity cannot be auto-calculated (spec cli.md §3.5).
  if (const auto* n = t.get("MemoryGiB")) h.memory_gib = get_number(path, *n, name + ".MemoryGiB");
  return h;
}

std::map<std::string, HardwareSpec> read_hardware_toml(const std::string& path) {
  toml::table root = toml_util::parse_file(path);
  std::map<std::string, HardwareSpec> out;
  for (const auto& [k, v] : root) {
    const std::string name(k.str());
    out[name] = read_hardware_toml_entry(path, name, toml_util::as_table(path, v, "[" + name + "]"));
  }
  return out;
}

// The reference's hardware_config.json: an object keyed by GPU name; keys
// other than the five figures (e.g. "_comment") are ignored, missing ones are
// 0 (spec engine.md §5.7).
std::map<std::string, HardwareSpec> read_hardware_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "cannot open hardware config");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(path, std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ConfigError(path, "hardware config must be a JSON object keyed by GPU name");
  std::map<std::string, HardwareSpec> out;
  for (const auto& item : j.items()) {
    // Named, not structured bindings: clang before 16 cannot capture those.
    const std::string& name = item.key();
    const nlohmann::json& e = item.value();
    if (!e.is_object()) throw ConfigError(path, "entry \"" + name + "\" must be an object");
    HardwareSpec h;
    h.name = name;
    auto number = [&](const char* key, double& out_value) {
      auto it = e.find(key);
      if (it == e.end() || it->is_null()) return;
      if (!it->is_number())
        throw ConfigError(path, "\"" + name + "\"." + key + " must be a number");
      out_value = it->get<double>();
    };
    number("TFlopsPeak", h.tflops_peak);
    number("TFlopsFP8", h.tflops_fp8);
    number("BwPeakTBs", h.bw_peak_tbs);
    number("mfuPrefill", h.mfu_prefill);
    number("mfuDecode", h.mfu_decode);
    number("MemoryGiB", h.memory_gib);
    out[name] = h;
  }
  return out;
}

// A profile set's `default-tp` (at `at`): model -> TP, over [defaults].
void read_default_tp(const std::string& p, const toml::node& value, const std::string& at,
                     std::map<std::string, int64_t>& out) {
  for (const auto& [model, tp] : toml_util::as_table(p, value, "[" + at + "]")) {
    const auto n = tp.value_exact<int64_t>();
    if (!n || *n < 1) throw ConfigError(where(p, tp.source()), at + " must map models to integers >= 1");
    out[text::lower(std::string(model.str()))] = *n;
  }
}

// A profile set's `plugin_config` list: several plugin keys, one per line.
std::string plugin_config_lines(const std::string& p, const toml::array& list, const std::string& at) {
  std::string lines;
  for (const auto& item : list) {
    const auto s = item.value_exact<std::string>();
    if (!s) throw ConfigError(where(p, item.source()), at + " must list strings");
    lines += (lines.empty() ? "" : "\n") + *s;
  }
  return lines;
}

// A profile set's value (at `at`) as the text a flag would take.
std::string profile_value(const std::string& p, const toml::node& value, const std::string& at) {
  if (const auto s = value.value_exact<std::string>()) return *s;
  if (const auto i = value.value_exact<int64_t>()) return std::to_string(*i);
  if (const auto d = value.value_exact<double>()) return fmt::format("{}", *d);
  throw ConfigError(where(p, value.source()), at + " must be a string or a number");
}

// [profile-sets.NAME]: its settings, and the TPs of its `default-tp`.
void read_profile_set(const std::string& p, const std::string& name, const toml::node& v,
                      DataCatalog::ProfileSet& set, std::map<std::string, int64_t>& default_tp) {
  for (const auto& [key, value] : toml_util::as_table(p, v, "[profile-sets." + name + "]")) {
    const std::string at = "profile-sets." + name + "." + std::string(key.str());
    if (key.str() == "default-tp") read_default_tp(p, value, at, default_tp);
    else if (const auto* list = value.as_array(); list != nullptr && key.str() == "plugin_config")
      set["plugin_config"] = plugin_config_lines(p, *list, at);
    else set[std::string(key.str())] = profile_value(p, value, at);
  }
}

}  // namespace

namespace {

// What a data file holds now (a hash of its bytes), "" when it cannot be
// read: a catalog read from files with the same contents is the same.
std::string file_stamp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string text = bytes.str();
  return fmt::format("{}:{};", text.size(), std::hash<std::string>{}(text));
}

}  // namespace

// A sweep opens a run context per configuration, and reading the tables was
// about half of a small configuration's cost: they are read once per process
// and data folder, and copied, for as long as neither file's bytes change.
DataCatalog DataCatalog::load(const std::string& dir) {
  struct Cached {
    std::string stamp;
    DataCatalog catalog;
  };
  static std::mutex mutex;
  static std::map<std::string, Cached> cache;
  const std::string stamp = file_stamp((fs::path(dir) / "defaults.toml").string()) +
                            file_stamp((fs::path(dir) / "hardware.toml").string());
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(dir);
    if (it != cache.end() && it->second.stamp == stamp) return it->second.catalog;
  }
  DataCatalog c = read(dir);
  const std::lock_guard<std::mutex> lock(mutex);
  if (stamp.size() > 2) cache[dir] = Cached{stamp, c};
  return c;
}

DataCatalog DataCatalog::read(const std::string& dir) {
  DataCatalog c;
  c.dir_ = dir;

  const std::string defaults_path = (fs::path(dir) / "defaults.toml").string();
  if (!files::exists(defaults_path)) throw ConfigError(defaults_path, "data file not found");
  toml::table root = toml_util::parse_file(defaults_path);
  const std::string& p = defaults_path;
  check_keys(p, root, "the top level",
             {"defaults", "workloads", "models", "settings", "plugin-defaults", "profile-sets"});

  if (const auto* n = root.get("defaults")) {
    for (const auto& [k, v] : toml_util::as_table(p, *n, "[defaults]")) {
      const std::string model(k.str());
      const std::string ctx = "[defaults.\"" + model + "\"]";
      c.defaults_[text::lower(model)] = read_defaults_entry(p, toml_util::as_table(p, v, ctx), ctx);
    }
  }
  if (const auto* n = root.get("workloads")) {
    for (const auto& [k, v] : toml_util::as_table(p, *n, "[workloads]")) {
      const std::string name(k.str());
      const std::string ctx = "[workloads." + name + "]";
      c.presets_[name] = read_preset(p, toml_util::as_table(p, v, ctx), ctx);
    }
  }
  if (const auto* n = root.get("models")) {
    const auto* arr = n->as_array();
    if (arr == nullptr) throw ConfigError(where(p, n->source()), "models must be an array of tables");
    // Order is kept: the first matching entry wins (spec engine.md §5.2).
    for (const auto& e : *arr) c.entries_.push_back(read_entry(p, toml_util::as_table(p, e, "[[models]]")));
  }
  if (const auto* n = root.get("plugin-defaults")) {
    for (const auto& [k, v] : toml_util::as_table(p, *n, "[plugin-defaults]")) {
      const std::string name(k.str());
      const std::string ctx = "plugin-defaults." + name;
      c.plugin_coefficients_[name] = read_global(p, toml_util::as_table(p, v, "[" + ctx + "]"), ctx);
    }
  }
  if (const auto* n = root.get("settings")) {
    for (const auto& [k, v] : toml_util::as_table(p, *n, "[settings]")) {
      const std::string key(k.str());
      c.setting_defaults_[key] = get_string(p, v, "settings." + key);
    }
  }

  // Bundles of settings; each value is kept as the text a flag would take
  // and is checked by the settings table when a run uses the bundle.
  if (const auto* n = root.get("profile-sets")) {
    for (const auto& [k, v] : toml_util::as_table(p, *n, "[profile-sets]")) {
      const std::string name(k.str());
      read_profile_set(p, name, v, c.profile_sets_[name], c.profile_default_tp_[name]);
    }
  }

  const std::string hw_path = (fs::path(dir) / "hardware.toml").string();
  if (!files::exists(hw_path)) throw ConfigError(hw_path, "data file not found");
  c.hardware_ = read_hardware_toml(hw_path);
  return c;
}

const GlobalCoefficients* DataCatalog::plugin_coefficients(const std::string& plugin) const {
  auto it = plugin_coefficients_.find(plugin);
  return it == plugin_coefficients_.end() ? nullptr : &it->second;
}

std::string DataCatalog::setting_default(const std::string& key) const {
  auto it = setting_defaults_.find(key);
  return it == setting_defaults_.end() ? "" : it->second;
}

std::optional<ModelDefaults> DataCatalog::defaults_for(const std::string& model,
                                                       const std::string& profile_set) const {
  auto it = defaults_.find(text::lower(model));
  if (it == defaults_.end()) return std::nullopt;
  ModelDefaults d = it->second;
  if (const auto set = profile_default_tp_.find(profile_set); set != profile_default_tp_.end())
    if (const auto tp = set->second.find(text::lower(model)); tp != set->second.end()) d.tensor_parallelism = tp->second;
  return d;
}

std::optional<CoefficientEntry> DataCatalog::coefficients(const std::string& model,
                                                          const std::string& gpu, int64_t tp,
                                                          const std::string& vllm) const {
  // spec engine.md §5.2: lower-cased name; first entry equal in all four fields.
  const std::string id = text::lower(model);
  for (const auto& e : entries_)
    if (e.id == id && e.gpu == gpu && e.tensor_parallelism == tp && e.vllm_version == vllm) return e;
  return std::nullopt;
}

std::optional<PresetWorkload> DataCatalog::preset(const std::string& name) const {
  auto it = presets_.find(name);
  if (it == presets_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> DataCatalog::preset_names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : presets_) out.push_back(k);
  return out;
}

std::vector<std::string> DataCatalog::architecture_names() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir_) / "models", ec))
    if (e.path().extension() == ".toml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> DataCatalog::model_names() const {
  std::set<std::string> names;
  for (const auto& [k, v] : defaults_) names.insert(k);
  for (const auto& e : entries_) names.insert(e.id);
  return {names.begin(), names.end()};
}

HardwareSpec DataCatalog::hardware(const std::string& gpu, const std::string& path) const {
  std::map<std::string, HardwareSpec> loaded;
  const std::map<std::string, HardwareSpec>* table = &hardware_;
  if (!path.empty()) {
    if (!files::exists(path)) throw ConfigError(path, "hardware config not found");
    loaded = text::ends_with(text::lower(path), ".json") ? read_hardware_json(path) : read_hardware_toml(path);
    table = &loaded;
  }
  auto it = table->find(gpu);
  if (it != table->end()) return it->second;
  // GPU names are matched case-insensitively ("h100" is H100).
  for (const auto& [name, spec] : *table)
    if (text::lower(name) == text::lower(gpu)) return spec;
  // std::map iterates in byte order, the same order the reference sorts names in.
  std::ostringstream names;
  bool first = true;
  for (const auto& [k, v] : *table) {
    names << (first ? "" : " ") << k;
    first = false;
  }
  std::vector<std::string> all;
  for (const auto& [k, v] : *table) all.push_back(k);
  throw InputError("--hardware", "GPU \"" + gpu + "\" not found in hardware config (available: [" +
                                     names.str() + "])" + text::did_you_mean(gpu, all));
}

}  // namespace blis
