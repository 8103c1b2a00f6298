// Strict reading of the reference's YAML files (policy configs, workload
// specs) with yaml-cpp, the way the reference's decoder treats them: unknown
// and repeated keys are errors, any scalar reads as a string, numbers are
// plain numerals (decimal, 0x/0o/0b, exponent form, .inf/.nan), a float is
// truncated where an integer is expected, and merge keys (`<<: *anchor`)
// apply. Every error is a ConfigError placed at the offending node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace blis::config {

using KeyList = std::span<const std::string_view>;

// `"text"`, for messages.
std::string in_quotes(std::string_view s);
// "a.b" (or "b" at the top level).
std::string child_path(std::string_view prefix, std::string_view key);
// `unknown key "a.b" (expected one of: x, y)`.
std::string unknown_key(const std::string& key_path, KeyList allowed);
bool is_allowed(std::string_view key, KeyList allowed);

// Configuration and scripts are small: a larger file is refused rather than
// read until memory runs out (--workload-spec /dev/zero).
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{64} << 20;

// The whole file, at most kMaxTextFileBytes; failures are ConfigError
// "cannot read <what>: <reason>" or "the <what> is larger than ...".
std::string read_text_file(const std::string& path, std::string_view what);

class StrictYaml {
 public:
  enum class Position { kLine, kLineColumn };

  StrictYaml(std::string path, Position position) : path_(std::move(path)), position_(position) {}

  // The first document of `text` (later documents are not read), nothing
  // when the text holds no document at all (empty, or only comments); a
  // syntax error is a ConfigError.
  std::optional<YAML::Node> first_document(const std::string& text) const;

  // "file:line" or "file:line:col" of a node; the bare path when unknown.
  std::string where(const YAML::Mark& mark) const;
  const std::string& path() const { return path_; }

  // The entries of a mapping in file order, merged entries (`<<`) after the
  // mapping's own, which win. Non-scalar keys, repeated keys and keys not in
  // `allowed` are errors; an empty `allowed` admits any key. Entries whose
  // value is null are kept: the caller decides what null means.
  std::vector<std::pair<std::string, YAML::Node>> entries(const YAML::Node& map,
                                                          std::string_view prefix,
                                                          KeyList allowed) const;

  // Scalar conversions; `key_path` names the field in messages.
  const YAML::Node& mapping(const YAML::Node& v, const std::string& key_path) const;
  const YAML::Node& sequence(const YAML::Node& v, const std::string& key_path) const;
  std::string string(const YAML::Node& v, const std::string& key_path) const;
  double number(const YAML::Node& v, const std::string& key_path) const;
  int64_t integer(const YAML::Node& v, const std::string& key_path) const;
  bool boolean(const YAML::Node& v, const std::string& key_path) const;

 private:
  // The mappings being merged into (outermost first) and how many merge
  // sources one entries() call has visited.
  struct MergeWalk {
    std::vector<YAML::Node> chain;
    int visited = 0;
  };
  using Entries = std::vector<std::pair<std::string, YAML::Node>>;
  void collect(const YAML::Node& map, std::string_view prefix, KeyList allowed, MergeWalk& walk,
               Entries& out) const;
  // collect()'s steps: a mapping's own keys (checked) and its merge keys'
  // values; the mappings one merge key names; the checks on each before it
  // is merged (no cycle, depth and count bounded).
  void own_entries(const YAML::Node& map, std::string_view prefix, KeyList allowed, Entries& own,
                   std::vector<YAML::Node>& merges) const;
  std::vector<YAML::Node> merge_sources(const YAML::Node& m) const;
  void check_merge_source(const YAML::Node& map, const YAML::Node& m, const YAML::Node& s, std::string_view prefix,
                          MergeWalk& walk) const;

  std::string path_;
  Position position_;
};

}  // namespace blis::config
