// Budget checks written into a script's text before it is compiled. LuaJIT
// runs count hooks only in its interpreter: a loop compiled to machine code
// (`while true do end` after a few dozen iterations) never calls them. So each
// loop body, function body and goto spends one instruction of the budget
// from inside the script, where the JIT compiles the check along with the
// loop. The checks go on the lines they guard (no line numbers move), so an
// exceeded budget is reported at the loop or function that ran away.
#include "lua/lua_host.hpp"

#include <cctype>

namespace blis::lua {
namespace {

// Bound once on line 1: the budget (Budget::left, an int32_t) and the C
// function raising the error, handed over through the sandbox globals and
// removed from them before the script's own code runs.
constexpr std::string_view kPrelude =
    "local __blis_b, __blis_o = __blis_b, __blis_o; _G.__blis_b, _G.__blis_o = nil, nil; ";
constexpr std::string_view kCheck = " __blis_b[0] = __blis_b[0] - 1 if __blis_b[0] < 0 then __blis_o() end ";

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Length of a long bracket opening ("[[", "[==[") at i, 0 if none; `level`
// receives the number of '='.
size_t long_open(std::string_view s, size_t i, size_t& level) {
  if (i >= s.size() || s[i] != '[') return 0;
  size_t j = i + 1;
  while (j < s.size() && s[j] == '=') ++j;
  if (j < s.size() && s[j] == '[') {
    level = j - i - 1;
    return j - i + 1;
  }
  return 0;
}

// Index just past the long bracket closing at `level` from i (the end of
// the text when unclosed: Lua reports that).
size_t long_close(std::string_view s, size_t i, size_t level) {
  for (; i < s.size(); ++i) {
    if (s[i] != ']') continue;
    size_t j = i + 1;
    while (j < s.size() && s[j] == '=') ++j;
    if (j < s.size() && s[j] == ']' && j - i - 1 == level) return j + 1;
  }
  return s.size();
}

}  // namespace

std::string instrument(std::string_view s) {
  std::string out(kPrelude);
  out.reserve(s.size() + s.size() / 4 + kPrelude.size());
  bool in_function_header = false;  // between `function` and its parameter list's ')'
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    size_t level = 0;
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      size_t end = 0;
      if (const size_t open = long_open(s, i + 2, level)) {
        end = long_close(s, i + 2 + open, level);
      } else {
        end = s.find('\n', i);
        if (end == std::string_view::npos) end = s.size();
      }
      out.append(s.substr(i, end - i));
      i = end;
    } else if (const size_t open = long_open(s, i, level)) {
      const size_t end = long_close(s, i + open, level);
      out.append(s.substr(i, end - i));
      i = end;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, s.size());
      out.append(s.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i + 1;
      while (j < s.size() && (ident_char(s[j]) || s[j] == '.' ||
                              ((s[j] == '+' || s[j] == '-') && (std::tolower(s[j - 1]) == 'e' ||
                                                                 std::tolower(s[j - 1]) == 'p'))))
        ++j;
      out.append(s.substr(i, j - i));
      i = j;
    } else if (ident_start(c)) {
      size_t j = i + 1;
      while (j < s.size() && ident_char(s[j])) ++j;
      const std::string_view word = s.substr(i, j - i);
      if (word == "goto") out.append(kCheck);
      out.append(word);
      if (word == "do" || word == "repeat") out.append(kCheck);
      if (word == "function") in_function_header = true;
      i = j;
    } else {
      out.push_back(c);
      if (c == ')' && in_function_header) {
        out.append(kCheck);
        in_function_header = false;
      }
      ++i;
    }
  }
  return out;
}

}  // namespace blis::lua
