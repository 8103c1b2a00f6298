// TraceV2 files (trace_v2.hpp): reading, writing, and HEAD's number formats.
#include "workload/trace_v2.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>

#include "blis/errors.hpp"
#include "config/strict_yaml.hpp"
#include "util/files.hpp"
#include "workload/csv_line.hpp"

namespace blis::workload {

namespace {

constexpr std::array<std::string_view, 27> kColumns = {
    "request_id",   "client_id",     "tenant_id",       "slo_class",       "session_id",
    "round_index",  "prefix_group",  "prefix_length",   "streaming",       "input_tokens",
    "output_tokens", "text_tokens",  "image_tokens",    "audio_tokens",    "video_tokens",
    "reason_ratio", "model",         "deadline_us",     "server_input_tokens", "arrival_time_us",
    "send_time_us", "first_chunk_time_us", "last_chunk_time_us", "num_chunks", "status",
    "error_message", "finish_reason"};

// ---- the header ----

constexpr std::string_view kHeaderKeys[] = {
    "trace_version", "time_unit", "created_at", "mode", "warm_up_requests", "workload_seed", "workload_spec",
    "session_context_growth", "server", "network", "goodput_slo_targets", "kv_offload", "observed_kv_metrics"};
constexpr std::string_view kServerKeys[] = {"type", "model", "tensor_parallel", "max_num_seqs", "block_size",
                                            "gpu_memory_utilization", "max_model_len"};
constexpr std::string_view kNetworkKeys[] = {"measured_rtt_ms"};
constexpr std::string_view kSloKeys[] = {"ttft_ms", "itl_ms", "e2e_ms"};
constexpr std::string_view kObservedKeys[] = {"source", "hit_rate", "block_hits", "block_queries",
                                              "read_time_total", "write_time_total", "vllm_commit"};

void read_server(const config::StrictYaml& y, const YAML::Node& v, TraceHeader& h) {
  for (const auto& [k, s] : y.entries(y.mapping(v, "server"), "server", kServerKeys)) {
    if (s.IsNull()) continue;
    if (k == "type") h.server_type = y.string(s, "server." + k);
    else if (k == "model") h.server_model = y.string(s, "server." + k);
    else if (k == "gpu_memory_utilization") (void)y.number(s, "server." + k);
    else (void)y.integer(s, "server." + k);
  }
}

void read_targets(const config::StrictYaml& y, const YAML::Node& v, TraceHeader& h) {
  const std::string key = "goodput_slo_targets";
  for (const auto& [cls, t] : y.entries(y.mapping(v, key), key, {})) {
    TraceSloTargets& target = h.goodput_slo_targets[cls];
    if (t.IsNull()) continue;
    const std::string at = key + "." + cls;
    for (const auto& [k, s] : y.entries(y.mapping(t, at), at, kSloKeys)) {
      if (s.IsNull()) continue;
      const double ms = y.number(s, at + "." + k);
      (k == "ttft_ms" ? target.ttft_ms : k == "itl_ms" ? target.itl_ms : target.e2e_ms) = ms;
    }
  }
}

// A block of the header: false for a scalar key.
bool read_block(const config::StrictYaml& y, const std::string& key, const YAML::Node& v, TraceHeader& h) {
  if (key == "server") {
    read_server(y, v, h);
  } else if (key == "network") {
    h.network = true;
    for (const auto& [k, s] : y.entries(y.mapping(v, key), key, kNetworkKeys))
      if (!s.IsNull()) h.measured_rtt_ms = y.number(s, "network." + k);
  } else if (key == "goodput_slo_targets") {
    read_targets(y, v, h);
  } else if (key == "kv_offload") {
    h.has_kv_offload = true;
  } else if (key == "observed_kv_metrics") {
    ObservedKvMetrics& m = h.observed_kv_metrics.emplace();
    for (const auto& [k, s] : y.entries(y.mapping(v, key), key, kObservedKeys)) {
      if (s.IsNull()) continue;
      const std::string at = key + "." + k;
      if (k == "source") m.source = y.string(s, at);
      else if (k == "vllm_commit") m.vllm_commit = y.string(s, at);
      else if (k == "hit_rate") m.hit_rate = y.number(s, at);
      else if (k == "read_time_total") m.read_time_total = y.number(s, at);
      else if (k == "write_time_total") m.write_time_total = y.number(s, at);
      else (k == "block_hits" ? m.block_hits : m.block_queries) = y.integer(s, at);
    }
  } else {
    return false;
  }
  return true;
}

TraceHeader read_header(const std::string& path) {
  const std::string text = config::read_text_file(path, "trace header");
  const config::StrictYaml y(path, config::StrictYaml::Position::kLine);
  const auto doc = y.first_document(text);
  if (!doc) throw InputError(path, "empty trace header (expected trace_version, time_unit, mode, ...)");
  TraceHeader h;
  h.where = path;
  for (const auto& [key, v] : y.entries(y.mapping(*doc, ""), "", kHeaderKeys)) {
    if (v.IsNull() || read_block(y, key, v, h)) continue;
    if (key == "trace_version") h.version = y.integer(v, key);
    else if (key == "time_unit") h.time_unit = y.string(v, key);
    else if (key == "created_at") h.created_at = y.string(v, key);
    else if (key == "mode") h.mode = y.string(v, key);
    else if (key == "warm_up_requests") h.warm_up_requests = y.integer(v, key);
    else if (key == "workload_seed") h.workload_seed = y.integer(v, key);
    else if (key == "workload_spec") h.workload_spec = y.string(v, key);
    else if (key == "session_context_growth") h.session_context_growth = y.string(v, key);
  }
  return h;
}

// ---- the rows ----

bool parse_int(std::string_view text, int64_t* out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

class RowReader {
 public:
  RowReader(const std::string& path, int64_t line, const std::vector<std::string>& f) : path_(path), line_(line), f_(f) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(path_ + ":" + std::to_string(line_), what);
  }
  int64_t integer(size_t i, const char* name, bool non_negative = true) const {
    int64_t v = 0;
    if (!parse_int(f_[i], &v)) fail(std::string("parsing ") + name + " \"" + f_[i] + "\": not an integer");
    if (non_negative && v < 0) fail(std::string("parsing ") + name + ": negative value " + std::to_string(v) + " not allowed");
    return v;
  }
  bool boolean(size_t i, const char* name) const {
    const std::string& s = f_[i];
    if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
    if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") return false;
    fail(std::string("parsing ") + name + " \"" + s + "\": not a boolean");
  }
  double number(size_t i, const char* name) const {
    const std::string& s = f_[i];
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
      fail(std::string("parsing ") + name + " \"" + s + "\": not a number");
    return v;
  }

 private:
  const std::string& path_;
  int64_t line_;
  const std::vector<std::string>& f_;
};

// The optional columns a CSV header has: flags, or the index of a trailing one (-1: absent).
struct OptionalColumns {
  bool priority = false, slo_target = false;
  int x_request = -1, adapter = -1, think = -1;
};

// One row into a record, checked as HEAD checks it.
TraceRecord parse_row(const RowReader& r, std::vector<std::string>& f, const OptionalColumns& cols, int64_t line_no) {
  const bool has_priority = cols.priority, has_slo_target = cols.slo_target;
  const int x_request_idx = cols.x_request, adapter_idx = cols.adapter, think_idx = cols.think;
  TraceRecord rec;
  rec.line = line_no;
  size_t off = has_priority ? 1 : 0;
  rec.request_id = r.integer(0, "request_id", false);
  rec.client_id = f[1];
  rec.tenant_id = f[2];
  rec.slo_class = f[3];
  if (has_priority) rec.vllm_priority = r.integer(4, "vllm_priority");
  rec.session_id = f[4 + off];
  rec.round_index = r.integer(5 + off, "round_index", false);
  rec.prefix_group = f[6 + off];
  rec.prefix_length = r.integer(7 + off, "prefix_length");
  rec.streaming = r.boolean(8 + off, "streaming");
  rec.input_tokens = r.integer(9 + off, "input_tokens");
  rec.output_tokens = r.integer(10 + off, "output_tokens");
  rec.text_tokens = r.integer(11 + off, "text_tokens");
  rec.image_tokens = r.integer(12 + off, "image_tokens");
  rec.audio_tokens = r.integer(13 + off, "audio_tokens");
  rec.video_tokens = r.integer(14 + off, "video_tokens");
  rec.reason_ratio = r.number(15 + off, "reason_ratio");
  if (!std::isfinite(rec.reason_ratio) || rec.reason_ratio < 0 || rec.reason_ratio > 1)
    r.fail("parsing reason_ratio \"" + f[15 + off] + "\": must be in range [0.0, 1.0]");
  rec.model = f[16 + off];
  rec.deadline_us = r.integer(17 + off, "deadline_us");
  if (has_slo_target) {
    rec.slo_target_us = r.integer(18 + off, "slo_target_us");
    ++off;
  }
  rec.server_input_tokens = r.integer(18 + off, "server_input_tokens");
  rec.arrival_time_us = r.integer(19 + off, "arrival_time_us", false);
  rec.send_time_us = r.integer(20 + off, "send_time_us", false);
  rec.first_chunk_time_us = r.integer(21 + off, "first_chunk_time_us", false);
  rec.last_chunk_time_us = r.integer(22 + off, "last_chunk_time_us", false);
  rec.num_chunks = r.integer(23 + off, "num_chunks");
  if (rec.deadline_us > 0 && rec.arrival_time_us > 0 && rec.deadline_us < rec.arrival_time_us)
    r.fail("parsing deadline_us: value " + std::to_string(rec.deadline_us) + " precedes arrival_time_us " +
           std::to_string(rec.arrival_time_us) + " (corrupt trace?)");
  rec.status = f[24 + off];
  rec.error_message = std::string(trim(f[25 + off]));
  rec.finish_reason = std::string(trim(f[26 + off]));
  if (x_request_idx >= 0 && static_cast<size_t>(x_request_idx) < f.size())
    rec.x_request_id = std::string(trim(f[static_cast<size_t>(x_request_idx)]));
  if (adapter_idx >= 0 && static_cast<size_t>(adapter_idx) < f.size())
    rec.adapter = std::string(trim(f[static_cast<size_t>(adapter_idx)]));
  if (think_idx >= 0 && static_cast<size_t>(think_idx) < f.size() && !trim(f[static_cast<size_t>(think_idx)]).empty()) {
    f[static_cast<size_t>(think_idx)] = std::string(trim(f[static_cast<size_t>(think_idx)]));
    rec.think_time_us = r.integer(static_cast<size_t>(think_idx), "think_time_us");
  }
  return rec;
}

}  // namespace

TraceV2 load_trace_v2(const std::string& header_path, const std::string& data_path) {
  TraceV2 trace;
  if (files::is_folder(header_path)) throw InputError(header_path, "is a directory, not a trace header");
  trace.header = read_header(header_path);
  if (files::is_folder(data_path)) throw InputError(data_path, "is a directory, not a trace data file");
  std::ifstream in(data_path, std::ios::binary);
  if (!in) throw InputError(data_path, "cannot open the trace data file");
  std::string line;
  std::vector<std::string> f;
  int64_t line_no = 0;
  auto next = [&]() {
    for (;;) {
      switch (read_csv_line(in, line)) {
        case LineRead::kLine: break;
        case LineRead::kEnd: return false;
        case LineRead::kTooLong:
          throw InputError(data_path + ":" + std::to_string(line_no + 1), "a line too long for a TraceV2 row");
      }
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) return true;  // Go's csv reader skips empty lines
    }
  };
  if (!next()) throw InputError(data_path, "reading CSV header: the file is empty");
  if (!split_csv_line(line, f)) throw InputError(data_path + ":1", "malformed CSV header");
  OptionalColumns cols;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == "vllm_priority") cols.priority = true;
    else if (f[i] == "slo_target_us") cols.slo_target = true;
    else if (f[i] == "x_request_id") cols.x_request = static_cast<int>(i);
    else if (f[i] == "adapter") cols.adapter = static_cast<int>(i);
    else if (f[i] == "think_time_us") cols.think = static_cast<int>(i);
  }
  const size_t min_cols = kColumns.size() + cols.priority + cols.slo_target + (cols.x_request >= 0) +
                          (cols.adapter >= 0) + (cols.think >= 0);
  while (next()) {
    if (!split_csv_line(line, f)) throw InputError(data_path + ":" + std::to_string(line_no), "malformed CSV row");
    const RowReader r(data_path, line_no, f);
    if (f.size() < min_cols)
      r.fail("CSV row has " + std::to_string(f.size()) + " columns, expected at least " + std::to_string(min_cols));
    TraceRecord rec = parse_row(r, f, cols, line_no);
    trace.records.push_back(std::move(rec));
  }
  return trace;
}

// ---- writing ----

std::string go_float_f(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  std::array<char, 400> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), x, std::chars_format::fixed);
  return std::string(buf.data(), r.ptr);
}

std::string go_float_g(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  // Shortest digits, then Go's %g layout for the shortest form: exponent
  // form when the exponent is < -4 or >= 6 (strconv's eprec for -1 precision).
  std::array<char, 64> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), x, std::chars_format::scientific);
  std::string sci(buf.data(), r.ptr);
  const size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  const int exp = std::stoi(sci.substr(e + 1));
  bool neg = false;
  if (!mant.empty() && mant[0] == '-') {
    neg = true;
    mant.erase(0, 1);
  }
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  const int eprec = 6;
  std::string out;
  if (exp < -4 || exp >= eprec) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += exp < 0 ? "e-" : "e+";
    const int a = std::abs(exp);
    if (a < 10) out += "0";
    out += std::to_string(a);
  } else {
    out = go_float_f(std::fabs(x));
  }
  return neg ? "-" + out : out;
}

namespace {

// Go's encoding/csv: quote a field holding a comma, a quote, CR or LF, or
// starting with a space; "\." is quoted too.
std::string csv_field(const std::string& s) {
  bool quote = s == "\\.";
  if (!s.empty() && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' || s[0] == '\v' || s[0] == '\f'))
    quote = true;
  if (s.find_first_of(",\"\r\n") != std::string::npos) quote = true;
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\"\"";
    else out += c;
  }
  return out + "\"";
}

// A word of letters and digits that starts with a digit and that yaml.v3
// still writes plain: not an integer (decimal, 0x, 0o or octal, 0b) and not
// a float (1e5). A commit such as 0a1b2c3 is one.
bool digit_led_word(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  auto all = [&](size_t from, const char* digits) {
    return from < s.size() && s.find_first_not_of(digits, from) == std::string::npos;
  };
  if (all(0, "0123456789")) return false;
  if (s[0] == '0' && s.size() > 1) {
    const char k = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    if ((k == 'x' && all(2, "0123456789abcdefABCDEF")) || (k == 'o' && all(2, "01234567")) ||
        (k == 'b' && all(2, "01")))
      return false;
  }
  // [0-9]+ [eE] [0-9]+ is a float (the sign and the point are not alphanumeric).
  const size_t e = s.find_first_of("eE");
  if (e != std::string::npos && all(e + 1, "0123456789") && s.find_first_not_of("0123456789") == e) return false;
  return true;
}

// yaml.v3's plain scalars for the names blis writes; anything else quoted.
std::string yaml_string(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/')) plain = false;
  if (plain && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '.') &&
      !digit_led_word(s))
    plain = false;
  static const char* kReserved[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
  for (const char* w : kReserved) {
    std::string low;
    for (char c : s) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (low == w) plain = false;
  }
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string trace_header_yaml(const TraceHeader& h) {
  std::string out;
  out += "trace_version: " + std::to_string(h.version) + "\n";
  out += "time_unit: " + yaml_string(h.time_unit) + "\n";
  if (!h.created_at.empty()) out += "created_at: " + yaml_string(h.created_at) + "\n";
  out += "mode: " + yaml_string(h.mode) + "\n";
  out += "warm_up_requests: " + std::to_string(h.warm_up_requests) + "\n";
  if (h.workload_seed) out += "workload_seed: " + std::to_string(*h.workload_seed) + "\n";
  if (!h.workload_spec.empty()) out += "workload_spec: " + yaml_string(h.workload_spec) + "\n";
  if (!h.session_context_growth.empty())
    out += "session_context_growth: " + yaml_string(h.session_context_growth) + "\n";
  if (!h.server_type.empty() || !h.server_model.empty()) {
    out += "server:\n";
    if (!h.server_type.empty()) out += "    type: " + yaml_string(h.server_type) + "\n";
    if (!h.server_model.empty()) out += "    model: " + yaml_string(h.server_model) + "\n";
  }
  if (h.measured_rtt_ms != 0) out += "network:\n    measured_rtt_ms: " + go_float_g(h.measured_rtt_ms) + "\n";
  else if (h.network) out += "network: {}\n";
  if (!h.goodput_slo_targets.empty()) {
    out += "goodput_slo_targets:\n";
    for (const auto& [cls, t] : h.goodput_slo_targets) {
      out += "    " + yaml_string(cls) + ":";
      if (t.ttft_ms == 0 && t.itl_ms == 0 && t.e2e_ms == 0) {
        out += " {}\n";
        continue;
      }
      out += "\n";
      if (t.ttft_ms != 0) out += "        ttft_ms: " + go_float_g(t.ttft_ms) + "\n";
      if (t.itl_ms != 0) out += "        itl_ms: " + go_float_g(t.itl_ms) + "\n";
      if (t.e2e_ms != 0) out += "        e2e_ms: " + go_float_g(t.e2e_ms) + "\n";
    }
  }
  if (const auto& m = h.observed_kv_metrics) {
    out += "observed_kv_metrics:\n";
    out += "    source: " + yaml_string(m->source) + "\n";
    out += "    hit_rate: " + go_float_g(m->hit_rate) + "\n";
    out += "    block_hits: " + std::to_string(m->block_hits) + "\n";
    out += "    block_queries: " + std::to_string(m->block_queries) + "\n";
    if (m->read_time_total != 0) out += "    read_time_total: " + go_float_g(m->read_time_total) + "\n";
    if (m->write_time_total != 0) out += "    write_time_total: " + go_float_g(m->write_time_total) + "\n";
    if (!m->vllm_commit.empty()) out += "    vllm_commit: " + yaml_string(m->vllm_commit) + "\n";
  }
  return out;
}

namespace {

// The columns a trace writes only when some row has a value for them.
struct WrittenColumns {
  bool slo_target = false, x_request = false, adapter = false, think = false, priority = false;
};

WrittenColumns written_columns(const TraceHeader& h, const std::vector<TraceRecord>& records) {
  WrittenColumns c;
  for (const TraceRecord& r : records) {
    c.slo_target = c.slo_target || r.slo_target_us > 0;
    c.x_request = c.x_request || (h.mode == "real" && !r.x_request_id.empty());
    c.adapter = c.adapter || !r.adapter.empty();
    c.think = c.think || r.think_time_us != 0;
    c.priority = c.priority || r.vllm_priority != 0 || (!r.slo_class.empty() && h.mode == "real");
  }
  return c;
}

void write_header_row(std::string& out, const WrittenColumns& c) {
  for (size_t i = 0; i < kColumns.size(); ++i) {
    if (i > 0) out += ',';
    out += kColumns[i];
    if (i == 3 && c.priority) out += ",vllm_priority";
    if (kColumns[i] == "deadline_us" && c.slo_target) out += ",slo_target_us";
  }
  if (c.x_request) out += ",x_request_id";
  if (c.adapter) out += ",adapter";
  if (c.think) out += ",think_time_us";
  out += '\n';
}

// A row is its fields joined by commas, appended one at a time (no
// temporaries joined with '+').
void write_data_row(std::string& out, const TraceRecord& r, const WrittenColumns& c) {
  bool first = true;
  auto put = [&](const std::string& field) {
    if (!first) out += ',';
    first = false;
    out += field;
  };
  auto num = [&](int64_t v) { put(std::to_string(v)); };
  num(r.request_id);
  put(csv_field(r.client_id));
  put(csv_field(r.tenant_id));
  put(csv_field(r.slo_class));
  if (c.priority) num(r.vllm_priority);
  put(csv_field(r.session_id));
  num(r.round_index);
  put(csv_field(r.prefix_group));
  num(r.prefix_length);
  put(r.streaming ? "true" : "false");
  for (int64_t v : {r.input_tokens, r.output_tokens, r.text_tokens, r.image_tokens, r.audio_tokens, r.video_tokens})
    num(v);
  put(go_float_f(r.reason_ratio));
  put(csv_field(r.model));
  num(r.deadline_us);
  if (c.slo_target) num(r.slo_target_us);
  for (int64_t v : {r.server_input_tokens, r.arrival_time_us, r.send_time_us, r.first_chunk_time_us,
                    r.last_chunk_time_us, r.num_chunks})
    num(v);
  put(csv_field(r.status));
  put(csv_field(r.error_message));
  put(csv_field(r.finish_reason));
  if (c.x_request) put(csv_field(r.x_request_id));
  if (c.adapter) put(csv_field(r.adapter));
  if (c.think) num(r.think_time_us);
  out += '\n';
}

}  // namespace

std::string trace_data_csv(const TraceHeader& h, const std::vector<TraceRecord>& records) {
  const WrittenColumns columns = written_columns(h, records);
  std::string out;
  write_header_row(out, columns);
  for (const TraceRecord& r : records) write_data_row(out, r, columns);
  return out;
}

}  // namespace blis::workload
