#include "util/compact_text.hpp"

#include <blis/errors.hpp>

namespace blis::compact {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// One piece being read: its raw text, its text without quotes, and which of
// those characters came from inside quotes (they never separate or trim).
struct Piece {
  std::string raw;
  std::string text;
  std::vector<bool> quoted;

  void add(char c, bool in_quotes) {
    text.push_back(c);
    quoted.push_back(in_quotes);
  }
  bool empty() const { return raw.empty(); }
  // The first unquoted `c`, or npos.
  size_t find(char c) const {
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == c && !quoted[i]) return i;
    return std::string::npos;
  }
  // text[from, to) without unquoted white space at either end.
  std::string slice(size_t from, size_t to, bool trim) const {
    if (trim) {
      while (from < to && blank(text[from]) && !quoted[from]) ++from;
      while (to > from && blank(text[to - 1]) && !quoted[to - 1]) --to;
    }
    return text.substr(from, to - from);
  }
};

// Reads a quoted span starting at text[i] (a quote); returns the index after
// its closing quote.
size_t read_quoted(std::string_view text, size_t i, Piece& p) {
  const char q = text[i];
  const size_t open = i;
  p.raw.push_back(q);
  for (++i; i < text.size(); ++i) {
    const char c = text[i];
    p.raw.push_back(c);
    if (c == q) return i + 1;
    if (q == '"' && c == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) {
      p.raw.push_back(text[++i]);
      p.add(text[i], true);
      continue;
    }
    p.add(c, true);
  }
  const char* how = q == '"' ? "; close it, or write \\\" for a quote inside double quotes"
                             : "; close it, or put the ' inside double quotes";
  throw SyntaxError("unterminated " + std::string(q == '"' ? "double" : "single") + " quote in '" +
                    std::string(text.substr(open)) + "'" + how);
}

std::vector<Piece> pieces(std::string_view text, char sep) {
  std::vector<Piece> out;
  Piece cur;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      i = read_quoted(text, i, cur);
      continue;
    }
    if (c == sep) {
      if (sep != ' ' || !cur.empty()) out.push_back(std::move(cur));
      cur = Piece{};
      ++i;
      continue;
    }
    cur.raw.push_back(c);
    cur.add(c, false);
    ++i;
  }
  // With ',', every comma ends a piece, so "a," has an empty last one.
  if (sep != ' ' || !cur.empty()) out.push_back(std::move(cur));
  return out;
}

bool needs_quotes(std::string_view s, char sep, char kv) {
  if (!s.empty() && (blank(s.front()) || blank(s.back()))) return true;
  for (char c : s)
    if (c == sep || c == '"' || c == '\'' || c == kv) return true;
  return false;
}

std::string double_quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace

std::vector<std::string> items(std::string_view text, char sep) {
  std::vector<std::string> out;
  for (Piece& p : pieces(text, sep)) out.push_back(std::move(p.text));
  return out;
}

std::vector<Pair> pairs(std::string_view text, Syntax syntax, bool trim) {
  std::vector<Pair> out;
  for (const Piece& p : pieces(text, syntax.sep)) {
    const size_t kv = p.find(syntax.kv);
    Pair pair;
    if (kv != std::string::npos) pair.key = p.slice(0, kv, trim);
    if (kv == std::string::npos || pair.key.empty())
      throw SyntaxError("'" + p.raw + "' is not key" + std::string(1, syntax.kv) + "value");
    pair.value = p.slice(kv + 1, p.text.size(), trim);
    pair.piece = p.raw;
    out.push_back(std::move(pair));
  }
  return out;
}

std::vector<std::string> items(std::string_view text, char sep, const std::string& where) {
  try {
    return items(text, sep);
  } catch (const SyntaxError& e) {
    throw InputError(where, e.what());
  }
}

std::vector<Pair> pairs(std::string_view text, Syntax syntax, const std::string& where, const std::string& prefix,
                        bool trim) {
  try {
    return pairs(text, syntax, trim);
  } catch (const SyntaxError& e) {
    throw InputError(where, prefix + e.what());
  }
}

std::string quote(std::string_view value, Syntax syntax) {
  // A value's kv characters never split it (only a key's first one does).
  if (!needs_quotes(value, syntax.sep, '\0')) return std::string(value);
  return double_quoted(value);
}

std::string write(const std::vector<std::pair<std::string, std::string>>& kv, Syntax syntax) {
  std::string out;
  for (const auto& [k, v] : kv) {
    if (!out.empty()) out.push_back(syntax.sep);
    out += needs_quotes(k, syntax.sep, syntax.kv) ? double_quoted(k) : k;
    out.push_back(syntax.kv);
    out += quote(v, syntax);
  }
  return out;
}

}  // namespace blis::compact
