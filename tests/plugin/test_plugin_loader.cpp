// The plugin loader against real shared libraries: a good one, a newer minor,
// and one broken fixture per failure the host must refuse or report.
#include "catch.hpp"

#include <blis/config_table.hpp>
#include <blis/errors.hpp>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>

#include <cmath>
#include <string>

using namespace blis;

namespace {

std::string fixture(const std::string& name) {
  return std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-" + name + ".so";
}

// The message of the PluginError thrown by f.
template <class F>
std::string plugin_error(F&& f) {
  try {
    f();
  } catch (const PluginError& e) {
    return e.what();
  }
  FAIL("expected a PluginError");
  return "";
}

blis_step_batch one_decode_batch(blis_batch_entry& e) {
  e = blis_batch_entry{512, 512, 512, 0, 1, BLIS_PHASE_DECODE};
  return blis_step_batch{sizeof(blis_step_batch), sizeof(blis_batch_entry), 1000, 1, &e};
}

}  // namespace

TEST_CASE("a good plugin library loads, registers and runs", "[plugin]") {
  auto lib = open_plugin_library(fixture("good"));
  LibraryManifest m = describe(*lib);
  REQUIRE(m.plugins.size() == 1);
  CHECK(m.abi_major == BLIS_ABI_MAJOR);
  CHECK(m.plugins[0].name == "fixture-good");
  CHECK(m.plugins[0].kind == PluginKind::LatencyModel);

  Registries reg;
  register_library(reg, lib);
  ConfigTable cfg;
  cfg.set("fixture.step_us", 2500.0);
  auto model = reg.latency.create("fixture-good", CreateArgs{&cfg, 42});
  blis_batch_entry e;
  blis_step_batch b = one_decode_batch(e);
  CHECK(model->step_time(b) == 2500);
  CHECK(model->output_token_time() == 0);
}

TEST_CASE("the optional decode_step_time (ABI 1.5): absent, or beyond an older vtable, it is not called", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("good")));
  register_library(reg, open_plugin_library(fixture("minor4")));
  ConfigTable cfg;
  const blis_decode_batch agg{sizeof(blis_decode_batch), sizeof(blis_batch_entry), 1000, 1, 512, 512, 512, 0, nullptr};
  for (const char* name : {"fixture-good", "fixture-minor4"}) {
    INFO(name);
    auto model = reg.latency.create(name, CreateArgs{&cfg, 42});
    CHECK_FALSE(model->prices_decode_aggregates());
    int64_t out = -1;
    CHECK_FALSE(model->decode_step_time(agg, out));
    CHECK(out == -1);
    blis_batch_entry e;
    blis_step_batch b = one_decode_batch(e);
    CHECK(model->step_time(b) == 1000);  // the member-by-member path still prices it
  }
}

TEST_CASE("the library stays loaded while an object created from it lives", "[plugin]") {
  std::unique_ptr<LatencyModel> model;
  {
    Registries reg;
    register_library(reg, open_plugin_library(fixture("good")));
    ConfigTable cfg;
    model = reg.latency.create("fixture-good", CreateArgs{&cfg, 42});
  }  // registry and our handle to the library are gone
  blis_batch_entry e;
  blis_step_batch b = one_decode_batch(e);
  CHECK(model->step_time(b) == 1000);
}

TEST_CASE("a plugin built for a newer minor ABI with larger structs is accepted", "[plugin]") {
  auto lib = open_plugin_library(fixture("newer-minor"));
  LibraryManifest m = describe(*lib);
  CHECK(m.abi_minor == BLIS_ABI_MINOR + 3);
  REQUIRE(m.plugins.size() == 1);
  CHECK(m.plugins[0].name == "fixture-future");
  Registries reg;
  register_library(reg, lib);
  ConfigTable cfg;
  auto model = reg.latency.create("fixture-future", CreateArgs{&cfg, 1});
  blis_batch_entry e;
  blis_step_batch b = one_decode_batch(e);
  CHECK(model->step_time(b) == 1000);
}

TEST_CASE("broken plugin libraries are refused with the file and the reason", "[plugin]") {
  SECTION("missing entry symbol") {
    auto msg = plugin_error([] { open_plugin_library(fixture("missing-symbol")); });
    CHECK_THAT(msg, Catch::Contains(fixture("missing-symbol")));
    CHECK_THAT(msg, Catch::Contains("entry symbol 'blis_plugin_manifest' is missing"));
  }
  SECTION("ABI major mismatch") {
    auto msg = plugin_error([] { open_plugin_library(fixture("abi-major")); });
    CHECK_THAT(msg, Catch::Contains(fixture("abi-major")));
    CHECK_THAT(msg, Catch::Contains("built for plugin ABI 2.0"));
  }
  SECTION("short struct: an older minor lacking a call") {
    auto msg = plugin_error([] { open_plugin_library(fixture("short-struct")); });
    CHECK_THAT(msg, Catch::Contains(fixture("short-struct")));
    CHECK_THAT(msg, Catch::Contains("lacks post_decode_overhead()"));
  }
  SECTION("not a shared library at all") {
    auto msg = plugin_error([] { open_plugin_library(std::string(BLIS_TEST_SOURCE_DIR) + "/tests/plugin/fixtures/fixture.c"); });
    CHECK_THAT(msg, Catch::Contains("cannot load shared library"));
  }
  SECTION("no such file") {
    auto msg = plugin_error([] { open_plugin_library("/nonexistent/libx.so"); });
    CHECK_THAT(msg, Catch::Contains("/nonexistent/libx.so: no such file"));
  }
}

TEST_CASE("a duplicate plugin name is refused, naming both files", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("good")));
  auto msg = plugin_error([&] { register_library(reg, open_plugin_library(fixture("duplicate"))); });
  CHECK_THAT(msg, Catch::Contains(fixture("duplicate")));
  CHECK_THAT(msg, Catch::Contains("'fixture-good' is already registered by " + fixture("good")));
}

TEST_CASE("create() failing is reported with the plugin's message", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("create-fails")));
  ConfigTable cfg;
  auto msg = plugin_error([&] { reg.latency.create("fixture-create-fails", CreateArgs{&cfg, 1}); });
  CHECK_THAT(msg, Catch::Contains(fixture("create-fails")));
  CHECK_THAT(msg, Catch::Contains("create() failed: license file /opt/vendor/license.key not found"));
}

TEST_CASE("an ill-typed configuration key is reported by the plugin", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("good")));
  ConfigTable cfg;
  cfg.set("fixture.step_us", std::string("fast"));
  auto msg = plugin_error([&] { reg.latency.create("fixture-good", CreateArgs{&cfg, 1}); });
  CHECK_THAT(msg, Catch::Contains("fixture.step_us must be a number"));
}

TEST_CASE("the C++ helpers report a missing or ill-typed key by plugin and key", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("needs-config")));
  const std::string who = fixture("needs-config") + ": plugin 'fixture-needs-config': create() failed: ";
  ConfigTable cfg;
  CHECK(plugin_error([&] { reg.latency.create("fixture-needs-config", CreateArgs{&cfg, 1}); }) ==
        who + "config key 'fixture.scale' is missing");
  cfg.set("fixture.scale", std::string("big"));
  CHECK(plugin_error([&] { reg.latency.create("fixture-needs-config", CreateArgs{&cfg, 1}); }) ==
        who + "config key 'fixture.scale' must be a number, not a string");
  cfg.set("fixture.scale", int64_t{2});  // an integer is a number
  cfg.set("fixture.steps", 1.5);         // but a float is not an integer
  CHECK(plugin_error([&] { reg.latency.create("fixture-needs-config", CreateArgs{&cfg, 1}); }) ==
        who + "config key 'fixture.steps' must be an integer, not a number");
  cfg.set("fixture.steps", int64_t{3});
  auto model = reg.latency.create("fixture-needs-config", CreateArgs{&cfg, 1});
  blis_batch_entry e;
  blis_step_batch b = one_decode_batch(e);
  CHECK(model->step_time(b) == 6000);
}

TEST_CASE("exceptions from C++ plugins never cross into a crash", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("throws")));
  register_library(reg, open_plugin_library(fixture("raw-throw")));
  blis_batch_entry e;
  blis_step_batch b = one_decode_batch(e);

  SECTION("helper-based: create() throwing becomes a create failure") {
    ConfigTable cfg;
    cfg.set("fixture.throw_in", std::string("create"));
    auto msg = plugin_error([&] { reg.latency.create("fixture-throws", CreateArgs{&cfg, 1}); });
    CHECK_THAT(msg, Catch::Contains("create() failed: vendor model file is corrupt"));
  }
  SECTION("helper-based: a throwing call is reported with its message") {
    ConfigTable cfg;
    auto model = reg.latency.create("fixture-throws", CreateArgs{&cfg, 1});
    auto msg = plugin_error([&] { model->step_time(b); });
    CHECK_THAT(msg, Catch::Contains(fixture("throws")));
    CHECK_THAT(msg, Catch::Contains("step_time() failed: table index 42 out of range"));
  }
  SECTION("raw vtable: an exception escaping the C ABI is caught and reported") {
    ConfigTable cfg;
    auto model = reg.latency.create("fixture-raw-throw", CreateArgs{&cfg, 1});
    auto msg = plugin_error([&] { model->step_time(b); });
    CHECK_THAT(msg, Catch::Contains("step_time() threw a C++ exception across the C ABI"));
  }
}

TEST_CASE("nonsense step times stop the run naming the plugin and the batch", "[plugin]") {
  Registries reg;
  register_library(reg, open_plugin_library(fixture("good")));
  blis_batch_entry e;
  blis_step_batch b = one_decode_batch(e);
  for (const char* mode : {"nan", "negative", "absurd"}) {
    ConfigTable cfg;
    cfg.set("fixture.mode", std::string(mode));
    auto model = reg.latency.create("fixture-good", CreateArgs{&cfg, 1});
    auto msg = plugin_error([&] { model->step_time(b); });
    INFO(mode);
    CHECK_THAT(msg, Catch::Contains("plugin 'fixture-good': step_time() returned"));
    CHECK_THAT(msg, Catch::Contains("for a batch of 1 requests (0 prefill, 1 decode, 1 new tokens) at t=1000"));
  }
}

TEST_CASE("a registry refuses a second entry with the same name", "[plugin]") {
  Registry<LatencyModel> reg(PluginKind::LatencyModel);
  reg.add({"roofline", "1", "a", "built-in", nullptr});
  CHECK_THROWS_WITH(reg.add({"roofline", "1", "b", "/tmp/libx.so", nullptr}),
                    Catch::Contains("latency-model 'roofline' is already registered by built-in"));
  CHECK_THROWS_WITH(reg.create("nope", CreateArgs{}),
                    Catch::Contains("unknown latency-model 'nope'; available: roofline"));
}
