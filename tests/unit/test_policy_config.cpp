// The --policy-config file in TOML and the reference's YAML, its strictness
// and validation messages (spec cluster §8.1), and the --routing-scorers list
// (spec cli §3.2.6).
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/policy_config.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

using blis::PolicyBundle;
using blis::ScorerWeight;

namespace {

using blis::test::TempDir;

// The message of the ConfigError the file raises; fails the test otherwise.
std::string config_error(const std::string& path) {
  try {
    blis::load_policy_config(path);
  } catch (const blis::ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError for " << path);
  return {};
}

std::string scorer_error(const std::string& text) {
  try {
    blis::parse_scorer_list(text);
  } catch (const blis::InputError& e) {
    return e.what();
  }
  FAIL("no InputError for \"" << text << "\"");
  return {};
}

bool same_scorers(const std::vector<ScorerWeight>& a, const std::vector<ScorerWeight>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].weight != b[i].weight) return false;
  return true;
}

bool same_bundle(const PolicyBundle& a, const PolicyBundle& b) {
  return a.admission_policy == b.admission_policy &&
         a.token_bucket_capacity == b.token_bucket_capacity &&
         a.token_bucket_refill_rate == b.token_bucket_refill_rate &&
         a.routing_policy == b.routing_policy && same_scorers(a.scorers, b.scorers) &&
         a.priority_policy == b.priority_policy && a.scheduler == b.scheduler;
}

const std::vector<ScorerWeight> kDefaultProfile = {
    {"prefix-affinity", 3.0}, {"queue-depth", 2.0}, {"kv-utilization", 2.0}};

const std::string kFullToml = R"(# every key once
scheduler = "sjf"

[admission]
policy = "token-bucket"
token_bucket_capacity = 5000.0
token_bucket_refill_rate = 100.0

[routing]
policy = "weighted"
scorers = [
  { name = "prefix-affinity", weight = 3.0 },
  { name = "queue-depth", weight = 2.0 },
  { name = "kv-utilization", weight = 2.0 },
]

[priority]
policy = "slo-based"
)";

const std::string kFullYaml = R"(# every key once
admission:
  policy: token-bucket
  token_bucket_capacity: 5000.0
  token_bucket_refill_rate: 100.0
routing:
  policy: weighted
  scorers:
    - name: prefix-affinity
      weight: 3.0
    - {name: queue-depth, weight: 2.0}
    - name: kv-utilization
      weight: 2.0
priority:
  policy: slo-based
scheduler: sjf
)";

void check_full(const PolicyBundle& b) {
  CHECK(b.admission_policy == "token-bucket");
  CHECK(b.token_bucket_capacity == 5000.0);
  CHECK(b.token_bucket_refill_rate == 100.0);
  CHECK(b.routing_policy == "weighted");
  CHECK(same_scorers(b.scorers, kDefaultProfile));
  CHECK(b.priority_policy == "slo-based");
  CHECK(b.scheduler == "sjf");
}

}  // namespace

TEST_CASE("policy config: a full TOML file", "[config]") {
  TempDir dir("blis-policy-config");
  check_full(blis::load_policy_config(dir.write("p.toml", kFullToml)));
}

TEST_CASE("policy config: the same content in YAML, .yaml and .yml", "[config]") {
  TempDir dir("blis-policy-config");
  const auto toml = blis::load_policy_config(dir.write("p.toml", kFullToml));
  const auto yaml = blis::load_policy_config(dir.write("p.yaml", kFullYaml));
  const auto yml = blis::load_policy_config(dir.write("p.yml", kFullYaml));
  check_full(yaml);
  CHECK(same_bundle(toml, yaml));
  CHECK(same_bundle(toml, yml));
}

TEST_CASE("policy config: [[routing.scorers]] tables and integer numbers", "[config]") {
  TempDir dir("blis-policy-config");
  const auto b = blis::load_policy_config(dir.write("p.toml", R"([admission]
token_bucket_capacity = 5000
token_bucket_refill_rate = 0

[routing]
policy = "weighted"

[[routing.scorers]]
name = "queue-depth"
weight = 1

[[routing.scorers]]
name = "load-balance"
weight = 0.5
)"));
  CHECK(b.token_bucket_capacity == 5000.0);
  CHECK(b.token_bucket_refill_rate == 0.0);
  CHECK_FALSE(b.admission_policy.has_value());
  CHECK(same_scorers(b.scorers, {{"queue-depth", 1.0}, {"load-balance", 0.5}}));

  const auto y = blis::load_policy_config(dir.write("p.yaml", R"(admission:
  token_bucket_capacity: 5000
  token_bucket_refill_rate: 0
routing:
  scorers: [{name: queue-depth, weight: 1}, {name: load-balance, weight: .5}]
)"));
  CHECK(y.token_bucket_capacity == 5000.0);
  CHECK(y.token_bucket_refill_rate == 0.0);
  CHECK(same_scorers(y.scorers, {{"queue-depth", 1.0}, {"load-balance", 0.5}}));
}

TEST_CASE("policy config: absent, null and empty values stay unset", "[config]") {
  TempDir dir("blis-policy-config");
  const auto empty_toml = blis::load_policy_config(dir.write("empty.toml", ""));
  CHECK(same_bundle(empty_toml, PolicyBundle{}));

  const auto y = blis::load_policy_config(dir.write("p.yaml", R"(admission:
  policy: ""
  token_bucket_capacity: ~
routing:
priority:
  policy:
scheduler: null
)"));
  CHECK(same_bundle(y, PolicyBundle{}));

  const auto t = blis::load_policy_config(dir.write("p.toml", "scheduler = \"\"\n[routing]\n"));
  CHECK(same_bundle(t, PolicyBundle{}));

  // An explicit null document is a valid, empty bundle; no document at all is not.
  CHECK(same_bundle(blis::load_policy_config(dir.write("null.yaml", "~\n")), PolicyBundle{}));
}

TEST_CASE("policy config: the example files agree", "[config]") {
  const std::string dir = std::string(BLIS_TEST_SOURCE_DIR) + "/examples/policy-config/";
  const auto toml = blis::load_policy_config(dir + "weighted.toml");
  const auto yaml = blis::load_policy_config(dir + "weighted.yaml");
  CHECK(toml.admission_policy == "always-admit");
  CHECK(toml.routing_policy == "weighted");
  CHECK(same_scorers(toml.scorers, kDefaultProfile));
  CHECK(same_bundle(toml, yaml));
}

TEST_CASE("policy config: file errors", "[config]") {
  TempDir dir("blis-policy-config");
  const std::string json = dir.write("p.json", "{}");
  CHECK(config_error(json) ==
        json + ": policy config must be a .toml, .yaml or .yml file (got \".json\")");
  const std::string bare = dir.write("policy", "");
  CHECK(config_error(bare) == bare + ": policy config must be a .toml, .yaml or .yml file (no extension)");

  const std::string missing = dir.str() + "/missing.toml";
  CHECK(config_error(missing) == missing + ": cannot read policy config: No such file or directory");
  const std::string folder = dir.str() + "/folder.yaml";
  fs::create_directories(folder);
  CHECK(config_error(folder) == folder + ": cannot read policy config: Is a directory");

  const std::string empty = dir.write("empty.yaml", "");
  CHECK(config_error(empty) == empty + ": empty policy config");
  const std::string comments = dir.write("comments.yml", "# nothing here\n\n");
  CHECK(config_error(comments) == comments + ": empty policy config");
}

TEST_CASE("policy config: TOML strictness with line and column", "[config]") {
  TempDir dir("blis-policy-config");
  const std::string unknown = dir.write("a.toml", "[routing]\npolicy = \"weighted\"\nscorer = []\n");
  CHECK(config_error(unknown) ==
        unknown + ":3:1: unknown key \"routing.scorer\" (expected one of: policy, scorers)");

  const std::string top = dir.write("b.toml", "schedular = \"sjf\"\n");
  CHECK(config_error(top) == top +
                                 ":1:1: unknown key \"schedular\" (expected one of: admission, "
                                 "routing, priority, scheduler, pools, node_pools, tenant_budgets)");

  const std::string in_scorer = dir.write(
      "c.toml", "[routing]\nscorers = [\n  { name = \"queue-depth\", weight = 1 },\n"
                "  { name = \"kv-utilization\", wieght = 2 },\n]\n");
  CHECK(config_error(in_scorer) == in_scorer +
                                       ":4:30: unknown key \"routing.scorers[1].wieght\" "
                                       "(expected one of: name, weight)");

  const std::string header = dir.write("d.toml", "[admision]\npolicy = \"reject-all\"\n");
  CHECK(config_error(header).rfind(header + ":1:2: unknown key \"admision\"", 0) == 0);

  const std::string type = dir.write("e.toml", "[admission]\npolicy = 3\n");
  CHECK(config_error(type) == type + ":2:10: admission.policy must be a string, got an integer");

  const std::string num = dir.write("f.toml", "[admission]\ntoken_bucket_capacity = \"5000\"\n");
  CHECK(config_error(num) ==
        num + ":2:25: admission.token_bucket_capacity must be a number, got a string");

  const std::string section = dir.write("g.toml", "routing = \"weighted\"\n");
  CHECK(config_error(section) == section + ":1:11: routing must be a table, got a string");

  const std::string sched = dir.write("h.toml", "[scheduler]\npolicy = \"sjf\"\n");
  CHECK(config_error(sched).rfind(sched + ":1:1: scheduler must be a string, got a table", 0) == 0);

  const std::string list = dir.write("i.toml", "[routing]\nscorers = \"queue-depth:1\"\n");
  CHECK(config_error(list) ==
        list + ":2:11: routing.scorers must be an array of tables, got a string");

  const std::string elem = dir.write("j.toml", "[routing]\nscorers = [\"queue-depth\"]\n");
  CHECK(config_error(elem) == elem + ":2:12: routing.scorers[0] must be a table, got a string");

  const std::string syntax = dir.write("k.toml", "[routing]\npolicy = \n");
  CHECK(config_error(syntax).rfind(syntax + ":2:", 0) == 0);

  const std::string dup = dir.write("l.toml", "[routing]\npolicy = \"a\"\npolicy = \"b\"\n");
  CHECK(config_error(dup).rfind(dup + ":3:", 0) == 0);
}

TEST_CASE("policy config: YAML strictness with line", "[config]") {
  TempDir dir("blis-policy-config");
  const std::string unknown = dir.write("a.yaml", "routing:\n  policy: weighted\n  scorer: []\n");
  CHECK(config_error(unknown) ==
        unknown + ":3: unknown key \"routing.scorer\" (expected one of: policy, scorers)");

  const std::string in_scorer = dir.write(
      "b.yaml", "routing:\n  scorers:\n    - name: queue-depth\n      weight: 1\n"
                "    - name: kv-utilization\n      wieght: 2\n");
  CHECK(config_error(in_scorer) == in_scorer +
                                       ":6: unknown key \"routing.scorers[1].wieght\" "
                                       "(expected one of: name, weight)");

  const std::string dup = dir.write("c.yaml", "routing:\n  policy: weighted\n\n  policy: round-robin\n");
  CHECK(config_error(dup) == dup + ":4: duplicate key \"routing.policy\" (first given at line 2)");

  const std::string dup_top = dir.write("d.yml", "scheduler: sjf\nscheduler: fcfs\n");
  CHECK(config_error(dup_top) == dup_top + ":2: duplicate key \"scheduler\" (first given at line 1)");

  const std::string quoted = dir.write("e.yaml", "admission:\n  token_bucket_capacity: \"5000\"\n");
  CHECK(config_error(quoted) ==
        quoted + ":2: admission.token_bucket_capacity must be a number, got \"5000\"");

  const std::string word = dir.write("f.yaml", "routing:\n  scorers:\n    - {name: a, weight: high}\n");
  CHECK(config_error(word) == word + ":3: routing.scorers[0].weight must be a number, got \"high\"");

  const std::string list_policy = dir.write("g.yaml", "priority:\n  policy: [slo-based]\n");
  CHECK(config_error(list_policy) == list_policy + ":2: priority.policy must be a string");

  const std::string section = dir.write("h.yaml", "admission: token-bucket\n");
  CHECK(config_error(section) == section + ":1: admission must be a mapping");

  const std::string scorers = dir.write("i.yaml", "routing:\n  scorers: {name: a, weight: 1}\n");
  CHECK(config_error(scorers) == scorers + ":2: routing.scorers must be a list");

  const std::string elem = dir.write("j.yaml", "routing:\n  scorers:\n    - queue-depth:1\n");
  CHECK(config_error(elem) == elem + ":3: routing.scorers[0] must be a mapping");

  const std::string top = dir.write("k.yaml", "- admission\n");
  CHECK(config_error(top) == top + ":1: policy config must be a mapping");

  const std::string syntax = dir.write("l.yaml", "routing:\n  policy: [weighted\n");
  CHECK(config_error(syntax).rfind(syntax + ":", 0) == 0);

  // Any scalar reads as a string, as with the reference's decoder.
  const auto b = blis::load_policy_config(dir.write("m.yaml", "scheduler: 12\n"));
  CHECK(b.scheduler == "12");
}

TEST_CASE("policy config: token bucket validation", "[config]") {
  TempDir dir("blis-policy-config");
  const std::string nan = dir.write("a.toml", "[admission]\ntoken_bucket_capacity = nan\n");
  CHECK(config_error(nan) == nan + ":2:25: token_bucket_capacity must be a finite number, got NaN");

  const std::string inf = dir.write("b.yaml", "admission:\n  token_bucket_refill_rate: .inf\n");
  CHECK(config_error(inf) == inf + ":2: token_bucket_refill_rate must be a finite number, got +Inf");

  const std::string neg = dir.write("c.toml", "[admission]\ntoken_bucket_refill_rate = -1\n");
  CHECK(config_error(neg) ==
        neg + ":2:28: token_bucket_refill_rate must be non-negative, got -1.000000");

  // Capacity is checked before the refill rate whatever the file order.
  const std::string both = dir.write(
      "d.yaml", "admission:\n  token_bucket_refill_rate: -2\n  token_bucket_capacity: -3.5\n");
  CHECK(config_error(both) == both + ":3: token_bucket_capacity must be non-negative, got -3.500000");
}

TEST_CASE("policy config: scorer validation", "[config]") {
  TempDir dir("blis-policy-config");
  const std::string dup = dir.write("a.toml", R"([routing]
scorers = [
  { name = "queue-depth", weight = 1.0 },
  { name = "kv-utilization", weight = 1.0 },
  { name = "queue-depth", weight = 2.0 },
]
)");
  CHECK(config_error(dup) == dup +
                                 ":5:12: routing scorer[2]: duplicate scorer \"queue-depth\"; each "
                                 "scorer may appear at most once");

  const std::string zero = dir.write("b.yaml", "routing:\n  scorers:\n    - name: queue-depth\n      weight: 0\n");
  CHECK(config_error(zero) == zero +
                                  ":4: routing scorer[0] \"queue-depth\": weight must be a finite "
                                  "positive number, got 0");

  const std::string neg = dir.write("c.toml", "[[routing.scorers]]\nname = \"a\"\nweight = -1.5\n");
  CHECK(config_error(neg) ==
        neg + ":3:10: routing scorer[0] \"a\": weight must be a finite positive number, got -1.5");

  const std::string inf = dir.write("d.toml", "[[routing.scorers]]\nname = \"a\"\nweight = inf\n");
  CHECK(config_error(inf) ==
        inf + ":3:10: routing scorer[0] \"a\": weight must be a finite positive number, got +Inf");

  // A missing weight is zero, as in the reference; the error points at the entry.
  const std::string no_weight = dir.write("e.yaml", "routing:\n  scorers:\n    - name: a\n");
  CHECK(config_error(no_weight) ==
        no_weight + ":3: routing scorer[0] \"a\": weight must be a finite positive number, got 0");

  const std::string no_name = dir.write(
      "f.toml", "[routing]\nscorers = [{ name = \"a\", weight = 1 }, { weight = 1 }]\n");
  CHECK(config_error(no_name) == no_name + ":2:40: routing scorer[1]: scorer name must not be empty");

  const std::string empty_name = dir.write("g.yaml", "routing:\n  scorers:\n    - {name: '', weight: 1}\n");
  CHECK(config_error(empty_name) == empty_name + ":3: routing scorer[0]: scorer name must not be empty");

  // Duplicates are reported before a later entry's bad weight, entry by entry.
  const std::string order = dir.write(
      "h.yaml", "routing:\n  scorers:\n    - {name: a, weight: -1}\n    - {name: a, weight: 1}\n");
  CHECK(config_error(order).find("routing scorer[0] \"a\": weight") != std::string::npos);

  // Bucket errors come before scorer errors.
  const std::string first = dir.write(
      "i.yaml", "routing:\n  scorers:\n    - {name: a, weight: 0}\nadmission:\n  token_bucket_capacity: -1\n");
  CHECK(config_error(first).find("token_bucket_capacity must be non-negative") != std::string::npos);

  // Names are the registries' business: anything non-empty loads.
  const auto b = blis::load_policy_config(
      dir.write("j.toml", "[routing]\npolicy = \"my-plugin\"\nscorers = [{ name = \"my-scorer\", weight = 1 }]\n"));
  CHECK(b.routing_policy == "my-plugin");
  CHECK(same_scorers(b.scorers, {{"my-scorer", 1.0}}));
}

TEST_CASE("scorer list: parsing", "[config]") {
  CHECK(same_scorers(blis::parse_scorer_list("prefix-affinity:3, queue-depth:2,kv-utilization:2"),
                     kDefaultProfile));
  CHECK(same_scorers(blis::parse_scorer_list("  queue-depth : 1.5 ,\tload-balance:\t2e0  "),
                     {{"queue-depth", 1.5}, {"load-balance", 2.0}}));
  CHECK(blis::parse_scorer_list("").empty());
  CHECK(same_scorers(blis::parse_scorer_list("my-plugin-scorer:0.25"), {{"my-plugin-scorer", 0.25}}));
}

TEST_CASE("scorer list: errors", "[config]") {
  const std::string p = "--routing-scorers: ";
  CHECK(scorer_error("queue-depth") == p + "invalid scorer config \"queue-depth\" (expected name:weight)");
  CHECK(scorer_error("queue-depth:1,") == p + "invalid scorer config \"\" (expected name:weight)");
  CHECK(scorer_error("  ") == p + "invalid scorer config \"\" (expected name:weight)");
  CHECK(scorer_error(" : 2 ") == p + "invalid scorer config \": 2\" (expected name:weight)");
  CHECK(scorer_error("a:1, b:2, a:3") ==
        p + "duplicate scorer \"a\"; each scorer may appear at most once");
  // The duplicate is found before that piece's weight is read.
  CHECK(scorer_error("a:1,a:x") == p + "duplicate scorer \"a\"; each scorer may appear at most once");
  CHECK(scorer_error("a:x") == p + "invalid weight for scorer \"a\": \"x\" is not a number");
  CHECK(scorer_error("a:") == p + "invalid weight for scorer \"a\": \"\" is not a number");
  CHECK(scorer_error("a:1:2") == p + "invalid weight for scorer \"a\": \"1:2\" is not a number");
  CHECK(scorer_error("a:2x") == p + "invalid weight for scorer \"a\": \"2x\" is not a number");
  CHECK(scorer_error("a:1 2") == p + "invalid weight for scorer \"a\": \"1 2\" is not a number");
  CHECK(scorer_error("a:1e999") == p + "invalid weight for scorer \"a\": \"1e999\" is out of range");
  CHECK(scorer_error("a:0") == p + "scorer \"a\" weight must be a finite positive number, got 0");
  CHECK(scorer_error("a:-2.5") == p + "scorer \"a\" weight must be a finite positive number, got -2.5");
  CHECK(scorer_error("a:-1e6") == p + "scorer \"a\" weight must be a finite positive number, got -1e+06");
  CHECK(scorer_error("a:1e-400") == p + "scorer \"a\" weight must be a finite positive number, got 0");
  CHECK(scorer_error("a:nan") == p + "scorer \"a\" weight must be a finite positive number, got NaN");
  CHECK(scorer_error("a:inf") == p + "scorer \"a\" weight must be a finite positive number, got +Inf");
  // Pieces left to right: the first bad piece wins.
  CHECK(scorer_error("a:0,b") == p + "scorer \"a\" weight must be a finite positive number, got 0");
}

TEST_CASE("scorer list: a name check runs before the piece's other checks", "[config]") {
  const blis::ScorerNameCheck known = [](const std::string& name) -> std::optional<std::string> {
    if (name == "queue-depth" || name == "kv-utilization") return std::nullopt;
    return "unknown scorer \"" + name + "\"";
  };
  CHECK(same_scorers(blis::parse_scorer_list("queue-depth:1,kv-utilization:2", known),
                     {{"queue-depth", 1.0}, {"kv-utilization", 2.0}}));
  auto error = [&](const std::string& text) -> std::string {
    try {
      blis::parse_scorer_list(text, known);
    } catch (const blis::InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error("bogus:x") == "--routing-scorers: unknown scorer \"bogus\"");
  CHECK(error("queue-depth:1,bogus:1,queue-depth:1") == "--routing-scorers: unknown scorer \"bogus\"");
  CHECK(error("queue-depth:0,bogus:1") ==
        "--routing-scorers: scorer \"queue-depth\" weight must be a finite positive number, got 0");
}

TEST_CASE("policy config: the autoscaler and instance_lifecycle keys of spec head 6.1 (YAML)", "[config][fleet]") {
  blis::test::TempDir dir;
  const auto b = blis::load_policy_config(dir.write("p.yaml", R"(autoscaler:
  interval_us: 30000000
  scale_down_stabilization_window_us: 300000000
  hpa_scrape_delay: {mean: 2, stddev: 0.5}
  analyzer: {kv_cache_threshold: 0.9, scale_up_threshold: 0, scale_down_boundary: 0.3}
instance_lifecycle:
  loading_delay: {mean: 30, stddev: 0}
  warm_start_initial_instances: true
)"));
  REQUIRE(b.autoscaler);
  CHECK(*b.autoscaler == "interval=30000000us down_window=300000000us actuation_delay=2000000us "
                         "actuation_stddev=500000us kv_cache_threshold=0.9 scale_down_boundary=0.3");
  REQUIRE(b.lifecycle);
  CHECK(*b.lifecycle == "loading_delay=30000000us loading_stddev=0us");
  // interval 0 = disabled.
  CHECK_FALSE(blis::load_policy_config(dir.write("off.yaml", "autoscaler:\n  interval_us: 0\n")).autoscaler);
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("neg.yaml", "autoscaler:\n  interval_us: -5\n")),
                    Catch::Contains("autoscaler.interval_us must be a finite number >= 0"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("bad.yaml", "autoscaler:\n  analyser: {}\n")),
                    Catch::Contains("analyser"));
  // The reference's default: the initial instances load first too.
  const auto cold = blis::load_policy_config(dir.write("cold.yaml", "instance_lifecycle:\n  loading_delay: {mean: 5}\n"));
  REQUIRE(cold.lifecycle);
  CHECK(*cold.lifecycle == "loading_delay=5000000us warm_start=false");
}

TEST_CASE("policy config: pools in TOML and YAML become --pool texts, strictly", "[config][pools]") {
  blis::test::TempDir dir;
  const auto t = blis::load_policy_config(dir.write("p.toml", R"([[pools]]
name = "h100"
count = 2
cost_per_hour = 4.5
hardware = "H100"
max = 4

[[pools]]
name = "a100"
count = 1
tp = 2
hardware = "A100-80"
)"));
  REQUIRE(t.pools.size() == 2);
  CHECK(t.pools[0].text == "name=h100 cost_per_hour=4.5 count=2 hardware=H100 max=4");
  CHECK(t.pools[0].where.find("p.toml:1:") != std::string::npos);
  CHECK(t.pools[1].text == "name=a100 count=1 hardware=A100-80 tp=2");
  const auto y = blis::load_policy_config(dir.write("p.yaml", R"(pools:
  - name: h100
    count: 2
    cost_per_hour: 4.5
    hardware: H100
    max: 4
  - {name: a100, count: 1, tp: 2, hardware: A100-80}
)"));
  REQUIRE(y.pools.size() == 2);
  CHECK(y.pools[0].text == t.pools[0].text);
  CHECK(y.pools[1].text == t.pools[1].text);
  CHECK(y.pools[1].where == dir.str() + "/p.yaml:7");

  // Unknown keys and bad values name the file and the line.
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("k.toml", "[[pools]]\nname = \"a\"\ncount = 1\ncolour = 3\n")),
                    Catch::StartsWith(dir.str() + "/k.toml:4:1: pools[0]: 'colour' is not a pool key"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("k.yaml", "pools:\n  - name: a\n    count: 1\n    colour: 3\n")),
                    Catch::StartsWith(dir.str() + "/k.yaml:4: pools[0]: 'colour' is not a pool key"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("c.yaml", "pools:\n  - name: a\n    count: 0\n")),
                    Catch::StartsWith(dir.str() + "/c.yaml:2: pool 'name=a count=0': count=0 is not an instance count"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("n.toml", "[[pools]]\ncount = 2\n")),
                    Catch::Contains("n.toml:1:1: pool 'count=2': needs name=NAME"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("tp.yaml", "pools:\n  - name: a\n    count: 1\n    tp: many\n")),
                    Catch::StartsWith(dir.str() + "/tp.yaml:4"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("s.yaml", "pools:\n  - name: a b\n    count: 1\n")),
                    Catch::Contains("without spaces"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("m.yaml", "pools:\n  - name: a\n    count: {x: 1}\n")),
                    Catch::Contains("pools[0].count must be a string, number or boolean"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("l.toml", "pools = 3\n")), Catch::Contains("pools must be"));
}

TEST_CASE("policy config: instance_lifecycle warm_up keys (YAML, a blis addition)", "[config][fleet]") {
  blis::test::TempDir dir;
  const auto b = blis::load_policy_config(
      dir.write("w.yaml", "instance_lifecycle:\n  warm_up_request_count: 5\n  warm_up_ttft_factor: 2\n"));
  REQUIRE(b.lifecycle);
  CHECK(*b.lifecycle == "warm_up_request_count=5 warm_up_ttft_factor=2");
  // Warm-up needs no loading delay, so it is not refused with warm_start_initial_instances false.
  const auto both = blis::load_policy_config(dir.write(
      "b.yaml", "instance_lifecycle:\n  loading_delay: {mean: 1}\n  warm_start_initial_instances: true\n"
                "  warm_up_request_count: 1\n"));
  CHECK(*both.lifecycle == "loading_delay=1000000us warm_up_request_count=1");
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("n.yaml", "instance_lifecycle:\n  warm_up_request_count: -1\n")),
                    Catch::StartsWith(dir.str() + "/n.yaml:2: instance_lifecycle.warm_up_request_count must be in"));
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("f.yaml", "instance_lifecycle:\n  warm_up_ttft_factor: 0.9\n")),
                    Catch::StartsWith(dir.str() + "/f.yaml:2: instance_lifecycle.warm_up_ttft_factor must be 0"));
}

TEST_CASE("policy config: node_pools in YAML (spec head 6.1) and TOML become --node-pool texts, strictly",
          "[config][fleet]") {
  blis::test::TempDir dir;
  const auto y = blis::load_policy_config(dir.write("n.yaml", R"(node_pools:
  - name: h100-pool
    gpu_type: H100
    gpus_per_node: 8
    gpu_memory_gib: 80
    initial_nodes: 2
    min_nodes: 0
    max_nodes: 4
    provisioning_delay: {mean: 30, stddev: 5}
    cost_per_hour: 98.32
)"));
  REQUIRE(y.node_pools.size() == 1);
  CHECK(y.node_pools[0].text ==
        "name=h100-pool gpu_type=H100 gpus_per_node=8 gpu_memory_gib=80 initial_nodes=2 "
        "min_nodes=0 max_nodes=4 provisioning_delay=30000000us provisioning_stddev=5000000us "
        "cost_per_hour=98.32");
  CHECK(y.node_pools[0].where.find("n.yaml:2") != std::string::npos);
  CHECK_THROWS_WITH(blis::load_policy_config(dir.write("l.yaml", "node_pools: 3\n")),
                    Catch::Contains("node_pools must be a list"));
  CHECK_THROWS_WITH(blis::load_policy_config(
                        dir.write("c.yaml",
                                  "node_pools:\n  - name: a\n    gpu_type: H100\n    gpus_per_node: 8\n"
                                  "    gpu_memory_gib: 80\n    max_nodes: 1\n    cost_per_hour: -1\n")),
                    Catch::Contains("c.yaml:7: node_pools[0].cost_per_hour must be a finite number >= 0"));
  CHECK_THROWS_WITH(blis::load_policy_config(
                        dir.write("m.yaml",
                                  "node_pools:\n  - name: a\n    gpu_type: H100\n    gpus_per_node: 8\n"
                                  "    gpu_memory_gib: 0\n    max_nodes: 1\n")),
                    Catch::Contains("m.yaml:5: node_pools[0].gpu_memory_gib must be a number > 0"));
  const auto t = blis::load_policy_config(dir.write("n.toml", R"([[node_pools]]
name = "h100"
gpu_type = "H100"
gpus_per_node = 8
max_nodes = 3
provisioning_delay = "3m"
)"));
  REQUIRE(t.node_pools.size() == 1);
  CHECK(t.node_pools[0].text == "gpu_type=H100 gpus_per_node=8 max_nodes=3 name=h100 provisioning_delay=3m");
  CHECK_THROWS_WITH(
      blis::load_policy_config(dir.write("u.toml", "[[node_pools]]\nname = \"a\"\nnodes = 3\n")),
      Catch::Contains("nodes"));
}
