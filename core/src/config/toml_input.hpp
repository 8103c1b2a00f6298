// The one way blis hands text to toml++: every TOML file (policy configs,
// scenarios, model and hardware tables) goes through parse_toml, which
// screens the text for what toml++ 3.3 cannot take safely, then parses it;
// a syntax error is a ConfigError at "file:line:col".
#pragma once

#include <toml++/toml.h>

#include <string>
#include <string_view>

namespace blis::config {

// Parses `text`, read from `path` (named in errors).
toml::table parse_toml(std::string_view text, const std::string& path);

// Reads `path` (at most kMaxTextFileBytes; `what` names it in errors:
// "scenario file") and parses it.
toml::table parse_toml_file(const std::string& path, std::string_view what);

}  // namespace blis::config
