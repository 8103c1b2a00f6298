#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace blis::text {

std::string trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; };
  size_t b = 0, e = s.size();
  while (b < e && space(s[b])) ++b;
  while (e > b && space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

void append(std::string& out, std::string_view sep, std::string_view item) {
  if (!out.empty()) out += sep;
  out += item;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string w = lower(std::string(word));
  const size_t limit = std::max<size_t>(2, w.size() / 4);
  std::optional<std::string> best;
  size_t best_d = 0;
  for (const auto& c : candidates) {
    const std::string lc = lower(c);
    // A prefix of a candidate ("qwen/qwen3-14" for "qwen/qwen3-14b") is close.
    const bool prefix = lc.size() > w.size() && lc.compare(0, w.size(), w) == 0 && w.size() >= 4;
    // The distance is at least the difference in length: a candidate that far
    // away cannot be suggested, and measuring it would cost |w|·|c| steps.
    const size_t gap = lc.size() > w.size() ? lc.size() - w.size() : w.size() - lc.size();
    if (!prefix && gap > limit) continue;
    // (a proper prefix is exactly one step away at the least, so it counts as 1)
    const size_t d = prefix ? 1 : edit_distance(w, lc);
    if (!best || d < best_d) best = c, best_d = d;
  }
  if (best && best_d <= limit && best_d < w.size()) return best;
  return std::nullopt;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto c = closest(word, candidates);
  return c ? "; did you mean " + *c + "?" : "";
}

std::string seconds_text(int64_t us) {
  std::string t = fmt::format("{:.6f}", static_cast<double>(us) / 1e6);
  while (t.back() == '0') t.pop_back();
  if (t.back() == '.') t.pop_back();
  return t + " s";
}

}  // namespace blis::text
