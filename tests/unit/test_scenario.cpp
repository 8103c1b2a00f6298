// Scenario files as the core reads them: settings, sweeps, searches, errors.
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/scenario.hpp>

#include <string>

using blis::test::TempDir;

namespace {

std::string text_of(const blis::Settings& s) {
  std::string out;
  for (const auto& e : s) out += e.flag + "=" + e.value + ";";
  return out;
}

// Answers every configuration with its number of instances times 10 as
// "ttft_p99_ms", and records what it was asked.
struct FakeRunner : blis::ScenarioRunner {
  std::vector<std::string> asked;
  std::vector<blis::NamedValues> run(const std::vector<blis::Settings>& points) override {
    std::vector<blis::NamedValues> out;
    for (const auto& p : points) {
      asked.push_back(text_of(p));
      double n = 0;
      for (const auto& s : p)
        if (s.flag == "num-instances") n = std::stod(s.value);
      out.push_back({{"ttft_p99_ms", n * 10}, {"completed_requests", 100}});
    }
    return out;
  }
};

}  // namespace

TEST_CASE("TOML scenario: settings, groups, plugin config and a product sweep", "[config]") {
  TempDir dir;
  const std::string path = dir.write("s.toml", R"(model = "qwen/qwen3-14b"
alpha-coeffs = [1.5, 2, 3]
profile = true
[workload]
rate = 200
num_requests = 1000
[plugin-config.vendor-x]
efficiency = 0.9
[sweep]
num-instances = [4, 8]
routing-policy = ["round-robin", "weighted"]
)");
  const blis::Scenario s = blis::load_toml_scenario(path);
  CHECK(text_of(s.base) ==
        "alpha-coeffs=1.5,2,3;model=qwen/qwen3-14b;plugin-config=vendor-x.efficiency=0.9;profile=true;"
        "num-requests=1000;rate=200;");
  REQUIRE(s.sweep.size() == 4);
  // Keys in order, the first varying slowest.
  CHECK(text_of(s.sweep[0]) == "num-instances=4;routing-policy=round-robin;");
  CHECK(text_of(s.sweep[1]) == "num-instances=4;routing-policy=weighted;");
  CHECK(text_of(s.sweep[3]) == "num-instances=8;routing-policy=weighted;");
  CHECK(s.base[0].where == path + ":2:16");
}

TEST_CASE("TOML scenario: [[sweep]] lists configurations", "[config]") {
  TempDir dir;
  const std::string path = dir.write("s.toml", R"(model = "m"
[[sweep]]
routing-policy = "round-robin"
[[sweep]]
routing-policy = "weighted"
routing-scorers = "queue-depth:1"
)");
  const blis::Scenario s = blis::load_toml_scenario(path);
  REQUIRE(s.sweep.size() == 2);
  CHECK(text_of(s.sweep[1]) == "routing-policy=weighted;routing-scorers=queue-depth:1;");
}

TEST_CASE("TOML scenario errors name the file, line and column", "[config]") {
  TempDir dir;
  auto error_of = [&](const std::string& text) {
    const std::string path = dir.write("bad.toml", text);
    try {
      blis::load_toml_scenario(path);
    } catch (const blis::ConfigError& e) {
      return std::string(e.what()).substr(path.size());
    }
    return std::string("no error");
  };
  CHECK(error_of("rate = \n").rfind(":1:", 0) == 0);
  CHECK(error_of("model = \"m\"\n[fleet]\nsize = 3\n").find(":2:2: unknown section [fleet]") == 0);
  CHECK(error_of("[sweep]\nrate = 3\n").find(":2:8: sweep.rate must be a non-empty list") == 0);
  CHECK(error_of("[workload]\n[workload.inner]\nx = 1\n").find("must be a string, number, boolean or list") !=
        std::string::npos);
  CHECK_THROWS_AS(blis::load_toml_scenario(dir.str() + "/missing.toml"), blis::ConfigError);
}

TEST_CASE("Lua scenario: a returned table is settings; sweeps as lists or products", "[lua][config]") {
  TempDir dir;
  const std::string list = dir.write("list.lua", R"(
local rates = {}
for r = 100, 300, 100 do rates[#rates + 1] = { rate = r } end
return { model = "m", cluster = { num_instances = 2 }, sweep = rates })");
  blis::LuaScenario a(list, 42);
  CHECK(text_of(a.scenario().base) == "num-instances=2;model=m;");  // keys sorted: cluster < model
  REQUIRE(a.scenario().sweep.size() == 3);
  CHECK(text_of(a.scenario().sweep[2]) == "rate=300;");
  CHECK_FALSE(a.has_search());

  const std::string product = dir.write("product.lua", R"(
return { model = "m", sweep = { rate = { 1, 2.5 }, num_instances = { 4, 8 } } })");
  blis::LuaScenario b(product, 42);
  REQUIRE(b.scenario().sweep.size() == 4);
  // Keys sorted (Lua tables have no order): num_instances varies slowest.
  CHECK(text_of(b.scenario().sweep[1]) == "num-instances=4;rate=2.5;");
  CHECK(text_of(b.scenario().sweep[2]) == "num-instances=8;rate=1;");
}

TEST_CASE("Lua scenario: a search runs configurations and returns its answer", "[lua][config]") {
  TempDir dir;
  const std::string path = dir.write("search.lua", R"(
return {
  model = "m",
  search = function(sim)
    local all = sim.run_all{ { num_instances = 1 }, { num_instances = 2 } }
    local lo, hi = 2, 64
    while hi - lo > 1 do
      local mid = math.floor((lo + hi) / 2)
      if sim.run{ num_instances = mid }.ttft_p99_ms < 200 then lo = mid else hi = mid end
    end
    return { largest = lo, first = all[1].ttft_p99_ms, echoed = all[2].num_instances, tag = "ok" }
  end,
})");
  blis::LuaScenario s(path, 42);
  REQUIRE(s.has_search());
  FakeRunner runner;
  const std::string result = s.search(runner);
  CHECK(result == R"({"echoed": 2, "first": 10, "largest": 19, "tag": "ok"})");
  REQUIRE(runner.asked.size() == 8);  // 2 at once, then 33 17 25 21 19 20
  CHECK(runner.asked[0] == "num-instances=1;");
  CHECK(runner.asked[2] == "num-instances=33;");
}

TEST_CASE("Lua scenario errors carry the script's file and line", "[lua][config]") {
  TempDir dir;
  auto error_of = [&](const std::string& text) -> std::string {
    const std::string path = dir.write("bad.lua", text);
    try {
      blis::LuaScenario s(path, 42);
      FakeRunner runner;
      if (s.has_search()) s.search(runner);
    } catch (const blis::ScriptError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error_of("local x = nil\nreturn { rate = x.y }").find("bad.lua:2:") != std::string::npos);
  CHECK(error_of("rate = 3").find("must end with `return { ... }`") != std::string::npos);
  CHECK(error_of("return 3").find("must return a table of settings, not a number") != std::string::npos);
  CHECK(error_of("return { rate = function() end }").find("rate must be a string, number") != std::string::npos);
  CHECK(error_of("return { sweep = { rate = 3 } }").find("sweep.rate must be a non-empty list") !=
        std::string::npos);
  CHECK(error_of("return { search = function(sim)\n  sim.run(7)\nend }").find("bad.lua:2:") != std::string::npos);
  CHECK(error_of("return { search = function() return { f = function() end } end }")
            .find("has no JSON form") != std::string::npos);
  CHECK(error_of("return { search = function() end, sweep = { {} } }").find("either a sweep or a search") !=
        std::string::npos);
  CHECK(error_of("return { search = function() return io.open('x') end }").find("bad.lua:1:") !=
        std::string::npos);
}

TEST_CASE("a failing simulation inside a search propagates unchanged", "[lua][config]") {
  TempDir dir;
  const std::string path = dir.write("s.lua", "return { search = function(sim) sim.run{ rate = -1 } end }");
  blis::LuaScenario s(path, 42);
  struct Failing : blis::ScenarioRunner {
    std::vector<blis::NamedValues> run(const std::vector<blis::Settings>&) override {
      throw blis::InputError("--rate", "must be a finite value > 0, got -1");
    }
  } runner;
  CHECK_THROWS_WITH(s.search(runner), "--rate: must be a finite value > 0, got -1");
}
