// Budget checks written into a script's text before it is compiled. LuaJIT
// runs count hooks only in its interpreter: a loop compiled to machine code
// (`while true do end` after a few dozen iterations) never calls them. So each
// loop body, function body and goto spends one instruction of the budget
// from inside the script, where the JIT compiles the check along with the
// loop. The checks go on the lines they guard (no line numbers move), so an
// exceeded budget is reported at the loop or function that ran away.
#include "lua/lua_host.hpp"

#include <algorithm>
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

// Index just past the comment starting at i ("--"): a long comment, or the
// rest of the line (the newline not included).
size_t comment_end(std::string_view s, size_t i) {
  size_t level = 0;
  if (const size_t open = long_open(s, i + 2, level)) return long_close(s, i + 2 + open, level);
  const size_t end = s.find('\n', i);
  return end == std::string_view::npos ? s.size() : end;
}

// Index just past the quoted string starting at i (an unclosed one ends
// after its line's newline: Lua reports it).
size_t quoted_end(std::string_view s, size_t i) {
  const char q = s[i];
  size_t j = i + 1;
  while (j < s.size() && s[j] != q && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
  return std::min(j + 1, s.size());
}

bool number_start(std::string_view s, size_t i) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  return digit(s[i]) || (s[i] == '.' && i + 1 < s.size() && digit(s[i + 1]));
}

// Index just past the number starting at i: digits, letters, '.', and a
// sign after an exponent's 'e' or 'p'.
size_t number_end(std::string_view s, size_t i) {
  const auto exponent_sign = [&](size_t j) {
    return (s[j] == '+' || s[j] == '-') && (std::tolower(s[j - 1]) == 'e' || std::tolower(s[j - 1]) == 'p');
  };
  size_t j = i + 1;
  while (j < s.size() && (ident_char(s[j]) || s[j] == '.' || exponent_sign(j))) ++j;
  return j;
}

size_t word_end(std::string_view s, size_t i) {
  size_t j = i + 1;
  while (j < s.size() && ident_char(s[j])) ++j;
  return j;
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
    size_t end = 0;  // past a comment, string or number, copied as it is
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      end = comment_end(s, i);
    } else if (const size_t open = long_open(s, i, level)) {
      end = long_close(s, i + open, level);
    } else if (c == '"' || c == '\'') {
      end = quoted_end(s, i);
    } else if (number_start(s, i)) {
      end = number_end(s, i);
    } else if (ident_start(c)) {
      const size_t j = word_end(s, i);
      const std::string_view word = s.substr(i, j - i);
      if (word == "goto") out.append(kCheck);
      out.append(word);
      if (word == "do" || word == "repeat") out.append(kCheck);
      if (word == "function") in_function_header = true;
      i = j;
      continue;
    } else {
      out.push_back(c);
      if (c == ')' && in_function_header) {
        out.append(kCheck);
        in_function_header = false;
      }
      ++i;
      continue;
    }
    out.append(s.substr(i, end - i));
    i = end;
  }
  return out;
}

}  // namespace blis::lua
