// Specs built from other inputs (spec workload §8.1, §9.1-§9.2): the legacy
// request-trace CSV, a ServeGen directory, an inference-perf section, and the
// merge of several specs. The expansions themselves live with the generator
// (servegen.cpp, spec_expand.cpp); this file only assembles specs.
#include <blis/errors.hpp>
#include <blis/workload_convert.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "workload/csv_line.hpp"
#include "workload/spec_internal.hpp"

namespace blis {

namespace {

// The length of a column holding a JSON array of integers (null = empty).
size_t token_count(const std::string& path, int64_t row, int column, const std::string& field) {
  const std::string where = fmt::format("{}: row {}, column {}", path, row, column + 1);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(field);
  } catch (const nlohmann::json::exception&) {
    throw ConfigError(where, "expected a JSON array of token ids such as [1,2,3], got '" + field + "'");
  }
  if (j.is_null()) return 0;
  if (!j.is_array()) throw ConfigError(where, "expected a JSON array of token ids such as [1,2,3]");
  for (const auto& e : j)
    if (!e.is_number_integer())
      throw ConfigError(where, "expected a JSON array of integer token ids, found " + e.dump());
  return j.size();
}

}  // namespace

WorkloadSpec csv_trace_to_spec(const std::string& path, int64_t horizon) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "cannot open the trace file; check the path");
  std::string line;
  std::vector<std::string> fields;
  size_t columns = 0;
  int64_t rows = 0;
  int64_t first_us = 0, last_us = 0;
  double prompt_sum = 0, output_sum = 0;
  for (int64_t n = 0;; ++n) {  // n: 0 = the header, always skipped
    const workload::LineRead read = workload::read_csv_line(in, line);
    if (read == workload::LineRead::kEnd) break;
    const std::string where = fmt::format("{}: row {}", path, n);
    if (read == workload::LineRead::kTooLong) throw ConfigError(where, "line too long; is this a CSV file?");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!workload::split_csv_line(line, fields)) throw ConfigError(where, "malformed CSV quoting");
    if (n == 0) {
      columns = fields.size();
      continue;
    }
    if (fields.size() != columns)
      throw ConfigError(where, fmt::format("{} fields where the header has {}", fields.size(), columns));
    if (fields.size() < 5)
      throw ConfigError(where, fmt::format("{} fields; a trace row needs 5: arrival time (s), two ignored "
                                           "columns, prompt token ids, output token ids",
                                           fields.size()));
    char* end = nullptr;
    const double seconds = std::strtod(fields[0].c_str(), &end);
    if (fields[0].empty() || end != fields[0].c_str() + fields[0].size() || !std::isfinite(seconds) ||
        std::fabs(seconds) > 9e12)
      throw ConfigError(where, "arrival time '" + fields[0] + "' is not a number of seconds");
    const auto arrival_us = static_cast<int64_t>(seconds * 1e6);  // truncated, as the reference
    if (horizon > 0 && arrival_us > horizon) break;
    const size_t prompt = token_count(path, n, 3, fields[3]);
    const size_t output = token_count(path, n, 4, fields[4]);
    if (rows == 0) first_us = arrival_us;
    last_us = arrival_us;
    prompt_sum += static_cast<double>(prompt);
    output_sum += static_cast<double>(output);
    ++rows;
  }
  if (rows == 0) throw ConfigError(path, "empty CSV: the trace has no data row after its header");

  WorkloadSpec spec;
  spec.version = "2";
  spec.num_requests = rows;
  const double span_s = static_cast<double>(last_us - first_us) / 1e6;
  spec.aggregate_rate = span_s == 0 ? static_cast<double>(rows) : static_cast<double>(rows) / span_s;
  ClientSpec c;
  c.id = "csv-trace";
  c.rate_fraction = 1.0;
  c.arrival.process = "constant";
  c.input_distribution.type = "constant";
  c.input_distribution.params = {{"value", prompt_sum / static_cast<double>(rows)}};
  c.output_distribution.type = "constant";
  c.output_distribution.params = {{"value", output_sum / static_cast<double>(rows)}};
  spec.clients.push_back(std::move(c));
  return spec;
}

WorkloadSpec servegen_to_spec(const std::string& dir) {
  WorkloadSpec spec;
  spec.version = "2";
  spec.aggregate_rate = 1.0;
  spec.clients = workload::load_servegen_clients(ServeGenDataSpec{dir, 0, 0});
  return spec;
}

WorkloadSpec inference_perf_to_spec(const std::string& path) {
  const WorkloadSpec file = load_workload_spec(path);
  if (!file.inference_perf)
    throw ConfigError(path, "the file has no inference_perf section to convert");
  WorkloadSpec spec;
  spec.version = "2";
  spec.seed = file.seed;
  spec.category = file.category;
  spec.aggregate_rate = file.aggregate_rate;
  spec.inference_perf = file.inference_perf;
  spec.source = file.source;
  try {
    workload::expand_inference_perf(spec);
  } catch (const InputError& e) {
    workload::rethrow_located(spec.source, e);
  }
  spec.inference_perf.reset();
  spec.source = {};
  return spec;
}

WorkloadSpec compose_specs(const std::vector<WorkloadSpec>& specs) {
  WorkloadSpec out;
  out.version = "2";
  if (!specs.empty()) out.category = specs.front().category;
  double total = 0;
  for (const WorkloadSpec& s : specs) total += s.aggregate_rate;
  if (!std::isfinite(total) || total <= 0)
    throw InputError("--from", fmt::format("the specs' aggregate rates sum to {}; each spec needs a finite "
                                           "aggregate_rate > 0",
                                           total));
  out.aggregate_rate = total;
  for (const WorkloadSpec& s : specs)
    for (ClientSpec c : s.clients) {
      c.rate_fraction *= s.aggregate_rate / total;
      out.clients.push_back(std::move(c));
    }
  return out;
}

}  // namespace blis
