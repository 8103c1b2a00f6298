// Small text utilities shared by the whole core: one home each.
#pragma once

#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace blis::text {

// Without leading and trailing ASCII white space (as Go's strings.TrimSpace).
std::string trim(std::string_view s);
// ASCII lower case.
std::string lower(std::string s);
// Pieces between separators; "" gives one empty piece.
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// Appends `item` to `out`, after `sep` unless `out` is empty: a list built
// piece by piece, without the temporaries of `(out.empty() ? "" : sep) + item`.
void append(std::string& out, std::string_view sep, std::string_view item);
bool ends_with(std::string_view s, std::string_view suffix);
// The candidate closest to `word` by edit distance (case-insensitive), when
// close enough to be a likely typo; for "did you mean ...?" messages.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);
// "; did you mean X?" for the closest candidate, or "".
// A time of the run in seconds for people: "10 s", "34.902335 s" (µs
// precision, no trailing zeros).
std::string seconds_text(int64_t us);

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace blis::text
