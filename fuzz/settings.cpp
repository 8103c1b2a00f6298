// The settings table (blis/settings.hpp): every line of the input is one
// setting, "name=value" (a key, kebab name or flag, then command-line text),
// applied in order to a fresh RunConfig as a scenario's settings are. A line
// "#<row>=text" instead parses `text` as the value of table row <row> (modulo
// the table's size), reaching rows no name in the input spells right.
#include "fuzz_input.hpp"

#include <blis/run_config.hpp>
#include <blis/scenario.hpp>
#include <blis/settings.hpp>

#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto& table = blis::setting_table();
  blis::Settings settings;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(line.substr(0, eq));
    std::string value(line.substr(eq + 1));
    if (!name.empty() && name[0] == '#') {
      size_t row = 0;
      for (char c : name.substr(1)) row = row * 10 + static_cast<unsigned char>(c) % 10;
      const blis::SettingDef& def = table[row % table.size()];
      blis_fuzz::expect_only_blis_errors([&] { blis::parse_setting(def, value, def.flag()); });
      continue;
    }
    settings.push_back(blis::Setting{std::move(name), std::move(value), "fuzz:1:1", {}});
  }
  blis_fuzz::expect_only_blis_errors([&] {
    blis::RunConfig config;
    blis::apply_settings(config, settings);
  });
  return 0;
}
