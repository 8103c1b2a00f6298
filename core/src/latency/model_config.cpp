// Model architectures from HuggingFace config.json files and from the bundled
// share/blis/data/models/<short>.toml copies; one set of extraction rules
// (spec engine.md §5.7) serves both.
#include <blis/errors.hpp>
#include <blis/model_data.hpp>

#include "toml_util.hpp"
#include "util/files.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace blis {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "Integers are read from JSON numbers (truncated). Missing → 0." Anything that
// is not a number (strings, null, booleans) also reads as 0.
int64_t int_of(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(u);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d)) return 0;
    // Saturate instead of overflowing; such values fail validation later anyway.
    if (d >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
    if (d <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(d);
  }
  return 0;
}

int64_t get_int(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? 0 : int_of(*it);
}

std::string get_string(const json& j, const char* key) {
  auto it = j.find(key);
  return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
}

int64_t first_nonzero(const json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (int64_t v = get_int(j, k); v != 0) return v;
  return 0;
}

// spec engine.md §5.7: bytes per parameter from the dtype name.
double bytes_for_dtype(const std::string& dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "int8" || dtype == "uint8" || dtype == "fp8" || dtype == "int4" || dtype == "nf4")
    return 1;
  return 0;  // unknown: the roofline validation rejects it
}

bool same_text_ignoring_case(const std::string& a, const char* b) {
  const std::string lower_b(b);
  if (a.size() != lower_b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != lower_b[i]) return false;
  return true;
}

// Stored weight width of a quantised model from config.json's
// quantization_config (spec head.md §1.2 "quantisation detection"): `bits`
// (a number, or an integer written as a string), else quant_method "fp8",
// else the weights' num_bits of the first compressed-tensors config group in
// key order. 0 when none of these says.
double quantised_weight_bytes(const json& qc) {
  if (!qc.is_object()) return 0;
  int64_t bits = 0;
  if (auto b = qc.find("bits"); b != qc.end()) {
    if (b->is_number()) {
      bits = int_of(*b);
    } else if (b->is_string()) {
      const std::string text = b->get<std::string>();
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(text.c_str(), &end, 10);
      const bool digits = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0]));
      if (digits && end != nullptr && *end == '\0' && errno == 0) bits = v;
    }
  }
  if (bits > 0) return static_cast<double>(bits) / 8.0;
  const std::string method = get_string(qc, "quant_method");
  if (same_text_ignoring_case(method, "fp8")) return 1.0;
  if (same_text_ignoring_case(method, "compressed-tensors")) {
    auto groups = qc.find("config_groups");
    if (groups == qc.end() || !groups->is_object()) return 0;
    std::vector<std::string> names;
    for (const auto& [k, v] : groups->items()) names.push_back(k);
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const json& g = (*groups)[name];
      if (!g.is_object()) continue;
      auto w = g.find("weights");
      if (w == g.end() || !w->is_object()) continue;
      if (auto nb = w->find("num_bits"); nb != w->end() && nb->is_number()) {
        const double n = nb->get<double>();
        if (n > 0) return n / 8.0;
      }
    }
  }
  return 0;
}

// The experts of a mixture-of-experts model (none: num_experts <= 1).
void read_moe(const json& j, ModelArch& m) {
  m.num_experts = get_int(j, "num_local_experts");
  if (m.num_experts <= 1) {
    for (const char* k : {"num_routed_experts", "n_routed_experts", "num_experts"}) {
      if (int64_t v = get_int(j, k); v > 1) {
        m.num_experts = v;
        break;
      }
    }
  }
  m.experts_per_token = get_int(j, "num_experts_per_tok");
  m.moe_intermediate_size = get_int(j, "moe_intermediate_size");
  m.n_shared_experts = get_int(j, "n_shared_experts");
  if (int64_t s = get_int(j, "shared_expert_intermediate_size"); s > 0) {
    m.shared_expert_dim = s;
  } else {
    const int64_t per_expert = m.moe_intermediate_size > 0 ? m.moe_intermediate_size
                                                           : m.intermediate_size;
    m.shared_expert_dim = m.n_shared_experts * per_expert;
  }
}

// rope_scaling, when present.
void read_rope_scaling(const json& j, ModelArch& m) {
  const auto rs = j.find("rope_scaling");
  if (rs == j.end() || rs->is_null()) return;
  m.rope_scaling_present = true;
  if (!rs->is_object()) return;
  m.rope_scaling_is_object = true;
  m.rope_type = get_string(*rs, "type");
  if (m.rope_type.empty()) m.rope_type = get_string(*rs, "rope_type");
  if (auto f = rs->find("factor"); f != rs->end()) {
    m.rope_factor_present = true;
    if (f->is_number() && std::isfinite(f->get<double>())) m.rope_factor = f->get<double>();
  }
  // The yarn base is read from inside rope_scaling (spec engine.md §10.2).
  if (auto o = rs->find("original_max_position_embeddings"); o != rs->end() && o->is_number())
    m.original_max_position_embeddings = int_of(*o);
}

ModelArch arch_from_json(const json& raw, const std::string& source) {
  if (!raw.is_object()) throw ConfigError(source, "model config must be a JSON object");
  // Multimodal configs keep the language model in text_config; its keys win.
  json j = raw;
  if (auto tc = raw.find("text_config"); tc != raw.end() && tc->is_object())
    for (const auto& [k, v] : tc->items()) j[k] = v;

  ModelArch m;
  m.source = source;
  m.model_type = get_string(j, "model_type");
  m.hidden_act = get_string(j, "hidden_act");
  m.num_layers = get_int(j, "num_hidden_layers");
  m.hidden_size = get_int(j, "hidden_size");
  m.num_heads = get_int(j, "num_attention_heads");
  m.vocab_size = get_int(j, "vocab_size");
  m.num_kv_heads = first_nonzero(j, {"num_key_value_heads", "num_kv_heads", "multi_query_group_num"});
  if (m.num_kv_heads == 0) m.num_kv_heads = m.num_heads;
  m.intermediate_size = first_nonzero(j, {"intermediate_size", "ffn_hidden_size"});

  std::string dtype = get_string(j, "torch_dtype");
  if (dtype.empty()) dtype = get_string(j, "dtype");
  m.bytes_per_param = bytes_for_dtype(dtype);

  read_moe(j, m);
  m.interleave_moe_layer_step = get_int(j, "interleave_moe_layer_step");
  m.intermediate_size_mlp = get_int(j, "intermediate_size_mlp");
  if (auto qc = j.find("quantization_config"); qc != j.end())
    m.weight_bytes_per_param = quantised_weight_bytes(*qc);
  // spec engine.md §4.2: MoE-looking fields without an expert count.
  m.moe_count_missing = m.num_experts <= 1 && (m.n_shared_experts > 0 || m.experts_per_token > 0);

  if (auto it = j.find("tie_word_embeddings"); it != j.end() && it->is_boolean())
    m.tie_word_embeddings = it->get<bool>();

  m.max_position_embeddings = get_int(j, "max_position_embeddings");
  read_rope_scaling(j, m);
  return m;
}

// TOML → JSON so that bundled models go through exactly the config.json rules.
json json_of(const toml::node& n) {
  if (const auto* t = n.as_table()) {
    json o = json::object();
    for (const auto& [k, v] : *t) o[std::string(k.str())] = json_of(v);
    return o;
  }
  if (const auto* a = n.as_array()) {
    json arr = json::array();
    for (const auto& e : *a) arr.push_back(json_of(e));
    return arr;
  }
  if (const auto* s = n.as_string()) return s->get();
  if (const auto* i = n.as_integer()) return i->get();
  if (const auto* f = n.as_floating_point()) return f->get();
  if (const auto* b = n.as_boolean()) return b->get();
  // Dates and times have no JSON counterpart; keep their text.
  std::ostringstream text;
  n.visit([&](const auto& v) { text << v; });
  return text.str();
}

}  // namespace

ModelArch load_model_config_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "cannot open model config");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw ConfigError(path, std::string("invalid JSON: ") + e.what());
  }
  return arch_from_json(j, path);
}

double weight_bytes_from_model_name(const std::string& model) {
  // A "wXaY" part (X weight bits) or an "fp8" part, delimited by . - _ / or
  // the ends of the name, in any case.
  static const std::regex wxay(R"((?:^|[.\-_/])w(\d+)a\d+(?:$|[.\-_]))", std::regex::icase);
  static const std::regex fp8(R"((?:^|[.\-_/])fp8(?:$|[.\-_]))", std::regex::icase);
  std::smatch match;
  if (std::regex_search(model, match, wxay)) {
    const std::string digits = match[1].str();
    if (digits.size() <= 9) {
      const long bits = std::stol(digits);
      if (bits > 0) return static_cast<double>(bits) / 8.0;
    }
  }
  if (std::regex_search(model, fp8)) return 1.0;
  return 0;
}

ModelArch load_model_config_folder(const std::string& dir) {
  const std::string path = (fs::path(dir) / "config.json").string();
  if (!files::exists(path)) throw InputError("--model-config-folder", "no config.json in " + dir);
  return load_model_config_json(path);
}

namespace {

// A file's bytes ("" when it cannot be read).
std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A bundled model's file, parsed. A sweep resolves its model once per
// configuration, and parsing the TOML was a tenth of a small configuration's
// set-up: the parse is kept per path, for as long as the file's bytes are
// the same (they are read and compared each time, which costs far less).
ModelArch parsed_model_file(const std::string& path) {
  std::string bytes = file_bytes(path);
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::string, ModelArch>> parsed;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = parsed.find(path); it != parsed.end() && !bytes.empty() && it->second.first == bytes)
      return it->second.second;
  }
  ModelArch arch = arch_from_json(json_of(toml_util::parse_file(path)), path);
  // Kept only when the file did not change while it was parsed.
  if (bytes.empty() || file_bytes(path) != bytes) return arch;
  const std::lock_guard<std::mutex> lock(mutex);
  parsed[path] = {std::move(bytes), arch};
  return arch;
}

}  // namespace

std::optional<ModelArch> DataCatalog::bundled_model(const std::string& model) const {
  // The short name is the part after the first '/' (spec cli.md §3.3 step 3b).
  // Names are looked up lower-cased, as the CLI does (spec cli.md §3.3 step 1).
  std::string name = model;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto slash = name.find('/');
  const std::string short_name = slash == std::string::npos ? name : name.substr(slash + 1);
  const fs::path rel = fs::path(short_name).lexically_normal();
  if (short_name.empty() || rel.is_absolute() || short_name.find("..") != std::string::npos)
    throw InputError("--model", "invalid model name \"" + model + "\": model name \"" + model +
                                    "\" contains invalid path components");
  const std::string path = (fs::path(dir_) / "models" / (short_name + ".toml")).string();
  if (!files::exists(path)) return std::nullopt;
  ModelArch arch = parsed_model_file(path);
  if (arch.weight_bytes_per_param == 0) arch.weight_bytes_per_param = weight_bytes_from_model_name(name);
  return arch;
}

}  // namespace blis
