// Clients from a ServeGen data directory (spec workload §5.11): one client
// per chunk, at the rate and arrival pattern of the chunk's busiest trace row,
// with the token-length PMFs of the first usable window of its dataset.
// Reads files only; draws nothing.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>

#include "config/strict_yaml.hpp"
#include "workload/csv_line.hpp"
#include "workload/samplers.hpp"
#include "workload/spec_internal.hpp"

namespace blis::workload {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kWhere = "servegen_data.path";
constexpr std::string_view kChunkPrefix = "chunk-";
constexpr std::string_view kTraceSuffix = "-trace.csv";

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n\v\f");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n\v\f") - b + 1));
}

// A whole decimal (or inf/nan) floating-point text; out-of-range values are
// errors, as with the reference's parser.
bool parse_float(const std::string& s, double* out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  if (errno == ERANGE && std::isinf(v)) return false;
  *out = v;
  return true;
}

// Whether a time in seconds lies inside the configured span (0 = no bound).
bool in_span(double t, const ServeGenDataSpec& sg) {
  if (sg.span_start > 0 && t < static_cast<double>(sg.span_start)) return false;
  if (sg.span_end > 0 && t >= static_cast<double>(sg.span_end)) return false;
  return true;
}

struct TraceRow {
  double rate = 0;
  double cv = 0;
  std::string pattern;
};

[[noreturn]] void fail(const std::string& what) { throw InputError(std::string(kWhere), what); }

// The row with the strictly largest rate (the first on ties) among the rows
// inside the span: `start_time_s, rate_rps, cv, pattern[, ...]`.
std::optional<TraceRow> busiest_row(const fs::path& path, const ServeGenDataSpec& sg) {
  std::ifstream in(path);
  if (!in) fail(path.string() + ": cannot open the trace file");
  std::optional<TraceRow> best;
  std::optional<size_t> columns;
  int64_t skipped = 0;
  std::string line;
  std::vector<std::string> fields;
  for (int64_t n = 1;; ++n) {
    const LineRead read = read_csv_line(in, line);
    if (read == LineRead::kEnd) break;
    if (read == LineRead::kTooLong)
      fail(fmt::format("{}:{}: a line longer than {} bytes; is this a ServeGen trace?", path.string(), n,
                       kMaxCsvLineBytes));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (!split_csv_line(line, fields)) fail(fmt::format("{}:{}: malformed CSV row", path.string(), n));
    if (!columns) columns = fields.size();
    if (fields.size() != *columns)
      fail(fmt::format("{}:{}: {} fields where the first row has {}", path.string(), n, fields.size(), *columns));
    double start = 0, rate = 0, cv = 0;
    if (fields.size() < 4 || !parse_float(trim(fields[0]), &start) || !parse_float(trim(fields[1]), &rate) ||
        !parse_float(trim(fields[2]), &cv)) {
      ++skipped;
      continue;
    }
    if (!in_span(start, sg)) continue;
    if (!best || rate > best->rate) best = TraceRow{rate, cv, trim(fields[3])};
  }
  if (skipped > 0) spdlog::warn("{}: skipped {} malformed trace rows", path.string(), skipped);
  return best;
}

// A Python dict text "{100: 0.5, 200: 0.3}" as empirical bins; keys are
// truncated to integers (the last of equal keys wins).
std::map<std::string, double> parse_pmf(const std::string& text, const std::string& where) {
  std::string s = trim(text);
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') fail(where + ": expected a {key: value, ...} dict");
  s = trim(std::string_view(s).substr(1, s.size() - 2));
  if (s.empty()) fail(where + ": empty PDF dictionary");
  std::map<int64_t, double> pmf;
  size_t from = 0;
  while (from <= s.size()) {
    const size_t comma = std::min(s.find(',', from), s.size());
    const std::string pair = trim(std::string_view(s).substr(from, comma - from));
    from = comma + 1;
    if (pair.empty()) continue;
    const size_t colon = pair.find(':');
    if (colon == std::string::npos) fail(where + ": invalid key:value pair \"" + pair + "\"");
    double key = 0, value = 0;
    if (!parse_float(trim(std::string_view(pair).substr(0, colon)), &key) ||
        !parse_float(trim(std::string_view(pair).substr(colon + 1)), &value))
      fail(where + ": invalid key:value pair \"" + pair + "\"");
    pmf[go_trunc(key)] = value;
  }
  std::map<std::string, double> bins;
  for (const auto& [k, v] : pmf) bins[std::to_string(k)] = v;
  return bins;
}

// The input and output PMFs of the first window (in key text order) inside
// the span whose two dicts are both present.
std::pair<DistSpec, DistSpec> dataset_pmfs(const fs::path& path, const ServeGenDataSpec& sg) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(config::read_text_file(path.string(), "ServeGen dataset"));
  } catch (const ConfigError& e) {
    fail(e.what());
  } catch (const nlohmann::json::exception& e) {
    fail(path.string() + ": " + e.what());
  }
  if (!doc.is_object()) fail(path.string() + ": expected a JSON object of windows");
  // The whole file must be windows of strings (the reference decodes it
  // all before looking at any window).
  for (const auto& [key, window] : doc.items()) {
    if (window.is_null()) continue;
    if (!window.is_object()) fail(path.string() + ": window \"" + key + "\" is not an object of strings");
    for (const auto& [field, value] : window.items())
      if (!value.is_string() && !value.is_null())
        fail(path.string() + ": window \"" + key + "\" field \"" + field + "\" is not a string");
  }
  const auto text_of = [](const nlohmann::json& window, const char* field) {
    if (!window.is_object() || !window.contains(field) || !window[field].is_string()) return std::string();
    return window[field].get<std::string>();
  };
  for (const auto& [key, window] : doc.items()) {  // keys in text order
    double start = 0;
    if (!parse_float(key, &start)) {
      spdlog::warn("{}: skipped the non-numeric window key \"{}\"", path.string(), key);
      continue;
    }
    const std::string input = text_of(window, "input_tokens");
    const std::string output = text_of(window, "output_tokens");
    if (!in_span(start, sg) || input.empty() || output.empty()) continue;
    const std::string where = path.string() + " window " + key;
    return {{"empirical", parse_pmf(input, where + " input_tokens")},
            {"empirical", parse_pmf(output, where + " output_tokens")}};
  }
  fail(path.string() + ": no window with both input_tokens and output_tokens");
}

}  // namespace

std::vector<ClientSpec> load_servegen_clients(const ServeGenDataSpec& sg) {
  std::vector<fs::path> traces;
  std::error_code ec;
  for (fs::directory_iterator it(sg.path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() >= kChunkPrefix.size() + kTraceSuffix.size() && name.starts_with(kChunkPrefix) &&
        name.ends_with(kTraceSuffix))
      traces.push_back(it->path());
  }
  if (traces.empty()) fail("no chunk-*-trace.csv files in " + sg.path);
  std::sort(traces.begin(), traces.end());  // "chunk-10" before "chunk-2", as in the reference

  std::vector<ClientSpec> clients;
  for (const fs::path& trace : traces) {
    const std::string name = trace.filename().string();
    const std::string id =
        name.substr(kChunkPrefix.size(), name.size() - kChunkPrefix.size() - kTraceSuffix.size());
    const auto row = busiest_row(trace, sg);
    if (!row || !(row->rate > 0)) continue;
    ClientSpec c;
    c.id = "servegen-chunk-" + id;
    c.tenant_id = "chunk-" + id;
    c.rate_fraction = row->rate;  // relative: the spec's aggregate_rate applies
    std::string pattern = row->pattern;
    std::transform(pattern.begin(), pattern.end(), pattern.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (pattern == "gamma" || pattern == "weibull") {
      c.arrival = {pattern, row->cv};
    } else {
      c.arrival = {"poisson", std::nullopt};
    }
    std::tie(c.input_distribution, c.output_distribution) =
        dataset_pmfs(trace.parent_path() / ("chunk-" + id + "-dataset.json"), sg);
    clients.push_back(std::move(c));
  }
  if (clients.empty()) fail("no chunk in " + sg.path + " has a trace row with a rate > 0");
  return clients;
}

}  // namespace blis::workload
