// The Lua host: FFI declarations, scorer/admission/latency adapters, errors
// with script:line, the sandbox and the seeded math.random.
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/lua.hpp>
#include <blis/registry.hpp>

#include <lua.hpp>

#include <cmath>
#include <cstddef>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string test_script(const std::string& name) {
  return std::string(BLIS_TEST_SOURCE_DIR) + "/tests/lua/scripts/" + name;
}

std::string shipped_scorer(const std::string& name) {
  return std::string(BLIS_TEST_SOURCE_DIR) + "/scripts/scorers/" + name;
}

blis_instance_snapshot snapshot(int32_t index, int32_t queue, int32_t batch, int32_t in_flight,
                                int64_t free_blocks = 0, int64_t total_blocks = 0,
                                double kv_util = 0) {
  blis_instance_snapshot s{};
  s.index = index;
  s.queue_depth = queue;
  s.batch_size = batch;
  s.in_flight = in_flight;
  s.free_kv_blocks = free_blocks;
  s.total_kv_blocks = total_blocks;
  s.kv_utilization = kv_util;
  return s;
}

// A route input over caller-owned arrays, the way the router passes it.
struct RouteFixture {
  blis_request_view request{};
  std::vector<blis_instance_snapshot> instances;
  std::vector<uint64_t> hashes;
  blis_route_input input{};

  explicit RouteFixture(std::vector<blis_instance_snapshot> snaps) : instances(std::move(snaps)) {
    request.struct_size = sizeof(request);
    request.block_size = 16;
    request.id = 7;
    request.input_tokens = 500;
    request.slo_class_name = "";
    request.tenant_id = "";
    refresh();
  }
  void refresh() {
    request.block_hashes = hashes.data();
    request.num_blocks = static_cast<int64_t>(hashes.size());
    input.struct_size = sizeof(input);
    input.snapshot_size = sizeof(blis_instance_snapshot);
    input.now_us = 2'000'000;
    input.request = &request;
    input.instances = instances.data();
    input.count = static_cast<int64_t>(instances.size());
  }
  std::vector<double> score(blis::RoutingScorer& scorer) {
    std::vector<double> out(instances.size(), -1.0);
    scorer.score(input, out.data());
    return out;
  }
};

std::string script_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const blis::ScriptError& e) {
    return e.what();
  }
  FAIL("expected a ScriptError");
  return "";
}

double lua_number(lua_State* L, const std::string& code) {
  REQUIRE(luaL_loadstring(L, code.c_str()) == 0);
  if (lua_pcall(L, 0, 1, 0) != 0) FAIL(lua_tostring(L, -1));
  double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

}  // namespace

TEST_CASE("the full plugin ABI header is parsed by ffi.cdef", "[lua]") {
  blis::LuaVm vm(42);  // throws if ffi.cdef rejects the header
  lua_State* L = vm.state();
  const std::string ffi = "local ffi = require('ffi') return ";
  CHECK(lua_number(L, ffi + "ffi.sizeof('blis_instance_snapshot')") ==
        sizeof(blis_instance_snapshot));
  CHECK(lua_number(L, ffi + "ffi.sizeof('blis_request_view')") == sizeof(blis_request_view));
  CHECK(lua_number(L, ffi + "ffi.sizeof('blis_route_input')") == sizeof(blis_route_input));
  CHECK(lua_number(L, ffi + "ffi.sizeof('blis_batch_entry')") == sizeof(blis_batch_entry));
  CHECK(lua_number(L, ffi + "ffi.sizeof('blis_step_batch')") == sizeof(blis_step_batch));
  CHECK(lua_number(L, ffi + "ffi.sizeof('blis_host')") == sizeof(blis_host));
  CHECK(lua_number(L, ffi + "ffi.sizeof('blis_manifest')") == sizeof(blis_manifest));
  CHECK(lua_number(L, ffi + "ffi.sizeof('blis_latency_model_vtable')") ==
        sizeof(blis_latency_model_vtable));
  CHECK(lua_number(L, ffi + "ffi.offsetof('blis_instance_snapshot', 'kv_utilization')") ==
        offsetof(blis_instance_snapshot, kv_utilization));
  CHECK(lua_number(L, ffi + "ffi.offsetof('blis_request_view', 'tenant_id')") ==
        offsetof(blis_request_view, tenant_id));
  CHECK(lua_number(L, ffi + "ffi.offsetof('blis_route_input', 'count')") ==
        offsetof(blis_route_input, count));
  CHECK(lua_number(L, ffi + "ffi.C.BLIS_ABI_MAJOR") == static_cast<double>(BLIS_ABI_MAJOR));
  CHECK(lua_number(L, ffi + "ffi.C.BLIS_KIND_ADMISSION_POLICY") ==
        static_cast<double>(BLIS_KIND_ADMISSION_POLICY));
}

TEST_CASE("a Lua scorer writes scores into host-owned buffers", "[lua]") {
  blis::LuaVm vm(42);
  SECTION("queue-depth: min-max over effective load") {
    auto scorer = blis::make_lua_routing_scorer(vm, shipped_scorer("queue_depth.lua"));
    RouteFixture r({snapshot(0, 1, 2, 0), snapshot(1, 3, 2, 2), snapshot(2, 2, 2, 1),
                    snapshot(3, 0, 0, 3)});
    // Loads 3, 7, 5, 3: lo 3, hi 7.
    auto s = r.score(*scorer);
    CHECK(s == std::vector<double>{1.0, 0.0, 0.5, 1.0});
    RouteFixture equal({snapshot(0, 1, 1, 1), snapshot(1, 3, 0, 0)});
    CHECK(equal.score(*scorer) == std::vector<double>{1.0, 1.0});
    RouteFixture idle({snapshot(0, 0, 0, 0), snapshot(1, 0, 0, 0)});
    CHECK(idle.score(*scorer) == std::vector<double>{1.0, 1.0});
  }
  SECTION("kv-utilization, load-balance, kv-headroom") {
    RouteFixture r({snapshot(0, 1, 0, 0, 75, 100, 0.25), snapshot(1, 2, 1, 1, 10, 40, 0.5),
                    snapshot(2, 0, 0, 0, 0, 0, 1.0)});
    auto kv = blis::make_lua_routing_scorer(vm, shipped_scorer("kv_utilization.lua"));
    CHECK(r.score(*kv) == std::vector<double>{0.75, 0.5, 0.0});
    auto lb = blis::make_lua_routing_scorer(vm, shipped_scorer("load_balance.lua"));
    CHECK(r.score(*lb) == std::vector<double>{0.5, 0.2, 1.0});
    auto head = blis::make_lua_routing_scorer(vm, shipped_scorer("kv_headroom.lua"));
    CHECK(r.score(*head) == std::vector<double>{0.75, 0.25, 0.0});
    blis::ConfigTable cfg;
    cfg.set("empty_score", 0.5);
    auto head2 = blis::make_lua_routing_scorer(vm, shipped_scorer("kv_headroom.lua"), cfg);
    CHECK(r.score(*head2) == std::vector<double>{0.75, 0.25, 0.5});
    CHECK(cfg.unread_keys().empty());
  }
  SECTION("request, route and config are visible") {
    blis::ConfigTable cfg;
    cfg.set("scale", int64_t{100});
    cfg.set("name", std::string("probe"));
    auto scorer = blis::make_lua_routing_scorer(vm, test_script("request_scorer.lua"), cfg);
    RouteFixture r({snapshot(0, 0, 0, 0), snapshot(5, 0, 0, 0)});
    r.hashes = {15, 99};
    r.refresh();
    // 500/100 + 2e6/1e6 + 15 % 7 + index/100
    auto s = r.score(*scorer);
    CHECK(s[0] == Approx(8.0));
    CHECK(s[1] == Approx(8.05));
  }
  SECTION("instance arrays larger than the initial buffers, and a snapshot stride") {
    auto scorer = blis::make_lua_routing_scorer(vm, shipped_scorer("load_balance.lua"));
    std::vector<blis_instance_snapshot> snaps;
    for (int i = 0; i < 1000; ++i) snaps.push_back(snapshot(i, i, 0, 0));
    RouteFixture r(snaps);
    auto s = r.score(*scorer);
    REQUIRE(s.size() == 1000);
    CHECK(s[0] == 1.0);
    CHECK(s[999] == 1.0 / 1000.0);
    // A producer with a larger snapshot struct (a newer minor version).
    struct Wider {
      blis_instance_snapshot s;
      double extra;
    };
    std::vector<Wider> wide = {{snapshot(0, 3, 0, 0), 1.0}, {snapshot(1, 1, 0, 0), 2.0}};
    blis_route_input in = r.input;
    in.instances = &wide[0].s;
    in.snapshot_size = sizeof(Wider);
    in.count = 2;
    double out[2] = {0, 0};
    scorer->score(in, out);
    CHECK(out[0] == 0.25);
    CHECK(out[1] == 0.5);
  }
}

TEST_CASE("a Lua scorer keeps state across calls and is told the choice", "[lua]") {
  blis::LuaVm vm(42);
  auto scorer = blis::make_lua_routing_scorer(vm, test_script("stateful.lua"));
  REQUIRE(scorer->observes());
  RouteFixture r({snapshot(0, 0, 0, 0), snapshot(1, 0, 0, 0), snapshot(2, 0, 0, 0)});
  CHECK(r.score(*scorer) == std::vector<double>{1, 1, 1});
  CHECK(r.score(*scorer) == std::vector<double>{2, 2, 2});
  scorer->observe(r.input, 1);
  CHECK(r.score(*scorer) == std::vector<double>{3, 103, 3});
  scorer->observe(r.input, 2);
  CHECK(r.score(*scorer) == std::vector<double>{4, 4, 104});

  // A second object from the same script starts from scratch.
  auto other = blis::make_lua_routing_scorer(vm, test_script("stateful.lua"));
  CHECK(r.score(*other) == std::vector<double>{1, 1, 1});
  auto plain = blis::make_lua_routing_scorer(vm, shipped_scorer("queue_depth.lua"));
  CHECK_FALSE(plain->observes());
}

TEST_CASE("Lua errors report the script's file and line", "[lua]") {
  blis::LuaVm vm(42);
  SECTION("syntax error") {
    std::string msg = script_error_of(
        [&] { blis::make_lua_routing_scorer(vm, test_script("syntax_error.lua")); });
    CHECK_THAT(msg, Catch::Contains("syntax_error.lua:5:"));
    CHECK_THAT(msg, Catch::Contains("'='"));
  }
  SECTION("runtime error inside score, with a traceback") {
    auto scorer = blis::make_lua_routing_scorer(vm, test_script("runtime_error.lua"));
    RouteFixture r({snapshot(0, 0, 0, 0)});
    std::string msg = script_error_of([&] { r.score(*scorer); });
    CHECK_THAT(msg, Catch::Contains("runtime_error.lua:7:"));
    CHECK_THAT(msg, Catch::Contains("attempt to perform arithmetic on a nil value"));
    CHECK_THAT(msg, Catch::Contains("stack traceback:"));
    CHECK_THAT(msg, Catch::Contains("runtime_error.lua:12:"));  // the caller, in score
    // The VM stays usable after a failed call.
    auto ok = blis::make_lua_routing_scorer(vm, shipped_scorer("queue_depth.lua"));
    CHECK(r.score(*ok) == std::vector<double>{1.0});
    CHECK(lua_gettop(vm.state()) == 0);
  }
  SECTION("runtime error while the top level runs") {
    std::string msg =
        script_error_of([&] { blis::make_lua_routing_scorer(vm, test_script("load_error.lua")); });
    CHECK_THAT(msg, Catch::Contains("load_error.lua:3:"));
    CHECK_THAT(msg, Catch::Contains("stack traceback:"));
  }
  SECTION("missing file") {
    std::string msg =
        script_error_of([&] { blis::make_lua_routing_scorer(vm, test_script("nope.lua")); });
    CHECK_THAT(msg, Catch::Contains("nope.lua"));
  }
  SECTION("missing required function") {
    std::string msg = script_error_of(
        [&] { blis::make_lua_routing_scorer(vm, test_script("missing_function.lua")); });
    CHECK_THAT(msg, Catch::Contains("missing_function.lua"));
    CHECK_THAT(msg, Catch::Contains("score(n)"));
    msg = script_error_of(
        [&] { blis::make_lua_admission_policy(vm, test_script("no_entry_point.lua")); });
    CHECK_THAT(msg, Catch::Contains("no_entry_point.lua"));
    CHECK_THAT(msg, Catch::Contains("admit()"));
    msg = script_error_of(
        [&] { blis::make_lua_latency_model(vm, shipped_scorer("queue_depth.lua")); });
    CHECK_THAT(msg, Catch::Contains("queue_depth.lua"));
    CHECK_THAT(msg, Catch::Contains("step_time(n)"));
  }
}

TEST_CASE("a NaN or unset score is reported", "[lua]") {
  blis::LuaVm vm(42);
  RouteFixture r({snapshot(0, 0, 0, 0), snapshot(1, 0, 0, 0), snapshot(2, 0, 0, 0)});
  auto nan = blis::make_lua_routing_scorer(vm, test_script("nan_score.lua"));
  std::string msg = script_error_of([&] { r.score(*nan); });
  CHECK_THAT(msg, Catch::Contains("nan_score.lua: score returned NaN for instance 2"));
  auto unset = blis::make_lua_routing_scorer(vm, test_script("unset_score.lua"));
  msg = script_error_of([&] { r.score(*unset); });
  CHECK_THAT(msg, Catch::Contains("unset_score.lua: score returned NaN for instance 2"));
}

TEST_CASE("scripts run sandboxed", "[lua]") {
  blis::LuaVm vm(42);
  // Probes os, io, require, loadfile, ffi, dofile, load, loadstring, module,
  // package, jit, debug, getfenv, setfenv, collectgarbage, math.randomseed,
  // newproxy: every one must be nil inside the script.
  auto scorer = blis::make_lua_routing_scorer(vm, test_script("sandbox_probe.lua"));
  std::vector<blis_instance_snapshot> snaps(17);
  RouteFixture r(snaps);
  auto s = r.score(*scorer);
  for (size_t i = 0; i < s.size(); ++i) {
    INFO("probe " << i + 1);
    CHECK(s[i] == 1.0);
  }
  // The host's own environment still has them.
  CHECK(lua_number(vm.state(), "return (require('ffi') ~= nil and os ~= nil) and 1 or 0") == 1);
}

TEST_CASE("math.random is bound to the run's seeded stream", "[lua]") {
  RouteFixture r(std::vector<blis_instance_snapshot>(8));
  auto draw = [&](int64_t seed) {
    blis::LuaVm vm(seed);
    auto scorer = blis::make_lua_routing_scorer(vm, test_script("random_scorer.lua"));
    auto a = r.score(*scorer);
    auto b = r.score(*scorer);
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  auto first = draw(42);
  CHECK(first == draw(42));
  CHECK(first != draw(43));
  for (double v : first) CHECK((v >= 0 && v < 1));
}

TEST_CASE("a Lua latency model returns validated step times", "[lua]") {
  blis::LuaVm vm(42);
  blis::ConfigTable cfg;
  cfg.set("base_us", int64_t{1000});
  auto model = blis::make_lua_latency_model(vm, test_script("latency.lua"), cfg);
  std::vector<blis_batch_entry> entries(3);
  entries[0].phase = BLIS_PHASE_PREFILL;
  entries[0].new_tokens = 128;
  entries[1].phase = BLIS_PHASE_DECODE;
  entries[1].new_tokens = 1;
  entries[2].phase = BLIS_PHASE_DECODE;
  entries[2].new_tokens = 1;
  blis_step_batch batch{};
  batch.struct_size = sizeof(batch);
  batch.entry_size = sizeof(blis_batch_entry);
  batch.count = 3;
  batch.entries = entries.data();
  // 1000 + 2*128 + 10 + 10 + 0.75, truncated.
  CHECK(model->step_time(batch) == 1276);
  blis_request_view req{};
  req.struct_size = sizeof(req);
  req.input_tokens = 4321;
  CHECK(model->queueing_time(req) == 432);
  CHECK(model->output_token_time() == 5);
  CHECK(model->post_decode_overhead() == 0);

  auto bad = blis::make_lua_latency_model(vm, test_script("bad_latency.lua"));
  std::string msg = script_error_of([&] { bad->step_time(batch); });
  CHECK_THAT(msg, Catch::Contains("bad_latency.lua: step_time returned -1"));
}

TEST_CASE("a Lua admission policy admits and rejects", "[lua]") {
  blis::LuaVm vm(42);
  blis::ConfigTable cfg;
  cfg.set("max_tokens", int64_t{600});
  auto policy = blis::make_lua_admission_policy(vm, test_script("admission.lua"), cfg);
  RouteFixture r({snapshot(0, 2, 0, 0), snapshot(1, 3, 0, 0)});
  std::string reason;
  CHECK(policy->admit(r.input, reason));
  CHECK(reason.empty());
  r.request.input_tokens = 600;
  CHECK_FALSE(policy->admit(r.input, reason));
  CHECK(reason == "prompt too long");
  r.request.input_tokens = 10;
  r.instances[1].queue_depth = 8;
  reason.clear();
  CHECK_FALSE(policy->admit(r.input, reason));
  CHECK(reason == "cluster queue full");
  r.instances[1].queue_depth = 0;
  r.request.tenant_id = "banned";
  CHECK_FALSE(policy->admit(r.input, reason));
  CHECK(reason == "tenant banned is banned");
  r.request.tenant_id = nullptr;  // cstring(NULL) is ""
  CHECK(policy->admit(r.input, reason));
}

TEST_CASE("register_lua_script names scripts by file stem and detects their kind", "[lua]") {
  blis::LuaVm vm(42);
  blis::Registries reg;
  for (const char* f : {"queue_depth.lua", "kv_utilization.lua", "load_balance.lua",
                        "kv_headroom.lua"}) {
    auto info = blis::register_lua_script(reg, vm, shipped_scorer(f));
    CHECK(info.kind == blis::PluginKind::RoutingScorer);
  }
  CHECK(reg.scorers.names() == "kv-headroom, kv-utilization, load-balance, queue-depth");
  const auto* e = reg.scorers.find("kv-headroom");
  REQUIRE(e != nullptr);
  CHECK(e->source == shipped_scorer("kv_headroom.lua"));
  CHECK(e->summary == "free KV blocks / total KV blocks (example script)");
  CHECK(e->version == "1.0");

  auto lat = blis::register_lua_script(reg, vm, test_script("latency.lua"), "toy-latency");
  CHECK(lat.kind == blis::PluginKind::LatencyModel);
  CHECK(reg.latency.find("toy-latency") != nullptr);
  auto adm = blis::register_lua_script(reg, vm, test_script("admission.lua"));
  CHECK(adm.kind == blis::PluginKind::AdmissionPolicy);
  CHECK(adm.summary == "Lua admission-policy script");

  blis::ConfigTable cfg;
  blis::CreateArgs args;
  args.config = &cfg;
  auto scorer = reg.scorers.create("queue-depth", args);
  RouteFixture r({snapshot(0, 4, 0, 0), snapshot(1, 0, 0, 0)});
  CHECK(r.score(*scorer) == std::vector<double>{0.0, 1.0});

  CHECK_THROWS_AS(blis::register_lua_script(reg, vm, shipped_scorer("queue_depth.lua")),
                  blis::PluginError);
  std::string msg = script_error_of(
      [&] { blis::register_lua_script(reg, vm, test_script("no_entry_point.lua")); });
  CHECK_THAT(msg, Catch::Contains("no_entry_point.lua"));
  CHECK_THAT(msg, Catch::Contains("score(n)"));
}

TEST_CASE("score(n) returns nothing or n; a wrong count or a write past the end is an error at its line",
          "[lua]") {
  blis::LuaVm vm(42);
  RouteFixture r({snapshot(0, 0, 0, 0), snapshot(1, 0, 0, 0), snapshot(2, 0, 0, 0)});
  // The shipped prefix-affinity script returns n: accepted.
  auto counted = blis::make_lua_routing_scorer(vm, shipped_scorer("prefix_affinity.lua"));
  CHECK(r.score(*counted) == std::vector<double>{0, 0, 0});
  auto wrong = blis::make_lua_routing_scorer(vm, test_script("wrong_count.lua"));
  std::string msg = script_error_of([&] { r.score(*wrong); });
  CHECK_THAT(msg, Catch::Contains("wrong_count.lua: score(3) returned 4; it must return nothing "
                                  "or the number of scores it wrote, 3"));
  auto text = blis::make_lua_routing_scorer(vm, test_script("string_count.lua"));
  msg = script_error_of([&] { r.score(*text); });
  CHECK_THAT(msg, Catch::Contains("string_count.lua: score(3) returned a string"));
  auto overrun = blis::make_lua_routing_scorer(vm, test_script("overrun_score.lua"));
  msg = script_error_of([&] { r.score(*overrun); });
  CHECK_THAT(msg, Catch::Contains("overrun_score.lua:4: scores[3] is out of range: valid indices are 0 .. 2"));
  // Also right after the buffers grew for a cluster larger than they were.
  RouteFixture big(std::vector<blis_instance_snapshot>(1000));
  msg = script_error_of([&] { big.score(*overrun); });
  CHECK_THAT(msg, Catch::Contains("overrun_score.lua:4: scores[1000] is out of range: valid indices are 0 .. 999"));
  // A good call afterwards on the same buffers passes.
  auto ok = blis::make_lua_routing_scorer(vm, shipped_scorer("queue_depth.lua"));
  CHECK(r.score(*ok) == std::vector<double>{1, 1, 1});
  CHECK(lua_gettop(vm.state()) == 0);
}

TEST_CASE("math.random streams are named after the registry name, not the path", "[lua]") {
  // The same script at two places draws the same numbers under one name, and
  // other numbers under another name.
  blis::test::TempDir dir;
  std::ifstream in(test_script("random_scorer.lua"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string moved = dir.write("random_scorer.lua", text);
  RouteFixture r(std::vector<blis_instance_snapshot>(4));
  auto draw = [&](const std::string& path, const std::string& name) {
    blis::LuaVm vm(42);
    blis::Registries reg;
    blis::register_lua_script(reg, vm, path, name);
    blis::ConfigTable cfg;
    auto scorer = reg.scorers.create(name, blis::CreateArgs{&cfg, 42});
    return r.score(*scorer);
  };
  const auto here = draw(test_script("random_scorer.lua"), "random-scorer");
  CHECK(draw(moved, "random-scorer") == here);
  CHECK(draw(moved, "other-name") != here);
  // Made directly, a script is named after its file stem.
  blis::LuaVm vm(42);
  CHECK(r.score(*blis::make_lua_routing_scorer(vm, moved)) == here);
}

TEST_CASE("slo_guard.lua admits under light load and sheds sheddable classes first", "[lua]") {
  blis::LuaVm vm(42);
  // Defaults: 2000 ms budget, 60 ms per waiting request, sheddable x0.5,
  // critical x2. The least-loaded instance decides.
  auto guard = blis::make_lua_admission_policy(
      vm, std::string(BLIS_TEST_SOURCE_DIR) + "/scripts/admission/slo_guard.lua");
  auto verdict = [&](int32_t waiting, int32_t slo_class, std::string* why = nullptr) {
    // Instance 1 runs 4 and has `waiting` more routed to it; instance 0 is busier.
    RouteFixture r({snapshot(0, waiting + 5, 4, waiting + 9), snapshot(1, 0, 4, waiting + 4)});
    r.request.slo_class = slo_class;
    std::string reason;
    bool admitted = guard->admit(r.input, reason);
    if (why != nullptr) *why = reason;
    return admitted;
  };
  CHECK(verdict(0, BLIS_SLO_DEFAULT));
  CHECK(verdict(0, BLIS_SLO_SHEDDABLE));
  // 20 waiting: 1200 ms. Over the sheddable budget (1000 ms), within the others.
  CHECK(verdict(20, BLIS_SLO_STANDARD));
  CHECK(verdict(20, BLIS_SLO_CRITICAL));
  std::string why;
  CHECK_FALSE(verdict(20, BLIS_SLO_SHEDDABLE, &why));
  CHECK(why == "estimated queueing delay 1200 ms exceeds the 1000 ms TTFT budget");
  CHECK_FALSE(verdict(20, BLIS_SLO_BATCH));
  CHECK_FALSE(verdict(20, BLIS_SLO_BACKGROUND));
  // 50 waiting: 3000 ms. Only critical requests (4000 ms) still get in.
  CHECK_FALSE(verdict(50, BLIS_SLO_DEFAULT));
  CHECK(verdict(50, BLIS_SLO_CRITICAL));
  CHECK_FALSE(verdict(70, BLIS_SLO_CRITICAL));

  // Settings come from init(config) and are checked.
  blis::ConfigTable cfg;
  cfg.set("ttft_budget_ms", 500.0);
  auto strict = blis::make_lua_admission_policy(
      vm, std::string(BLIS_TEST_SOURCE_DIR) + "/scripts/admission/slo_guard.lua", cfg);
  RouteFixture r({snapshot(0, 10, 4, 14)});
  std::string reason;
  CHECK_FALSE(strict->admit(r.input, reason));  // 600 ms > 500 ms
  blis::ConfigTable bad;
  bad.set("ms_per_request", -1.0);
  std::string msg = script_error_of([&] {
    blis::make_lua_admission_policy(
        vm, std::string(BLIS_TEST_SOURCE_DIR) + "/scripts/admission/slo_guard.lua", bad);
  });
  CHECK_THAT(msg, Catch::Contains("ms_per_request must be a finite number > 0, got -1"));
}

// Resident memory of this process in KB (Linux).
static long resident_kb() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * 4;
}

TEST_CASE("a LuaVm gives back all its memory when destroyed", "[lua]") {
  // Regression (fuzz/lua_script): the VM counts the heap through its own
  // allocator, and lua_close left LuaJIT's arena mapped unless the original
  // allocator was restored first: about 100 KB per VM, 40 MB for 400 VMs.
  { blis::LuaVm warm_up(1); }
  const long before = resident_kb();
  for (int i = 0; i < 400; ++i) blis::LuaVm vm(i);
  CHECK(resident_kb() - before < 16 * 1024);
}
