#include "metrics/goodput.hpp"

#include <algorithm>
#include <map>

#include "metrics/stats.hpp"
#include "util/compact_text.hpp"
#include "util/go_duration.hpp"
#include "util/json_format.hpp"
#include "util/text.hpp"
#include "workload/slo_class.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace blis {

GoodputTracker::GoodputTracker(SloTargetMap targets) {
  result_.targets = std::move(targets);
  for (const auto& [slo, t] : result_.targets) {
    const char* n = workload::slo_class_name(slo);
    result_.classes[n[0] ? n : "default"].targeted = {t.ttft_ms > 0, t.itl_ms > 0, t.e2e_ms > 0};
  }
}

GoodputClass& GoodputTracker::cls(const Request& r) {
  const char* n = workload::slo_class_name(r.spec.slo_class);
  return result_.classes[n[0] ? n : "default"];
}

void GoodputTracker::on_completed(Request& r, SimTime) {
  if (!on(r) || r.timing.e2e() < 0) return;
  const SloTargets& t = result_.targets.at(r.spec.slo_class);
  GoodputClass& c = cls(r);
  const double ttft_ms = static_cast<double>(r.timing.ttft()) / 1e3;
  const double itl_ms = r.timing.itl_avg() / 1e3;
  const double e2e_ms = static_cast<double>(r.timing.e2e()) / 1e3;
  bool good = true;
  const std::array<std::pair<double, double>, 3> dims{
      {{t.ttft_ms, r.timing.ttft() >= 0 ? ttft_ms : INFINITY}, {t.itl_ms, itl_ms}, {t.e2e_ms, e2e_ms}}};
  for (size_t d = 0; d < 3; ++d) {
    if (dims[d].first <= 0) continue;
    ++c.counted[d];
    if (dims[d].second <= dims[d].first) ++c.met[d];
    else good = false;
  }
  if (good) {
    ++c.good;
    if (!interval_good_.empty())
      ++interval_good_[static_cast<size_t>(pool_of_[static_cast<size_t>(r.instance)])];
  }
  if (r.timing.ttft() >= 0) c.ttft.push_back(r.timing.ttft());
  c.e2e.push_back(r.timing.e2e());
  c.itl.push_back(r.timing.itl_avg());
  c.itl_ids.push_back(r.spec.id);
}

void GoodputTracker::series_start(const std::vector<int32_t>& pool_of, size_t pools) {
  pool_of_ = pool_of;
  interval_good_.assign(pools, 0);
}

void GoodputTracker::series_cells(size_t pool, std::string& out) const {
  out += fmt::format(",{}", interval_good_[pool]);
}

void GoodputTracker::series_next() { std::fill(interval_good_.begin(), interval_good_.end(), 0); }

void GoodputTracker::cluster_members(const ReportScope& s, ClusterPlace place, std::string& out) const {
  if (place == ClusterPlace::Figures) out += goodput_json(result_, s.runtime_s);
}

void GoodputTracker::table_lines(const ReportScope& s, TablePlace place, std::string& out) const {
  if (place != TablePlace::Latency || !result_.enabled()) return;
  const auto [rps, attainment] = goodput_totals(result_, s.runtime_s);
  out += fmt::format("goodput      {:.2f} requests/s within the SLO targets; attainment {:.1f} %\n", rps,
                     100 * attainment);
}

void GoodputTracker::figures(const ReportScope& s, std::vector<MetricField>& out) const {
  if (!result_.enabled()) return;
  const auto [rps, attainment] = goodput_totals(result_, s.runtime_s);
  out.push_back({"goodput_rps", rps, false});
  out.push_back({"slo_attainment", attainment, false});
}

void GoodputTracker::shape(ReportContext& ctx) const { ctx.per_slo_always = ctx.per_slo_always || result_.enabled(); }

std::pair<double, double> goodput_totals(const Goodput& g, double runtime_s) {
  int64_t good = 0, arrived = 0;
  for (const auto& [name, c] : g.classes) good += c.good, arrived += c.arrived;
  const double rps = runtime_s > 0 ? static_cast<double>(good) / runtime_s : 0;
  const double attainment = arrived > 0 ? static_cast<double>(good) / static_cast<double>(arrived) : 0;
  return {rps, attainment};
}

namespace {

// One class's members of "per_class" (after its opening brace), in the
// order of their names, as HEAD's map prints them.
std::string class_json(const GoodputClass& c, const RequestNames& request_names, double runtime_s) {
  const double class_rps = runtime_s > 0 ? static_cast<double>(c.good) / runtime_s : 0;
  const double class_att = c.arrived > 0 ? static_cast<double>(c.good) / static_cast<double>(c.arrived) : 0;
  std::map<std::string, std::string> members;
  members["count"] = std::to_string(c.arrived);
  members["goodput_rps"] = go_float(class_rps);
  members["slo_attainment"] = go_float(class_att);
  std::map<std::string, std::string> dims;
  const char* names[3] = {"ttft", "itl", "e2e"};
  for (size_t d = 0; d < 3; ++d)
    if (c.targeted[d] || c.counted[d] > 0)  // 0 when nothing was counted
      dims[names[d]] = go_float(c.counted[d] > 0 ? static_cast<double>(c.met[d]) / static_cast<double>(c.counted[d])
                                                 : 0);
  if (!dims.empty()) {
    std::string text = "{";
    for (const auto& [name, value] : dims)
      text += fmt::format("{}\n        \"{}\": {}", text.size() > 1 ? "," : "", name, value);
    members["slo_attainment_by_dim"] = text + "\n      }";
  }
  std::vector<int64_t> ttft = c.ttft, e2e = c.e2e;
  const double ttft_p99 = summarize(ttft, 1000).p99, e2e_p99 = summarize(e2e, 1000).p99;
  // Summed in the order of the requests' names (request_10 before request_2,
  // a session's follow-up by its own name), as HEAD does.
  std::vector<std::pair<std::string, size_t>> order(c.itl.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = {request_names(c.itl_ids[k]), k};
  std::sort(order.begin(), order.end());
  double itl_mean = 0;
  for (const auto& [name, k] : order) itl_mean += c.itl[k];
  itl_mean = c.itl.empty() ? 0 : itl_mean / static_cast<double>(c.itl.size()) / 1000;
  if (ttft_p99 > 0) members["ttft_p99_ms"] = go_float(ttft_p99);
  if (itl_mean > 0) members["itl_mean_ms"] = go_float(itl_mean);
  if (e2e_p99 > 0) members["e2e_p99_ms"] = go_float(e2e_p99);
  std::string out;
  for (const auto& [name, value] : members) out += fmt::format("{}\n      \"{}\": {}", out.empty() ? "" : ",", name, value);
  return out;
}

}  // namespace

std::string goodput_json(const Goodput& g, double runtime_s) {
  if (!g.enabled()) return "";
  std::string out;
  const auto [rps, attainment] = goodput_totals(g, runtime_s);
  if (rps != 0) out += ",\n  \"goodput_rps\": " + go_float(rps);
  if (attainment != 0) out += ",\n  \"slo_attainment\": " + go_float(attainment);
  out += ",\n  \"per_class\": {";
  bool first = true;
  for (const auto& [name, c] : g.classes) {
    out += (first ? "\n    " : ",\n    ") + go_string(name) + ": {";
    first = false;
    out += class_json(c, g.names, runtime_s);
    out += "\n    }";
  }
  out += g.classes.empty() ? "}" : "\n  }";
  return out;
}

void parse_slo_flag(const std::string& text, int dim, const std::string& where, SloTargetMap& targets) {
  for (const std::string& raw : compact::items(text, ',', where)) {
    const std::string pair = text::trim(raw);
    if (pair.empty()) throw InputError(where, "empty pair; write class=duration, e.g. critical=100ms,default=500ms");
    const auto eq = pair.find('=');
    if (eq == std::string::npos)
      throw InputError(where, fmt::format("'{}' has no '='; write class=duration, e.g. default=500ms", pair));
    const std::string name = text::trim(pair.substr(0, eq));
    if (name.empty()) throw InputError(where, fmt::format("'{}' has no class name", pair));
    const auto cls = workload::slo_class_from_name(name == "default" ? "" : name);
    if (!cls)
      throw InputError(where, fmt::format("unknown SLO class '{}'; classes: default, {}", name,
                                          "critical, standard, sheddable, batch, background"));
    const auto ns = go_duration_ns(text::trim(pair.substr(eq + 1)));
    if (!ns || *ns <= 0)
      throw InputError(where, fmt::format("'{}': the duration must be > 0 with a unit (100ms, 1.5s, 250us)", pair));
    SloTargets& t = targets[*cls];
    // HEAD's float64(d) / float64(time.Millisecond).
    (dim == 0 ? t.ttft_ms : dim == 1 ? t.itl_ms : t.e2e_ms) = static_cast<double>(*ns) / 1e6;
  }
}

}  // namespace blis
