// Policy configuration: the --policy-config file (TOML, or the reference's
// YAML schema read strictly) and the "name:weight,..." scorer lists of
// --routing-scorers (spec cluster §8, cli §3.2.6).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace blis {

struct ScorerWeight {
  std::string name;
  double weight = 0;
};

// One pool of the file, as the text --pool takes ("name=a100 count=4 ..."),
// and where it was written ("file:line[:col]").
struct PolicyPool {
  std::string text;
  std::string where;
};

// Every key is optional; a key absent from the file stays unset.
struct PolicyBundle {
  std::optional<std::string> admission_policy;
  std::optional<double> token_bucket_capacity;
  std::optional<double> token_bucket_refill_rate;
  // HEAD's keys of its tier-shed and gaie-legacy admission policies
  // (tier_shed_threshold, tier_shed_min_priority, gaie_qd_threshold,
  // gaie_kv_threshold), as "KEY=VALUE" for that plugin's configuration.
  std::vector<std::string> admission_keys;
  // BLIS HEAD's tenant_budgets and admission.slo_priorities / slo_targets,
  // checked, as the texts of --tenant-budgets, --slo-priorities and
  // --slo-targets ("name=value,...").
  std::optional<std::string> tenant_budgets;
  std::optional<std::string> slo_priorities;
  std::optional<std::string> slo_targets;
  std::optional<std::string> routing_policy;
  std::vector<ScorerWeight> scorers;  // in file order
  std::optional<std::string> priority_policy;
  std::optional<std::string> scheduler;
  // spec head §6.1 `autoscaler:` and `instance_lifecycle:` (YAML), as the
  // texts of the --autoscaler and --lifecycle settings (docs/autoscaling.md).
  std::optional<std::string> autoscaler;
  std::optional<std::string> lifecycle;
  // The pools (TOML `[[pools]]`, YAML `pools:`), in file order; their keys
  // and name, count and cost values are checked, the rest at resolution.
  std::vector<PolicyPool> pools;
  // The node pools (TOML `[[node_pools]]`, YAML `node_pools:`), in file
  // order, each as the text --node-pool takes (docs/autoscaling.md).
  std::vector<PolicyPool> node_pools;
};

// Reads a policy file: ".toml" as TOML, ".yaml"/".yml" as the reference's
// YAML. Unknown keys, wrong types, duplicate or badly weighted scorers are
// ConfigError with file:line:col (TOML) or file:line (YAML) and the key path.
PolicyBundle load_policy_config(const std::string& path);

// Parses "name:weight,name:weight" (spec cli §3.2.6 parsing and messages).
// Names are not checked against a registry here.
std::vector<ScorerWeight> parse_scorer_list(const std::string& text);

// Returns the error text for a name no registry knows, or nothing.
using ScorerNameCheck = std::function<std::optional<std::string>(const std::string& name)>;

// As above, also checking each name as its piece is read: the reference
// reports an unknown name before that piece's duplicate and weight errors and
// before any later piece, which a check after the whole list cannot.
std::vector<ScorerWeight> parse_scorer_list(const std::string& text,
                                            const ScorerNameCheck& check_name);

}  // namespace blis
