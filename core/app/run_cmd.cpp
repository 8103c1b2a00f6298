// `blis run`: its flags come from the table of settings (blis/settings.hpp);
// the parse is handed to the core as Settings.
#include "app/commands.hpp"

#include <blis/run_config.hpp>
#include <blis/settings.hpp>

#include <algorithm>

namespace blis::app {
namespace {

std::string group_title(const std::string& group) {
  if (group == "kv-cache") return "KV cache";
  std::string t = group;
  t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
  return t;
}

std::string help_text(const SettingDef& def) {
  const RunConfig defaults;
  if (def.has(kDuration)) {
    std::string h = def.help + " (a bare number is µs; units: 250us, 500ms, 60s, 2m, 1h)";
    if (auto v = def.get(defaults)) h += " [default: " + setting_text(*v) + "]";
    return h;
  }
  if (auto v = def.get(defaults); v && def.type != SettingType::TextList)
    return def.help + " [default: " + setting_text(*v) + "]";
  return def.help;
}

}  // namespace

std::map<std::string, CLI::Option*> add_run_flags(CLI::App& run, const std::vector<std::string>& skip) {
  std::map<std::string, CLI::Option*> options;
  for (const SettingDef& def : setting_table()) {
    if (std::find(skip.begin(), skip.end(), def.key) != skip.end()) continue;
    std::string names;
    for (const auto& f : def.flags) {
      if (!names.empty()) names += ',';
      names += f;
    }
    CLI::Option* opt = def.type == SettingType::Boolean ? run.add_flag(names) : run.add_option(names);
    opt->description(help_text(def));
    if (def.type != SettingType::Boolean) {
      opt->expected(1);
      // A repeated flag keeps its last value, as the reference does; lists add up.
      opt->multi_option_policy(def.has(kAccumulates) ? CLI::MultiOptionPolicy::TakeAll
                                                     : CLI::MultiOptionPolicy::TakeLast);
    }
    opt->group(group_title(def.group));
    options[def.key] = opt;
  }
  return options;
}

std::vector<std::pair<std::string, std::vector<std::string>>> given_run_flags(
    const std::map<std::string, CLI::Option*>& options) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const SettingDef& def : setting_table()) {
    auto it = options.find(def.key);
    if (it == options.end()) continue;
    const CLI::Option* opt = it->second;
    if (opt->count() == 0) continue;
    if (def.type == SettingType::Boolean) out.push_back({def.key, {opt->as<bool>() ? "true" : "false"}});
    else out.push_back({def.key, opt->reduced_results()});
  }
  return out;
}

}  // namespace blis::app
