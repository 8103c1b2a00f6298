#include "run/rows.hpp"

#include "util/json_format.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

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

std::string sweep_identity(const std::vector<Settings>& points, const std::vector<const Settings*>& shared) {
  // FNV-1a over length-prefixed fields: no two listings hash the same text.
  uint64_t h = 14695981039346656037ull;
  auto add = [&](const std::string& field) {
    const std::string text = std::to_string(field.size()) + ":" + field;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  };
  auto add_settings = [&](const Settings& settings) {
    add(std::to_string(settings.size()));
    for (const Setting& s : settings) {
      add(s.flag);
      add(s.value);
      for (const std::string& item : s.items) add(item);
    }
  };
  for (const Settings* s : shared) {
    Settings kept;
    for (const Setting& setting : *s) {
      const SettingDef* def = find_setting(setting.flag);
      static const char* const kProcess[] = {"shard", "resume", "jobs", "log", "quiet", "profile", "trust_scenario",
                                             "memory_limit"};
      if (def != nullptr && (def->has(kOutputPath) || std::find(std::begin(kProcess), std::end(kProcess), def->key) !=
                                                          std::end(kProcess)))
        continue;
      kept.push_back(setting);
    }
    add_settings(kept);
  }
  add(std::to_string(points.size()));
  for (const Settings& p : points) add_settings(p);
  return fmt::format("fnv1a64:{:016x}", h);
}

std::string journal_header(const std::string& identity, size_t total) {
  return fmt::format("{{\"sweep\": {}, \"configurations\": {}}}", go_string(identity), total);
}

std::pair<std::string, size_t> parse_journal_header(const std::string& line, const std::string& where) {
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.is_object() && j.contains("sweep") && j.at("configurations").is_number_unsigned())
      return {j.at("sweep").get<std::string>(), j.at("configurations").get<size_t>()};
  } catch (const std::exception&) {
  }
  throw ConfigError(where, "not the checkpoint of a blis sweep (its first line names no sweep); delete it, or run "
                           "without --resume");
}

bool same_point(const Settings& a, const Settings& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Setting& x, const Setting& y) { return x.flag == y.flag && x.value == y.value; });
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
    // A sweep's index is a whole number as row_record writes it: 1e30, 0.0,
    // -0 or 18446744073709551616 are not one.
    if (!j.at("index").is_number_unsigned())
      throw ConfigError(where, fmt::format("index {} is not a configuration's number (a whole number >= 0)",
                                           j.at("index").dump()));
    return {j.at("index").get<size_t>(), std::move(row)};
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw ConfigError(where, std::string("not a row of a blis sweep (") + e.what() + ")");
  }
}

std::string shard_document(const std::string& scenario, const std::string& identity, int64_t shard, int64_t shards,
                           size_t total, const std::vector<std::pair<size_t, Row>>& rows) {
  std::string out = fmt::format("{{\n  \"scenario\": {},\n  \"sweep\": {},\n  \"shard\": \"{}/{}\",\n  "
                                "\"configurations\": {},\n  \"rows\": [",
                                go_string(scenario), go_string(identity), shard, shards, total);
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
  if (!j.at("configurations").is_number_unsigned() || !j.contains("sweep") || !j.at("sweep").is_string())
    throw ConfigError(path, "not a shard report of `blis run --shard` (no sweep identity or configuration count; "
                            "run the shard again with this blis)");
  // j.value() would throw nlohmann's type_error for a scenario that is not a
  // text (an input of fuzz/sweep_rows): refused here like any malformed field.
  if (j.contains("scenario") && !j.at("scenario").is_string())
    throw ConfigError(path, "not a shard report of `blis run --shard` (its scenario is not a file name)");
  const std::string scenario = j.value("scenario", "");
  const std::string identity = j.at("sweep").get<std::string>();
  const size_t total = j.at("configurations").get<size_t>();
  if (!into.scenario.empty() && (scenario != into.scenario || total != into.total || identity != into.identity))
    throw ConfigError(path, fmt::format("is a shard of {} (sweep {}, {} configurations), the others of {} (sweep {}, "
                                        "{}): merge the shards of one sweep",
                                        scenario, identity, total, into.scenario, into.identity, into.total));
  into.scenario = scenario;
  into.identity = identity;
  into.total = total;
  for (const auto& r : j.at("rows")) {
    auto [index, row] = parse_row_record(r.dump(), path);
    if (index >= total) throw ConfigError(path, fmt::format("row {} is beyond the sweep's {} configurations", index, total));
    if (into.rows.count(index)) throw ConfigError(path, fmt::format("configuration {} appears in two shards", index));
    into.rows.emplace(index, std::move(row));
  }
}

}  // namespace blis
