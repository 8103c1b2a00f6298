// The plugin boundary against misbehaving libraries (real .so fixtures): what
// the host reads from a plugin is bounded, corrupt manifests and truncated
// files are refused before they can crash the process, and libraries of the
// search path open only when a name is asked for.
#include "catch.hpp"
#include "error_of.hpp"

#include <blis/config_table.hpp>
#include <blis/errors.hpp>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>

#include <algorithm>
#include <string>

using namespace blis;
using blis::test::error_of;

namespace {

std::string fixture(const std::string& name) {
  return std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-" + name + ".so";
}

struct RouteInput {
  uint64_t hashes[1] = {7};
  blis_request_view request{sizeof(blis_request_view), 16, 0, 0, 16, 0, hashes, 1, 0, 0, "", "", 0, ""};
  blis_instance_snapshot snapshots[3] = {{0, 0, 0, 0, 10, 10, 0, 0, -1, 0, 1, -1, 0}, {1, 0, 0, 0, 10, 10, 0, 0, -1, 0, 1, -1, 0},
                                         {2, 0, 0, 0, 10, 10, 0, 0, -1, 0, 1, -1, 0}};
  blis_route_input route{sizeof(blis_route_input), sizeof(blis_instance_snapshot), 0, &request, snapshots, 3};
};

bool only(const std::string& s, char c) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [c](char x) { return x == c; });
}

}  // namespace

TEST_CASE("a truncated library is refused before it is mapped", "[plugin]") {
  // Mapping this file and touching it raises SIGBUS in any process.
  const std::string msg = error_of([] { open_plugin_library(fixture("truncated")); });
  CHECK_THAT(msg, Catch::StartsWith(fixture("truncated") + ": cannot load shared library: the file is "
                                                           "truncated or corrupt"));
}

TEST_CASE("a corrupt plugin count or entry stride is refused, not followed", "[plugin]") {
  CHECK_THAT(error_of([] { open_plugin_library(fixture("bad-stride")); }),
             Catch::Contains("plugin entry 0 says entries are 2147483647 bytes apart"));
  CHECK_THAT(error_of([] { open_plugin_library(fixture("huge-count")); }),
             Catch::Contains("manifest lists 2147483647 plugins"));
}

TEST_CASE("search-path libraries open on demand; a broken one is skipped and recorded", "[plugin]") {
  SECTION("a name found in an earlier library never opens the broken one") {
    Registries reg;
    reg.add_candidates({fixture("good"), fixture("truncated")});
    CHECK(reg.latency.find("fixture-good") != nullptr);
    CHECK(reg.broken().empty());
  }
  SECTION("a broken library before the one that has the name is skipped") {
    Registries reg;
    reg.add_candidates({fixture("truncated"), fixture("good")});
    CHECK(reg.latency.find("fixture-good") != nullptr);
    REQUIRE(reg.broken().size() == 1);
    CHECK(reg.broken()[0].path == fixture("truncated"));
  }
  SECTION("an unknown name names the library that could not be opened") {
    Registries reg;
    reg.add_candidates({fixture("truncated")});
    CHECK_THAT(error_of([&] { reg.latency.create("nope", CreateArgs{}); }),
               Catch::Contains("unknown latency-model 'nope'"));
    REQUIRE(reg.broken().size() == 1);
    CHECK_THAT(reg.broken()[0].message, Catch::StartsWith(fixture("truncated") + ": "));
  }
}

TEST_CASE("a NULL out pointer to a host config call fails create(), naming the call", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("null-out")));
  ConfigTable cfg;
  cfg.set("fixture.step_us", 5.0);
  CHECK(error_of([&] { reg.latency.create("fixture-manifest-a", CreateArgs{&cfg, 1}); }) ==
        fixture("null-out") + ": plugin 'fixture-manifest-a': create() passed a NULL out pointer to "
                              "host->config_f64(\"fixture.step_us\")");
}

TEST_CASE("a library scorer returning NaN is a plugin error", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("nan-scorer")));
  ConfigTable cfg;
  auto scorer = reg.scorers.create("fixture-nan-scorer", CreateArgs{&cfg, 1});
  RouteInput in;
  double scores[3];
  try {
    scorer->score(in.route, scores);
    FAIL("expected a PluginError");
  } catch (const PluginError& e) {
    CHECK(e.exit_code() == 2);
    CHECK_THAT(e.what(), Catch::Contains("plugin 'fixture-nan-scorer': score() returned NaN for instance 1"));
  }
}

TEST_CASE("an admission policy's error text reaches the message; its buffers are read bounded", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("admit-error")));
  register_library(reg, open_plugin_library(fixture("unterminated")));
  ConfigTable cfg;
  RouteInput in;
  std::string reason;
  auto failing = reg.admission.create("fixture-admit-error", CreateArgs{&cfg, 1});
  CHECK(error_of([&] { failing->admit(in.route, reason); }) ==
        fixture("admit-error") + ": plugin 'fixture-admit-error': admit() failed: quota service unreachable");

  // A reason or an error that fills the buffer without a NUL is cut at the
  // buffer's end: nothing from beyond it shows up.
  auto unterminated = reg.admission.create("fixture-unterminated", CreateArgs{&cfg, 1});
  in.request.id = 2;
  CHECK_FALSE(unterminated->admit(in.route, reason));
  CHECK(only(reason, 'r'));
  in.request.id = 3;
  const std::string msg = error_of([&] { unterminated->admit(in.route, reason); });
  const std::string prefix = "admit() failed: ";
  REQUIRE(msg.find(prefix) != std::string::npos);
  CHECK(only(msg.substr(msg.find(prefix) + prefix.size()), 'e'));
}

TEST_CASE("every kind is one consistent row of the kind table", "[plugin]") {
  Registries reg;
  for (const PluginKindRow& row : plugin_kinds()) {
    INFO(row.name);
    CHECK(find_kind(row.name) == &row);
    CHECK(find_kind(static_cast<int32_t>(row.kind)) == &row);
    CHECK(reg.of(row.kind).kind() == row.kind);
    CHECK(row.min_vtable_size >= 8 + 8 * row.required_calls);
  }
  CHECK(find_kind("no-such-kind") == nullptr);
  CHECK(find_kind(0) == nullptr);
}
