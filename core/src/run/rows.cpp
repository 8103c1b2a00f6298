#include "run/rows.hpp"

#include "util/json_format.hpp"

#include <algorithm>

namespace blis {
namespace {

// Text of a setting in a row: a JSON number when it reads as one.
std::string json_value(const std::string& text) { return setting_number(text) ? text : go_string(text); }

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Columns of the rows: settings first, then metrics, each in first-seen order.
struct Columns {
  std::vector<std::string> settings, metrics;
  explicit Columns(const std::vector<Row>& rows) {
    auto add = [](std::vector<std::string>& v, const std::string& name) {
      if (std::find(v.begin(), v.end(), name) == v.end()) v.push_back(name);
    };
    for (const Row& r : rows) {
      for (const Setting& s : r.point) add(settings, key_of_flag(s.flag));
      for (const MetricField& f : r.metrics) add(metrics, f.name);
    }
  }
};

}  // namespace

std::string rows_json(const std::string& scenario, const std::vector<Row>& rows, const std::string& result) {
  std::string out = "{\n  \"scenario\": " + go_string(scenario) + ",\n  \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += i == 0 ? "\n    {" : ",\n    {";
    bool first = true;
    auto field = [&](const std::string& name, const std::string& value) {
      out += (first ? "" : ", ") + go_string(name) + ": " + value;
      first = false;
    };
    for (const Setting& s : rows[i].point) field(key_of_flag(s.flag), json_value(s.value));
    for (const MetricField& f : rows[i].metrics) field(f.name, metric_text(f));
    out += "}";
  }
  out += rows.empty() ? "]" : "\n  ]";
  if (!result.empty()) out += ",\n  \"result\": " + result;
  return out + "\n}\n";
}

std::string rows_csv(const std::vector<Row>& rows) {
  const Columns cols(rows);
  std::string out;
  for (const auto& list : {cols.settings, cols.metrics})
    for (const std::string& c : list) {
      if (!out.empty()) out += ',';
      out += csv_field(c);
    }
  out += "\n";
  for (const Row& r : rows) {
    std::string line;
    bool first = true;
    auto cell = [&](const std::string& v) {
      if (!first) line += ',';
      line += csv_field(v);
      first = false;
    };
    for (const std::string& c : cols.settings) {
      auto it = std::find_if(r.point.begin(), r.point.end(), [&](const Setting& s) { return key_of_flag(s.flag) == c; });
      cell(it == r.point.end() ? "" : it->value);
    }
    for (const std::string& c : cols.metrics) {
      auto it = std::find_if(r.metrics.begin(), r.metrics.end(), [&](const MetricField& f) { return f.name == c; });
      cell(it == r.metrics.end() ? "" : metric_text(*it));
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace blis
