// The scenario event language (blis::parse_scenario_event): the text of an
// `--event`, a TOML [[events]] table or a Lua event, read as a data event
// (at= or when= needed) and as scenario code's event (applied now when it has
// neither).
#include "fuzz_input.hpp"

#include <blis/scenario_events.hpp>

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  blis_fuzz::expect_only_blis_errors([&] { blis::parse_scenario_event(text, "--event"); });
  blis_fuzz::expect_only_blis_errors(
      [&] { blis::parse_scenario_event(text, "code.lua:1", /*default_at=*/1000000); });
  return 0;
}
