#include "run/dump.hpp"

#include "util/compact_text.hpp"
#include "util/json_format.hpp"
#include "util/text.hpp"

#include <blis/scenario.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <type_traits>

namespace blis {
namespace {

namespace fs = std::filesystem;

// A TOML basic string. JSON's escapes are a subset of TOML's.
std::string toml_string(const std::string& s) { return go_string(s); }

std::string toml_number(double v) {
  // number_text prints integral values without a fraction; TOML reads those
  // as integers, which every setting of type number accepts.
  return setting_text(SettingValue{v});
}

std::string toml_value(const SettingValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) return toml_number(x);
        else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return toml_string(x);
        else if constexpr (std::is_same_v<T, std::vector<double>>) {
          std::string out = "[";
          for (size_t i = 0; i < x.size(); ++i) out += (i ? ", " : "") + toml_number(x[i]);
          return out + "]";
        } else {
          std::string out = "[";
          for (size_t i = 0; i < x.size(); ++i) out += (i ? ", " : "") + toml_string(x[i]);
          return out + "]";
        }
      },
      v);
}

std::string toml_value(const ConfigValue& v) {
  return std::visit([](const auto& x) { return toml_value(SettingValue{x}); }, v);
}

// Paths the run reads, made absolute so the file runs from anywhere.
std::string absolute(const std::string& p) {
  std::error_code ec;
  if (p.empty() || fs::path(p).is_absolute() || !fs::exists(p, ec)) return p;
  return fs::absolute(p, ec).lexically_normal().string();
}

SettingValue absolute_paths(const SettingDef& def, SettingValue v) {
  if (!def.has(kInputPath) && !def.has(kLibraryRef)) return v;
  if (auto* s = std::get_if<std::string>(&v)) {
    if (def.has(kInputPath) || s->find(".so") != std::string::npos) *s = absolute(*s);
  } else if (auto* list = std::get_if<std::vector<std::string>>(&v)) {
    for (auto& item : *list) item = absolute(item);
  }
  return v;
}

// Lua scripts named by a path relative to the current directory: the dump
// keeps their names (plugin-config keys use them) and adds the directory to
// the script folders, so the file runs from anywhere.
bool names_relative_script(const RunConfig& c) {
  std::vector<std::string> specs;
  if (c.pool().model.latency_model) specs.push_back(*c.pool().model.latency_model);
  if (c.policies.admission) specs.push_back(*c.policies.admission);
  if (c.policies.scorers)
    for (const auto& piece : text::split(*c.policies.scorers, ','))
      specs.push_back(text::trim(text::split(piece, ':').front()));
  std::error_code ec;
  for (const auto& spec : specs)
    if (text::ends_with(spec, ".lua") && !fs::path(spec).is_absolute() && fs::exists(spec, ec)) return true;
  return false;
}

// A record's value as TOML: a number or boolean bare when the TOML reader
// writes it back as the same text, anything else a string.
std::string toml_field(const std::string& v) {
  if (v == "true" || v == "false") return v;
  if (auto x = setting_number(v); x && toml_number(*x) == v) return v;
  return toml_string(v);
}

std::string toml_key(const std::string& k) {
  const bool bare = !k.empty() && k.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                      "0123456789_-") == std::string::npos;
  return bare ? k : toml_string(k);
}

// Record settings (kRecord: pools, events, lifecycle, ...) as tables:
// [[pools]] for each item of a repeatable one, [lifecycle] for a single one.
std::string record_tables(const RunConfig& c) {
  std::string out;
  for (const SettingDef& def : setting_table()) {
    if (!def.has(kRecord)) continue;
    const std::optional<SettingValue> v = def.get(c);
    if (!v) continue;
    std::vector<std::string> texts;
    if (const auto* list = std::get_if<std::vector<std::string>>(&*v)) texts = *list;
    else texts.push_back(std::get<std::string>(*v));
    for (const std::string& text : texts) {
      out += def.has(kAccumulates) ? fmt::format("\n[[{}]]\n", def.key) : fmt::format("\n[{}]\n", def.key);
      for (const auto& pair : compact::pairs(text, compact::kSpaced, def.flag()))
        out += fmt::format("{} = {}\n", toml_key(pair.key), toml_field(pair.value));
    }
  }
  return out;
}

}  // namespace

std::string dump_toml(const ResolvedRun& resolved) {
  ResolvedRun r = resolved;
  if (names_relative_script(r.config)) r.config.script_dirs.push_back(fs::current_path().string());
  const bool native = !r.config.plugin_dirs.empty() ||
                      r.config.pool().model.latency_model.value_or("").find(".so") != std::string::npos ||
                      r.config.policies.admission.value_or("").find(".so") != std::string::npos;
  const bool writes_out = [&] {
    for (const auto& p : {r.config.outputs.results_path, r.config.outputs.rows_csv, r.config.outputs.rows_json,
                          r.config.outputs.trace_output})
      if (p && *p != "-" && (fs::path(*p).is_absolute() || p->find("..") != std::string::npos)) return true;
    return false;
  }();
  std::string out =
      "# The resolved configuration of a blis run: defaults, data tables and the policy file\n"
      "# applied. `blis run THIS_FILE` reproduces the run.\n";
  if (native || writes_out)
    out += "# It names plugin libraries or writes outside the current directory: run it with\n"
           "# --trust-scenario (a scenario file gets those rights only when you say so).\n";
  const bool spec = r.given.workload.spec.has_value();
  for (const std::string& group : setting_groups()) {
    std::string body;
    for (const SettingDef& def : setting_table()) {
      if (def.group != group || def.key == "plugin_config" || def.key == "policy_config" ||
          def.key == "trust_scenario" || def.has(kRecord))
        continue;
      std::optional<SettingValue> v = def.get(r.config);
      // A workload spec brings its own seed unless one is given.
      if (def.key == "seed" && spec && !r.given.seed) {
        body += fmt::format("# seed: the workload spec's (the simulator's streams use {})\n", r.seed);
        continue;
      }
      if (!v) continue;
      // Closed-loop users have no rate, and a rate given with them is refused.
      if (def.key == "rate" && r.config.workload.concurrency.value_or(0) > 0) continue;
      body += fmt::format("{} = {}\n", def.key, toml_value(absolute_paths(def, *v)));
    }
    if (!body.empty()) out += fmt::format("\n[{}]\n{}", group, body);
  }
  out += record_tables(r.config);
  for (const auto& [plugin, keys] : r.overrides.values()) {
    out += fmt::format("\n[plugin-config.{}]\n", toml_string(plugin));
    for (const auto& [key, value] : keys) out += fmt::format("{} = {}\n", toml_string(key), toml_value(value));
  }
  return out;
}

}  // namespace blis
