#include "report/report.hpp"

#include "metrics/report.hpp"
#include "report/svg.hpp"
#include "util/output_file.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

namespace blis {
namespace {

namespace fs = std::filesystem;

// The value at `level` of sorted (value, count) pairs: linear interpolation
// between closest ranks, as metrics/stats.cpp.
double quantile(const WeightedValues& v, int64_t total, double level) {
  const double rank = level * static_cast<double>(total - 1);
  const auto lo = static_cast<int64_t>(rank);
  auto at = [&](int64_t k) {
    int64_t seen = 0;
    for (const auto& [value, count] : v) {
      seen += count;
      if (k < seen) return static_cast<double>(value);
    }
    return static_cast<double>(v.back().first);
  };
  const double a = at(lo), b = at(std::min(lo + 1, total - 1));
  return a + (b - a) * (rank - static_cast<double>(lo));
}

std::vector<double> quantiles(WeightedValues v) {
  std::vector<double> out;
  normalize(v);
  int64_t total = 0;
  for (const auto& p : v) total += p.second;
  if (total == 0) return out;
  for (double level : cdf_levels()) out.push_back(quantile(v, total, level) / 1e3);
  return out;
}

WeightedValues weighted(const SampleStore& samples) {
  WeightedValues v;
  v.reserve(samples.size());
  for (int64_t s : samples) v.emplace_back(s, 1);
  return v;
}

const char* const kStyle =
    "body{font-family:'DejaVu Sans',Arial,sans-serif;max-width:1120px;margin:24px auto;padding:0 16px;color:#222}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc;padding-bottom:4px}"
    "p.answer{font-size:17px;font-weight:bold;color:#1a6b1a}"
    "table{border-collapse:collapse;font-size:13px}th,td{padding:3px 9px;border-bottom:1px solid #e3e3e3;"
    "text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}tr.answer td{background:#eaf6ea;"
    "font-weight:bold}.yes{color:#1a6b1a}.no{color:#a00}"
    "figure{margin:12px 0}figcaption{font-size:13px;color:#555;max-width:760px}";

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + svg::escape(title) +
         "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n" + body + "</body>\n</html>\n";
}

struct Files {
  std::string dir;
  std::vector<std::pair<std::string, std::string>> files;  // name, text

  // The chart as a file, and inline in the page with its caption.
  std::string figure(const std::string& name, const std::string& chart, const std::string& caption) {
    files.emplace_back(name, chart);
    return "<figure>\n" + chart + "<figcaption>" + svg::escape(caption) + " (<a href=\"" + name + "\">" + name +
           "</a>)</figcaption>\n</figure>\n";
  }

  void write(const std::string& html) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw RuntimeError(fmt::format("cannot create the report folder {}: {}", dir, ec.message()));
    files.emplace_back("report.html", html);
    for (const auto& [name, text] : files) write_output((fs::path(dir) / name).string(), text, std::cout);
  }
};

svg::Series cdf_series(const std::string& name, const std::vector<double>& q) {
  svg::Series s{name, {}, false, false};
  const auto& levels = cdf_levels();
  for (size_t i = 0; i < q.size() && i < levels.size(); ++i) s.points.emplace_back(q[i], levels[i]);
  return s;
}

std::string fixed(double v) { return fmt::format("{:.2f}", v); }

}  // namespace

const std::vector<double>& cdf_levels() {
  static const std::vector<double> levels = [] {
    std::vector<double> l;
    l.reserve(103);
    for (int i = 0; i < 100; ++i) l.push_back(i / 100.0);
    for (double x : {0.995, 0.999, 1.0}) l.push_back(x);
    return l;
  }();
  return levels;
}

LatencyCdf latency_cdf(const InstanceMetrics& cluster) {
  LatencyCdf c;
  c.ttft_ms = quantiles(weighted(cluster.ttft));
  c.e2e_ms = quantiles(weighted(cluster.e2e));
  c.itl_ms = quantiles(itl_values(cluster));
  return c;
}

void check_report_dir(const std::string& dir, const std::string& where) {
  std::error_code ec;
  if (dir.empty()) throw InputError(where, "needs a folder name");
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw InputError(where, fmt::format("{} exists and is not a folder; give a folder for the report", dir));
    check_writable((fs::path(dir) / "report.html").string(), where);
    return;
  }
  check_writable(dir, where);
}

void write_run_report(const std::string& dir, const RunReport& r) {
  Files f{dir, {}};
  std::string body = "<h1>" + svg::escape(r.title) + "</h1>\n<p>" + svg::escape(r.summary) + "</p>\n";
  body += "<h2>Latency distributions</h2>\n";
  svg::Chart cdf{"Latency CDFs", "latency (ms)", "share of requests (tokens for ITL)", {}, {}, {}, true, false, true};
  if (!r.cdf.ttft_ms.empty()) {
    cdf.series.push_back(cdf_series("TTFT", r.cdf.ttft_ms));
    cdf.series.push_back(cdf_series("ITL", r.cdf.itl_ms));
    cdf.series.push_back(cdf_series("E2E", r.cdf.e2e_ms));
  }
  body += f.figure("latency_cdf.svg", svg::line_chart(cdf),
                   "Share of requests whose latency is at most x: TTFT (arrival to first token), ITL (between "
                   "tokens, each token counted), E2E (arrival to last token).");
  body += "<h2>Over time</h2>\n";
  svg::Chart queue{"Requests waiting and running", "simulated time (s)", "requests (sum over instances)",
                   {{"waiting", {}, false, false}, {"running", {}, false, false}}};
  queue.x_from_zero = true;
  svg::Chart kv{"KV cache in use", "simulated time (s)", "KV blocks held (% of all instances')",
                {{"KV usage", {}, false, false}}};
  kv.x_from_zero = true;
  for (const TimeSeriesPoint& p : r.series) {
    queue.series[0].points.emplace_back(p.t_s, p.waiting);
    queue.series[1].points.emplace_back(p.t_s, p.running);
    kv.series[0].points.emplace_back(p.t_s, r.kv_capacity > 0 ? 100 * p.kv_blocks / r.kv_capacity : 0);
  }
  body += f.figure("queue.svg", svg::line_chart(queue),
                   "Requests in the wait queues and in the running batches, summed over the instances, averaged "
                   "over each time bucket. A queue that keeps growing while traffic lasts means saturation.");
  body += f.figure("kv.svg", svg::line_chart(kv),
                   "KV cache blocks held, as a share of the blocks of all instances, averaged over each time bucket.");
  f.write(page(r.title, body));
}

namespace {

// Whether trial `t` is the plan's answer.
bool is_answer(const PlanReport& r, const PlanReportTrial& t) {
  return r.by_rate ? r.answer_rate > 0 && t.rate == r.answer_rate : t.instances == r.answer_instances;
}

// The trials, as in the table on stdout.
std::string plan_trials(const PlanReport& r) {
  std::string out;
  const std::string x_name = r.by_rate ? "req/s" : "instances";
  out += "<h2>Trials</h2>\n<table>\n<tr><th>" + x_name +
          "</th><th class=\"l\">verdict</th><th>TTFT p99 (ms)</th><th>ITL p99 (ms)</th><th>E2E p99 (ms)</th>"
          "<th>offered (req/s)</th><th>served (req/s)</th><th class=\"l\">meets</th></tr>\n";
  for (const PlanReportTrial& t : r.trials)
    out += fmt::format("<tr{}><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                        "<td>{}</td><td class=\"l {}\">{}</td></tr>\n",
                        is_answer(r, t) ? " class=\"answer\"" : "",
                        r.by_rate ? fmt::format("{:g}", t.rate) : std::to_string(t.instances), svg::escape(t.verdict),
                        fixed(t.ttft_p99), fixed(t.itl_p99), fixed(t.e2e_p99), fixed(t.offered_rps),
                        fixed(t.served_rps), t.pass ? "yes" : "no", t.pass ? "yes" : "no: " + svg::escape(t.why));
  out += "</table>\n";

  return out;
}

// The candidates' minimum counts, when GPUs and TPs were compared.
std::string plan_candidates(Files& f, const PlanReport& r) {
  std::string out;
  if (!r.candidates.empty()) {
    const bool priced = std::all_of(r.candidates.begin(), r.candidates.end(), [](const PlanReportCandidate& c) {
      return c.instances == 0 || c.dollars_per_hour >= 0;
    });
    svg::Bars bars{priced ? "Cost of each candidate's minimum" : "GPUs of each candidate's minimum",
                   priced ? "$ per hour" : "GPUs", {}, {}, r.cheapest, priced ? "${:.2f}" : "{:.0f}"};
    for (const PlanReportCandidate& c : r.candidates) {
      bars.categories.push_back(c.label);
      bars.values.push_back(c.instances == 0 ? -1 : priced ? c.dollars_per_hour : static_cast<double>(c.gpus));
    }
    out += "<h2>Candidates</h2>\n" +
            f.figure("cost.svg", svg::bar_chart(bars),
                     "Each GPU and TP at the fewest instances that meet the targets; \"none\": no count up to "
                     "--max-instances does. The charts below are the cheapest candidate's search.");
  }

  return out;
}

// A table of text cells, the first row highlighted when `first_answer`.
std::string cell_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                       bool first_answer) {
  std::string out = "<table>\n<tr>";
  for (const std::string& h : header) out += "<th>" + svg::escape(h) + "</th>";
  out += "</tr>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += i == 0 && first_answer ? "<tr class=\"answer\">" : "<tr>";
    for (const std::string& c : rows[i]) out += "<td>" + svg::escape(c) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// --search: the screen, the cheapest verified and the Pareto frontier.
std::string plan_search(Files& f, const PlanReport& r) {
  const PlanReportSearch& s = r.search;
  if (!s.on) return "";
  std::string out = "<h2>Deployment search</h2>\n";
  for (const std::string& line : s.lines) out += "<p>" + svg::escape(line) + "</p>\n";
  svg::Chart c{"Tokens/s per GPU against tokens/s per user", "tokens/s per user (1 / mean ITL)",
               "output tokens/s per GPU at the plan's rate",
               {{"screened (estimates)", s.screened, true, false, {}, false},
                {"verified", s.verified, true, false, {}, false},
                {"Pareto frontier", s.frontier, true, false, s.frontier_labels}}};
  if (s.best.first >= 0) c.series.push_back({"best (cheapest)", {s.best}, true, false, {}, false});
  out += f.figure("frontier.svg", svg::line_chart(c),
                  "Each setting the capacity bound allows, by its screen estimate (a full batch's speed at its "
                  "estimated count), and the settings verified in steady state at their minimum count; the line "
                  "joins the verified Pareto frontier: no other configuration gives both more tokens/s per GPU and "
                  "more per user.");
  out += "<h3>Top (cheapest verified)</h3>\n" + cell_table(s.header, s.top, true);
  out += "<h3>Pareto frontier</h3>\n" + cell_table(s.header, s.frontier_rows, false);
  return out + "<p>The trials and charts below are the best configuration's search.</p>\n";
}

// Latency p99 against the searched variable.
std::string plan_p99_charts(Files& f, const PlanReport& r) {
  std::string out;
  out += "<h2>Latency p99 against " + std::string(r.by_rate ? "the offered rate" : "the instance count") + "</h2>\n";
  const std::string x_label = r.by_rate ? "offered rate (req/s)" : "instances";
  for (const auto& [family, label] :
       {std::pair<std::string, std::string>{"ttft", "TTFT"}, {"itl", "ITL"}, {"e2e", "E2E"}}) {
    svg::Chart c{label + " p99 against " + (r.by_rate ? "the rate" : "the instance count"), x_label,
                 label + " p99 (ms)", {{label + " p99", {}, true, false}}};
    c.log_y = true;
    // Counts from 1 to 128 or rates from 1 to 40: the boundary is near the small end.
    double lo = INFINITY, hi = 0;
    for (const PlanReportTrial& t : r.trials) {
      const double x = r.by_rate ? t.rate : static_cast<double>(t.instances);
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
    c.log_x = lo > 0 && hi / lo >= 16;
    for (const PlanReportTrial& t : r.trials) {
      const double v = family == "ttft" ? t.ttft_p99 : family == "itl" ? t.itl_p99 : t.e2e_p99;
      c.series[0].points.emplace_back(r.by_rate ? t.rate : static_cast<double>(t.instances), v);
    }
    std::sort(c.series[0].points.begin(), c.series[0].points.end());
    for (const PlanReportTarget& target : r.targets)
      if (target.metric == family + "_p99_ms") c.hlines.push_back({target.limit_ms, "target: " + target.text});
    if (r.by_rate && r.answer_rate > 0)
      c.vlines.push_back({r.answer_rate, fmt::format("answer: {:g} req/s", r.answer_rate), false, svg::Role::Answer});
    if (!r.by_rate && r.answer_instances > 0)
      c.vlines.push_back({static_cast<double>(r.answer_instances), fmt::format("answer: {}", r.answer_instances),
                          false, svg::Role::Answer});
    out += f.figure(family + "_p99.svg", svg::line_chart(c),
                     label + " p99 of each trial (log scale); dashed red: the target, dashed green: the answer.");
  }

  return out;
}

// The tail of CDF chart `cdf`, where the targets are: the share above x on
// a log scale, so that p99 and p99.9 are as far apart as p50 and p90.
svg::Chart tail_of(const svg::Chart& cdf, const std::string& label) {
  svg::Chart tail{label + " tail", label + " (ms)", "share above x", {}};
  tail.log_x = tail.log_y = true;
  for (const svg::Series& s : cdf.series) {
    svg::Series t{s.name, {}, false, false};
    for (const auto& [x, level] : s.points)
      if (level >= 0.5 && level < 1) t.points.emplace_back(x, 1 - level);
    tail.series.push_back(std::move(t));
  }
  return tail;
}

// Latency distributions at the answer and its neighbours.
std::string plan_cdf_charts(Files& f, const PlanReport& r) {
  std::string out;
  std::vector<const PlanReportTrial*> with_cdf;
  for (const PlanReportTrial& t : r.trials)
    if (t.cdf != nullptr && !t.cdf->ttft_ms.empty()) with_cdf.push_back(&t);
  if (!with_cdf.empty()) {
    out += "<h2>Latency distributions at the answer and its neighbours</h2>\n";
    for (const auto& [family, label] :
         {std::pair<std::string, std::string>{"ttft", "TTFT"}, {"itl", "ITL"}, {"e2e", "E2E"}}) {
      svg::Chart c{label + " CDF", label + " (ms)", "share at most x", {}};
      c.log_x = true;
      for (const PlanReportTrial* t : with_cdf) {
        const auto& q = family == "ttft" ? t->cdf->ttft_ms : family == "itl" ? t->cdf->itl_ms : t->cdf->e2e_ms;
        const std::string name = r.by_rate ? fmt::format("{:g} req/s ({})", t->rate, t->verdict)
                                           : fmt::format("{} inst. ({})", t->instances, t->verdict);
        c.series.push_back(cdf_series(name, q));
      }
      svg::Chart tail = tail_of(c, label);
      for (const PlanReportTarget& target : r.targets)
        if (target.metric.rfind(family + "_", 0) == 0) {
          c.vlines.push_back({target.limit_ms, "target: " + target.text});
          tail.vlines.push_back({target.limit_ms, "target: " + target.text});
        }
      c.hlines.push_back({0.99, "p99", true, svg::Role::Level});
      tail.hlines.push_back({0.01, "p99", true, svg::Role::Level});
      tail.hlines.push_back({0.001, "p99.9", true, svg::Role::Level});
      out += f.figure(family + "_cdf.svg", svg::line_chart(c),
                       label + " distribution of the answer's trial and the trials beside it (log scale); the "
                               "p99 is where a curve crosses the dotted grey line, the target the dashed red one.");
      out += f.figure(family + "_tail.svg", svg::line_chart(tail),
                       label + " tail of the same trials: the share of requests slower than x (log scales). A "
                               "curve meets a percentile target where it is below the p99 (or p99.9) line at "
                               "the dashed red target.");
    }
  }

  return out;
}

// Throughput against offered load: the knee where serving stops keeping up.
std::string plan_knee(Files& f, const PlanReport& r) {
  std::string out;
  svg::Chart k{"Served against offered load", r.by_rate ? "offered (req/s)" : "offered per instance (req/s)",
               r.by_rate ? "served (req/s)" : "served per instance (req/s)",
               {{r.by_rate ? "trials" : "trials (by instances)", {}, true, false}}};
  k.diagonal = true;
  k.log_x = k.log_y = true;
  std::vector<std::pair<std::pair<double, double>, std::string>> knee;
  for (const PlanReportTrial& t : r.trials) {
    const double n = r.by_rate ? 1 : static_cast<double>(std::max<int64_t>(1, t.instances));
    knee.push_back({{t.offered_rps / n, t.served_rps / n},
                    r.by_rate ? fmt::format("{:g}", t.rate) : std::to_string(t.instances)});
  }
  std::sort(knee.begin(), knee.end());
  for (const auto& [point, label] : knee) {
    k.series[0].points.push_back(point);
    k.series[0].point_labels.push_back(label);
  }
  for (const PlanReportTrial& t : r.trials)
    if (is_answer(r, t)) {
      const double n = r.by_rate ? 1 : static_cast<double>(std::max<int64_t>(1, t.instances));
      k.vlines.push_back({t.offered_rps / n, "answer", false, svg::Role::Answer});
    }
  out += "<h2>Saturation knee</h2>\n" +
          f.figure("throughput.svg", svg::line_chart(k),
                   "Requests started per second against requests arriving per second while traffic lasted (the "
                   "last third of the arrival window), per instance, log scales; each point is labelled with its " +
                       std::string(r.by_rate ? "rate" : "instance count") +
                       ". On the dotted diagonal every arrival is served; where the points leave it (the knee), "
                       "instances saturate: what they serve there is their capacity.");
  return out;
}

// What the answer is an answer for: the setup, the trial rule and the
// configuration that `blis run` reproduces.
std::string plan_provenance(const PlanReport& r) {
  std::string out = "<h2>Provenance</h2>\n";
  if (!r.setup.empty()) out += "<p>" + svg::escape(r.setup) + "</p>\n";
  if (!r.trial_rule.empty()) out += "<p>" + svg::escape(r.trial_rule) + "</p>\n";
  if (!r.configuration.empty())
    out += "<p>The answer's configuration; <code>blis run answer.toml</code> reproduces its trial:</p>\n<pre>" +
           svg::escape(r.configuration) + "</pre>\n";
  return out;
}

}  // namespace

void write_plan_report(const std::string& dir, const PlanReport& r) {
  Files f{dir, {}};
  std::string body = "<h1>" + svg::escape(r.title) + "</h1>\n<p class=\"answer\">" + svg::escape(r.answer) + "</p>\n";
  if (!r.run_length.empty()) body += "<p>" + svg::escape(r.run_length) + "</p>\n";
  body += plan_search(f, r);
  body += plan_trials(r);
  body += plan_candidates(f, r);
  body += plan_p99_charts(f, r);
  body += plan_cdf_charts(f, r);
  body += plan_knee(f, r);
  body += plan_provenance(r);
  f.write(page(r.title, body));
}

}  // namespace blis
