// The one table of settings of `blis run`. Each row says what a setting is
// called (scenario key and command-line flags), its type, where it lives in
// RunConfig, how it is checked and how it is explained. The command line
// (core/app), TOML and Lua scenarios, the policy file and --dump-config all go
// through this table, so a new setting is one row in settings.cpp.
#pragma once

#include <blis/errors.hpp>
#include <blis/run_config.hpp>
#include <blis/scenario.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace blis {

enum class SettingType { Integer, Number, Boolean, Text, NumberList, TextList };

using SettingValue =
    std::variant<int64_t, double, bool, std::string, std::vector<double>, std::vector<std::string>>;

// What a row is, beyond its type.
enum SettingTrait : unsigned {
  kInputPath = 1u << 0,    // names a file or folder the run reads: a relative path is
                           // looked up beside the scenario file that gives it
  kLibraryRef = 1u << 1,   // may name a plugin library (path/lib.so[:name]): like an input path
  kAccumulates = 1u << 2,  // repeatable; every writer's values add up
  kOutputPath = 1u << 3,   // a file the run writes (relative to the current directory)
  kDuration = 1u << 4,     // an integer of µs that also accepts units: 60s, 500ms, 2m, 1h, 250us
  kRecord = 1u << 5,       // a record of key=value pairs (util/compact_text.hpp's form): a
                           // scenario writes it as a table ([lifecycle], [[pools]]), the command
                           // line as 'key=value key="a value"'; --dump-config writes tables
};

struct SettingDef {
  std::string key;                 // scenario and row key: "num_instances"
  std::vector<std::string> flags;  // "--num-instances" first, then aliases
  SettingType type = SettingType::Text;
  std::string group;               // scenario section and --help group: "cluster"
  std::string help;
  unsigned traits = 0;
  // Writes a parsed, checked value; `origin` says where it was given.
  std::function<void(RunConfig&, const SettingValue&, const std::string& origin)> set;
  // The value in `config`, nullopt when not set.
  std::function<std::optional<SettingValue>(const RunConfig&)> get;
  // The message when a value is out of range ("must be >= 0, got -3").
  std::function<std::optional<std::string>(const SettingValue&)> check;
  // The values the setting accepts, for help and shell completion: a fixed
  // list (`choices`), or names from the bundled data (`values_from`: "gpus",
  // "models", or a plugin kind such as "admission-policy"; setting_values()
  // in blis/run.hpp reads them).
  std::vector<std::string> choices;
  std::string values_from;

  const std::string& flag() const { return flags.front(); }
  bool has(SettingTrait t) const { return (traits & t) != 0; }
};

// Every setting, in --help and --dump-config order.
const std::vector<SettingDef>& setting_table();

// The scenario groups, in order ("simulation", "model", ...).
const std::vector<std::string>& setting_groups();

// A row by key ("num_instances"), kebab name ("num-instances") or flag
// ("--num-instances", "--max-num-seqs"); nullptr if none.
const SettingDef* find_setting(std::string_view name);

// Parses one occurrence of a setting written as command-line text. Lists are
// comma-separated. InputError naming `where` for text of the wrong type or a
// value out of range.
SettingValue parse_setting(const SettingDef& def, const std::string& text, const std::string& where);

// Applies settings in order (a later value of the same setting replaces an
// earlier one; accumulating settings add up). Unknown names are InputErrors
// naming the setting's place.
void apply_settings(RunConfig& config, const Settings& settings);

// `config` written back as settings (every row with a value; lists item by
// item): apply_settings of them rebuilds the same configuration. Used to send
// a configuration to another process.
Settings settings_of(const RunConfig& config);

// A duration as settings write it ("60s", "500ms", "2m", "1h", "250us", bare
// µs) in whole µs; nullopt if the text is none.
std::optional<int64_t> duration_text_us(const std::string& text);

// The text of a value, as a command line or a row would show it.
std::string setting_text(const SettingValue& value);

// Names a place for messages: a flag ("--rate") as is, a file position
// ("run.toml:3:1") followed by the setting's kebab name.
std::string setting_where(const std::string& origin, const SettingDef& def);

// An error raised far from the configuration names the value by its flag
// ("--hardware: GPU ... not found"); when `config` got that setting from
// elsewhere (a scenario file, a profile set), the same error placed there
// ("run.toml:4:12: hardware: GPU ... not found"). nullopt when the flag is
// where the value came from, or names no setting.
std::optional<InputError> at_origin(const InputError& error, const RunConfig& config);

}  // namespace blis
