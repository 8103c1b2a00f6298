// TOML scenario files (docs/scenarios.md): top-level keys and keys of grouping
// sections are settings; [sweep] is swept as a product of its lists, [[sweep]]
// entries are configurations; [plugin-config.NAME] tables configure plugins.
#include <blis/errors.hpp>
#include <blis/scenario.hpp>
#include <blis/settings.hpp>

#include "config/scenario_common.hpp"
#include "util/text.hpp"
#include "config/toml_input.hpp"

#include <toml++/toml.h>

#include <fmt/format.h>


namespace blis {
namespace {

class TomlScenarioReader {
 public:
  explicit TomlScenarioReader(std::string path) : path_(std::move(path)) {}

  Scenario read() {
    const toml::table root = config::parse_toml_file(path_, "scenario file");
    Scenario s;
    s.path = path_;
    for (const auto& [k, node] : root) {
      const std::string key(k.str());
      const std::string flag = flag_of_key(key);
      if (flag == scenario::kSweep) {
        read_sweep(node, s);
      } else if (flag == scenario::kPluginConfig) {
        read_plugin_config(node, s.base);
      } else if (is_record(key, node)) {
        read_records(flag, node, s.base);
      } else if (const auto* t = node.as_table()) {
        if (!scenario::is_group(key))
          throw ConfigError(where(k.source()),
                            fmt::format("unknown section [{}]; sections are sweep, plugin-config and "
                                        "the groups {}",
                                        key, scenario::group_names()));
        for (const auto& [gk, gnode] : *t) {
          if (is_record(std::string(gk.str()), gnode)) read_records(flag_of_key(std::string(gk.str())), gnode, s.base);
          else s.base.push_back(setting(std::string(gk.str()), gnode));
        }
      } else {
        s.base.push_back(setting(key, node));
      }
    }
    return s;
  }

 private:
  std::string where(const toml::source_region& r) const {
    if (r.begin.line == 0) return path_;
    return fmt::format("{}:{}:{}", path_, r.begin.line, r.begin.column);
  }

  // The command-line text of a scalar; nullopt for tables and arrays.
  static std::optional<std::string> scalar_text(const toml::node& n) {
    if (const auto* v = n.as_string()) return v->get();
    if (const auto* v = n.as_integer()) return std::to_string(v->get());
    if (const auto* v = n.as_floating_point()) return scenario::number_text(v->get());
    if (const auto* v = n.as_boolean()) return v->get() ? "true" : "false";
    return std::nullopt;
  }

  // A scalar, or a list of scalars written comma-separated (coefficients).
  std::string value_text(const std::string& key, const toml::node& n) const {
    if (auto t = scalar_text(n)) return *t;
    if (const auto* a = n.as_array()) {
      std::string out;
      for (const auto& e : *a) {
        auto t = scalar_text(e);
        if (!t) throw ConfigError(where(e.source()), fmt::format("{}: list items must be strings, numbers or booleans", key));
        text::append(out, ",", *t);
      }
      return out;
    }
    throw ConfigError(where(n.source()),
                      fmt::format("{} must be a string, number, boolean or list, not a table "
                                  "(grouping sections are {})",
                                  key, scenario::group_names()));
  }

  Setting setting(const std::string& key, const toml::node& n) const {
    Setting s{flag_of_key(key), value_text(key, n), where(n.source())};
    if (const auto* a = n.as_array())
      for (const auto& e : *a) s.items.push_back(*scalar_text(e));
    return s;
  }

  void read_sweep(const toml::node& node, Scenario& s) const {
    if (const auto* t = node.as_table()) {
      // [sweep]: every key lists values; the configurations are the product,
      // in key order, the first key varying slowest.
      std::vector<Settings> axes;
      for (const auto& [k, v] : *t) {
        const std::string key(k.str());
        const auto* a = v.as_array();
        if (a == nullptr || a->empty())
          throw ConfigError(where(v.source()), fmt::format("sweep.{} must be a non-empty list of values", key));
        Settings& axis = axes.emplace_back();
        for (const auto& e : *a) axis.push_back(setting(key, e));
      }
      s.sweep = scenario::product(axes, where(node.source()));
      return;
    }
    if (const auto* a = node.as_array()) {
      // [[sweep]]: one table per configuration.
      scenario::check_sweep_size(static_cast<double>(a->size()), "", where(node.source()));
      for (const auto& e : *a) {
        const auto* t = e.as_table();
        if (t == nullptr) throw ConfigError(where(e.source()), "each [[sweep]] entry must be a table");
        Settings point;
        for (const auto& [k, v] : *t) point.push_back(setting(std::string(k.str()), v));
        s.sweep.push_back(std::move(point));
      }
      return;
    }
    throw ConfigError(where(node.source()), "sweep must be a table of lists ([sweep]) or tables ([[sweep]])");
  }

  // [plugin-config.NAME] key = value -> --plugin-config NAME.key=value
  void read_plugin_config(const toml::node& node, Settings& out) const {
    const auto* t = node.as_table();
    if (t == nullptr) throw ConfigError(where(node.source()), "plugin-config must be a table of tables");
    for (const auto& [name, sub] : *t) {
      const auto* st = sub.as_table();
      if (st == nullptr)
        throw ConfigError(where(sub.source()),
                          fmt::format("plugin-config.{} must be a table of the plugin's keys", name.str()));
      for (const auto& [k, v] : *st)
        out.push_back(Setting{scenario::kPluginConfig,
                              fmt::format("{}.{}={}", name.str(), k.str(), value_text(std::string(k.str()), v)),
                              where(v.source())});
    }
  }

  // A record setting (pools, events, lifecycle, ...; kRecord) written as a
  // table or a list of tables, not as its compact text.
  static bool is_record(const std::string& key, const toml::node& n) {
    const SettingDef* def = find_setting(key);
    return def != nullptr && def->has(kRecord) && (n.is_table() || n.is_array_of_tables());
  }

  // [[events]] at = "30s"  action = "fail" ... -> one item of the events
  // setting each; [[pools]], [lifecycle] likewise. The text quotes what
  // needs it, so every value reads back as written.
  void read_records(const std::string& flag, const toml::node& node, Settings& out) const {
    auto one = [&](const toml::table& t) {
      std::vector<std::pair<std::string, std::string>> fields, places;
      for (const auto& [k, v] : t) {
        auto text = scalar_text(v);
        if (!text)
          throw ConfigError(where(v.source()), fmt::format("{}.{} must be a string, number or boolean", flag, k.str()));
        fields.emplace_back(std::string(k.str()), *text);
        places.emplace_back(std::string(k.str()), where(v.source()));
      }
      const std::string text = scenario::record_text(std::move(fields));
      out.push_back(Setting{flag, text, where(t.source()), {text}, std::move(places)});
    };
    if (const auto* t = node.as_table()) return one(*t);
    for (const auto& e : *node.as_array()) one(*e.as_table());
  }

  std::string path_;
};

}  // namespace

Scenario load_toml_scenario(const std::string& path) { return TomlScenarioReader(path).read(); }

}  // namespace blis
