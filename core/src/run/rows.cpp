#include "run/rows.hpp"

#include "util/json_format.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

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

std::string row_record(size_t index, const Row& row) {
  std::string out = fmt::format("{{\"index\": {}, \"settings\": [", index);
  for (size_t i = 0; i < row.point.size(); ++i)
    out += (i ? ", [" : "[") + go_string(row.point[i].flag) + ", " + go_string(row.point[i].value) + "]";
  out += "], \"metrics\": [";
  for (size_t i = 0; i < row.metrics.size(); ++i) {
    const MetricField& f = row.metrics[i];
    out += fmt::format("{}[{}, {}, {}]", i ? ", " : "", go_string(f.name), go_string(metric_text(f)),
                       f.integer ? "true" : "false");
  }
  return out + "]}";
}

std::pair<size_t, Row> parse_row_record(const std::string& json, const std::string& where) {
  try {
    const nlohmann::json j = nlohmann::json::parse(json);
    Row row;
    for (const auto& s : j.at("settings")) row.point.push_back(Setting{s.at(0).get<std::string>(), s.at(1).get<std::string>(), where});
    for (const auto& m : j.at("metrics")) {
      MetricField f;
      f.name = m.at(0).get<std::string>();
      f.value = std::stod(m.at(1).get<std::string>());
      f.integer = m.at(2).get<bool>();
      row.metrics.push_back(f);
    }
    return {j.at("index").get<size_t>(), std::move(row)};
  } catch (const std::exception& e) {
    throw ConfigError(where, std::string("not a row of a blis sweep (") + e.what() + ")");
  }
}

std::string shard_document(const std::string& scenario, int64_t shard, int64_t shards, size_t total,
                           const std::vector<std::pair<size_t, Row>>& rows) {
  std::string out = fmt::format("{{\n  \"scenario\": {},\n  \"shard\": \"{}/{}\",\n  \"configurations\": {},\n  "
                                "\"rows\": [",
                                go_string(scenario), shard, shards, total);
  for (size_t i = 0; i < rows.size(); ++i) out += (i ? ",\n    " : "\n    ") + row_record(rows[i].first, rows[i].second);
  return out + (rows.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

void read_shard_document(const std::string& path, ShardRows& into) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "cannot open the shard file (check the path)");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const std::exception& e) {
    throw ConfigError(path, std::string("not a shard report of `blis run --shard` (") + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("shard") || !j.contains("rows") || !j.contains("configurations"))
    throw ConfigError(path, "not a shard report of `blis run --shard` (no shard, configurations or rows)");
  const std::string scenario = j.value("scenario", "");
  const size_t total = j.at("configurations").get<size_t>();
  if (!into.scenario.empty() && (scenario != into.scenario || total != into.total))
    throw ConfigError(path, fmt::format("is a shard of {} ({} configurations), the others of {} ({})", scenario,
                                        total, into.scenario, into.total));
  into.scenario = scenario;
  into.total = total;
  for (const auto& r : j.at("rows")) {
    auto [index, row] = parse_row_record(r.dump(), path);
    if (index >= total) throw ConfigError(path, fmt::format("row {} is beyond the sweep's {} configurations", index, total));
    if (into.rows.count(index)) throw ConfigError(path, fmt::format("configuration {} appears in two shards", index));
    into.rows.emplace(index, std::move(row));
  }
}

}  // namespace blis
