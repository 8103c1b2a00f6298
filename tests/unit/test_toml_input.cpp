// The TOML guard (config/toml_input.hpp): text toml++ 3.3 would read with
// undefined behaviour is refused with its position; valid text parses.
#include "catch.hpp"
#include "error_of.hpp"

#include "config/toml_input.hpp"

#include <string>

using blis::config::parse_toml;
using blis::test::error_of;

TEST_CASE("toml guard: non-whitespace code points where toml++ tests for whitespace", "[config]") {
  const auto error = [](const std::string& text) { return error_of([&] { (void)parse_toml(text, "f.toml"); }); };
  CHECK(error(" e=\xef\xbb\xaf") == "f.toml:1:4: unexpected character U+FEEF outside a string or comment; "
                                     "non-ASCII text belongs in a quoted string");
  CHECK(error("[t.\xc3\xa9]").find("f.toml:1:4: unexpected character U+00E9") == 0);
  CHECK(error("a = 1\nb = \xe3\x80\x81").find("f.toml:2:5: unexpected character U+3001") == 0);
  CHECK(error("e = \"\"\"a\\\n   \xc3\xa9\"\"\"") ==
        "f.toml:2:4: character U+00E9 right after a line-ending backslash, which the TOML reader cannot take; "
        "escape it (\\u00E9)");
}

TEST_CASE("toml guard: non-ASCII text in strings and comments parses", "[config]") {
  const toml::table t = parse_toml("# caf\xc3\xa9 \xef\xbb\xaf\n"
                                   "a = \"\xc3\xa9\\\"\xc3\xa9\"\n"
                                   "b = '\xc3\xa9'\n"
                                   "c = \"\"\"\xc3\xa9\"\"\xc3\xa9\"\"\"\n"
                                   "d = '''\xc3\xa9''\xc3\xa9'''\n"
                                   "e = \"\"\"x\\\n  y\xc3\xa9\"\"\"\n"
                                   "\"\xc3\xa9\" = 1 # \xc3\xa9\n",
                                   "f.toml");
  CHECK(t["a"].value_or(std::string()) == "\xc3\xa9\"\xc3\xa9");
  CHECK(t["c"].value_or(std::string()) == "\xc3\xa9\"\"\xc3\xa9");
  CHECK(t["d"].value_or(std::string()) == "\xc3\xa9''\xc3\xa9");
  CHECK(t["e"].value_or(std::string()) == "xy\xc3\xa9");
  CHECK(t["\xc3\xa9"].value_or(0) == 1);
  // Ordinary syntax errors keep toml++'s message and position.
  CHECK(error_of([] { (void)parse_toml("a = ", "f.toml"); }).find("f.toml:1:") == 0);
}
