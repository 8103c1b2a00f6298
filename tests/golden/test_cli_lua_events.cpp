// Scenario events as code: a Lua scenario's at()/every() callbacks run in
// virtual time (docs/scenarios.md "Events from Lua code").
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <string>

using blis::test::TempDir;

namespace {

const std::string kSettings = R"(
return { model = "qwen/qwen3-14b", num_instances = 4, rate = 30, num_requests = 300 }
)";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The report up to its scenario events block.
std::string before_events(const std::string& out) { return out.substr(0, out.find("=== Scenario Events ===")); }

}  // namespace

TEST_CASE("a callback's event runs like the same data event", "[golden][events][lua]") {
  TempDir dir;
  const std::string code = dir.write("code.lua", R"(at(3, function(c)
  blis.event("action=fail instance=1 requests=reroute")
end)
)" + kSettings);
  const Result lua = run_blis("run " + code);
  INFO(lua.err);
  REQUIRE(lua.status == 0);
  const Result data = run_blis("run --model qwen/qwen3-14b --num-instances 4 --rate 30 --num-requests 300 "
                               "--event 'at=3s action=fail instance=1 requests=reroute'");
  REQUIRE(data.status == 0);
  CHECK(before_events(lua.out) == before_events(data.out));
  CHECK(lua.out.find("=== Scenario Events ===\n3 s: action=fail instance=1 requests=reroute (") !=
        std::string::npos);
  CHECK(lua.out.find("Events Applied: 1\n") != std::string::npos);
  // The table form writes the same event.
  const std::string table = dir.write("table.lua", R"(at("3000ms", function() blis.fail { instance = 1 } end)
)" + kSettings);
  const Result t = run_blis("run " + table);
  CHECK(before_events(t.out) == before_events(data.out));
  CHECK(t.out.find("3 s: action=fail instance=1 (") != std::string::npos);
}

TEST_CASE("callbacks read the cluster, schedule more calls and cancel an every", "[golden][events][lua]") {
  TempDir dir;
  // The instance with the longest queue fails at 4 s; it is restored 3 s
  // later by a call scheduled from the first; a slow-down every second stops
  // after its third call.
  const std::string code = dir.write("code.lua", R"(
at(4, function(c)
  assert(c.time == 4 and c.instance_count == 4 and c.pools.default.instances == 4)
  assert(c.arrived >= c.completed + c.failed + c.rejected and c.completed > 0)
  local worst = c.instances[1]
  for _, i in ipairs(c.instances) do
    assert(i.state == "active" and i.kv >= 0 and i.kv <= 1 and i.pool == "default")
    if i.queue + i.running > worst.queue + worst.running then worst = i end
  end
  blis.fail { instance = worst.index, requests = "fail" }
  assert(blis.cluster().instance_count == 3)
  assert(blis.cluster().instances[worst.index + 1].state == "failed")
  at(blis.now() + 3, function() blis.restore { instance = worst.index } end)
end)
local n = 0
local h
h = every("1s", function(c)
  n = n + 1
  blis.slow { instance = 0, factor = 1 }
  if n == 3 then h:cancel() end
end)
)" + kSettings);
  const Result r = run_blis("run " + code + " --format json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("\"1 s: action=slow factor=1 instance=0\"") != std::string::npos);
  CHECK(r.out.find("\"3 s: action=slow factor=1 instance=0\"") != std::string::npos);
  CHECK(r.out.find("4 s: action=slow") == std::string::npos);
  CHECK(r.out.find("\"4 s: action=fail instance=") != std::string::npos);
  CHECK(r.out.find("\"7 s: action=restore instance=") != std::string::npos);
  // Conservation: every injected request is completed, failed, dropped,
  // timed out, queued or running.
  // The cluster's block comes first; "failed" is in the scenario events block.
  auto field = [&](const std::string& name) {
    const size_t at = r.out.find("\"" + name + "\": ");
    return at == std::string::npos ? -1 : std::stoll(r.out.substr(at + name.size() + 4));
  };
  CHECK(field("failed") > 0);
  CHECK(field("timed_out_requests") == -1);  // no deadlines: none can time out
  CHECK(field("injected_requests") == field("completed_requests") + field("failed") + field("dropped_unservable") +
                                          field("still_queued") + field("still_running"));
}

TEST_CASE("callback events reach the decision trace and the time series", "[golden][events][lua]") {
  TempDir dir;
  const std::string code = dir.write("code.lua", "at(2, function() blis.drain { instance = 3 } end)\n" + kSettings);
  const Result trace = run_blis("run " + code + " --trace-level decisions --summarize-trace");
  CHECK(trace.out.find("Scenario Events: 1\n  2 s: action=drain instance=3") != std::string::npos);
  const std::string csv = dir.str() + "/ts.csv";
  const Result ts = run_blis("run " + code + " --timeseries " + csv + " --timeseries-interval 1s");
  REQUIRE(ts.status == 0);
  const std::string text = slurp(csv);
  // The drain falls in the 2-3 s interval: 3 instances take traffic, 1 event.
  const size_t row = text.find("\n3.000000,default,3,");
  REQUIRE(row != std::string::npos);
  const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
  CHECK(line.substr(line.rfind(',') + 1) == "1");
}

TEST_CASE("a sweep with callbacks is the same with --jobs 1 and 2", "[golden][events][lua]") {
  TempDir dir;
  const std::string code = dir.write("sweep.lua", R"(
every(2, function(c)
  local worst
  for _, i in ipairs(c.instances) do
    if i.state == "active" and (worst == nil or i.queue > worst.queue) then worst = i end
  end
  if c.time == 4 then blis.fail { instance = worst.index } end
  if math.random() < 0.5 then blis.rate { factor = 1.25 } end
end)
return { model = "qwen/qwen3-14b", num_instances = 4, num_requests = 300, sweep = { rate = { 20, 40, 60 } } }
)");
  const Result one = run_blis("run " + code + " --jobs 1");
  const Result two = run_blis("run " + code + " --jobs 2");
  INFO(one.err);
  REQUIRE(one.status == 0);
  CHECK(one.out == two.out);
  const Result again = run_blis("run " + code + " --jobs 2");
  CHECK(again.out == one.out);
}

TEST_CASE("a failing or runaway callback stops the run with script and line", "[golden][events][lua]") {
  TempDir dir;
  const std::string boom = dir.write("boom.lua", "at(1, function()\n  error('boom')\nend)\n" + kSettings);
  check_refused("run " + boom, "boom.lua:2: boom");
  const std::string loop = dir.write("loop.lua", "at(1, function()\n  while true do end\nend)\n" + kSettings);
  check_refused("run " + loop, "loop.lua:2: exceeded 100000000 instructions");
  const std::string bad = dir.write("bad.lua", "at(1, function()\n  blis.fail { instance = 9 }\nend)\n" + kSettings);
  check_refused("run " + bad, "bad.lua:2: event 'action=fail instance=9': instance 9 does not exist");
  const std::string text = dir.write("text.lua", "at(1, function()\n\n  blis.event('action=explode')\nend)\n" + kSettings);
  check_refused("run " + text, "text.lua:3: event 'action=explode': unknown action 'explode'");
  const std::string top = dir.write("top.lua", "blis.drain { instance = 1 }\n" + kSettings);
  check_refused("run " + top, "top.lua:1: blis.drain acts on the running simulation");
  const std::string add = dir.write("add.lua", "at(1, function()\n  blis.add {}\nend)\n" + kSettings);
  check_refused("run " + add, "add.lua:2: event 'action=add': adding or removing instances from scenario code needs "
                              "room for them: set lifecycle");
  const std::string past = dir.write("past.lua", "at(5, function()\n  at(1, print)\nend)\n" + kSettings);
  check_refused("run " + past, "past.lua:2: at(1.000000): that time has passed");
  const std::string when = dir.write("when.lua", "at(1, function()\n  blis.event('when=running>5 action=rate factor=2')\nend)\n" + kSettings);
  check_refused("run " + when, "when.lua:2: event 'when=running>5 action=rate factor=2': scenario code cannot set a when= trigger");
}

TEST_CASE("a dump of the configuration is refused for a scenario with callbacks", "[golden][events][lua]") {
  TempDir dir;
  const std::string code = dir.write("code.lua", "every(1, function() end)\n" + kSettings);
  check_refused("run " + code + " --dump-config", "registers at()/every() callbacks, which are Lua code");
  // Without callbacks the dump works as before.
  const std::string plain = dir.write("plain.lua", kSettings);
  CHECK(run_blis("run " + plain + " --dump-config").status == 0);
}

TEST_CASE("callbacks may add instances up to the pool's max", "[golden][events][lua]") {
  TempDir dir;
  const std::string code = dir.write("grow.lua", R"(
every(1, function(c) blis.add { count = 2 } end)
return { model = "qwen/qwen3-14b", num_instances = 2, rate = 30, num_requests = 200, lifecycle = "max=5" }
)");
  const Result r = run_blis("run " + code);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("1 s: action=add count=2 (2 instance(s) starting)") != std::string::npos);
  CHECK(r.out.find("2 s: action=add count=2 (1 of 2 instance(s) starting: no free slot)") != std::string::npos);
  CHECK(r.out.find("3 s: action=add count=2 (0 of 2 instance(s) starting: no free slot)") != std::string::npos);
}

TEST_CASE("random callback scripts lose no request", "[golden][events][lua][invariant]") {
  // Every 0.5 s a callback draws an action on a random instance from the
  // run's seeded math.random; whatever it does, every injected request ends
  // completed, failed, dropped, queued or running.
  TempDir dir;
  const std::string code = dir.write("random.lua", R"(
local actions = { "fail", "drain", "restore", "slow", "rate" }
every(0.5, function(c)
  local a = actions[math.random(#actions)]
  local i = math.random(0, 3)
  if a == "fail" then
    blis.fail { instance = i, requests = math.random() < 0.5 and "reroute" or "fail" }
  elseif a == "slow" then
    blis.slow { instance = i, factor = 0.5 + math.random() * 2 }
  elseif a == "rate" then
    blis.rate { factor = 0.7 + math.random() * 0.6 }
  else
    blis[a] { instance = i }
  end
end)
return { model = "qwen/qwen3-14b", num_instances = 4, rate = 40, num_requests = 400 }
)");
  for (const char* seed : {"1", "2", "3", "4"}) {
    const Result r = run_blis("run " + code + " --format json --seed " + seed);
    INFO("seed " << seed << "\n" << r.err);
    REQUIRE(r.status == 0);
    auto field = [&](const std::string& name) {
      const size_t at = r.out.find("\"" + name + "\": ");
      REQUIRE(at != std::string::npos);
      return std::stoll(r.out.substr(at + name.size() + 4));
    };
    CHECK(r.out.find("\"applied\": [\n      \"0.5 s: action=") != std::string::npos);
    CHECK(field("injected_requests") + field("rejected_requests") == 400);
    CHECK(field("injected_requests") == field("completed_requests") + field("failed") + field("dropped_unservable") +
                                            field("still_queued") + field("still_running"));
  }
}

TEST_CASE("callbacks with P/D pools are refused", "[golden][events][lua]") {
  TempDir dir;
  const std::string code = dir.write(
      "pd.lua", "every(1, function() end)\nreturn { model = \"qwen/qwen3-14b\", rate = 30, num_requests = 300 }\n");
  check_refused("run " + code + " --prefill-instances 1 --decode-instances 1",
                "at()/every() callbacks together with P/D pools are not supported yet");
}
