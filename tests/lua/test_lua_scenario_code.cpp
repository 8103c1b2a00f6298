// A Lua scenario's at()/every() callbacks over a stand-in cluster
// (src/lua/lua_scenario_code.cpp): which calls are asked for, when, what a
// callback sees and which event texts it sends.
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/lua.hpp>
#include <blis/scenario.hpp>

#include <map>
#include <string>
#include <vector>

namespace {

// Records what the code asks; runs due calls in time order.
class FakeHost final : public blis::ScenarioHost {
 public:
  blis::SimTime t = 0;
  std::multimap<blis::SimTime, uint64_t> due;
  std::vector<std::string> applied;  // "time text @where"
  int32_t queue = 7;

  blis::SimTime now() const override { return t; }
  void snapshot(blis::ClusterSnapshot& out) const override {
    out.now = t;
    out.pools = {{"default", 2, 2}};
    blis::ClusterSnapshot::Instance a, b;
    a.index = 0;
    b.index = 1;
    a.queue = 1;
    b.queue = queue;
    b.kv = 0.5;
    out.instances = {a, b};
    out.arrived = 10;
    out.completed = 3;
  }
  void apply_text(const std::string& text, const std::string& where) override {
    applied.push_back(std::to_string(t) + " " + text + " @" + where);
  }
  void call_at(blis::SimTime at, uint64_t id) override { due.emplace(at, id); }
  bool only_code_left() override { return false; }

  // Runs the calls due up to `until`.
  void run(blis::ScenarioCode& code, blis::SimTime until) {
    while (!due.empty() && due.begin()->first <= until) {
      auto [at, id] = *due.begin();
      due.erase(due.begin());
      t = at;
      code.fire(id, *this);
    }
  }
};

}  // namespace

TEST_CASE("at and every ask for calls in virtual time, and a callback acts through event texts", "[lua][events]") {
  blis::test::TempDir dir{"blis-lua-code"};
  const std::string path = dir.write("s.lua", R"(
local h
h = every(2, function(c)
  blis.event("action=rate factor=2")
  if c.time >= 6 then h:cancel() end
end)
at("5s", function(c)
  local worst = c.instances[1]
  for _, i in ipairs(c.instances) do if i.queue > worst.queue then worst = i end end
  blis.fail { instance = worst.index, requests = "fail" }
  at(c.time + 0.25, function() blis.restore { instance = worst.index } end)
end)
return { model = "qwen/qwen3-14b" }
)");
  blis::LuaVm vm(42);
  auto code = blis::make_lua_scenario_code(vm, path);
  FakeHost host;
  code->start(host);
  REQUIRE(host.due.size() == 2);
  CHECK(host.due.begin()->first == 2000000);
  host.run(*code, 20000000);
  const std::string where = " @" + path + ":";
  CHECK(host.applied == std::vector<std::string>{
                            "2000000 action=rate factor=2" + where + "4",
                            "4000000 action=rate factor=2" + where + "4",
                            "5000000 action=fail instance=1 requests=fail" + where + "10",
                            "5250000 action=restore instance=1" + where + "11",
                            "6000000 action=rate factor=2" + where + "4",
                        });
  CHECK(host.due.empty());  // cancelled
}

TEST_CASE("a scenario read for its settings knows whether it has callbacks", "[lua][events]") {
  blis::test::TempDir dir{"blis-lua-code"};
  blis::LuaScenario with(dir.write("a.lua", "at(1, function() end)\nreturn { rate = 1 }\n"), 42);
  CHECK(with.has_code());
  blis::LuaScenario without(dir.write("b.lua", "return { rate = 1 }\n"), 42);
  CHECK_FALSE(without.has_code());
}

TEST_CASE("bad arguments of at and every name the script and line", "[lua][events]") {
  blis::test::TempDir dir{"blis-lua-code"};
  blis::LuaVm vm(42);
  auto refused = [&](const std::string& source, const std::string& message) {
    const std::string path = dir.write("bad.lua", source + "\nreturn {}\n");
    try {
      blis::make_lua_scenario_code(vm, path);
      FAIL("accepted: " << source);
    } catch (const blis::ScriptError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(path + ":1: " + message) != std::string::npos);
    }
  };
  refused("at(-1, print)", "at: the time must be a number of seconds >= 0");
  refused("at('soon', print)", "at: 'soon' is not a duration");
  refused("every(0, print)", "every(interval, fn): interval must be > 0");
  refused("every(1, 2)", "every(interval, fn): fn must be a function, not a number");
  refused("blis.fail { instance = 1, action = 'x' }", "blis.fail acts on the running simulation");
}
