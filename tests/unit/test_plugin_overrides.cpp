// --plugin-config NAME.KEY=VALUE: how values are typed, how entries split into
// plugin and key, and how they reach a plugin's configuration.
#include "catch.hpp"

#include <blis/errors.hpp>
#include <blis/plugin_overrides.hpp>

#include <string>
#include <vector>

using namespace blis;

namespace {

ConfigValue value(const std::string& text) { return parse_config_value(text, "--x"); }

template <class T>
T as(const std::string& text) {
  ConfigValue v = value(text);
  REQUIRE(std::holds_alternative<T>(v));
  return std::get<T>(v);
}

std::string input_error(const std::vector<std::string>& entries) {
  try {
    parse_plugin_overrides(entries);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("expected an InputError");
  return "";
}

}  // namespace

TEST_CASE("plugin overrides: values are typed like TOML scalars", "[config]") {
  CHECK(as<int64_t>("42") == 42);
  CHECK(as<int64_t>("-7") == -7);
  CHECK(as<int64_t>("+7") == 7);
  CHECK(as<int64_t>(" 3 ") == 3);
  CHECK(as<double>("0.8") == 0.8);
  CHECK(as<double>("-1.5e3") == -1500);
  CHECK(as<double>("+2.5") == 2.5);
  CHECK(as<double>(".5") == 0.5);
  CHECK(as<std::string>("nan") == "nan");  // a mode, not a NaN
  CHECK(as<std::string>("inf") == "inf");
  CHECK(as<std::string>("-") == "-");
  CHECK(as<std::string>("1e") == "1e");
  CHECK(as<bool>("true") == true);
  CHECK(as<bool>("false") == false);
  CHECK(as<std::string>("fast") == "fast");
  CHECK(as<std::string>("\"42\"") == "42");
  CHECK(as<std::string>("'true'") == "true");
  CHECK(as<std::string>("\"\"").empty());
  CHECK(as<std::string>("\"a,b\"") == "a,b");
  CHECK(as<std::string>("nano") == "nano");
  CHECK(as<std::string>("1_000") == "1_000");
  CHECK(as<std::vector<double>>("1,2.5,3") == std::vector<double>{1, 2.5, 3});
  CHECK(as<std::vector<double>>("[1, 2, 3]") == std::vector<double>{1, 2, 3});
  CHECK(as<std::vector<double>>("[7]") == std::vector<double>{7});
  CHECK(as<std::vector<double>>("[]").empty());
}

TEST_CASE("plugin overrides: bad values name where they were given", "[config]") {
  CHECK_THROWS_WITH(value(""), Catch::Contains("--x: no value"));
  CHECK_THROWS_WITH(value("1,x,3"), Catch::Contains("--x: list item 'x' is not a number"));
  CHECK_THROWS_WITH(value("[1,,2]"), Catch::Contains("list item '' is not a number"));
  CHECK_THROWS_WITH(value("99999999999999999999"), Catch::Contains("integer 99999999999999999999 is out of range"));
}

TEST_CASE("plugin overrides: KEY=VALUE pairs of plugins inspect --config", "[config]") {
  auto [key, v] = parse_key_value("fixture.step_us=2500", "--config");
  CHECK(key == "fixture.step_us");
  CHECK(std::get<int64_t>(v) == 2500);
  CHECK_THROWS_WITH(parse_key_value("step_us", "--config"),
                    Catch::Contains("--config: expected KEY=VALUE, got 'step_us'"));
  CHECK_THROWS_WITH(parse_key_value("=3", "--config"), Catch::Contains("expected KEY=VALUE"));
}

TEST_CASE("plugin overrides: entries split into plugin and key", "[config]") {
  PluginOverrides o = parse_plugin_overrides(
      {"acme-linear.efficiency=0.8", "fixture-good.fixture.mode=nan", "acme-linear.efficiency=0.9",
       "scripts/guard.lua.limits.max=10"});
  ConfigTable base;
  base.set("tp", int64_t{2});
  base.set("efficiency", std::string("overridden"));

  ConfigTable acme = o.config_for("acme-linear", base);
  CHECK(std::get<double>(*acme.find("efficiency")) == 0.9);  // the last one wins
  CHECK(std::get<int64_t>(*acme.find("tp")) == 2);            // the host's keys stay
  CHECK(std::get<std::string>(*o.config_for("fixture-good", base).find("fixture.mode")) == "nan");
  CHECK(std::get<int64_t>(*o.config_for("scripts/guard.lua", base).find("limits.max")) == 10);
  CHECK(o.config_for("roofline", base).values().size() == 2);  // untouched

  CHECK_NOTHROW(o.check_plugins({"acme-linear", "fixture-good", "scripts/guard.lua", "always-admit"}));
  CHECK_THROWS_WITH(o.check_plugins({"acme-linear", "fixture-good", "always-admit"}),
                    Catch::Contains("--plugin-config scripts/guard.lua.limits.max=10: "
                                    "'scripts/guard.lua' is not a plugin of this run; its plugins "
                                    "are acme-linear, fixture-good, always-admit"));
}

TEST_CASE("plugin overrides: syntax errors quote the entry", "[config]") {
  for (const char* bad : {"acme-linear", "acme-linear=3", ".efficiency=3", "acme-linear.=3"})
    CHECK_THAT(input_error({bad}), Catch::Contains(std::string("--plugin-config: expected NAME.KEY=VALUE "
                                                               "(NAME a plugin of the run), got '") +
                                                   bad + "'"));
  CHECK_THAT(input_error({"acme-linear.efficiency="}),
             Catch::Contains("--plugin-config acme-linear.efficiency=: no value"));
}

TEST_CASE("plugin overrides: none change nothing", "[config]") {
  PluginOverrides o = parse_plugin_overrides({});
  CHECK(o.empty());
  CHECK_NOTHROW(o.check_plugins({}));
  ConfigTable base;
  base.set("k", 1.0);
  CHECK(o.config_for("x", base).values().size() == 1);
}
