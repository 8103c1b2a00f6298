// Sub-configurations written three ways read the same: pools, node pools,
// events, the lifecycle and the autoscaler as a TOML table, a Lua table and
// the command line's compact text (util/compact_text.hpp). Values may hold
// spaces, '=', ',', quotes, backslashes and any UTF-8; an error names where
// the value was given.
#include "catch.hpp"
#include "splitmix.hpp"
#include "temp_dir.hpp"

#include "config/fleet_records.hpp"
#include "config/pool_text.hpp"
#include "metrics/fitness.hpp"
#include "metrics/goodput.hpp"
#include "metrics/saturation.hpp"
#include "util/compact_text.hpp"

#include <blis/plugin.h>
#include <blis/errors.hpp>
#include <blis/run_config.hpp>
#include <blis/scenario.hpp>
#include <blis/scenario_events.hpp>
#include <blis/settings.hpp>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

using blis::test::TempDir;
namespace compact = blis::compact;

namespace {

// Random text from the characters that broke the old round trip.
std::string random_text(blis::test::SplitMix& rng, bool allow_empty) {
  static const std::vector<std::string> alphabet{"a", "b", "Z", "0", ".", "/", " ", " ", "=", ",", ":", "\"", "'",
                                                 "\\", "\t", "é", "日本", "-", "_", "{", "}"};
  const size_t n = rng.next() % 12 + (allow_empty ? 0 : 1);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += alphabet[rng.next() % alphabet.size()];
  return s;
}

// A TOML basic string of any UTF-8 text.
std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\t') {
      out += "\\t";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A Lua string literal of any bytes (\ddd escapes).
std::string lua_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) out += "\\" + std::to_string(static_cast<int>(c));
  return out + "\"";
}

using Fields = std::vector<std::pair<std::string, std::string>>;

// What one writer gave: the configuration, or the error applying it raised
// (a record is read as it is given).
struct Way {
  blis::RunConfig config;
  std::string error;
};

Way apply_way(const std::function<blis::Settings()>& settings) {
  Way w;
  try {
    blis::apply_settings(w.config, settings());
  } catch (const blis::Error& e) {
    w.error = std::string("error: ") + e.what();
  }
  return w;
}

// The same record given three ways; each applied to a RunConfig.
struct ThreeWays {
  Way toml, lua, flag;
  std::string toml_path, lua_path;
};

ThreeWays three_ways(const TempDir& dir, const std::string& key, bool list, const Fields& fields) {
  const std::string flag_key = blis::flag_of_key(key);
  std::string toml = list ? "[[" + key + "]]\n" : "[" + key + "]\n";
  std::string lua = "return { " + key + " = " + (list ? "{ {" : "{");
  for (const auto& [k, v] : fields) {
    toml += k + " = " + toml_string(v) + "\n";
    lua += " " + k + " = " + lua_string(v) + ",";
  }
  lua += list ? "} } }\n" : "} }\n";
  ThreeWays w;
  w.toml_path = dir.write("s.toml", toml);
  w.lua_path = dir.write("s.lua", lua);
  w.toml = apply_way([&] { return blis::load_toml_scenario(w.toml_path).base; });
  w.lua = apply_way([&] { return blis::LuaScenario(w.lua_path, 1).scenario().base; });
  const std::string text = compact::write(fields, compact::kSpaced);
  w.flag = apply_way([&] { return blis::Settings{blis::Setting{flag_key, text, blis::find_setting(key)->flag(), {}}}; });
  return w;
}

// A text setting (a comma list: SLO targets, detectors, fitness weights)
// given the same three ways.
ThreeWays three_ways_text(const TempDir& dir, const std::string& key, const std::string& value) {
  ThreeWays w;
  w.toml_path = dir.write("t.toml", key + " = " + toml_string(value) + "\n");
  w.lua_path = dir.write("t.lua", "return { " + key + " = " + lua_string(value) + " }\n");
  w.toml = apply_way([&] { return blis::load_toml_scenario(w.toml_path).base; });
  w.lua = apply_way([&] { return blis::LuaScenario(w.lua_path, 1).scenario().base; });
  w.flag = apply_way([&] {
    return blis::Settings{blis::Setting{blis::flag_of_key(key), value, blis::find_setting(key)->flag(), {}}};
  });
  return w;
}

// An outcome with the writer's place taken off, and whether it began with it.
std::string without_place(const std::string& outcome, const std::string& place, bool& placed) {
  const std::string error = "error: " + place + ": ";
  placed = outcome.rfind("error: ", 0) != 0 || outcome.rfind(error, 0) == 0;
  return outcome.rfind(error, 0) == 0 ? "error: " + outcome.substr(error.size()) : outcome;
}

// What reading a record gave: its fields as text, or the error.
std::string outcome(const std::function<std::string()>& read) {
  try {
    return read();
  } catch (const blis::Error& e) {
    return std::string("error: ") + e.what();
  }
}

// What a writer's record reads as: its fields as text, or the error of
// giving it or of reading it.
std::string outcome(const Way& w, const std::function<std::string(const blis::RunConfig&)>& read) {
  if (!w.error.empty()) return w.error;
  return outcome([&] { return read(w.config); });
}

}  // namespace

TEST_CASE("compact text: quotes hold separators, and an error says what is wrong", "[config]") {
  auto p = compact::pairs(R"(name="big pool" spec='my mix.yaml' when=a=b k="x\"y\\z" e=)", compact::kSpaced);
  REQUIRE(p.size() == 5);
  CHECK(p[0].key == "name");
  CHECK(p[0].value == "big pool");
  CHECK(p[1].value == "my mix.yaml");
  CHECK(p[2].value == "a=b");
  CHECK(p[3].value == R"(x"y\z)");
  CHECK(p[4].value.empty());
  CHECK(p[0].piece == R"(name="big pool")");
  CHECK(compact::items(R"(a,"b,c",d)", ',') == std::vector<std::string>{"a", "b,c", "d"});
  CHECK(compact::items("a,", ',') == std::vector<std::string>{"a", ""});
  CHECK_THROWS_WITH(compact::pairs("name=\"big pool count=2", compact::kSpaced),
                    Catch::Contains("unterminated double quote in '\"big pool count=2'"));
  CHECK_THROWS_WITH(compact::pairs("count=2 pool", compact::kSpaced), Catch::Contains("'pool' is not key=value"));
  CHECK_THROWS_WITH(compact::pairs("a:1,b", compact::kCommaColon), Catch::Contains("'b' is not key:value"));
  CHECK_THROWS_WITH(compact::pairs("=2", compact::kSpaced, "--pool", "pool '=2': "),
                    Catch::Contains("--pool: pool '=2': '=2' is not key=value"));
  // Values that need no quotes are written as they always were.
  CHECK(compact::write({{"name", "a100"}, {"count", "2"}, {"when", "queue_depth>4"}}, compact::kSpaced) ==
        "name=a100 count=2 when=queue_depth>4");
  CHECK(compact::write({{"name", "big pool"}}, compact::kSpaced) == R"(name="big pool")");
}

TEST_CASE("compact text: every value written reads back unchanged", "[config]") {
  blis::test::SplitMix rng{2411};
  for (const compact::Syntax syntax : {compact::kSpaced, compact::kCommaEquals, compact::kCommaColon}) {
    for (int i = 0; i < 3000; ++i) {
      const Fields fields{{"k", random_text(rng, true)}, {"name", random_text(rng, true)}};
      const std::string text = compact::write(fields, syntax);
      INFO(text);
      const auto back = compact::pairs(text, syntax);
      REQUIRE(back.size() == 2);
      CHECK(back[0].value == fields[0].second);
      CHECK(back[1].value == fields[1].second);
    }
  }
}

TEST_CASE("the bugs of the text round trip: a pool name or spec path with a space, fitness weights' origin",
          "[config]") {
  TempDir dir;
  {
    const std::string path = dir.write("p.toml", "[[pools]]\nname = \"big pool\"\ncount = 2\n");
    blis::RunConfig c;
    blis::apply_settings(c, blis::load_toml_scenario(path).base);
    REQUIRE(c.pool_specs.size() == 1);
    const auto& pool = c.pool_specs[0].value;
    CHECK(pool.name == "big pool");
    CHECK(pool.count == 2);
  }
  {
    const std::string path =
        dir.write("e.toml", "[[events]]\nat = \"1s\"\naction = \"workload\"\nspec = \"my mix.yaml\"\n");
    blis::RunConfig c;
    blis::apply_settings(c, blis::load_toml_scenario(path).base);
    REQUIRE(c.events.size() == 1);
    CHECK(c.events[0].spec == "my mix.yaml");
  }
  {
    const std::string path = dir.write("g.toml", "model = \"qwen/qwen3-14b\"\nfitness-weights = \"bogus\"\n");
    // Refused when it is given, at its place in the file.
    CHECK(outcome([&] {
            blis::RunConfig c;
            blis::apply_settings(c, blis::load_toml_scenario(path).base);
            return std::string("read");
          }) ==
          "error: " + path + ":2:19: fitness-weights: invalid fitness weight \"bogus\": expected key:value");
  }
}

TEST_CASE("sub-configurations read the same from TOML, Lua and the command line", "[config][lua]") {
  TempDir dir;
  blis::test::SplitMix rng{77};
  for (int i = 0; i < 60; ++i) {
    const std::string s = random_text(rng, false);
    INFO("value: " << s);
    {  // a pool's name
      const ThreeWays w = three_ways(dir, "pools", true, {{"count", "2"}, {"name", s}, {"tp", "1"}});
      auto read = [](const Way& way) {
        return outcome(way, [](const blis::RunConfig& c) {
          const auto& p = c.pool_specs.at(0).value;
          return p.name + "|" + std::to_string(p.count) + "|" + std::to_string(p.settings.size());
        });
      };
      CHECK(read(w.toml) == s + "|2|1");
      CHECK(read(w.lua) == read(w.toml));
      CHECK(read(w.flag) == read(w.toml));
    }
    {  // an event's workload spec, a routing event's policy
      const ThreeWays w = three_ways(dir, "events", true, {{"action", "workload"}, {"at", "2s"}, {"spec", s}});
      // Read as it is given: the configuration holds the event.
      auto read = [](const Way& way) {
        return outcome(way, [](const blis::RunConfig& c) { return c.events.at(0).spec; });
      };
      CHECK(read(w.toml) == s);
      CHECK(read(w.lua) == s);
      CHECK(read(w.flag) == s);
    }
    {  // a node pool's name and GPU type
      const ThreeWays w = three_ways(dir, "node_pools", true,
                                     {{"gpu_type", s}, {"gpus_per_node", "8"}, {"max_nodes", "2"}, {"name", s}});
      auto read = [](const Way& way) {
        return outcome(way, [](const blis::RunConfig& c) {
          const auto& n = c.node_pools.at(0).value;
          return n.name + "|" + n.gpu_type + "|" + std::to_string(n.gpus_per_node);
        });
      };
      CHECK(read(w.toml) == read(w.flag));
      CHECK(read(w.lua) == read(w.flag));
    }
    {  // the lifecycle: a random delay is refused, with the writer's place
      const ThreeWays w = three_ways(dir, "lifecycle", false, {{"max", "4"}, {"provisioning_delay", s}});
      auto read = [](const Way& way) {
        return outcome(way, [](const blis::RunConfig& c) {
          const auto& l = c.lifecycle->value;
          return std::to_string(l.max.value_or(-1)) + "|" + std::to_string(l.provisioning_mean_s.value_or(-1));
        });
      };
      const std::string t = read(w.toml), l = read(w.lua), f = read(w.flag);
      if (t.rfind("error: ", 0) == 0) {
        // At the value's own place: line 3 holds provisioning_delay = "...".
        CHECK(t.find(w.toml_path + ":3:22: lifecycle: ") != std::string::npos);
        CHECK(l.find(w.lua_path + ": lifecycle: ") != std::string::npos);
        CHECK(f.find("--lifecycle: ") != std::string::npos);
      } else {
        CHECK(l == t);
        CHECK(f == t);
      }
    }
    {  // the autoscaler, likewise
      const ThreeWays w = three_ways(dir, "autoscaler", false, {{"interval", s}});
      auto read = [](const Way& way) {
        return outcome(way, [](const blis::RunConfig& c) { return std::to_string(c.autoscaler->value.interval); });
      };
      const std::string t = read(w.toml), l = read(w.lua), f = read(w.flag);
      if (t.rfind("error: ", 0) == 0) {
        CHECK(t.find(w.toml_path + ":2:12: autoscaler: ") != std::string::npos);
        CHECK(l.find(w.lua_path + ": autoscaler: ") != std::string::npos);
        CHECK(f.find("--autoscaler: ") != std::string::npos);
      } else {
        CHECK(l == t);
        CHECK(f == t);
      }
    }
  }
}

TEST_CASE("an error about one field of a record is placed at that field", "[config]") {
  TempDir dir;
  // What giving the scenario's records and reading them says, as run/ reads
  // them (most records are read as they are given).
  auto error_of = [&](const std::string& toml, const std::function<void(const blis::RunConfig&)>& read) {
    const std::string path = dir.write("f.toml", toml);
    const std::string e = outcome([&] {
      blis::RunConfig c;
      blis::apply_settings(c, blis::load_toml_scenario(path).base);
      read(c);
      return std::string("read");
    });
    return e.rfind("error: " + path, 0) == 0 ? "error: " + e.substr(7 + path.size()) : e;
  };
  CHECK(error_of("[[node_pools]]\nname = \"a\"\ngpu_type = \"H100\"\n\ngpus_per_node = 0\n",
                 [](const blis::RunConfig&) {})
            .starts_with("error: :5:17: node-pools: gpus_per_node=0 must be >= 1"));
  CHECK(error_of("[lifecycle]\nmin = 1\nmax = \"x\"\n",
                 [](const blis::RunConfig&) {})
            .starts_with("error: :3:7: lifecycle: max=x must be a number"));
  CHECK(error_of("[autoscaler]\ninterval = \"30s\"\nspeed = 2\n",
                 [](const blis::RunConfig&) {})
            .starts_with("error: :3:9: autoscaler: autoscaler 'interval=30s speed=2': unknown key 'speed'"));
  // An event: a bad value at its line, an unknown key at its own, a missing key at the table.
  auto event = [](const blis::RunConfig&) {};
  CHECK(error_of("[[events]]\nat = \"1s\"\naction = \"slow\"\ninstance = 0\nfactor = \"abc\"\n", event)
            .starts_with("error: :5:10: events: event"));
  CHECK(error_of("[[events]]\nat = \"1s\"\naction = \"rate\"\nfactor = 2\ncolour = \"red\"\n", event)
            .starts_with("error: :5:10: events: event"));
  CHECK(error_of("[[events]]\nat = \"1s\"\naction = \"slow\"\nfactor = 2\n", event)
            .starts_with("error: :1:1: events: event 'at=1s action=slow factor=2': needs instance="));
  // A pool: its count, and one of its own settings.
  auto pool = [](const blis::RunConfig&) {};
  CHECK(error_of("[[pools]]\nname = \"a\"\ncount = 0\n", pool).starts_with("error: :3:9: pools: pool 'name=a count=0': count=0"));
  {
    const std::string path = dir.write("q.toml", "[[pools]]\nname = \"a\"\ncount = 1\n\nmax_num_seqs = -4\n");
    blis::RunConfig c;
    blis::apply_settings(c, blis::load_toml_scenario(path).base);
    const auto& p = c.pool_specs.at(0).value;
    REQUIRE(p.settings.size() == 1);
    CHECK(p.settings[0].where.starts_with(path + ":5:16: pools: pool a"));
  }
  // Given again on the command line, the record forgets the scenario's places.
  {
    const std::string path = dir.write("r.toml", "[lifecycle]\nmin = 1\nmax = 2\n");
    blis::RunConfig c;
    blis::apply_settings(c, blis::load_toml_scenario(path).base);
    CHECK(outcome([&] {
            blis::apply_settings(c, {blis::Setting{"lifecycle", "max=x", "--lifecycle", {}}});
            return std::string("read");
          }).starts_with("error: --lifecycle: max=x must be a number"));
    // And a good one replaces the scenario's.
    blis::apply_settings(c, {blis::Setting{"lifecycle", "max=3", "--lifecycle", {}}});
    CHECK(c.lifecycle->value.max == 3);
    CHECK_FALSE(c.lifecycle->value.min);
  }
}

TEST_CASE("a pool's lifecycle keys are the lifecycle's keys", "[config]") {
  // A pool text sends these keys to the lifecycle reader (config/pool_text.cpp).
  for (std::string_view key : blis::lifecycle_keys()) CHECK(blis::config::is_pool_lifecycle_key(std::string(key)));
  for (const char* key : {"name", "count", "role", "cost_per_hour", "tp", "interval", "gpu_type"})
    CHECK_FALSE(blis::config::is_pool_lifecycle_key(key));
}

TEST_CASE("docs/autoscaling.md explains every key of the lifecycle, the autoscaler and node pools", "[config][docs]") {
  std::ifstream in(std::string(BLIS_TEST_SOURCE_DIR) + "/docs/autoscaling.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!doc.empty());
  for (const auto& keys : {blis::lifecycle_keys(), blis::autoscaler_keys(), blis::node_pool_keys()})
    for (std::string_view key : keys) {
      INFO(key);
      CHECK(doc.find("`" + std::string(key) + "`") != std::string::npos);
    }
}

TEST_CASE("an error that names a flag is placed where the value was given", "[config]") {
  blis::RunConfig c;
  blis::apply_settings(c, {blis::Setting{"hardware", "B300", "s.toml:4:12", {}},
                           blis::Setting{"latency-model", "x", "s.toml:5:1", {}},
                           blis::Setting{"rate", "3", "--rate", {}}});
  const auto moved = blis::at_origin(blis::InputError("--hardware", "GPU \"B300\" not found"), c);
  REQUIRE(moved);
  CHECK(std::string(moved->what()) == "s.toml:4:12: hardware: GPU \"B300\" not found");
  const auto with_value = blis::at_origin(blis::InputError("--latency-model x", "unknown"), c);
  REQUIRE(with_value);
  CHECK(std::string(with_value->what()) == "s.toml:5:1: latency-model x: unknown");
  // Given as a flag, or not given at all, or not a setting: the error stays as it is.
  CHECK_FALSE(blis::at_origin(blis::InputError("--rate", "too high"), c));
  CHECK_FALSE(blis::at_origin(blis::InputError("--tp", "bad"), c));
  CHECK_FALSE(blis::at_origin(blis::InputError("--no-such-flag", "bad"), c));
  CHECK_FALSE(blis::at_origin(blis::InputError("clients[0].rate", "bad"), c));
}

TEST_CASE("comma lists read the same from TOML, Lua and the command line; errors name the writer",
          "[config][lua]") {
  TempDir dir;
  blis::test::SplitMix rng{5};
  using Reader = std::function<std::string(const blis::RunConfig&, const std::string& where)>;
  const std::vector<std::pair<std::string, Reader>> lists{
      // Each is read when it is given: the configuration holds the values.
      {"slo_ttft",
       [](const blis::RunConfig& c, const std::string&) {
         std::string out;
         for (const auto& [cls, ms] : c.slo.ttft->value)
           out += std::to_string(cls) + "=" + std::to_string(ms) + ";";
         return out;
       }},
      {"detectors",
       [](const blis::RunConfig& c, const std::string&) {
         std::string out;
         for (const auto& d : c.outputs.detectors->value) out += d + ";";
         return out;
       }},
      {"fitness_weights",
       [](const blis::RunConfig& c, const std::string&) {
         std::string out;
         for (const auto& [k, w] : c.trace.fitness_weights->value) out += k + "=" + std::to_string(w) + ";";
         return out;
       }},
      {"tenant_budgets",
       [](const blis::RunConfig& c, const std::string&) {
         std::string out;
         for (const auto& [tenant, f] : c.policies.tenant_budgets->value)
           out += tenant + "=" + std::to_string(f) + ";";
         return out;
       }},
      {"slo_priorities",
       [](const blis::RunConfig& c, const std::string&) {
         std::string out;
         for (const auto& [slo, v] : c.policies.slo_priorities->value)
           out += std::to_string(slo) + "=" + std::to_string(v) + ";";
         return out;
       }},
      {"slo_targets",
       [](const blis::RunConfig& c, const std::string&) {
         std::string out;
         for (const auto& [slo, v] : c.gateway.slo_targets->value)
           out += std::to_string(slo) + "=" + std::to_string(v) + ";";
         return out;
       }},
      {"shard",
       [](const blis::RunConfig& c, const std::string&) {
         return std::to_string(c.outputs.shard->value.index) + "/" +
                std::to_string(c.outputs.shard->value.count);
       }},
      {"memory_limit",
       [](const blis::RunConfig& c, const std::string&) { return std::to_string(c.memory_limit->value); }}};
  const std::vector<std::string> good{"critical=100ms,default=1.5s",
                                      "all",
                                      "composite,threshold",
                                      "p99_ttft:3,throughput:1",
                                      "\"critical\"=2s",
                                      "gold=0.25, bulk=1",
                                      "batch=0,critical=100000",
                                      "1/4",
                                      "16GiB"};
  for (int i = 0; i < 40; ++i) {
    const std::string s = i < static_cast<int>(good.size()) ? good[static_cast<size_t>(i)] : random_text(rng, false);
    INFO("value: " << s);
    for (const auto& list : lists) {
      // Named copies, not structured bindings: lambdas may capture these in C++17 and clang 14.
      const std::string& key = list.first;
      const Reader& read = list.second;
      INFO(key);
      const ThreeWays w = three_ways_text(dir, key, s);
      auto at = [&](const Way& way) {
        return outcome(way, [&](const blis::RunConfig& c) { return read(c, c.where(key)); });
      };
      bool placed_toml = false, placed_lua = false, placed_flag = false;
      const std::string t = without_place(at(w.toml), w.toml_path + ":1:" + std::to_string(key.size() + 4) + ": " +
                                                          blis::flag_of_key(key), placed_toml);
      const std::string l = without_place(at(w.lua), w.lua_path + ": " + blis::flag_of_key(key), placed_lua);
      const std::string f = without_place(at(w.flag), blis::find_setting(key)->flag(), placed_flag);
      CHECK(placed_toml);
      CHECK(placed_lua);
      CHECK(placed_flag);
      CHECK(l == t);
      CHECK(f == t);
    }
  }
}

TEST_CASE("short lists are read when they are given, into the values a run uses", "[config]") {
  TempDir dir;
  const std::string path = dir.write("l.toml",
                                     "tenant-budgets = \"gold=0.25, bulk=1\"\n"
                                     "slo-priorities = \"batch=0,critical=7\"\n"
                                     "slo-targets = \"standard=500000\"\nshard = \"1/4\"\n"
                                     "memory-limit = \"2GiB\"\n");
  blis::RunConfig c;
  blis::apply_settings(c, blis::load_toml_scenario(path).base);
  REQUIRE(c.policies.tenant_budgets);
  CHECK(c.policies.tenant_budgets->value == blis::TenantBudgetList{{"gold", 0.25}, {"bulk", 1.0}});
  CHECK(c.policies.slo_priorities->value ==
        blis::SloClassValues{{BLIS_SLO_BATCH, 0}, {BLIS_SLO_CRITICAL, 7}});
  CHECK(c.gateway.slo_targets->value == blis::SloClassValues{{BLIS_SLO_STANDARD, 500000}});
  CHECK(c.outputs.shard->value.index == 1);
  CHECK(c.outputs.shard->value.count == 4);
  CHECK(c.memory_limit->value == int64_t{2} << 30);
  // Written back as given.
  CHECK(blis::find_setting("tenant_budgets")->get(c) == blis::SettingValue{std::string("gold=0.25, bulk=1")});
  // A bad value is refused when it is given, at its line.
  const std::string bad = dir.write("b.toml", "model = \"qwen/qwen3-14b\"\ntenant-budgets = \"gold=2\"\n");
  CHECK(outcome([&] {
          blis::RunConfig d;
          blis::apply_settings(d, blis::load_toml_scenario(bad).base);
          return std::string("read");
        }) == "error: " + bad +
                  ":2:18: tenant-budgets: the budget of tenant 'gold' must be a fraction in [0, 1], got '2'");
}
