// What a script may spend and touch (docs/lua.md, "Limits"): an instruction
// budget per call that holds in JIT-compiled loops too, a heap limit per VM,
// and host data reachable only through bounds-checked views. Each breach is
// a ScriptError (exit code 2) naming the script and, where it has one, the line.
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/lua.hpp>

#include "lua/lua_host.hpp"

#include <lua.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace {

// A scorer script written to a scratch file, and one routing decision over
// three instances and two block hashes.
struct ScorerRun {
  blis::test::TempDir dir{"blis-lua-limits"};
  blis::LuaVm vm{42};
  std::string path;
  std::vector<blis_instance_snapshot> instances = std::vector<blis_instance_snapshot>(3);
  std::vector<uint64_t> hashes = {11, 22};
  blis_request_view request{};
  blis_route_input input{};

  explicit ScorerRun(const std::string& source) : path(dir.write("scorer.lua", source)) {
    request.struct_size = sizeof(request);
    request.block_hashes = hashes.data();
    request.num_blocks = 2;
    request.tenant_id = "acme";
    request.slo_class_name = "";
    input.struct_size = sizeof(input);
    input.snapshot_size = sizeof(blis_instance_snapshot);
    input.request = &request;
    input.instances = instances.data();
    input.count = 3;
  }
  std::vector<double> score() {
    auto scorer = blis::make_lua_routing_scorer(vm, path);
    std::vector<double> out(3);
    scorer->score(input, out.data());
    return out;
  }
};

// The ScriptError of `f`, its exit code, and the CPU time it took.
struct Failure {
  std::string message;
  int exit_code = 0;
  double seconds = 0;
};
Failure failure_of(const std::function<void()>& f) {
  const std::clock_t start = std::clock();  // CPU time: a busy machine does not inflate it
  Failure out;
  try {
    f();
    FAIL("expected a ScriptError");
  } catch (const blis::ScriptError& e) {
    out.message = e.what();
    out.exit_code = e.exit_code();
  }
  out.seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  // Instrumented builds run slower (scripts/test-sanitizers.sh).
  if (const char* f = std::getenv("BLIS_TEST_SLOWDOWN")) out.seconds /= std::max(1.0, std::atof(f));
  return out;
}

const std::string kFill = "for i = 0, n - 1 do scores[i] = 1 end\n";

}  // namespace

TEST_CASE("limits: a runaway loop stops at the instruction budget, compiled or not", "[lua]") {
  // `while true do end` is JIT-compiled after a few dozen iterations, where
  // LuaJIT runs no count hook: the budget still holds.
  ScorerRun run("function score(n)\n  while true do end\nend\n");
  const Failure f = failure_of([&] { run.score(); });
  CHECK(f.message == run.path + ":2: exceeded 100000000 instructions");
  CHECK(f.exit_code == 2);
  CHECK(f.seconds < 5);
  CHECK(lua_gettop(run.vm.state()) == 0);
}

TEST_CASE("limits: the fuzz targets' divisor shrinks the budget, and only while it is set", "[lua]") {
  ScorerRun run("function score(n)\n  while true do end\nend\n");
  blis::lua::divide_script_limits(100);
  const Failure divided = failure_of([&] { run.score(); });
  blis::lua::divide_script_limits(1);
  CHECK(divided.message == run.path + ":2: exceeded 1000000 instructions");
  CHECK(failure_of([&] { run.score(); }).message == run.path + ":2: exceeded 100000000 instructions");
}

TEST_CASE("limits: recursion without end and repeat/goto loops are bounded too", "[lua]") {
  {
    ScorerRun run("local function f(x) return f(x + 1) end\nfunction score(n)\n  f(0)\nend\n");
    CHECK(failure_of([&] { run.score(); }).message == run.path + ":1: exceeded 100000000 instructions");
  }
  {
    ScorerRun run("function score(n)\n  local x = 0\n  repeat x = x + 1 until false\nend\n");
    CHECK(failure_of([&] { run.score(); }).message == run.path + ":3: exceeded 100000000 instructions");
  }
  {
    ScorerRun run("function score(n)\n  ::top::\n  goto top\nend\n");
    CHECK(failure_of([&] { run.score(); }).message == run.path + ":3: exceeded 100000000 instructions");
  }
}

TEST_CASE("limits: a script cannot catch the budget error and carry on", "[lua]") {
  ScorerRun run("function score(n)\n  pcall(function() while true do end end)\n  " + kFill + "end\n");
  CHECK(failure_of([&] { run.score(); }).message == run.path + ":2: exceeded 100000000 instructions");
}

TEST_CASE("limits: the budget is per call; the script's text keeps its line numbers", "[lua]") {
  // Each call runs 60 million loop iterations: more than the budget in
  // total, within it per call.
  ScorerRun run("-- do repeat function goto in a comment\nlocal s = \"do function(\" -- [[\nfunction score(n)\n"
                "  local k = 0\n  for i = 1, 6e7 do k = k + 1 end\n  " + kFill + "end\nfunction line() error('here') end\n");
  auto scorer = blis::make_lua_routing_scorer(run.vm, run.path);
  std::vector<double> out(3);
  for (int call = 0; call < 3; ++call) scorer->score(run.input, out.data());
  CHECK(out == std::vector<double>{1, 1, 1});
}

TEST_CASE("limits: the Lua heap is capped per VM", "[lua]") {
  ScorerRun run("local t = {}\nfunction score(n)\n  while true do t[#t + 1] = {} end\nend\n");
  const Failure f = failure_of([&] { run.score(); });
  CHECK(f.message == run.path + ": the Lua heap would exceed its limit of 256 MiB (every script of the run shares it); "
                                "the script holds too much data");
  CHECK(f.exit_code == 2);
}

TEST_CASE("limits: scores, instances and block hashes are bounds-checked at the script's line", "[lua]") {
  const auto error_of = [](const std::string& body) {
    ScorerRun run("function score(n)\n  " + kFill + "  " + body + "\nend\n");
    std::string msg = failure_of([&] { run.score(); }).message;
    const std::string prefix = run.path + ":3: ";
    REQUIRE(msg.rfind(prefix, 0) == 0);
    msg = msg.substr(prefix.size());
    return msg.substr(0, msg.find('\n'));
  };
  CHECK(error_of("scores[100000000] = 1.0") == "scores[100000000] is out of range: valid indices are 0 .. 2");
  CHECK(error_of("scores[-1] = 1.0") == "scores[-1] is out of range: valid indices are 0 .. 2");
  CHECK(error_of("scores[0] = 'high'") == "scores[0] must be set to a number, got string");
  CHECK(error_of("local x = instances[3].queue_depth") == "instances[3] is out of range: valid indices are 0 .. 2");
  CHECK(error_of("local x = route.instances[3]") == "instances[3] is out of range: valid indices are 0 .. 2");
  CHECK(error_of("local x = request.block_hashes[2]") ==
        "request.block_hashes[2] is out of range: valid indices are 0 .. 1");
  CHECK(error_of("local x = route.request.block_hashes[1e9]") ==
        "request.block_hashes[1000000000] is out of range: valid indices are 0 .. 1");
  CHECK(error_of("local x = instances.foo") == "instances must be indexed by a number, got \"foo\"");
  // A fraction or NaN would be truncated to another index.
  CHECK(error_of("scores[0.5] = 1") == "scores[0.5]: an index must be a whole number");
  CHECK(error_of("local x = instances[1.5]") == "instances[1.5]: an index must be a whole number");
  CHECK(error_of("local x = request.block_hashes[0/0]") == "request.block_hashes[nan]: an index must be a whole number");
  // The views themselves are read-only.
  CHECK(error_of("scores._n = 1e9") == "attempt to write to constant location");
}

TEST_CASE("limits: the views read what raw pointers read", "[lua]") {
  ScorerRun run("function score(n)\n"
                "  local ok = #scores == n and #instances == n and route.count == n and request.num_blocks == 2\n"
                "    and request.block_hashes[1] == 22 and #request.block_hashes == 2\n"
                "    and request.tenant_id == 'acme' and cstring(request.tenant_id) == 'acme'\n"
                "    and cstring(request.slo_class_name) == '' and route.request.block_hashes[0] == 11\n"
                "  for i = 0, n - 1 do scores[i] = ok and instances[i].index + 10 or -1 end\n"
                "end\n");
  run.instances[1].index = 1;
  run.instances[2].index = 2;
  CHECK(run.score() == std::vector<double>{10, 11, 12});
}

TEST_CASE("limits: a latency model reading entries past n is an error at its line", "[lua]") {
  blis::test::TempDir dir("blis-lua-limits");
  blis::LuaVm vm(42);
  const std::string path = dir.write("model.lua", "function step_time(n)\n  local t = 0\n"
                                                  "  for i = 0, n do t = t + entries[i].new_tokens end\n"
                                                  "  return t\nend\n");
  auto model = blis::make_lua_latency_model(vm, path);
  std::vector<blis_batch_entry> entries(2);
  blis_step_batch batch{};
  batch.struct_size = sizeof(batch);
  batch.entry_size = sizeof(blis_batch_entry);
  batch.count = 2;
  batch.entries = entries.data();
  const std::string msg = failure_of([&] { model->step_time(batch); }).message;
  CHECK(msg.rfind(path + ":3: entries[2] is out of range: valid indices are 0 .. 1", 0) == 0);
  const std::string via_batch = dir.write("batch.lua", "function step_time(n)\n  return batch.entries[n].new_tokens\nend\n");
  auto model2 = blis::make_lua_latency_model(vm, via_batch);
  CHECK(failure_of([&] { model2->step_time(batch); }).message.rfind(via_batch + ":2: entries[2] is out of range", 0) == 0);
}

TEST_CASE("limits: in the interpreter the count hook spends the budget", "[lua]") {
  // With the JIT off every instruction is interpreted, so the hook (1000
  // instructions at a time) runs out long before the per-iteration checks
  // would: with 200 statements per iteration, those alone would take 2e10
  // interpreted instructions (minutes); the hook stops it within a second.
  std::string body;
  for (int k = 0; k < 200; ++k) body += "x = x + 1 ";
  ScorerRun run("function score(n)\n  local x = 0\n  while true do\n    " + body + "\n  end\nend\n");
  lua_State* L = run.vm.state();
  REQUIRE(luaL_dostring(L, "require('jit').off()") == 0);
  const Failure f = failure_of([&] { run.score(); });
  // The hook stops the loop on one of its lines.
  INFO(f.message);
  CHECK((f.message == run.path + ":3: exceeded 100000000 instructions" ||
         f.message == run.path + ":4: exceeded 100000000 instructions"));
  CHECK(f.exit_code == 2);
  CHECK(f.seconds < 20);
}

TEST_CASE("limits: a call whose iterations are expensive stops at its CPU-time limit", "[lua]") {
  // Compiled code spends one instruction of the budget per iteration, and
  // this iteration copies a 64 KiB string: 10^8 of them would take minutes.
  // Found by fuzz/lua_script (a loop building a table per iteration ran 4 s).
  blis::test::TempDir dir{"blis-lua-cpu"};
  blis::LuaVm vm{42};
  const std::string path =
      dir.write("slow.lua", "local s = string.rep('x', 65536)\nlocal t = {}\n"
                            "for i = 1, 1e9 do t[1] = s .. i end\nreturn {}\n");
  const Failure f = failure_of([&] { blis::lua::ScriptInstance(vm, path, "slow", blis::lua::read_script(path),
                                                              blis::lua::kPluginInstructionLimit, 0.25); });
  CHECK(f.message == path + ":3: exceeded 0.25 s of CPU time in one call");
  CHECK(f.exit_code == 2);
  CHECK(f.seconds < 3);
  CHECK(lua_gettop(vm.state()) == 0);
  // The VM is still usable, with its limits armed afresh.
  const std::string ok = dir.write("ok.lua", "local k = 0\nfor i = 1, 1e6 do k = k + 1 end\nreturn k\n");
  blis::lua::ScriptInstance next(vm, ok, "ok", blis::lua::read_script(ok), blis::lua::kPluginInstructionLimit, 0.25);
  CHECK(next.result_ref() != LUA_NOREF);
}

TEST_CASE("limits: a long call within its budget and CPU time runs to the end", "[lua]") {
  // 4 * 10^7 iterations refill the budget thousands of times (a chunk at a
  // time): the count stays exact, so the script ends where it would without chunks.
  ScorerRun run("function score(n)\n  local k = 0\n  for i = 1, 4e7 do k = k + 1 end\n"
                "  for i = 0, n - 1 do scores[i] = k / 4e7 end\nend\n");
  CHECK(run.score() == std::vector<double>{1, 1, 1});
}

// The error of `call` at line 3 of a scorer whose first line is `prelude`:
// its message after the place, first line only.
std::string call_error(const std::string& prelude, const std::string& call) {
  ScorerRun bad(prelude + "\nfunction score(n)\n  " + call + "\nend\n");
  std::string msg = failure_of([&] { bad.score(); }).message;
  const std::string prefix = bad.path + ":3: ";
  REQUIRE(msg.rfind(prefix, 0) == 0);
  msg = msg.substr(prefix.size());
  return msg.substr(0, msg.find('\n'));
}

TEST_CASE("lru_set's bulk forms over request.block_hashes: touch_run and leading", "[lua]") {
  // touch_run(hashes, 0, 2) touches 11 then 22 (capacity 2: 22 is the most
  // recent); leading finds the first hash not held; both check their range.
  ScorerRun run(
      "local s = lru_set(2)\n"
      "function score(n)\n"
      "  local h = request.block_hashes\n"
      "  scores[0] = s.leading(h, 0, 2)\n"
      "  s.touch_run(h, 0, 1)\n"
      "  scores[1] = s.leading(h, 0, 2)\n"
      "  s.touch_run(h, 0, 2) s.touch(33)\n"  // evicts 11, the least recent
      "  scores[2] = (s.contains(11) and 100 or 0) + (s.contains(22) and 10 or 0) + s.leading(h, 1, 2)\n"
      "end\n");
  CHECK(run.score() == std::vector<double>{0, 1, 12});
  const auto error_of = [](const std::string& call) { return call_error("local s = lru_set(2)", call); };
  CHECK(error_of("s.touch_run(request.block_hashes, 0, 3)") ==
        "lru_set: touch_run(hashes, from, to) needs whole 0 <= from <= to <= 2, got 0, 3");
  CHECK(error_of("local k = s.leading(request.block_hashes, 1, 0)") ==
        "lru_set: leading(hashes, from, to) needs whole 0 <= from <= to <= 2, got 1, 0");
  CHECK(error_of("local k = s.leading(request.block_hashes, 0.5, 1)") ==
        "lru_set: leading(hashes, from, to) needs whole 0 <= from <= to <= 2, got 0.5, 1");
  CHECK(error_of("s.touch_run({11, 22}, 0, 2)") ==
        "lru_set: touch_run(hashes, from, to) needs request.block_hashes, got table");
}

TEST_CASE("prefix_memo keeps a request's leading hashes for the next to compare with", "[lua]") {
  // Nothing kept: no common block. After remember(h, 1) the first block is
  // common, after remember(h, 2) both; common(h, 1) stops at its bound.
  ScorerRun run(
      "local m = prefix_memo()\n"
      "function score(n)\n"
      "  local h = request.block_hashes\n"
      "  scores[0] = m.common(h, 2) * 10 + m.length()\n"
      "  m.remember(h, 1)\n"
      "  scores[1] = m.common(h, 2) * 10 + m.length()\n"
      "  m.remember(h, 2)\n"
      "  scores[2] = m.common(h, 2) * 100 + m.common(h, 1) * 10 + m.length()\n"
      "end\n");
  CHECK(run.score() == std::vector<double>{0, 11, 212});
  const auto error_of = [](const std::string& call) { return call_error("local m = prefix_memo()", call); };
  CHECK(error_of("m.remember(request.block_hashes, 3)") ==
        "prefix_memo: remember(hashes, to) needs whole 0 <= to <= 2, got 3");
  CHECK(error_of("local k = m.common(request.block_hashes, -1)") ==
        "prefix_memo: common(hashes, to) needs whole 0 <= to <= 2, got -1");
  CHECK(error_of("local k = m.common('abc', 1)") ==
        "prefix_memo: common(hashes, to) needs request.block_hashes, got string");
}
