// The command-line parser of `blis`: the input is argv, one word per line
// ("blis" is prepended). The words go through the same CLI11 application main()
// builds (every subcommand and flag); a parse error is explained as main()
// explains it. When `blis run` parses, its flags are then applied to a
// RunConfig as blis::run resolves them. Nothing is simulated.
#include "fuzz_input.hpp"

#include "app/commands.hpp"

#include <blis/run_config.hpp>
#include <blis/scenario.hpp>
#include <blis/settings.hpp>

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

// The options of the parsed `blis run`, by setting key, as Commands keeps
// them; their values are applied in table order as Commands::execute hands
// them to the core.
void apply_run_flags(CLI::App& run) {
  std::map<std::string, CLI::Option*> options;
  for (const blis::SettingDef& def : blis::setting_table())
    if (CLI::Option* opt = run.get_option_no_throw(def.flag())) options[def.key] = opt;
  blis::Settings settings;
  for (const auto& [key, values] : blis::app::given_run_flags(options)) {
    const std::string flag = blis::find_setting(key)->flag();
    for (const auto& v : values) settings.push_back(blis::Setting{key, v, flag, {}});
  }
  blis_fuzz::expect_only_blis_errors([&] {
    blis::RunConfig config;
    blis::apply_settings(config, settings);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // a command line, not a file
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words{"blis"};
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    // A NUL cannot be in an argv word: cut the word there, as the kernel would.
    words.emplace_back(std::string(text.substr(start, end - start)).c_str());
    start = end + 1;
  }
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(words.size());

  // Built once, as main() builds it (building takes longer than a parse);
  // parse() clears what the previous input left.
  static CLI::App app{"blis"};
  static blis::app::Commands* commands = [] {
    app.name("blis");
    app.set_version_flag("--version", "blis fuzz");
    app.require_subcommand(0, 1);
    return new blis::app::Commands(app);
  }();
  (void)commands;
  CLI::App* run_parsed = nullptr;
  try {
    app.parse(argc, argv.data());
    for (CLI::App* sub : app.get_subcommands())
      if (sub->get_name() == "run") run_parsed = sub;
  } catch (const CLI::CallForHelp&) {
  } catch (const CLI::CallForAllHelp&) {
  } catch (const CLI::CallForVersion&) {
  } catch (const CLI::ParseError& e) {
    // main() prints this line; it must not throw or read past argv.
    const std::string line = blis::app::explain_parse_error(app, e, argc, argv.data());
    if (line.empty()) std::abort();
  }
  // Anything else escaping app.parse would terminate the real binary: it is
  // left to escape here too, where libFuzzer reports it.
  if (run_parsed != nullptr) apply_run_flags(*run_parsed);
  return 0;
}
