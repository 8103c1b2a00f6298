// A small strict JSON reader for tests that check what blis prints: objects,
// arrays, strings, numbers, true/false/null. It refuses what JSON refuses,
// NaN and Infinity included, so a test that parses an output also checks that
// every number in it is finite.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace blis::test {

struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> fields;  // in document order

  // Declared here, defined once Json is complete (below): clang would
  // otherwise instantiate the destructor of `fields` while Json is not.
  Json();
  Json(const Json&);
  Json(Json&&) noexcept;
  Json& operator=(const Json&);
  Json& operator=(Json&&) noexcept;
  ~Json();

  bool has(const std::string& key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return true;
    return false;
  }
  const Json& operator[](const std::string& key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return v;
    throw std::runtime_error("json: no key '" + key + "'");
  }
  double num(const std::string& key) const {
    const Json& v = (*this)[key];
    if (v.kind != Kind::Number) throw std::runtime_error("json: '" + key + "' is not a number");
    return v.number;
  }
  // Every number in the document, with the path that leads to it.
  void numbers(const std::string& path, std::vector<std::pair<std::string, double>>& out) const {
    if (kind == Kind::Number) out.emplace_back(path, number);
    for (size_t i = 0; i < items.size(); ++i) items[i].numbers(path + "[" + std::to_string(i) + "]", out);
    for (const auto& [k, v] : fields) v.numbers(path + "." + k, out);
  }

  static Json parse(const std::string& s) {
    size_t at = 0;
    Json v = value(s, at);
    skip(s, at);
    if (at != s.size()) fail(s, at, "text after the document");
    return v;
  }

 private:
  [[noreturn]] static void fail(const std::string& s, size_t at, const std::string& what) {
    throw std::runtime_error("json: " + what + " at offset " + std::to_string(at) + ": '" +
                             s.substr(at, 40) + "'");
  }
  static void skip(const std::string& s, size_t& at) {
    while (at < s.size() && (s[at] == ' ' || s[at] == '\n' || s[at] == '\r' || s[at] == '\t')) ++at;
  }
  static bool word(const std::string& s, size_t& at, const char* w) {
    const std::string ws(w);
    if (s.compare(at, ws.size(), ws) != 0) return false;
    at += ws.size();
    return true;
  }
  static std::string string(const std::string& s, size_t& at) {
    if (s[at] != '"') fail(s, at, "expected a string");
    ++at;
    std::string out;
    while (at < s.size() && s[at] != '"') {
      if (s[at] == '\\') {
        ++at;
        if (at >= s.size()) fail(s, at, "bad escape");
        const char c = s[at];
        if (c == 'u') {
          if (at + 4 >= s.size()) fail(s, at, "bad \\u escape");
          out += '?';  // tests compare ASCII keys and values only
          at += 4;
        } else {
          out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == 'b' ? '\b' : c == 'f' ? '\f' : c;
        }
        ++at;
      } else {
        out += s[at++];
      }
    }
    if (at >= s.size()) fail(s, at, "unterminated string");
    ++at;
    return out;
  }
  static Json value(const std::string& s, size_t& at) {
    skip(s, at);
    if (at >= s.size()) fail(s, at, "unexpected end");
    Json v;
    const char c = s[at];
    if (c == '{') {
      v.kind = Kind::Object;
      ++at;
      skip(s, at);
      if (at < s.size() && s[at] == '}') return ++at, v;
      for (;;) {
        skip(s, at);
        std::string key = string(s, at);
        skip(s, at);
        if (at >= s.size() || s[at] != ':') fail(s, at, "expected ':'");
        ++at;
        v.fields.emplace_back(std::move(key), value(s, at));
        skip(s, at);
        if (at < s.size() && s[at] == ',') { ++at; continue; }
        if (at < s.size() && s[at] == '}') return ++at, v;
        fail(s, at, "expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind = Kind::Array;
      ++at;
      skip(s, at);
      if (at < s.size() && s[at] == ']') return ++at, v;
      for (;;) {
        v.items.push_back(value(s, at));
        skip(s, at);
        if (at < s.size() && s[at] == ',') { ++at; continue; }
        if (at < s.size() && s[at] == ']') return ++at, v;
        fail(s, at, "expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind = Kind::String;
      v.text = string(s, at);
      return v;
    }
    if (word(s, at, "true")) { v.kind = Kind::Bool; v.boolean = true; return v; }
    if (word(s, at, "false")) { v.kind = Kind::Bool; return v; }
    if (word(s, at, "null")) return v;
    // A number, as JSON writes it (no NaN, no Infinity, no leading '+').
    const size_t start = at;
    if (s[at] == '-') ++at;
    if (at >= s.size() || s[at] < '0' || s[at] > '9') fail(s, start, "not a JSON value");
    while (at < s.size() && ((s[at] >= '0' && s[at] <= '9') || s[at] == '.' || s[at] == 'e' || s[at] == 'E' ||
                             s[at] == '+' || s[at] == '-'))
      ++at;
    v.kind = Kind::Number;
    v.number = std::strtod(s.substr(start, at - start).c_str(), nullptr);
    if (!std::isfinite(v.number)) fail(s, start, "a number out of range");
    return v;
  }
};

inline Json::Json() = default;
inline Json::Json(const Json&) = default;
inline Json::Json(Json&&) noexcept = default;
inline Json& Json::operator=(const Json&) = default;
inline Json& Json::operator=(Json&&) noexcept = default;
inline Json::~Json() = default;

}  // namespace blis::test
