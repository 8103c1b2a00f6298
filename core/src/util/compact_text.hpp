// The compact text forms of sub-configurations, read by one tokenizer:
//   "name=a100 count=4 tp=2"          space-separated key=value pairs (pools, node
//                                      pools, events, lifecycle, autoscaler)
//   "critical=100ms,default=500ms"    comma-separated key=value pairs (SLO targets)
//   "p99_ttft:3,throughput:1"         comma-separated key:value pairs (fitness
//                                      weights, scorer weights)
// A value (or a key) may hold the separators when quoted: name="big pool",
// spec='my mix.yaml', "a,b". Inside double quotes \" and \\ stand for " and \;
// single quotes take everything up to the next ' literally. Quoted spans and
// bare text may follow one another (a"b c"d reads as ab cd), as in a shell.
//
// quote() is the inverse: the writers of these forms (a TOML or Lua table
// written as the text, --dump-config) quote a value only when it needs it, so
// that every value reads back unchanged, and every value that needed no
// quotes is written as it always was.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace blis::compact {

// A malformed text: what() says what is wrong with which piece; the caller
// adds where the text came from.
struct SyntaxError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Syntax {
  char sep;  // between pairs: ' ' or ','
  char kv;   // between a key and its value: '=' or ':'
};
inline constexpr Syntax kSpaced{' ', '='};
inline constexpr Syntax kCommaEquals{',', '='};
inline constexpr Syntax kCommaColon{',', ':'};

struct Pair {
  std::string key;
  std::string value;
  std::string piece;  // the pair as written, quotes and all, for messages
};

// The pieces of `text` between unquoted separators, unquoted. With sep ' ',
// runs of spaces separate once and no piece is empty; with ',', every comma
// ends a piece (an empty piece is kept, for the caller to refuse).
// SyntaxError for an unterminated quote.
std::vector<std::string> items(std::string_view text, char sep);

// The pairs of `text`, in order. A piece without an unquoted kv character, or
// with an empty key, is a SyntaxError ("'x' is not key=value"). With `trim`,
// keys and values lose their surrounding ASCII white space (the comma forms
// allow "a: 1, b: 2"). Keys may repeat: the caller decides.
std::vector<Pair> pairs(std::string_view text, Syntax syntax, bool trim = false);

// items() and pairs() for a text given at `where`: a SyntaxError becomes
// InputError(where, prefix + what), so a message names the origin.
std::vector<std::string> items(std::string_view text, char sep, const std::string& where);
std::vector<Pair> pairs(std::string_view text, Syntax syntax, const std::string& where,
                        const std::string& prefix = "", bool trim = false);

// `value` written so that pairs() (or items()) reads it back unchanged: as is
// when it holds no separator or quote and no white space at either end; else
// in double quotes, with each " and backslash escaped by a backslash.
std::string quote(std::string_view value, Syntax syntax);

// key=value pairs written in `syntax`, values quoted as needed.
std::string write(const std::vector<std::pair<std::string, std::string>>& pairs, Syntax syntax);

}  // namespace blis::compact
