#include "metrics/fitness.hpp"
#include "util/compact_text.hpp"
#include "util/text.hpp"

#include "metrics/stats.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace blis {

namespace {

constexpr const char* kValidKeys =
    "throughput, tokens_per_sec, p99_ttft, p50_ttft, mean_ttft, p99_e2e, p50_e2e, mean_e2e";

bool valid_key(const std::string& k) {
  for (const char* v : {"throughput", "tokens_per_sec", "p99_ttft", "p50_ttft", "mean_ttft",
                        "p99_e2e", "p50_e2e", "mean_e2e"})
    if (k == v) return true;
  return false;
}

}  // namespace

std::map<std::string, double> parse_fitness_weights(const std::string& text, const std::string& where) {
  std::map<std::string, double> out;
  if (text.empty()) return out;
  for (const std::string& raw : compact::items(text, ',', where)) {
    const std::string piece = text::trim(raw);
    const size_t colon = piece.find(':');
    if (colon == std::string::npos)
      throw InputError(where, fmt::format("invalid fitness weight \"{}\": expected key:value", piece));
    const std::string key = text::trim(piece.substr(0, colon));
    const std::string value = text::trim(piece.substr(colon + 1));
    char* end = nullptr;
    const double w = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0')
      throw InputError(where, fmt::format("invalid fitness weight value for \"{}\": \"{}\" is not a number", key, value));
    if (!std::isfinite(w) || w < 0)
      throw InputError(where,
                       fmt::format("invalid weight for \"{}\": must be a finite non-negative number, got {}", key, w));
    // Unknown keys are refused up front (the reference found them only after
    // the simulation, with its metrics already printed).
    if (!valid_key(key))
      throw InputError(where, fmt::format("unknown fitness metric key \"{}\"; valid keys: {}", key, kValidKeys));
    out[key] = w;  // a repeated key keeps the last value
  }
  return out;
}

Fitness evaluate_fitness(const InstanceMetrics& m, const std::map<std::string, double>& weights) {
  // spec cluster §6.2: latencies in ticks normalised by 1/(1 + x/1000),
  // throughputs by x/(x + 100) and x/(x + 10000).
  const Summary t = summarize_copy(m.ttft, 1), e = summarize_copy(m.e2e, 1);
  const double secs = static_cast<double>(m.end_time) / 1e6;
  const bool rates = m.end_time > 0 && m.completed > 0;
  const double rps = rates ? static_cast<double>(m.completed) / secs : 0;
  const double tps = rates ? static_cast<double>(m.output_tokens) / secs : 0;
  auto latency = [](double x) { return 1.0 / (1.0 + x / 1000.0); };
  Fitness f;
  for (const auto& [key, w] : weights) {
    double v = 0;
    if (key == "throughput") v = rps / (rps + 100.0);
    else if (key == "tokens_per_sec") v = tps / (tps + 10000.0);
    else if (key == "p99_ttft") v = latency(t.p99);
    else if (key == "p50_ttft") v = latency(t.p50);
    else if (key == "mean_ttft") v = latency(t.mean);
    else if (key == "p99_e2e") v = latency(e.p99);
    else if (key == "p50_e2e") v = latency(e.p50);
    else if (key == "mean_e2e") v = latency(e.mean);
    f.components[key] = v;
    f.score += v * w;
  }
  return f;
}

std::string fitness_block(const Fitness& f) {
  std::string out = fmt::format("=== Fitness Evaluation ===\nScore: {:.6f}\n", f.score);
  for (const auto& [k, v] : f.components) out += fmt::format("  {}: {:.6f}\n", k, v);
  return out;
}

}  // namespace blis
