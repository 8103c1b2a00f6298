// Small text utilities shared by the whole core: one home each.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace blis::text {

// Without leading and trailing spaces, tabs, CR and LF.
std::string trim(std::string_view s);
// ASCII lower case.
std::string lower(std::string s);
// Pieces between separators; "" gives one empty piece.
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool ends_with(std::string_view s, std::string_view suffix);

}  // namespace blis::text
