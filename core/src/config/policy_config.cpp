// The --policy-config file (spec cluster §8.1) and the --routing-scorers list
// (spec cli §3.2.6). Both file formats are read strictly: a misspelt key would
// otherwise silently leave a policy at its default, which is the one mistake
// a simulation result cannot reveal.
#include <blis/errors.hpp>
#include <blis/policy_config.hpp>

#include "util/text.hpp"

#include <toml++/toml.h>

#include <fmt/format.h>

#include "config/pool_text.hpp"
#include "workload/slo_class.hpp"
#include "config/scenario_common.hpp"
#include "config/strict_yaml.hpp"
#include "config/toml_input.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace blis {

namespace {

using config::child_path;
using config::in_quotes;
using config::KeyList;
using config::unknown_key;

constexpr std::string_view kAcceptedFormats = "a .toml, .yaml or .yml file";


// Messages print values the way the reference does, so that its users' error
// text matches: "NaN" and "+Inf" rather than C's "nan" and "inf".
std::string non_finite_text(double v) {
  if (std::isnan(v)) return "NaN";
  return v > 0 ? "+Inf" : "-Inf";
}

// Six decimals, the reference's %f.
std::string fixed_text(double v) {
  if (!std::isfinite(v)) return non_finite_text(v);
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

// Shortest round-trip digits, in exponent form when the exponent is below -4
// or at least 6 (the reference's %v of a float: 1e+06, 123456, 0.0001).
std::string shortest_text(double v) {
  if (!std::isfinite(v)) return non_finite_text(v);
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // not const, so that `return sci` moves
  const int exponent = std::atoi(sci.c_str() + sci.find('e') + 1);
  if (exponent < -4 || exponent >= 6) return sci;
  r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

constexpr std::string_view kTopKeys[] = {"admission", "routing",    "priority",      "scheduler",
                                         "pools",     "node_pools", "tenant_budgets"};
constexpr std::string_view kAdmissionKeys[] = {
    "policy",           "token_bucket_capacity", "token_bucket_refill_rate", "tier_shed_threshold",
    "tier_shed_min_priority", "gaie_qd_threshold", "gaie_kv_threshold", "slo_priorities",
    "slo_targets"};
// The integer ones of HEAD's tier-shed keys (the gaie ones are numbers).
bool integer_admission_key(std::string_view k) { return k.rfind("tier_shed_", 0) == 0; }
constexpr std::string_view kRoutingKeys[] = {"policy", "scorers"};
constexpr std::string_view kPriorityKeys[] = {"policy"};
constexpr std::string_view kScorerKeys[] = {"name", "weight"};
// spec head §6.1, YAML only.
constexpr std::string_view kYamlTopKeys[] = {"admission", "routing",    "priority",
                                             "scheduler", "autoscaler", "instance_lifecycle",
                                             "pools",     "node_pools", "tenant_budgets"};
// spec head §6.1 node_pools entries (YAML); the TOML [[node_pools]] keys are
// those of --node-pool, with the delay as a duration.
constexpr std::string_view kNodePoolKeys[] = {"name",           "gpu_type",           "gpus_per_node",
                                              "gpu_memory_gib", "initial_nodes",      "min_nodes",
                                              "max_nodes",      "provisioning_delay", "cost_per_hour"};
constexpr std::string_view kTomlNodePoolKeys[] = {
    "name",      "gpu_type",  "gpus_per_node",      "gpu_memory_gib",      "initial_nodes",
    "min_nodes", "max_nodes", "provisioning_delay", "provisioning_stddev", "cost_per_hour"};
constexpr std::string_view kAutoscalerKeys[] = {"interval_us", "scale_up_stabilization_window_us",
                                                "scale_down_stabilization_window_us", "hpa_scrape_delay",
                                                "analyzer"};
constexpr std::string_view kAnalyzerKeys[] = {"kv_cache_threshold", "scale_up_threshold", "scale_down_boundary",
                                              "avg_input_tokens"};
// warm_up_*: blis reads them here too (docs/differences.md); the reference's
// bundle has only the first two.
constexpr std::string_view kLifecycleKeys[] = {"loading_delay", "warm_start_initial_instances",
                                               "warm_up_request_count", "warm_up_ttft_factor"};
constexpr std::string_view kDelayKeys[] = {"mean", "stddev"};

// The three maps of BLIS HEAD's bundle, one entry at a time: each checks its
// entry (name, value) and returns the error text, or "" when it is good;
// `where` places the message. The entries become "name=value,..." texts.
std::string class_error(const std::string& map, const std::string& name) {
  if (workload::slo_class_from_name(name) && !name.empty()) return "";
  return fmt::format("{}: unknown SLO class {} (valid: critical, standard, sheddable, batch, background)", map,
                     in_quotes(name));
}

std::string budget_error(const std::string& tenant, double v) {
  if (tenant.empty() || tenant.find_first_of(",= \t") != std::string::npos)
    return fmt::format("tenant_budgets: tenant {} must be non-empty, without spaces, ',' or '='", in_quotes(tenant));
  if (!std::isfinite(v) || v < 0 || v > 1)
    return fmt::format("tenant_budgets[{}] must be in [0, 1], got {}", in_quotes(tenant), shortest_text(v));
  return "";
}

std::string priority_error(const std::string& name, int64_t v) {
  if (auto e = class_error("admission.slo_priorities", name); !e.empty()) return e;
  if (v < -100 || v > 100)
    return fmt::format("slo_priorities override for {}: value {} out of range [-100, 100]", in_quotes(name), v);
  return "";
}

std::string target_error(const std::string& name, int64_t v) {
  if (auto e = class_error("admission.slo_targets", name); !e.empty()) return e;
  if (v <= 0)
    return fmt::format("admission.slo_targets[{}] must be a positive integer (µs), got {}", in_quotes(name), v);
  return "";
}

void add_pair(std::optional<std::string>& text, const std::string& name, const std::string& value) {
  text = (text ? *text + "," : std::string()) + name + "=" + value;
}

// Where each validated value was written, so that a validation error after
// parsing still points into the file. Each is a ready "file:line[:col]".
struct ScorerSource {
  std::string entry;
  std::string name;    // the entry's when the name is missing
  std::string weight;  // the entry's when the weight is missing
};

struct Sources {
  std::string capacity;
  std::string refill_rate;
  std::vector<ScorerSource> scorers;
};

// An empty policy name means "the family default" to the registries, exactly
// as an absent key does; keeping it unset lets the CLI's precedence rule
// (a bundle name applies only when non-empty) read just has_value().
void set_name(std::optional<std::string>& field, std::string value) {
  if (value.empty())
    field.reset();
  else
    field = std::move(value);
}

// Spec cluster §8.1 validation items 2 and 3, in its order (first failure
// wins); scorer and policy names are left to the registries.
void validate(const PolicyBundle& b, const Sources& src) {
  auto bucket = [](const char* key, const std::optional<double>& v, const std::string& where) {
    if (!v) return;
    if (!std::isfinite(*v))
      throw ConfigError(where, std::string(key) + " must be a finite number, got " + fixed_text(*v));
    if (*v < 0)
      throw ConfigError(where, std::string(key) + " must be non-negative, got " + fixed_text(*v));
  };
  bucket("token_bucket_capacity", b.token_bucket_capacity, src.capacity);
  bucket("token_bucket_refill_rate", b.token_bucket_refill_rate, src.refill_rate);

  std::set<std::string> seen;
  for (size_t i = 0; i < b.scorers.size(); ++i) {
    const auto& s = b.scorers[i];
    const auto& at = src.scorers[i];
    const std::string tag = "routing scorer[" + std::to_string(i) + "]";
    if (s.name.empty()) throw ConfigError(at.name, tag + ": scorer name must not be empty");
    if (!seen.insert(s.name).second)
      throw ConfigError(at.name, tag + ": duplicate scorer " + in_quotes(s.name) +
                                     "; each scorer may appear at most once");
    if (!std::isfinite(s.weight) || s.weight <= 0)
      throw ConfigError(at.weight, tag + " " + in_quotes(s.name) +
                                       ": weight must be a finite positive number, got " +
                                       shortest_text(s.weight));
  }
}

// One pool of the file: its (key, value text, where) entries become the
// text --pool takes, read by the one reader of pool texts; the values of its
// model, latency, KV-cache and batching settings are checked here, each at
// its own line (lifecycle values are checked by run/resolve.cpp).
struct PoolField {
  std::string key, value, where;
};

PolicyPool make_pool(const std::vector<PoolField>& fields, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const PoolField& f : fields) {
    if (f.value.empty() || f.value.find_first_of(" \t\n") != std::string::npos)
      throw ConfigError(f.where, fmt::format("pools: {} = {}: a pool value must be non-empty and without spaces",
                                             f.key, in_quotes(f.value)));
    pairs.emplace_back(f.key, f.value);
  }
  PolicyPool p{scenario::record_text(std::move(pairs)), where};
  try {
    config::read_pool_text(p.text, "");
  } catch (const InputError& e) {
    throw ConfigError(where, e.what());
  }
  for (const PoolField& f : fields)
    if (const SettingDef* def = find_setting(f.key); def != nullptr && !config::is_pool_lifecycle_key(f.key))
      parse_setting(*def, f.value, f.where + ": pools: " + f.key);
  return p;
}

// ---------------------------------------------------------------- TOML

class TomlReader {
 public:
  explicit TomlReader(std::string path) : path_(std::move(path)) {}

  PolicyBundle read(const std::string& text, Sources& src) const {
    const toml::table root = config::parse_toml(text, path_);
    PolicyBundle b;
    check_keys(root, "", kTopKeys);
    if (const auto* t = table(root, "admission", "")) read_admission(*t, b, src);
    if (const auto* m = table(root, "tenant_budgets", "")) read_budgets(*m, b);
    if (const auto* t = table(root, "routing", "")) {
      check_keys(*t, "routing", kRoutingKeys);
      if (const auto* n = t->get("policy")) set_name(b.routing_policy, string(*n, "routing.policy"));
      if (const auto* n = t->get("scorers")) read_scorers(*n, b, src);
    }
    if (const auto* t = table(root, "priority", "")) {
      check_keys(*t, "priority", kPriorityKeys);
      if (const auto* n = t->get("policy")) set_name(b.priority_policy, string(*n, "priority.policy"));
    }
    if (const auto* n = root.get("scheduler")) set_name(b.scheduler, string(*n, "scheduler"));
    if (const auto* n = root.get("pools")) read_pools(*n, b);
    if (const auto* n = root.get("node_pools")) read_node_pools(*n, b);
    return b;
  }

 private:
  void read_admission(const toml::table& t, PolicyBundle& b, Sources& src) const {
    check_keys(t, "admission", kAdmissionKeys);
    if (const auto* n = t.get("policy")) set_name(b.admission_policy, string(*n, "admission.policy"));
    if (const auto* n = t.get("token_bucket_capacity")) {
      b.token_bucket_capacity = number(*n, "admission.token_bucket_capacity");
      src.capacity = where(n->source());
    }
    if (const auto* n = t.get("token_bucket_refill_rate")) {
      b.token_bucket_refill_rate = number(*n, "admission.token_bucket_refill_rate");
      src.refill_rate = where(n->source());
    }
    for (std::string_view k : {"tier_shed_threshold", "tier_shed_min_priority", "gaie_qd_threshold",
                               "gaie_kv_threshold"})
      if (const auto* n = t.get(k)) {
        const std::string path = "admission." + std::string(k);
        const double v = number(*n, path);
        if (integer_admission_key(k) && v != std::trunc(v)) throw ConfigError(where(n->source()), path + " must be an integer");
        b.admission_keys.push_back(std::string(k) + "=" +
                                   (integer_admission_key(k) ? std::to_string(static_cast<int64_t>(v)) : shortest_text(v)));
      }
    if (const auto* m = table(t, "slo_priorities", "admission"))
      read_integers(*m, "admission.slo_priorities", priority_error, b.slo_priorities);
    if (const auto* m = table(t, "slo_targets", "admission"))
      read_integers(*m, "admission.slo_targets", target_error, b.slo_targets);
  }

  // [tenant_budgets]: tenant = fraction of the cluster's batch slots.
  void read_budgets(const toml::table& m, PolicyBundle& b) const {
    for (const auto& [k, v] : m) {
      const std::string tenant(k.str());
      const double f = number(v, "tenant_budgets." + tenant);
      if (auto e = budget_error(tenant, f); !e.empty()) throw ConfigError(where(v.source()), e);
      add_pair(b.tenant_budgets, tenant, shortest_text(f));
    }
  }

  std::string where(const toml::source_region& r) const {
    if (r.begin.line == 0) return path_;
    return path_ + ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
  }

  // A table of SLO classes to integers, each checked by `check`.
  void read_integers(const toml::table& m, const std::string& path, std::string (*check)(const std::string&, int64_t),
                     std::optional<std::string>& text) const {
    for (const auto& [k, v] : m) {
      const std::string name(k.str());
      const auto* i = v.as_integer();
      if (i == nullptr) wrong_type(v, path + "." + name, "an integer");
      if (auto e = check(name, i->get()); !e.empty()) throw ConfigError(where(v.source()), e);
      add_pair(text, name, std::to_string(i->get()));
    }
  }

  static std::string type_name(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::table: return "a table";
      case toml::node_type::array: return "an array";
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a float";
      case toml::node_type::boolean: return "a boolean";
      default: return "a date or time";
    }
  }

  [[noreturn]] void wrong_type(const toml::node& n, const std::string& key_path,
                               const char* expected) const {
    throw ConfigError(where(n.source()),
                      key_path + " must be " + expected + ", got " + type_name(n));
  }

  void check_keys(const toml::table& t, std::string_view prefix,
                  KeyList allowed) const {
    for (const auto& [k, v] : t)
      if (!config::is_allowed(k.str(), allowed))
        throw ConfigError(where(k.source()), unknown_key(child_path(prefix, k.str()), allowed));
  }

  const toml::table* table(const toml::table& parent, std::string_view key,
                           std::string_view prefix) const {
    const auto* n = parent.get(key);
    if (n == nullptr) return nullptr;
    if (const auto* t = n->as_table()) return t;
    wrong_type(*n, child_path(prefix, key), "a table");
  }

  std::string string(const toml::node& n, const std::string& key_path) const {
    if (const auto* s = n.as_string()) return s->get();
    wrong_type(n, key_path, "a string");
  }

  // Integers are numbers too: "capacity = 5000" means 5000.0.
  double number(const toml::node& n, const std::string& key_path) const {
    if (const auto* f = n.as_floating_point()) return f->get();
    if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
    wrong_type(n, key_path, "a number");
  }

  void read_scorers(const toml::node& n, PolicyBundle& b, Sources& src) const {
    const auto* arr = n.as_array();
    if (arr == nullptr) wrong_type(n, "routing.scorers", "an array of tables");
    for (size_t i = 0; i < arr->size(); ++i) {
      const auto& e = (*arr)[i];
      const std::string key_path = "routing.scorers[" + std::to_string(i) + "]";
      const auto* t = e.as_table();
      if (t == nullptr) wrong_type(e, key_path, "a table");
      check_keys(*t, key_path, kScorerKeys);
      ScorerWeight s;
      ScorerSource at{where(t->source()), where(t->source()), where(t->source())};
      if (const auto* name = t->get("name")) {
        s.name = string(*name, key_path + ".name");
        at.name = where(name->source());
      }
      if (const auto* weight = t->get("weight")) {
        s.weight = number(*weight, key_path + ".weight");
        at.weight = where(weight->source());
      }
      b.scorers.push_back(std::move(s));
      src.scorers.push_back(std::move(at));
    }
  }

  // [[pools]]: tables of scalars (a list of scalars, coefficients, is
  // written comma-separated as on the command line).
  void read_pools(const toml::node& n, PolicyBundle& b) const {
    const auto* arr = n.as_array();
    if (arr == nullptr) wrong_type(n, "pools", "an array of tables ([[pools]])");
    for (size_t i = 0; i < arr->size(); ++i) {
      const auto& e = (*arr)[i];
      const std::string key_path = "pools[" + std::to_string(i) + "]";
      const auto* t = e.as_table();
      if (t == nullptr) wrong_type(e, key_path, "a table");
      std::vector<PoolField> fields;
      for (const auto& [k, v] : *t) {
        const std::string key(k.str());
        if (!config::is_pool_key(key)) throw ConfigError(where(k.source()), key_path + ": " + config::not_a_pool_key(key));
        std::string text;
        if (const auto* a = v.as_array()) {
          std::vector<std::string> items;
          for (const auto& x : *a) items.push_back(scalar(x, key_path + "." + key));
          text = text::join(items, ",");
        } else {
          text = scalar(v, key_path + "." + key);
        }
        fields.push_back({key, text, where(v.source())});
      }
      b.pools.push_back(make_pool(fields, where(t->source())));
    }
  }

  // [[node_pools]]: tables of scalars, the keys of --node-pool; values are
  // checked with the entry's position at resolution (run/fleet_config.cpp).
  void read_node_pools(const toml::node& n, PolicyBundle& b) const {
    const auto* arr = n.as_array();
    if (arr == nullptr) wrong_type(n, "node_pools", "an array of tables ([[node_pools]])");
    for (size_t i = 0; i < arr->size(); ++i) {
      const auto& e = (*arr)[i];
      const std::string key_path = "node_pools[" + std::to_string(i) + "]";
      const auto* t = e.as_table();
      if (t == nullptr) wrong_type(e, key_path, "a table");
      check_keys(*t, key_path, kTomlNodePoolKeys);
      std::vector<std::string> pairs;
      for (const auto& [k, v] : *t) {
        const std::string value = scalar(v, key_path + "." + std::string(k.str()));
        if (value.empty() || value.find(' ') != std::string::npos)
          throw ConfigError(where(v.source()),
                            key_path + "." + std::string(k.str()) + " must be non-empty and without spaces");
        pairs.push_back(std::string(k.str()) + "=" + value);
      }
      b.node_pools.push_back(PolicyPool{text::join(pairs, " "), where(t->source())});
    }
  }

  std::string scalar(const toml::node& n, const std::string& key_path) const {
    if (const auto* v = n.as_string()) return v->get();
    if (const auto* v = n.as_integer()) return std::to_string(v->get());
    if (const auto* v = n.as_floating_point()) return scenario::number_text(v->get());
    if (const auto* v = n.as_boolean()) return v->get() ? "true" : "false";
    wrong_type(n, key_path, "a string, number or boolean");
  }

  std::string path_;
};

// ---------------------------------------------------------------- YAML

// Reads the reference's YAML schema the way its decoder does
// (config/strict_yaml.hpp); a null value (`key:` or `key: ~`) leaves the
// field unset.
class YamlReader {
 public:
  explicit YamlReader(std::string path) : y_(std::move(path), config::StrictYaml::Position::kLine) {}

  PolicyBundle read(const std::string& text, Sources& src) const {
    // Only the first document counts, as with the reference's decoder.
    const auto doc = y_.first_document(text);
    if (!doc) throw ConfigError(y_.path(), "empty policy config");
    const YAML::Node& root = *doc;
    PolicyBundle b;
    if (root.IsNull()) return b;
    if (!root.IsMap()) throw ConfigError(y_.where(root.Mark()), "policy config must be a mapping");

    walk(root, "", kYamlTopKeys, [&](const std::string& key, const YAML::Node& v) {
      if (key == "autoscaler") {
        read_autoscaler(v, b);
      } else if (key == "instance_lifecycle") {
        read_lifecycle(v, b);
      } else if (key == "scheduler") {
        set_name(b.scheduler, y_.string(v, "scheduler"));
      } else if (key == "pools") {
        read_pools(v, b);
      } else if (key == "node_pools") {
        read_node_pools(v, b);
      } else if (key == "tenant_budgets") {
        read_budgets(v, b);
      } else if (key == "admission") {
        walk(y_.mapping(v, "admission"), "admission", kAdmissionKeys,
             [&](const std::string& k, const YAML::Node& w) {
               const std::string key_path = "admission." + k;
               if (k == "slo_priorities") {
                 read_integers(w, key_path, priority_error, b.slo_priorities);
               } else if (k == "slo_targets") {
                 read_integers(w, key_path, target_error, b.slo_targets);
               } else if (k == "policy") {
                 set_name(b.admission_policy, y_.string(w, key_path));
               } else if (k == "token_bucket_capacity") {
                 b.token_bucket_capacity = y_.number(w, key_path);
                 src.capacity = y_.where(w.Mark());
               } else if (integer_admission_key(k)) {
                 b.admission_keys.push_back(k + "=" + std::to_string(y_.integer(w, key_path)));
               } else if (k.rfind("gaie_", 0) == 0) {
                 b.admission_keys.push_back(k + "=" + shortest_text(y_.number(w, key_path)));
               } else {
                 b.token_bucket_refill_rate = y_.number(w, key_path);
                 src.refill_rate = y_.where(w.Mark());
               }
             });
      } else if (key == "routing") {
        walk(y_.mapping(v, "routing"), "routing", kRoutingKeys,
             [&](const std::string& k, const YAML::Node& w) {
               if (k == "policy")
                 set_name(b.routing_policy, y_.string(w, "routing.policy"));
               else
                 read_scorers(w, b, src);
             });
      } else {
        walk(y_.mapping(v, "priority"), "priority", kPriorityKeys,
             [&](const std::string&, const YAML::Node& w) {
               set_name(b.priority_policy, y_.string(w, "priority.policy"));
             });
      }
    });
    return b;
  }

 private:
  // Calls `on` for every key of `map` whose value is not null.
  template <typename F>
  void walk(const YAML::Node& map, std::string_view prefix, KeyList allowed, F&& on) const {
    for (const auto& [key, value] : y_.entries(map, prefix, allowed))
      if (!value.IsNull()) on(key, value);
  }

  // HEAD's map[string]int of SLO classes, each entry checked by `check`.
  void read_integers(const YAML::Node& v, const std::string& path, std::string (*check)(const std::string&, int64_t),
                     std::optional<std::string>& text) const {
    walk(y_.mapping(v, path), path, {}, [&](const std::string& name, const YAML::Node& w) {
      const int64_t i = y_.integer(w, path + "." + name);
      if (auto e = check(name, i); !e.empty()) throw ConfigError(y_.where(w.Mark()), e);
      add_pair(text, name, std::to_string(i));
    });
  }

  // tenant_budgets: tenant → fraction of the cluster's batch slots.
  void read_budgets(const YAML::Node& v, PolicyBundle& b) const {
    walk(y_.mapping(v, "tenant_budgets"), "tenant_budgets", {}, [&](const std::string& tenant, const YAML::Node& w) {
      const double f = y_.number(w, "tenant_budgets." + tenant);
      if (auto e = budget_error(tenant, f); !e.empty()) throw ConfigError(y_.where(w.Mark()), e);
      add_pair(b.tenant_budgets, tenant, shortest_text(f));
    });
  }

  // A finite number >= 0 (spec head §6.1: intervals, windows and delays).
  double non_negative(const YAML::Node& v, const std::string& key_path) const {
    const double d = y_.number(v, key_path);
    if (!std::isfinite(d) || d < 0)
      throw ConfigError(y_.where(v.Mark()), key_path + " must be a finite number >= 0, got " + shortest_text(d));
    return d;
  }

  // {mean: s, stddev: s} into " <name>_delay=..us <name>_stddev=..us" (or
  // <name>=.. for the mean when `mean_key` is given).
  std::string delay(const YAML::Node& v, const std::string& key_path, const std::string& mean_key,
                    const std::string& stddev_key) const {
    std::string out;
    walk(y_.mapping(v, key_path), key_path, kDelayKeys, [&](const std::string& k, const YAML::Node& w) {
      const double us = std::trunc(non_negative(w, key_path + "." + k) * 1e6);
      out += fmt::format(" {}={}us", k == "mean" ? mean_key : stddev_key, static_cast<int64_t>(us));
    });
    return out;
  }

  void read_autoscaler(const YAML::Node& v, PolicyBundle& b) const {
    std::string text;
    double interval = 0;
    walk(y_.mapping(v, "autoscaler"), "autoscaler", kAutoscalerKeys, [&](const std::string& k, const YAML::Node& w) {
      const std::string key_path = "autoscaler." + k;
      if (k == "interval_us") {
        interval = non_negative(w, key_path);
      } else if (k == "scale_up_stabilization_window_us") {
        text += fmt::format(" up_window={}us", static_cast<int64_t>(non_negative(w, key_path)));
      } else if (k == "scale_down_stabilization_window_us") {
        text += fmt::format(" down_window={}us", static_cast<int64_t>(non_negative(w, key_path)));
      } else if (k == "hpa_scrape_delay") {
        text += delay(w, key_path, "actuation_delay", "actuation_stddev");
      } else {
        walk(y_.mapping(w, key_path), key_path, kAnalyzerKeys, [&](const std::string& a, const YAML::Node& x) {
          const double d = y_.number(x, key_path + "." + a);
          if (d != 0) text += fmt::format(" {}={}", a, shortest_text(d));  // 0: the default
        });
      }
    });
    if (interval < 1) return;  // 0 = disabled (spec head §6.1)
    b.autoscaler = fmt::format("interval={}us", static_cast<int64_t>(interval)) + text;
  }

  void read_lifecycle(const YAML::Node& v, PolicyBundle& b) const {
    std::string text, warm_up;
    bool warm = false;
    walk(y_.mapping(v, "instance_lifecycle"), "instance_lifecycle", kLifecycleKeys,
         [&](const std::string& k, const YAML::Node& w) {
           const std::string key_path = "instance_lifecycle." + k;
           if (k == "loading_delay") {
             text += delay(w, key_path, "loading_delay", "loading_stddev");
           } else if (k == "warm_up_request_count") {
             const int64_t n = y_.integer(w, key_path);
             if (n < 0 || n > 100000)
               throw ConfigError(y_.where(w.Mark()), key_path + " must be in [0, 100000], got " + std::to_string(n));
             warm_up += fmt::format(" warm_up_request_count={}", n);
           } else if (k == "warm_up_ttft_factor") {
             const double f = y_.number(w, key_path);
             if (!std::isfinite(f) || (f != 0 && f < 1) || f > 1e6)
               throw ConfigError(y_.where(w.Mark()),
                                 key_path + " must be 0 (no penalty) or a number >= 1, got " + shortest_text(f));
             warm_up += fmt::format(" warm_up_ttft_factor={}", shortest_text(f));
           } else {
             warm = y_.boolean(w, key_path);
           }
         });
    // The reference's default: the initial instances load first too.
    if (!warm && !text.empty()) text += " warm_start=false";
    text += warm_up;
    if (!text.empty()) b.lifecycle = text.substr(1);
  }

  // pools: a list of mappings of scalars (a list of scalars is written
  // comma-separated, as on the command line).
  void read_pools(const YAML::Node& v, PolicyBundle& b) const {
    if (!v.IsSequence()) throw ConfigError(y_.where(v.Mark()), "pools must be a list");
    for (size_t i = 0; i < v.size(); ++i) {
      const YAML::Node e = v[i];
      const std::string key_path = "pools[" + std::to_string(i) + "]";
      if (!e.IsMap()) throw ConfigError(y_.where(e.Mark()), key_path + " must be a mapping");
      std::vector<PoolField> fields;
      for (const auto& [key, w] : y_.entries(e, key_path, {})) {
        if (!config::is_pool_key(key)) throw ConfigError(y_.where(w.Mark()), key_path + ": " + config::not_a_pool_key(key));
        std::string text;
        if (w.IsSequence()) {
          std::vector<std::string> items;
          for (size_t j = 0; j < w.size(); ++j) items.push_back(scalar(w[j], key_path + "." + key));
          text = text::join(items, ",");
        } else {
          text = scalar(w, key_path + "." + key);
        }
        fields.push_back({key, text, y_.where(w.Mark())});
      }
      b.pools.push_back(make_pool(fields, y_.where(e.Mark())));
    }
  }

  // node_pools: spec head §6.1, every key required but min_nodes; each value
  // checked on its own line, into the text --node-pool takes.
  void read_node_pools(const YAML::Node& v, PolicyBundle& b) const {
    if (!v.IsSequence()) throw ConfigError(y_.where(v.Mark()), "node_pools must be a list");
    for (size_t i = 0; i < v.size(); ++i) {
      const YAML::Node e = v[i];
      const std::string key_path = "node_pools[" + std::to_string(i) + "]";
      if (!e.IsMap()) throw ConfigError(y_.where(e.Mark()), key_path + " must be a mapping");
      std::string text;
      std::set<std::string> seen;
      walk(e, key_path, kNodePoolKeys, [&](const std::string& k, const YAML::Node& w) {
        seen.insert(k);
        text += node_pool_field(k, w, key_path + "." + k);
      });
      for (const char* k : {"name", "gpu_type", "gpus_per_node", "gpu_memory_gib", "max_nodes"})
        if (seen.count(k) == 0)
          throw ConfigError(y_.where(e.Mark()), fmt::format("{}: {} is required", key_path, k));
      b.node_pools.push_back(PolicyPool{text.substr(text.empty() ? 0 : 1), y_.where(e.Mark())});
    }
  }

  // One key of a node_pools entry, checked, as " key=value" for --node-pool.
  std::string node_pool_field(const std::string& k, const YAML::Node& w, const std::string& path) const {
    if (k == "name" || k == "gpu_type") {
      const std::string s = y_.string(w, path);
      if (s.empty() || s.find_first_of(" \t=") != std::string::npos)
        throw ConfigError(y_.where(w.Mark()), path + " must be non-empty, without spaces or '='");
      return fmt::format(" {}={}", k, s);
    }
    if (k == "gpus_per_node") return fmt::format(" {}={}", k, node_count(w, path, 1));
    if (k == "initial_nodes" || k == "min_nodes" || k == "max_nodes")
      return fmt::format(" {}={}", k, node_count(w, path, 0));
    if (k == "gpu_memory_gib") {
      const double d = y_.number(w, path);
      if (!std::isfinite(d) || d <= 0)
        throw ConfigError(y_.where(w.Mark()), path + " must be a number > 0, got " + shortest_text(d));
      return fmt::format(" {}={}", k, shortest_text(d));
    }
    if (k == "cost_per_hour") return fmt::format(" {}={}", k, shortest_text(non_negative(w, path)));
    return delay(w, path, "provisioning_delay", "provisioning_stddev");
  }

  // A whole number of GPUs or nodes in [lo, 100000].
  int64_t node_count(const YAML::Node& w, const std::string& path, int64_t lo) const {
    const int64_t n = y_.integer(w, path);
    if (n < lo || n > 100000)
      throw ConfigError(y_.where(w.Mark()), fmt::format("{} must be in [{}, 100000], got {}", path, lo, n));
    return n;
  }

  std::string scalar(const YAML::Node& w, const std::string& key_path) const {
    if (!w.IsScalar()) throw ConfigError(y_.where(w.Mark()), key_path + " must be a string, number or boolean");
    return w.Scalar();
  }

  void read_scorers(const YAML::Node& v, PolicyBundle& b, Sources& src) const {
    if (!v.IsSequence()) throw ConfigError(y_.where(v.Mark()), "routing.scorers must be a list");
    for (size_t i = 0; i < v.size(); ++i) {
      const YAML::Node e = v[i];
      const std::string key_path = "routing.scorers[" + std::to_string(i) + "]";
      if (!e.IsMap()) throw ConfigError(y_.where(e.Mark()), key_path + " must be a mapping");
      ScorerWeight s;
      ScorerSource at{y_.where(e.Mark()), y_.where(e.Mark()), y_.where(e.Mark())};
      walk(e, key_path, kScorerKeys, [&](const std::string& k, const YAML::Node& w) {
        if (k == "name") {
          s.name = y_.string(w, key_path + ".name");
          at.name = y_.where(w.Mark());
        } else {
          s.weight = y_.number(w, key_path + ".weight");
          at.weight = y_.where(w.Mark());
        }
      });
      b.scorers.push_back(std::move(s));
      src.scorers.push_back(std::move(at));
    }
  }

  config::StrictYaml y_;
};

}  // namespace

PolicyBundle load_policy_config(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool toml = ext == ".toml";
  if (!toml && ext != ".yaml" && ext != ".yml")
    throw ConfigError(path, "policy config must be " + std::string(kAcceptedFormats) +
                                (ext.empty() ? std::string(" (no extension)")
                                             : " (got " + in_quotes(ext) + ")"));
  const std::string text = config::read_text_file(path, "policy config");
  Sources src;
  PolicyBundle b = toml ? TomlReader(path).read(text, src) : YamlReader(path).read(text, src);
  validate(b, src);
  return b;
}

std::vector<ScorerWeight> parse_scorer_list(const std::string& text) {
  return parse_scorer_list(text, ScorerNameCheck{});
}

std::vector<ScorerWeight> parse_scorer_list(const std::string& text,
                                            const ScorerNameCheck& check_name) {
  std::vector<ScorerWeight> out;
  if (text.empty()) return out;
  auto fail = [](const std::string& what) -> void { throw InputError("--routing-scorers", what); };
  std::set<std::string> seen;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string piece =
        text::trim(std::string_view(text).substr(start, comma == std::string::npos ? std::string::npos
                                                                              : comma - start));
    const size_t colon = piece.find(':');
    const std::string name = colon == std::string::npos ? std::string() : text::trim(piece.substr(0, colon));
    // A piece without a name is as malformed as one without a colon.
    if (name.empty()) fail("invalid scorer config " + in_quotes(piece) + " (expected name:weight)");
    if (check_name)
      if (auto err = check_name(name)) fail(*err);
    if (!seen.insert(name).second)
      fail("duplicate scorer " + in_quotes(name) + "; each scorer may appear at most once");

    const std::string weight_text = text::trim(piece.substr(colon + 1));
    char* end = nullptr;
    errno = 0;
    const double weight = std::strtod(weight_text.c_str(), &end);
    if (weight_text.empty() || end != weight_text.c_str() + weight_text.size())
      fail("invalid weight for scorer " + in_quotes(name) + ": " + in_quotes(weight_text) +
           " is not a number");
    // Underflow to 0 falls through to the positivity check below; overflow
    // has no meaningful value to report.
    if (errno == ERANGE && std::isinf(weight))
      fail("invalid weight for scorer " + in_quotes(name) + ": " + in_quotes(weight_text) +
           " is out of range");
    if (!std::isfinite(weight) || weight <= 0)
      fail("scorer " + in_quotes(name) + " weight must be a finite positive number, got " +
           shortest_text(weight));
    out.push_back({name, weight});

    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace blis
