#include "config/saturation_file.hpp"
#include "config/strict_yaml.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

namespace blis::config {

namespace {

constexpr std::array<std::string_view, 2> kTop = {"threshold", "backlog_drift"};
constexpr std::array<std::string_view, 1> kThresholdKeys = {"threshold_ms"};
constexpr std::array<std::string_view, 9> kDriftKeys = {
    "window_size_sec", "min_windows",    "peak_ratio",   "peak_ratio_band",       "confidence_ci",
    "warmup_windows",  "tail_windows",   "saturated_drain_ratio", "transient_drain_ratio"};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ConfigError(where, "saturation config: " + what);
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

// A block's non-null fields with their positions.
struct Block {
  const StrictYaml& y;
  std::string prefix;
  std::map<std::string, YAML::Node> f;
  bool has(const char* k) const { return f.count(k) != 0; }
  std::string where(const char* k) const { return y.where(f.at(k).Mark()); }
  double number(const char* k) const { return y.number(f.at(k), child_path(prefix, k)); }
  int64_t integer(const char* k) const { return y.integer(f.at(k), child_path(prefix, k)); }
};

Block read_block(const StrictYaml& y, const YAML::Node& v, const std::string& name, KeyList keys) {
  Block b{y, name, {}};
  for (const auto& [key, w] : y.entries(y.mapping(v, name), name, keys))
    if (!w.IsNull()) b.f[key] = w;
  return b;
}

void read_threshold(const StrictYaml& y, const YAML::Node& v, SaturationFile& out) {
  const Block b = read_block(y, v, "threshold", kThresholdKeys);
  if (!b.has("threshold_ms")) return;
  out.threshold_ms = b.number("threshold_ms");
  if (!(std::isfinite(out.threshold_ms) && out.threshold_ms > 0))
    fail(b.where("threshold_ms"),
         fmt::format("threshold.threshold_ms must be a finite value > 0, got {}", out.threshold_ms));
}

void read_drift(const StrictYaml& y, const YAML::Node& v, SaturationFile& out) {
  const Block b = read_block(y, v, "backlog_drift", kDriftKeys);
  auto integer = [&](const char* k, int64_t& field, int64_t lo, const char* bound) {
    if (!b.has(k)) return;
    field = b.integer(k);
    if (field < lo) fail(b.where(k), fmt::format("backlog_drift.{} must be {}, got {}", k, bound, field));
  };
  integer("window_size_sec", out.window_size_sec, 1, "> 0");
  out.has_backlog_drift_window = b.has("window_size_sec");
  // blis keeps windows in 64-bit microseconds: a bound of its own.
  if (out.window_size_sec > 1'000'000'000)
    fail(b.where("window_size_sec"),
         fmt::format("backlog_drift.window_size_sec must be at most 1000000000, got {}", out.window_size_sec));
  integer("min_windows", out.min_windows, 1, "> 0");
  integer("warmup_windows", out.warmup_windows, 0, ">= 0");
  integer("tail_windows", out.tail_windows, 0, ">= 0");
  auto number = [&](const char* k, double& field, bool ok(double), const char* bound) {
    if (!b.has(k)) return;
    field = b.number(k);
    if (!std::isfinite(field) || !ok(field))
      fail(b.where(k), fmt::format("backlog_drift.{} must be {}, got {}", k, bound, field));
  };
  number("peak_ratio", out.peak_ratio, [](double x) { return x > 0; }, "a finite value > 0");
  number("peak_ratio_band", out.peak_ratio_band, [](double x) { return x >= 0; }, ">= 0");
  number("confidence_ci", out.confidence_ci, [](double x) { return x > 0 && x < 1; }, "in (0, 1)");
  number("saturated_drain_ratio", out.saturated_drain_ratio, [](double x) { return x > 0 && x <= 1; }, "in (0, 1]");
  number("transient_drain_ratio", out.transient_drain_ratio, [](double x) { return x > 0 && x <= 1; }, "in (0, 1]");
  if (out.saturated_drain_ratio > out.transient_drain_ratio)
    fail(y.where(v.Mark()),
         fmt::format("backlog_drift.saturated_drain_ratio ({}) must be <= transient_drain_ratio ({}); regions "
                     "would overlap",
                     out.saturated_drain_ratio, out.transient_drain_ratio));
}

}  // namespace

SaturationFile read_saturation_file(const std::string& path, const std::vector<std::string>& detectors) {
  const std::string text = read_text_file(path, "--saturation-config file");
  const StrictYaml y(path, StrictYaml::Position::kLineColumn);
  SaturationFile out;
  const auto doc = y.first_document(text);
  if (!doc || doc->IsNull()) return out;
  std::optional<YAML::Node> threshold, drift;
  for (const auto& [key, v] : y.entries(y.mapping(*doc, ""), "", kTop)) {
    if (v.IsNull()) continue;  // "threshold:" alone: no block, as HEAD reads it
    (key == "threshold" ? threshold : drift) = v;
  }
  auto selected = [&](const char* name) {
    return std::find(detectors.begin(), detectors.end(), name) != detectors.end();
  };
  // A block belongs to its detector: one the run does not select is an error.
  if (threshold && !selected("threshold"))
    fail(y.where(threshold->Mark()),
         fmt::format("threshold block is not valid for --detectors \"{}\" (threshold is not among the selected "
                     "detectors)",
                     joined(detectors)));
  if (drift && !selected("backlog-drift"))
    fail(y.where(drift->Mark()),
         fmt::format("backlog_drift block is not valid for --detectors \"{}\" (backlog-drift is not among the "
                     "selected detectors)",
                     joined(detectors)));
  if (threshold) read_threshold(y, *threshold, out);
  if (drift) read_drift(y, *drift, out);
  return out;
}

}  // namespace blis::config
