#include "run/rows_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace blis {
namespace {

// The figures of a row the table shows, with their headings; the JSON and CSV
// rows keep every metric.
struct Figure {
  const char* metric;
  const char* heading;
};
constexpr Figure kFigures[] = {
    {"completed_requests", "completed"}, {"rejected_requests", "rejected"}, {"timed_out_requests", "timed out"},
    {"responses_per_sec", "req/s"},      {"ttft_p99_ms", "TTFT p99 ms"},    {"itl_p99_ms", "ITL p99 ms"},
    {"e2e_p99_ms", "E2E p99 ms"},        {"fitness_score", "fitness"},      {"goodput_rps", "goodput req/s"},
};

const MetricField* find_metric(const Row& row, const std::string& name) {
  for (const MetricField& f : row.metrics)
    if (f.name == name) return &f;
  return nullptr;
}

// Row i's cells: its index, its value of each setting, each figure.
std::vector<std::string> row_cells(size_t i, const Row& row, const std::vector<std::string>& settings,
                                   const std::vector<const Figure*>& figures) {
  std::vector<std::string> line{std::to_string(i)};
  for (const auto& key : settings) {
    auto it = std::find_if(row.point.begin(), row.point.end(),
                           [&](const Setting& s) { return key_of_flag(s.flag) == key; });
    line.push_back(it == row.point.end() ? "-" : it->value);
  }
  for (const Figure* f : figures) {
    const MetricField* m = find_metric(row, f->metric);
    line.push_back(m == nullptr ? "-" : m->integer ? fmt::format("{:.0f}", m->value) : fmt::format("{:.2f}", m->value));
  }
  return line;
}

// A line of the table: the first `settings` columns after the index
// left-aligned, the others right-aligned, no trailing blanks.
std::string table_line(const std::vector<std::string>& line, const std::vector<size_t>& width, size_t settings) {
  std::string text;
  for (size_t c = 0; c < line.size(); ++c) {
    const bool left = c > 0 && c <= settings;
    text += (c ? "  " : "") + (left ? fmt::format("{:<{}}", line[c], width[c]) : fmt::format("{:>{}}", line[c], width[c]));
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

std::string rows_table(const std::string& scenario, const std::vector<Row>& rows, const std::string& result) {
  std::vector<std::string> settings;
  for (const Row& r : rows)
    for (const Setting& s : r.point) {
      const std::string key = key_of_flag(s.flag);
      if (std::find(settings.begin(), settings.end(), key) == settings.end()) settings.push_back(key);
    }
  std::vector<const Figure*> figures;
  for (const Figure& f : kFigures)
    if (std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return find_metric(r, f.metric) != nullptr; }))
      figures.push_back(&f);

  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> head{"#"};
  for (const auto& s : settings) head.push_back(s);
  for (const Figure* f : figures) head.push_back(f->heading);
  cells.push_back(head);
  for (size_t i = 0; i < rows.size(); ++i) cells.push_back(row_cells(i, rows[i], settings, figures));
  std::vector<size_t> width(head.size(), 0);
  for (const auto& line : cells)
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());

  std::string out = fmt::format("scenario     {} ({} configuration{})\n\n", scenario, rows.size(),
                                rows.size() == 1 ? "" : "s");
  // Settings left-aligned, figures right-aligned.
  for (const auto& line : cells) out += table_line(line, width, settings.size()) + "\n";
  if (!result.empty()) out += "\nresult       " + result + "\n";
  out += "\nEvery metric of every row: --format json, --rows-json FILE or --rows-csv FILE.\n";
  return out;
}

}  // namespace blis
