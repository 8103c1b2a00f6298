// `blis calibrate`'s comparison (trace_v2.hpp): observed latencies of a
// TraceV2 against a replay's per-request SimResults, as BLIS HEAD reports
// them: pairs by request id past the warm-up, the network's RTT and
// bandwidth added to the simulated side, then per metric the workload-level
// means and percentiles and the request-level MAPE, Pearson r, bias and a
// quality rating.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "blis/errors.hpp"
#include "util/files.hpp"
#include "util/json_format.hpp"
#include "util/sorted_percentile.hpp"
#include "workload/csv_line.hpp"
#include "workload/trace_v2.hpp"

namespace blis::workload {

namespace {

struct Pair {
  std::vector<double> real, sim;
};

struct Breakdown {
  Pair ttft, e2e;
};

struct Pairs {
  Pair ttft, e2e, itl;
  std::map<std::string, Breakdown> by_slo, by_model;
  int64_t token_mismatches = 0, excluded_warm_up = 0, matched = 0, unmatched_real = 0, unmatched_sim = 0,
          itl_dropped = 0;
};

// Bits per token: 4 bytes a token, as HEAD models the wire.
double transfer_delay_us(double bandwidth_mbps, int64_t tokens) {
  if (bandwidth_mbps <= 0) return 0;
  const double bits = static_cast<double>(tokens * 4) * 8;
  return bits / (bandwidth_mbps * 1e6) * 1e6;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxy = 0, sx2 = 0, sy2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxy += x[i] * y[i];
    sx2 += x[i] * x[i];
    sy2 += y[i] * y[i];
  }
  const double num = n * sxy - sx * sy;
  const double den = std::sqrt((n * sx2 - sx * sx) * (n * sy2 - sy * sy));
  if (den == 0) return 0;
  return num / den;
}

double mape_pct(const std::vector<double>& real, const std::vector<double>& sim) {
  double sum = 0;
  int64_t count = 0;
  for (size_t i = 0; i < real.size(); ++i) {
    if (real[i] == 0 || !std::isfinite(real[i])) continue;
    const double e = std::fabs(real[i] - sim[i]) / real[i];
    if (!std::isfinite(e)) continue;
    sum += e;
    ++count;
  }
  return count == 0 ? 0 : sum / static_cast<double>(count);
}

std::string quality(double mape, double r) {
  if (mape < 0.10 && r > 0.95) return "excellent";
  if (mape < 0.20 && r > 0.85) return "good";
  if (mape < 0.35 && r > 0.70) return "fair";
  return "poor";
}

struct Comparison {
  double real_mean = 0, sim_mean = 0;
  double real_p[4] = {}, sim_p[4] = {};  // p50, p90, p95, p99
  double mape = 0, pearson_r = 0;
  std::string bias, quality;
  int64_t count = 0;
};

constexpr double kPercentiles[4] = {50, 90, 95, 99};
constexpr const char* kPercentileNames[4] = {"p50", "p90", "p95", "p99"};

Comparison compare(const Pair& p) {
  Comparison c;
  c.count = static_cast<int64_t>(p.real.size());
  double rs = 0, ss = 0;
  for (size_t i = 0; i < p.real.size(); ++i) {
    rs += p.real[i];
    ss += p.sim[i];
  }
  const double n = static_cast<double>(p.real.size());
  c.real_mean = rs / n;
  c.sim_mean = ss / n;
  std::vector<double> rsorted = p.real, ssorted = p.sim;
  std::sort(rsorted.begin(), rsorted.end());
  std::sort(ssorted.begin(), ssorted.end());
  for (int k = 0; k < 4; ++k) {
    c.real_p[k] = sorted_percentile(rsorted, kPercentiles[k]);
    c.sim_p[k] = sorted_percentile(ssorted, kPercentiles[k]);
  }
  double sum = 0, bias = 0;
  int64_t count = 0;
  for (size_t i = 0; i < p.real.size(); ++i) {
    if (p.real[i] == 0) continue;
    sum += std::fabs(p.real[i] - p.sim[i]) / p.real[i];
    ++count;
    bias += p.sim[i] - p.real[i];
  }
  if (count > 0) {
    c.mape = sum / static_cast<double>(count);
    c.bias = bias > 0 ? "over-predict" : bias < 0 ? "under-predict" : "neutral";
  }
  if (p.real.size() >= 3) c.pearson_r = pearson(p.real, p.sim);
  c.quality = quality(c.mape, c.pearson_r);
  return c;
}

// Go's encoding/json with MarshalIndent(v, "", "  "), written by hand so the
// members keep HEAD's order.
class Json {
 public:
  void open(const std::string& key, char bracket) {
    member(key);
    out_ += bracket;
    first_.push_back(true);
  }
  void close(char bracket) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ += bracket;
  }
  void number(const std::string& key, double v) { value(key, go_float(v)); }
  void integer(const std::string& key, int64_t v) { value(key, std::to_string(v)); }
  void string(const std::string& key, const std::string& v) { value(key, go_string(v)); }
  void boolean(const std::string& key, bool v) { value(key, v ? "true" : "false"); }
  std::string text() const { return out_; }

 private:
  void value(const std::string& key, const std::string& v) {
    member(key);
    out_ += v;
  }
  void member(const std::string& key) {
    if (first_.empty()) return;  // the top-level value
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    newline();
    if (!key.empty()) out_ += go_string(key) + ": ";
  }
  void newline() {
    out_ += '\n';
    out_.append(2 * first_.size(), ' ');
  }
  std::string out_;
  std::vector<bool> first_;
};

void write_metric(Json& j, const std::string& name, const Comparison& c) {
  j.open(name, '{');
  j.open("workload_level", '{');
  auto err = [](double sim, double real) { return sim - real; };
  auto pct = [](double sim, double real) { return real > 0 ? std::fabs(sim - real) / real : 0.0; };
  j.number("real_mean", c.real_mean);
  j.number("sim_mean", c.sim_mean);
  j.number("mean_error", err(c.sim_mean, c.real_mean));
  j.number("mean_percent_error", pct(c.sim_mean, c.real_mean));
  j.number("real_median", c.real_p[0]);
  j.number("sim_median", c.sim_p[0]);
  j.number("median_error", err(c.sim_p[0], c.real_p[0]));
  j.number("median_percent_error", pct(c.sim_p[0], c.real_p[0]));
  for (int k = 0; k < 4; ++k) {
    const std::string p = kPercentileNames[k];
    j.number("real_" + p, c.real_p[k]);
    j.number("sim_" + p, c.sim_p[k]);
    j.number(p + "_error", err(c.sim_p[k], c.real_p[k]));
    j.number(p + "_percent_error", pct(c.sim_p[k], c.real_p[k]));
  }
  j.close('}');
  j.open("request_level", '{');
  j.number("mape", c.mape);
  j.number("pearson_r", c.pearson_r);
  j.string("bias_direction", c.bias);
  j.string("quality", c.quality);
  j.close('}');
  j.integer("count", c.count);
  j.close('}');
}

// blis's own words for what the comparison cannot see.
const std::vector<std::string>& known_limitations() {
  static const std::vector<std::string> kLimits = {
      "The simulator advances in whole batch steps; a real engine's continuous batching can make TTFT "
      "under heavy load differ systematically.",
      "Prompt tokens are synthesised (shared prefixes included), so prefix-cache hits can differ from the "
      "real server's, most after evictions.",
      "Speculative decoding on the real server generates tokens in a pattern the simulator's one token per "
      "step does not reproduce.",
      "Token mismatches compare the server-reported prompt length when the trace has it; with prefix "
      "caching they are usually the KV block rounding (at most one block of tokens), not corrupt data.",
  };
  return kLimits;
}

std::string fmt_us(double v) { return fmt::format("{:.0f}", v); }
std::string fmt_signed_us(double v) { return fmt::format("{:+.0f}", v); }
std::string fmt_pct(double v) { return fmt::format("{:.1f}", v); }

// HEAD's goodput comparison of the trace header's targets: per class, the
// share of matched requests meeting every target, observed and simulated.
struct GoodputClass {
  int64_t count = 0, real_good = 0, sim_good = 0;
  int64_t real_met[3] = {}, real_n[3] = {}, sim_met[3] = {}, sim_n[3] = {};  // ttft, itl, e2e
};

double ratio(int64_t num, int64_t den) { return den == 0 ? 0 : static_cast<double>(num) / static_cast<double>(den); }

// Whether a request meets the targets, counting each dimension checked: TTFT,
// then E2E, then ITL, each only while the earlier ones hold.
bool meets(const TraceSloTargets& t, double ttft_ms, double e2e_ms, std::optional<double> itl_ms, int64_t* met,
           int64_t* n, bool real, bool& itl_missing) {
  bool good = ttft_ms > 0 && e2e_ms > 0 && e2e_ms >= ttft_ms;
  if (t.ttft_ms > 0) {
    if (good) {
      ++n[0];
      if (ttft_ms <= t.ttft_ms) ++met[0];
      else good = false;
    }
  }
  if (t.e2e_ms > 0) {
    if (good) {
      ++n[2];
      if (e2e_ms <= t.e2e_ms) ++met[2];
      else good = false;
    } else if (real) {
      good = false;
    }
  }
  if (t.itl_ms > 0 && good) {
    if (itl_ms) {
      ++n[1];
      if (*itl_ms <= t.itl_ms) ++met[1];
      else good = false;
    } else {
      itl_missing = true;
      good = false;
    }
  }
  return good;
}

}  // namespace

std::string sim_results_json(const std::vector<SimResult>& results) {
  if (results.empty()) return "[]";
  Json j;
  j.open("", '[');
  for (const SimResult& r : results) {
    j.open("", '{');
    j.integer("request_id", r.request_id);
    j.number("ttft_us", r.ttft_us);
    j.number("e2e_us", r.e2e_us);
    j.integer("input_tokens", r.input_tokens);
    j.integer("output_tokens", r.output_tokens);
    if (!r.slo_class.empty()) j.string("slo_class", r.slo_class);
    if (!r.model.empty()) j.string("model", r.model);
    if (r.itl_mean_us != 0) j.number("itl_mean_us", r.itl_mean_us);
    j.close('}');
  }
  j.close(']');
  return j.text();
}

std::vector<SimResult> load_sim_results(const std::string& path) {
  if (files::is_folder(path)) throw InputError(path, "is a directory, not a SimResult JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot read the sim results");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, std::string("parsing sim results JSON: ") + e.what());
  }
  if (doc.is_null()) return {};
  if (!doc.is_array()) throw InputError(path, "parsing sim results JSON: expected an array of SimResult objects");
  std::vector<SimResult> out;
  size_t index = 0;
  for (const auto& e : doc) {
    const std::string at = path + ": entry " + std::to_string(index++);
    if (!e.is_object()) throw InputError(at, "expected an object");
    SimResult r;
    auto num = [&](const char* key, double& v) {
      if (!e.contains(key) || e[key].is_null()) return;
      if (!e[key].is_number()) throw InputError(at, std::string(key) + " must be a number");
      v = e[key].get<double>();
    };
    auto integer = [&](const char* key, int64_t& v) {
      if (!e.contains(key) || e[key].is_null()) return;
      if (!e[key].is_number_integer()) throw InputError(at, std::string(key) + " must be an integer");
      v = e[key].get<int64_t>();
    };
    auto text = [&](const char* key, std::string& v) {
      if (!e.contains(key) || e[key].is_null()) return;
      if (!e[key].is_string()) throw InputError(at, std::string(key) + " must be a string");
      v = e[key].get<std::string>();
    };
    integer("request_id", r.request_id);
    num("ttft_us", r.ttft_us);
    num("e2e_us", r.e2e_us);
    integer("input_tokens", r.input_tokens);
    integer("output_tokens", r.output_tokens);
    text("slo_class", r.slo_class);
    text("model", r.model);
    num("itl_mean_us", r.itl_mean_us);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ItlRecord> load_itl(const std::string& path) {
  if (files::is_folder(path)) throw InputError(path, "is a directory, not an ITL CSV file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the ITL file");
  std::string line;
  std::vector<std::string> f;
  std::vector<ItlRecord> out;
  int64_t line_no = 0;
  bool header = true;
  for (;;) {
    const LineRead got = read_csv_line(in, line);
    if (got == LineRead::kEnd) break;
    ++line_no;
    const std::string at = path + ":" + std::to_string(line_no);
    if (got == LineRead::kTooLong) throw InputError(at, "a line too long for an ITL row");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (header) {
      header = false;
      continue;
    }
    if (!split_csv_line(line, f) || f.size() < 3) throw InputError(at, "expected request_id,chunk_index,timestamp_us");
    ItlRecord r;
    try {
      size_t used = 0;
      r.request_id = std::stoll(f[0], &used);
      if (used != f[0].size()) throw std::invalid_argument("id");
      r.chunk_index = std::stoll(f[1], &used);
      if (used != f[1].size()) throw std::invalid_argument("chunk");
      r.timestamp_us = std::stoll(f[2], &used);
      if (used != f[2].size()) throw std::invalid_argument("time");
    } catch (const std::exception&) {
      throw InputError(at, "expected integers request_id,chunk_index,timestamp_us");
    }
    out.push_back(r);
  }
  if (header) throw InputError(path, "reading ITL CSV header: the file is empty");
  return out;
}

namespace {

// One calibration: the pairs, the ITL pairs, the goodput comparison, then
// the report and its summary (each step a method, in HEAD's order).
struct Calibration {
  Calibration(const TraceV2& t, const std::vector<SimResult>& s, const std::vector<ItlRecord>& i,
              const CalibrationInput& c)
      : trace(t), sim(s), itl(i), in(c), targets(t.header.goodput_slo_targets) {
    for (const SimResult& r : sim) by_id[r.request_id] = &r;  // a repeated id: the last wins
  }

  const TraceV2& trace;
  const std::vector<SimResult>& sim;
  const std::vector<ItlRecord>& itl;
  const CalibrationInput& in;
  const std::map<std::string, TraceSloTargets>& targets;
  std::map<int64_t, const SimResult*> by_id;
  Pairs p;
  std::map<int64_t, bool> matched_ids;
  CalibrationOutcome out;
  double out_runtime_s = 0;
  std::map<std::string, GoodputClass> goodput;
  bool itl_missing = false;
  std::map<std::string, Comparison> metrics;

  void pair_up() {
    for (const TraceRecord& rec : trace.records) {
      if (rec.request_id < in.warm_up_requests) {
        ++p.excluded_warm_up;
        continue;
      }
      const auto it = by_id.find(rec.request_id);
      if (it == by_id.end()) {
        ++p.unmatched_real;
        continue;
      }
      const SimResult& sr = *it->second;
      const double real_ttft = static_cast<double>(rec.first_chunk_time_us - rec.send_time_us);
      const double real_e2e = static_cast<double>(rec.last_chunk_time_us - rec.send_time_us);
      // Corrupt timing (a chunk before the send): not compared, so not a
      // matched pair either (HEAD counts it as both: docs/differences.md 40).
      if (real_ttft < 0 || real_e2e < 0) {
        ++p.unmatched_real;
        continue;
      }
      matched_ids[rec.request_id] = true;
      ++p.matched;
      const int64_t real_input = rec.server_input_tokens > 0 ? rec.server_input_tokens : rec.input_tokens;
      if (real_input != sr.input_tokens || rec.output_tokens != sr.output_tokens) ++p.token_mismatches;
      const double rtt = static_cast<double>(in.network_rtt_us);
      const double up = transfer_delay_us(in.bandwidth_mbps, sr.input_tokens);
      const double down = transfer_delay_us(in.bandwidth_mbps, sr.output_tokens);
      const double sim_ttft = sr.ttft_us + rtt + up;
      const double sim_e2e = sr.e2e_us + rtt + up + down;
      p.ttft.real.push_back(real_ttft);
      p.ttft.sim.push_back(sim_ttft);
      p.e2e.real.push_back(real_e2e);
      p.e2e.sim.push_back(sim_e2e);
      for (auto [key, map] : {std::pair{&sr.slo_class, &p.by_slo}, std::pair{&sr.model, &p.by_model}}) {
        if (key->empty()) continue;
        Breakdown& b = (*map)[*key];
        b.ttft.real.push_back(real_ttft);
        b.ttft.sim.push_back(sim_ttft);
        b.e2e.real.push_back(real_e2e);
        b.e2e.sim.push_back(sim_e2e);
      }
    }
    for (const SimResult& r : sim)
      if (!matched_ids.count(r.request_id)) ++p.unmatched_sim;
  }

  void pair_itl() {
    if (!itl.empty()) {
      std::map<int64_t, std::vector<ItlRecord>> chunks_of;
      for (const ItlRecord& r : itl) chunks_of[r.request_id].push_back(r);
      for (const TraceRecord& rec : trace.records) {
        if (rec.request_id < in.warm_up_requests) continue;
        const auto it = by_id.find(rec.request_id);
        if (it == by_id.end()) continue;
        auto c = chunks_of.find(rec.request_id);
        if (c == chunks_of.end() || c->second.size() < 2) continue;
        std::vector<ItlRecord>& chunks = c->second;
        std::stable_sort(chunks.begin(), chunks.end(),
                         [](const ItlRecord& a, const ItlRecord& b) { return a.chunk_index < b.chunk_index; });
        double sum = 0;
        int64_t count = 0;
        for (size_t i = 1; i < chunks.size(); ++i) {
          const double d = static_cast<double>(chunks[i].timestamp_us - chunks[i - 1].timestamp_us);
          if (d < 0) continue;
          sum += d;
          ++count;
        }
        if (count == 0) {
          out.log_lines.push_back(fmt::format("warning: calibrate: request {} ITL dropped (all {} deltas negative, "
                                              "likely clock skew)",
                                              rec.request_id, chunks.size() - 1));
          ++p.itl_dropped;
          continue;
        }
        const SimResult& sr = *it->second;
        const double sim_itl =
            sr.output_tokens > 1 ? (sr.e2e_us - sr.ttft_us) / static_cast<double>(sr.output_tokens - 1) : 0.0;
        p.itl.real.push_back(sum / static_cast<double>(count));
        p.itl.sim.push_back(sim_itl);
      }
    }
  }

  // The observed mean ITL (ms) of a request from the ITL file: positive gaps only.
  std::optional<double> real_itl_ms(int64_t id) const {
    std::vector<ItlRecord> c;
    for (const ItlRecord& r : itl)
      if (r.request_id == id) c.push_back(r);
    if (c.size() < 2) return std::nullopt;
    std::stable_sort(c.begin(), c.end(), [](const ItlRecord& a, const ItlRecord& b) { return a.chunk_index < b.chunk_index; });
    double sum = 0;
    int64_t n = 0;
    for (size_t i = 1; i < c.size(); ++i) {
      const int64_t d = c[i].timestamp_us - c[i - 1].timestamp_us;
      if (d > 0) sum += static_cast<double>(d), ++n;
    }
    if (n == 0) return std::nullopt;
    return sum / static_cast<double>(n) / 1000.0;
  }

  // One matched request of a class with targets, both sides.
  void tally(const TraceRecord& rec, const TraceSloTargets& t, GoodputClass& a) {
    ++a.count;
    if (rec.status == "ok") {
      const double ttft = static_cast<double>(rec.first_chunk_time_us - rec.send_time_us) / 1000.0;
      const double e2e = static_cast<double>(rec.last_chunk_time_us - rec.send_time_us) / 1000.0;
      std::optional<double> itl_ms;
      if (t.itl_ms > 0) itl_ms = real_itl_ms(rec.request_id);
      if (meets(t, ttft, e2e, itl_ms, a.real_met, a.real_n, true, itl_missing)) ++a.real_good;
    }
    const auto s = by_id.find(rec.request_id);
    if (s == by_id.end()) return;
    const SimResult& sr = *s->second;
    std::optional<double> itl_ms;
    if (sr.itl_mean_us / 1000.0 > 0) itl_ms = sr.itl_mean_us / 1000.0;
    if (meets(t, sr.ttft_us / 1000.0, sr.e2e_us / 1000.0, itl_ms, a.sim_met, a.sim_n, false, itl_missing))
      ++a.sim_good;
  }

  // HEAD's goodput comparison of the header's targets over the matched requests.
  void compare_goodput() {
    if (targets.empty()) return;
    std::map<int64_t, bool> matched;
    for (const TraceRecord& rec : trace.records)
      if (rec.request_id >= in.warm_up_requests && by_id.count(rec.request_id)) matched[rec.request_id] = true;
    int64_t first_send = -1, last_chunk = 0;
    for (const TraceRecord& rec : trace.records) {
      if (!matched.count(rec.request_id)) continue;
      if (first_send == -1 || rec.send_time_us < first_send) first_send = rec.send_time_us;
      last_chunk = std::max(last_chunk, rec.last_chunk_time_us);
    }
    out_runtime_s = first_send >= 0 && last_chunk > first_send ? static_cast<double>(last_chunk - first_send) / 1e6 : 0;
    for (const auto& [cls, t] : targets) goodput[cls];
    for (const TraceRecord& rec : trace.records) {
      const bool counted = rec.status == "ok" || rec.status == "error" || rec.status == "timeout";
      if (!counted || !matched.count(rec.request_id)) continue;
      const auto t = targets.find(rec.slo_class.empty() ? "default" : rec.slo_class);
      if (t != targets.end()) tally(rec, t->second, goodput[t->first]);
    }
  }

  void write_goodput(Json& j) const {
    if (targets.empty()) return;
    {
      j.open("goodput", '{');
      j.open("targets", '{');
      for (const auto& [cls, t] : targets) {
        j.open(cls, '{');
        j.number("TTFTMs", t.ttft_ms);
        j.number("ITLMs", t.itl_ms);
        j.number("E2EMs", t.e2e_ms);
        j.close('}');
      }
      j.close('}');
      j.open("per_class", '{');
      for (const auto& [cls, a] : goodput) {
        const TraceSloTargets& t = targets.at(cls);
        j.open(cls, '{');
        j.integer("count", a.count);
        j.number("real_slo_attainment", ratio(a.real_good, a.count));
        j.number("sim_slo_attainment", ratio(a.sim_good, a.count));
        j.number("real_goodput_rps", out_runtime_s > 0 ? static_cast<double>(a.real_good) / out_runtime_s : 0);
        j.number("sim_goodput_rps", out_runtime_s > 0 ? static_cast<double>(a.sim_good) / out_runtime_s : 0);
        const bool any = t.ttft_ms > 0 || t.itl_ms > 0 || t.e2e_ms > 0;
        for (const auto& [key, met, n] : {std::tuple{"real_attainment_by_dim", a.real_met, a.real_n},
                                          std::tuple{"sim_attainment_by_dim", a.sim_met, a.sim_n}}) {
          if (!any) continue;
          j.open(key, '{');  // Go prints a map's keys sorted: e2e, itl, ttft
          if (t.e2e_ms > 0) j.number("e2e", ratio(met[2], n[2]));
          if (t.itl_ms > 0) j.number("itl", ratio(met[1], n[1]));
          if (t.ttft_ms > 0) j.number("ttft", ratio(met[0], n[0]));
          j.close('}');
        }
        j.close('}');
      }
      j.close('}');
      if (itl_missing) j.boolean("skipped_itl", true);
      j.close('}');
    }
  }

  void write_json() {
    Json j;
    j.open("", '{');
    j.open("trace_info", '{');
    j.integer("num_requests", p.matched + p.excluded_warm_up + p.unmatched_real);
    j.integer("warm_up_excluded", p.excluded_warm_up);
    j.integer("matched_pairs", p.matched);
    j.integer("token_mismatches", p.token_mismatches);
    if (p.itl_dropped != 0) j.integer("itl_dropped", p.itl_dropped);
    j.close('}');
    j.open("metrics", '{');
    for (const auto& [name, c] : metrics) write_metric(j, name, c);  // sorted by name, as Go's maps
    j.close('}');
    j.open("config_match", '{');
    j.close('}');
    j.open("known_limitations", '[');
    for (const std::string& s : known_limitations()) j.string("", s);
    j.close(']');
    write_goodput(j);
    const Comparison& ttft = metrics.at("ttft");
    j.open("ttft_tolerance", '{');
    j.number("mape", ttft.mape);
    j.number("threshold", in.ttft_mape_threshold);
    j.boolean("within", ttft.mape <= in.ttft_mape_threshold);
    j.close('}');
    j.close('}');
    out.report_json = j.text();
  }

  static std::string label(const std::string& name) {
    return name == "ttft" ? "TTFT:" : name == "e2e" ? "E2E: " : "ITL: ";
  }

  // The workload-level lines of one metric.
  void log_workload(const std::string& name, const Comparison& c) {
    const double mean_err = c.sim_mean - c.real_mean;
    const double mean_pct = c.real_mean > 0 ? std::fabs(mean_err) / c.real_mean : 0;
    out.log_lines.push_back(fmt::format("  {} Real mean={}µs, Sim mean={}µs, Error={}µs ({}%)", label(name),
                                        fmt_us(c.real_mean), fmt_us(c.sim_mean), fmt_signed_us(mean_err),
                                        fmt_pct(mean_pct * 100)));
    for (int k = 0; k < 4; ++k) {
      const double e = c.sim_p[k] - c.real_p[k];
      const double pct = c.real_p[k] > 0 ? std::fabs(e) / c.real_p[k] : 0;
      out.log_lines.push_back(fmt::format("        P{}: Real={}µs, Sim={}µs, Error={}µs ({}%)",
                                          static_cast<int>(kPercentiles[k]), fmt_us(c.real_p[k]),
                                          fmt_us(c.sim_p[k]), fmt_signed_us(e), fmt_pct(pct * 100)));
    }
  }

  // The per-class (or per-model) lines.
  void log_breakdown(const char* title, const char* what, const std::map<std::string, Breakdown>& map) {
    if (map.empty()) return;
    out.log_lines.push_back(title);
    for (const auto& [key, b] : map) {
      if (b.ttft.real.empty()) continue;
      out.log_lines.push_back(fmt::format("  {}={}: n={} TTFT-MAPE={}% E2E-MAPE={}%", what, key, b.ttft.real.size(),
                                          fmt_pct(mape_pct(b.ttft.real, b.ttft.sim) * 100),
                                          fmt_pct(mape_pct(b.e2e.real, b.e2e.sim) * 100)));
    }
  }

  void log_goodput() {
    if (goodput.empty()) return;
    out.log_lines.push_back("Per-SLO-class goodput (real vs sim):");
    const auto rps = [&](int64_t good) { return out_runtime_s > 0 ? static_cast<double>(good) / out_runtime_s : 0; };
    for (const auto& [cls, a] : goodput)
      out.log_lines.push_back(fmt::format(
          "  {}: count={} real_attain={:.3f} sim_attain={:.3f} real_rps={:.3f} sim_rps={:.3f}", cls, a.count,
          ratio(a.real_good, a.count), ratio(a.sim_good, a.count), rps(a.real_good), rps(a.sim_good)));
  }

  // HEAD's summary lines, in its order.
  void write_log() {
    auto& log = out.log_lines;
    const Comparison& ttft = metrics.at("ttft");
    log.push_back(fmt::format("  Matched pairs: {} (warm-up excluded: {}, unmatched real: {}, unmatched sim: {})",
                              p.matched, p.excluded_warm_up, p.unmatched_real, p.unmatched_sim));
    log.push_back("Workload-level aggregate metrics:");
    for (const char* name : {"ttft", "e2e", "itl"})
      if (const auto it = metrics.find(name); it != metrics.end()) log_workload(name, it->second);
    log.push_back("Request-level prediction quality:");
    for (const char* name : {"ttft", "e2e", "itl"})
      if (const auto it = metrics.find(name); it != metrics.end())
        log.push_back(fmt::format("  {} MAPE={}%, PearsonR={:.3f}, Bias={}, Quality={}", label(name),
                                  fmt_pct(it->second.mape * 100), it->second.pearson_r, it->second.bias,
                                  it->second.quality));
    log.push_back(fmt::format("TTFT MAPE={}% (threshold {}%) [{}]", fmt_pct(ttft.mape * 100),
                              fmt_pct(in.ttft_mape_threshold * 100),
                              ttft.mape <= in.ttft_mape_threshold ? "WITHIN" : "EXCEEDS"));
    if (itl_missing)
      log.push_back("warning: calibrate goodput: ITL gating skipped — ITL data missing on real or sim side; TTFT/E2E "
                    "rows still computed.");
    log_breakdown("Per-SLO-class calibration:", "SLO", p.by_slo);
    log_goodput();
    log_breakdown("Per-model calibration:", "model", p.by_model);
  }
};

}  // namespace

CalibrationOutcome calibrate_report(const TraceV2& trace, const std::vector<SimResult>& sim,
                                    const std::vector<ItlRecord>& itl, const CalibrationInput& in,
                                    const std::string& sim_where) {
  Calibration c(trace, sim, itl, in);
  c.pair_up();
  c.pair_itl();
  c.compare_goodput();
  const Pairs& p = c.p;
  if (p.matched == 0)
    throw InputError(sim_where, "no request id of the sim results matches one of the trace (past the warm-up): "
                                "both files must number requests alike");
  if (p.ttft.real.empty())
    throw InputError(sim_where, "no valid latency pairs: every matched request of the trace has negative "
                                "latencies (corrupt timing)");

  c.metrics["ttft"] = compare(p.ttft);
  c.metrics["e2e"] = compare(p.e2e);
  if (!p.itl.real.empty()) c.metrics["itl"] = compare(p.itl);
  c.write_json();
  c.write_log();
  return c.out;
}

}  // namespace blis::workload
