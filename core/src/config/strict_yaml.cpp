#include "config/strict_yaml.hpp"

#include <blis/errors.hpp>

#include <algorithm>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <sys/stat.h>

namespace blis::config {

namespace {

// Merge keys (`<<: *anchor`) may nest through anchors; these bound the work
// one mapping's entries can cost, so that a small file cannot take
// exponential time (each level merging the previous one twice).
constexpr int kMaxMergeDepth = 32;
constexpr int kMaxMergedMappings = 1000;

// Counts the documents the parser starts; nothing else is kept.
class DocumentCounter final : public YAML::EventHandler {
 public:
  bool started = false;
  void OnDocumentStart(const YAML::Mark&) override { started = true; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// yaml-cpp reads a document made of a stray flow indicator (`,`, `]`, `}`)
// as null, where the reference's decoder fails. The first character of the
// first document's content and its line (1-based), if it is one of those.
std::optional<std::pair<char, int>> stray_flow_indicator(std::string_view text) {
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const size_t eol = std::min(text.find('\n', i), text.size());
    std::string_view l = text.substr(i, eol - i);
    const bool directive = !l.empty() && l[0] == '%';
    if (l.substr(0, 3) == "---") l.remove_prefix(3);
    const size_t first = l.find_first_not_of(" \t\r");
    if (!directive && first != std::string_view::npos && l[first] != '#') {
      const char c = l[first];
      if (c == ',' || c == ']' || c == '}') return std::make_pair(c, line);
      return std::nullopt;
    }
    i = eol + 1;
    ++line;
  }
  return std::nullopt;
}

std::string join(KeyList names) {
  std::string out;
  for (auto n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// A plain scalar as the reference's decoder resolves it: an integer (signed,
// or unsigned beyond int64), a float, or not a number at all.
struct Numeral {
  enum class Kind { kInt, kUint, kFloat } kind;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
};

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Magnitude of an unsigned integer literal in Go's base-0 syntax: 0x, 0o,
// 0b prefixes, and a leading 0 meaning octal.
std::optional<uint64_t> magnitude(std::string_view s) {
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = s[1];
    if (p == 'x' || p == 'X') base = 16, s.remove_prefix(2);
    else if (p == 'o' || p == 'O') base = 8, s.remove_prefix(2);
    else if (p == 'b' || p == 'B') base = 2, s.remove_prefix(2);
    else base = 8, s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    const int d = digit_value(c);
    if (d >= base) return std::nullopt;
    if (v > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base))
      return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return v;
}

// YAML's float form: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_float_form(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

std::optional<Numeral> resolve_numeral(const std::string& text) {
  for (const char* s : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})
    if (text == s) return Numeral{Numeral::Kind::kFloat, 0, 0, HUGE_VAL};
  for (const char* s : {"-.inf", "-.Inf", "-.INF"})
    if (text == s) return Numeral{Numeral::Kind::kFloat, 0, 0, -HUGE_VAL};
  for (const char* s : {".nan", ".NaN", ".NAN"})
    if (text == s) return Numeral{Numeral::Kind::kFloat, 0, 0, std::nan("")};
  std::string plain = text;
  plain.erase(std::remove(plain.begin(), plain.end(), '_'), plain.end());
  std::string_view body = plain;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (const auto m = magnitude(body)) {
    constexpr uint64_t kMaxInt = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (!negative && *m <= kMaxInt) return Numeral{Numeral::Kind::kInt, static_cast<int64_t>(*m), 0, 0};
    if (negative && *m <= kMaxInt + 1)
      return Numeral{Numeral::Kind::kInt, static_cast<int64_t>(0 - *m), 0, 0};
    if (!negative && plain[0] != '+') return Numeral{Numeral::Kind::kUint, 0, *m, 0};
  }
  if (is_float_form(plain)) {
    errno = 0;
    const double v = std::strtod(plain.c_str(), nullptr);
    if (!(errno == ERANGE && std::isinf(v))) return Numeral{Numeral::Kind::kFloat, 0, 0, v};
  }
  return std::nullopt;
}

// Plain scalars and explicit !!int / !!float tags can be numbers; quoted
// text cannot.
std::optional<Numeral> numeral_of(const YAML::Node& v) {
  if (!v.IsScalar()) return std::nullopt;
  const std::string& tag = v.Tag();
  if (tag != "?" && tag != "tag:yaml.org,2002:float" && tag != "tag:yaml.org,2002:int") return std::nullopt;
  return resolve_numeral(v.Scalar());
}

}  // namespace

std::string in_quotes(std::string_view s) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "\"" + ...
  std::string out(1, '"');
  out += s;
  out += '"';
  return out;
}

std::string child_path(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : std::string(prefix) + "." + std::string(key);
}

std::string unknown_key(const std::string& key_path, KeyList allowed) {
  return "unknown key " + in_quotes(key_path) + " (expected one of: " + join(allowed) + ")";
}

bool is_allowed(std::string_view key, KeyList allowed) {
  return std::find(allowed.begin(), allowed.end(), key) != allowed.end();
}

std::string read_text_file(const std::string& path, std::string_view what) {
  auto fail = [&] {
    return ConfigError(path, "cannot read " + std::string(what) + ": " + std::strerror(errno));
  };
  auto too_large = [&] {
    return ConfigError(path, "the " + std::string(what) + " is larger than " +
                                 std::to_string(kMaxTextFileBytes >> 20) + " MiB; is it the right file?");
  };
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw fail();
  // A regular file too large fails at once; other files (pipes, devices such
  // as /dev/zero) are read up to the limit.
  struct stat st {};
  if (::fstat(::fileno(f.get()), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) > kMaxTextFileBytes)
    throw too_large();
  std::string out;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    if (out.size() + n > kMaxTextFileBytes) throw too_large();
    out.append(buf, n);
  }
  // A directory opens fine on Linux and only fails here (EISDIR).
  if (std::ferror(f.get())) throw fail();
  return out;
}

std::optional<YAML::Node> StrictYaml::first_document(const std::string& text) const {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw ConfigError(where(e.mark), "collections nest too deeply (the YAML reader stops at " +
                                         std::to_string(e.depth()) + " levels); flatten the document");
  } catch (const YAML::Exception& e) {
    throw ConfigError(where(e.mark), e.msg);
  }
  // A null root is either an explicit empty document ("---") or no document.
  // Only the first document is parsed: yaml-cpp 0.7's LoadAll never ends
  // on some inputs (a lone ",": yaml-cpp issue 1040).
  if (root.IsNull()) {
    if (const auto stray = stray_flow_indicator(text)) {
      YAML::Mark m;
      m.line = stray->second - 1;
      m.column = 0;
      throw ConfigError(where(m), std::string("unexpected '") + stray->first +
                                      "' outside a flow collection ([...] or {...}); remove it or quote the value");
    }
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentCounter counter;
    try {
      if (!parser.HandleNextDocument(counter) || !counter.started) return std::nullopt;
    } catch (const YAML::Exception& e) {
      throw ConfigError(where(e.mark), e.msg);
    }
  }
  return root;
}

std::string StrictYaml::where(const YAML::Mark& m) const {
  if (m.line < 0) return path_;
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on ":" + ...
  std::string out = path_;
  out += ':';
  out += std::to_string(m.line + 1);
  if (position_ == Position::kLineColumn) {
    out += ':';
    out += std::to_string(m.column + 1);
  }
  return out;
}

void StrictYaml::own_entries(const YAML::Node& map, std::string_view prefix, KeyList allowed, Entries& own,
                             std::vector<YAML::Node>& merges) const {
  std::map<std::string, int> first_line;
  // Dereferencing a yaml-cpp iterator yields a temporary: the range-for
  // keeps it alive, a reference through it->first would not.
  for (const auto& entry : map) {
    const YAML::Node& k = entry.first;
    if (!k.IsScalar())
      throw ConfigError(where(k.Mark()), "keys under " +
                                             (prefix.empty() ? std::string("the top level") : in_quotes(prefix)) +
                                             " must be strings");
    const std::string key = k.Scalar();
    if (key == "<<" && k.Tag() == "?") {
      merges.push_back(entry.second);
      continue;
    }
    const std::string key_path = child_path(prefix, key);
    if (auto [pos, fresh] = first_line.emplace(key, k.Mark().line + 1); !fresh)
      throw ConfigError(where(k.Mark()), "duplicate key " + in_quotes(key_path) + " (first given at line " +
                                             std::to_string(pos->second) + ")");
    if (!allowed.empty() && !is_allowed(key, allowed))
      throw ConfigError(where(k.Mark()), unknown_key(key_path, allowed));
    own.emplace_back(key, entry.second);
  }
}

std::vector<YAML::Node> StrictYaml::merge_sources(const YAML::Node& m) const {
  std::vector<YAML::Node> sources;
  if (m.IsMap()) {
    sources.push_back(m);
  } else if (m.IsSequence()) {
    for (const auto& s : m) sources.push_back(s);
  }
  if (sources.empty() && !m.IsNull())
    throw ConfigError(where(m.Mark()), "a merge key (<<) needs a mapping or a list of mappings");
  return sources;
}

void StrictYaml::check_merge_source(const YAML::Node& map, const YAML::Node& m, const YAML::Node& s,
                                    std::string_view prefix, MergeWalk& walk) const {
  if (!s.IsMap()) throw ConfigError(where(s.Mark()), "a merge key (<<) needs a mapping or a list of mappings");
  const std::string under = prefix.empty() ? std::string("the top level") : in_quotes(prefix);
  const bool cycle = s.is(map) || std::any_of(walk.chain.begin(), walk.chain.end(),
                                              [&](const YAML::Node& c) { return s.is(c); });
  if (cycle)
    throw ConfigError(where(m.Mark()), "a merge key (<<) under " + under +
                                           " merges a mapping that contains it; remove the alias to its own anchor");
  if (static_cast<int>(walk.chain.size()) >= kMaxMergeDepth)
    throw ConfigError(where(m.Mark()), "merge keys (<<) under " + under + " nest deeper than " +
                                           std::to_string(kMaxMergeDepth) + " levels; flatten the anchors");
  if (++walk.visited > kMaxMergedMappings)
    throw ConfigError(where(m.Mark()), "merge keys (<<) under " + under + " expand to more than " +
                                           std::to_string(kMaxMergedMappings) +
                                           " merged mappings; merge each anchor once");
}

void StrictYaml::collect(const YAML::Node& map, std::string_view prefix, KeyList allowed, MergeWalk& walk,
                         Entries& out) const {
  const bool merged = !walk.chain.empty();
  std::vector<YAML::Node> merges;
  Entries own;
  own_entries(map, prefix, allowed, own, merges);
  // A mapping's own keys win over merged ones; earlier merge sources win
  // over later ones.
  auto take = [&](std::pair<std::string, YAML::Node>&& e) {
    const bool present = std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.first == e.first; });
    if (!present) out.push_back(std::move(e));
  };
  if (!merged) {
    for (auto& e : own) out.push_back(std::move(e));
  } else {
    for (auto& e : own) take(std::move(e));
  }
  for (const YAML::Node& m : merges) {
    for (const YAML::Node& s : merge_sources(m)) {
      check_merge_source(map, m, s, prefix, walk);
      Entries from;
      walk.chain.push_back(map);
      collect(s, prefix, allowed, walk, from);
      walk.chain.pop_back();
      for (auto& e : from) take(std::move(e));
    }
  }
}

std::vector<std::pair<std::string, YAML::Node>> StrictYaml::entries(const YAML::Node& map,
                                                                    std::string_view prefix,
                                                                    KeyList allowed) const {
  std::vector<std::pair<std::string, YAML::Node>> out;
  MergeWalk walk;
  collect(map, prefix, allowed, walk, out);
  return out;
}

const YAML::Node& StrictYaml::mapping(const YAML::Node& v, const std::string& key_path) const {
  if (v.IsMap()) return v;
  throw ConfigError(where(v.Mark()), (key_path.empty() ? "the document" : key_path) + " must be a mapping");
}

const YAML::Node& StrictYaml::sequence(const YAML::Node& v, const std::string& key_path) const {
  if (v.IsSequence()) return v;
  throw ConfigError(where(v.Mark()), key_path + " must be a list");
}

std::string StrictYaml::string(const YAML::Node& v, const std::string& key_path) const {
  if (v.IsScalar()) return v.Scalar();
  throw ConfigError(where(v.Mark()), key_path + " must be a string");
}

double StrictYaml::number(const YAML::Node& v, const std::string& key_path) const {
  if (!v.IsScalar()) throw ConfigError(where(v.Mark()), key_path + " must be a number");
  if (const auto n = numeral_of(v)) {
    switch (n->kind) {
      case Numeral::Kind::kInt: return static_cast<double>(n->i);
      case Numeral::Kind::kUint: return static_cast<double>(n->u);
      case Numeral::Kind::kFloat: return n->f;
    }
  }
  throw ConfigError(where(v.Mark()), key_path + " must be a number, got " + in_quotes(v.Scalar()));
}

int64_t StrictYaml::integer(const YAML::Node& v, const std::string& key_path) const {
  if (!v.IsScalar()) throw ConfigError(where(v.Mark()), key_path + " must be an integer");
  const auto n = numeral_of(v);
  if (!n) throw ConfigError(where(v.Mark()), key_path + " must be an integer, got " + in_quotes(v.Scalar()));
  constexpr double kTwo63 = 9223372036854775808.0;
  switch (n->kind) {
    case Numeral::Kind::kInt:
      return n->i;
    case Numeral::Kind::kUint:
      break;
    case Numeral::Kind::kFloat:
      // The fraction is dropped, as the reference's decoder does.
      if (std::isnan(n->f) || n->f > kTwo63) break;
      if (n->f >= -kTwo63 && n->f < kTwo63) return static_cast<int64_t>(n->f);
      return std::numeric_limits<int64_t>::min();  // x86-64's conversion of the ends
  }
  throw ConfigError(where(v.Mark()), key_path + " is out of range for a 64-bit integer: " + v.Scalar());
}

bool StrictYaml::boolean(const YAML::Node& v, const std::string& key_path) const {
  if (v.IsScalar()) {
    const std::string& s = v.Scalar();
    if (v.Tag() == "?") {
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
    }
    // YAML 1.1 spellings, accepted for booleans (quoted too) as the reference does.
    for (const char* t : {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"})
      if (s == t) return true;
    for (const char* f : {"n", "N", "no", "No", "NO", "off", "Off", "OFF"})
      if (s == f) return false;
    throw ConfigError(where(v.Mark()), key_path + " must be true or false, got " + in_quotes(s));
  }
  throw ConfigError(where(v.Mark()), key_path + " must be true or false");
}

}  // namespace blis::config
