// Scripts named where a plugin is expected: by path or by name, through
// --script-dir, BLIS_SCRIPT_DIR and the installed scripts; plugins win.
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/script_lookup.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using blis::PluginKind;

namespace {

// The repository's scripts/ folder stands in for the installed one.
const std::string kInstalled = std::string(BLIS_TEST_SOURCE_DIR) + "/scripts";

const char* kConstantScorer = "summary = 'constant'\nfunction score(n) for i = 0, n - 1 do scores[i] = 0.25 end end\n";

struct Lookup {
  blis::LuaVm vm{42};
  blis::Registries reg;
  std::vector<std::string> dirs{kInstalled};

  std::optional<std::string> resolve(PluginKind kind, const std::string& spec) {
    return blis::resolve_plugin_name(reg, vm, kind, spec, dirs);
  }
  std::string source(const std::string& name) { return reg.scorers.find(name)->source; }
};

struct NativeScorer : blis::RoutingScorer {
  void score(const blis_route_input& in, double* out) override {
    for (int64_t i = 0; i < in.count; ++i) out[i] = 1;
  }
};

}  // namespace

TEST_CASE("a script is found by name in the kind's folder of the installed scripts", "[lua]") {
  Lookup l;
  CHECK(l.resolve(PluginKind::RoutingScorer, "kv-headroom") == "kv-headroom");
  CHECK(l.source("kv-headroom") == kInstalled + "/scorers/kv_headroom.lua");
  CHECK(l.resolve(PluginKind::AdmissionPolicy, "slo-guard") == "slo-guard");
  CHECK(l.reg.admission.find("slo-guard")->source == kInstalled + "/admission/slo_guard.lua");
  // Found again without a second registration.
  CHECK(l.resolve(PluginKind::RoutingScorer, "kv-headroom") == "kv-headroom");
  // Only the kind's folder is searched, and unknown names are no error here.
  CHECK_FALSE(l.resolve(PluginKind::RoutingScorer, "slo-guard"));
  CHECK_FALSE(l.resolve(PluginKind::RoutingScorer, "no-such-scorer"));
  CHECK_FALSE(l.resolve(PluginKind::RoutingScorer, ""));
}

TEST_CASE("a registered plugin wins over a script of the same name", "[lua]") {
  Lookup l;
  l.reg.scorers.add({"queue-depth", "1", "native", "built-in", [](const blis::CreateArgs&) {
                       return std::make_unique<NativeScorer>();
                     }});
  CHECK(l.resolve(PluginKind::RoutingScorer, "queue-depth") == "queue-depth");
  CHECK(l.source("queue-depth") == "built-in");
  // The Lua twin stays reachable by its path, registered under that path.
  CHECK(l.resolve(PluginKind::RoutingScorer, "scorers/queue_depth.lua") == "scorers/queue_depth.lua");
  CHECK(l.source("scorers/queue_depth.lua") == kInstalled + "/scorers/queue_depth.lua");
}

TEST_CASE("directories given with --script-dir come first, at their top or in the kind's folder", "[lua]") {
  blis::test::TempDir mine;
  mine.write("kv_headroom.lua", kConstantScorer);
  std::filesystem::create_directories(mine.str() + "/scorers");
  mine.write("scorers/my_scorer.lua", kConstantScorer);
  Lookup l;
  l.dirs = blis::script_search_dirs({mine.str()}, kInstalled);
  CHECK(l.resolve(PluginKind::RoutingScorer, "kv-headroom"));
  CHECK(l.source("kv-headroom") == mine.str() + "/kv_headroom.lua");
  CHECK(l.resolve(PluginKind::RoutingScorer, "my-scorer"));
  CHECK(l.source("my-scorer") == mine.str() + "/scorers/my_scorer.lua");
  // A path relative to a script directory, and to its kind's folder.
  CHECK(l.resolve(PluginKind::RoutingScorer, "my_scorer.lua"));
  CHECK(l.source("my_scorer.lua") == mine.str() + "/scorers/my_scorer.lua");
  CHECK(l.resolve(PluginKind::AdmissionPolicy, "slo_guard.lua"));

  std::string names = blis::available_plugin_names(l.reg, l.vm, PluginKind::RoutingScorer, l.dirs);
  CHECK(names == "kv-headroom, kv-utilization, load-balance, my-scorer, my_scorer.lua, "
                 "prefix-affinity, queue-depth");
  CHECK(blis::available_plugin_names(l.reg, l.vm, PluginKind::LatencyModel, l.dirs) == "blackbox");
}

TEST_CASE("BLIS_SCRIPT_DIR adds directories after --script-dir", "[lua]") {
  ::setenv("BLIS_SCRIPT_DIR", "/a:/b", 1);
  const auto dirs = blis::script_search_dirs({"/x"}, "/installed");
  ::unsetenv("BLIS_SCRIPT_DIR");
  CHECK(dirs == std::vector<std::string>{"/x", "/a", "/b", "/installed"});
  CHECK(blis::script_search_dirs({}, "/installed") == std::vector<std::string>{"/installed"});
}

TEST_CASE("a script of the wrong kind, or a path that leads nowhere, is an error", "[lua]") {
  Lookup l;
  try {
    l.resolve(PluginKind::RoutingScorer, "admission/slo_guard.lua");
    FAIL("expected a ScriptError");
  } catch (const blis::ScriptError& e) {
    CHECK_THAT(e.what(), Catch::Contains("slo_guard.lua: is an admission-policy script"));
    CHECK_THAT(e.what(), Catch::Contains("not a routing-scorer script, which must define function score(n)"));
  }
  CHECK(l.reg.admission.find("admission/slo_guard.lua") == nullptr);
  CHECK_THROWS_WITH(l.resolve(PluginKind::RoutingScorer, "nowhere/mine.lua"),
                    Catch::Contains("nowhere/mine.lua: no such script (looked here and in " + kInstalled + ")"));
  CHECK_THROWS_WITH(l.resolve(PluginKind::RoutingScorer, "/abs/mine.lua"),
                    Catch::Equals("/abs/mine.lua: no such script"));
}
