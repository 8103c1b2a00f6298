#include "report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace blis::svg {
namespace {

constexpr double kWidth = 760, kHeight = 420;
constexpr double kLeft = 84, kRight = 590, kTop = 44, kBottom = 356;  // the plot area
// Series colours: neither red nor green, which mark targets and answers.
const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f"};
constexpr size_t kColours = sizeof(kPalette) / sizeof(kPalette[0]);

std::string num(double v) { return fmt::format("{:.1f}", v); }

// A tick label: few digits, no "-0".
std::string tick_text(double v) {
  if (std::fabs(v) < 1e-12) return "0";
  const double a = std::fabs(v);
  if (a >= 1e6) return fmt::format("{:g}M", std::round(v / 1e3) / 1e3);
  if (a < 1e-3) return fmt::format("{:.0e}", v);
  return fmt::format("{:.6g}", std::round(v * 1e6) / 1e6);
}

struct Axis {
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<double> ticks;

  double frac(double v) const {
    if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

// A log axis on the decades around [lo, hi], with 1-2-5 ticks when it spans
// three decades at most.
Axis log_axis(double lo, double hi) {
  Axis a;
  a.log = true;
  if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1;
  if (!(hi > 0)) hi = lo * 10;
  int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int d1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (d1 <= d0) d1 = d0 + 1;
  const bool fine = d1 - d0 <= 3;
  // Bounds on the 1-2-5 steps (decades only when the range is wide).
  a.lo = std::pow(10.0, d0);
  a.hi = std::pow(10.0, d1);
  if (fine) {
    for (double m : {5.0, 2.0})
      if (m * a.lo <= lo * (1 + 1e-9)) {
        a.lo *= m;
        break;
      }
    for (double m : {0.2, 0.5})
      if (m * a.hi >= hi * (1 - 1e-9)) {
        a.hi *= m;
        break;
      }
  }
  for (int d = d0; d <= d1; ++d)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, d);
      if (v >= a.lo * (1 - 1e-9) && v <= a.hi * (1 + 1e-9) && (m == 1.0 || fine)) a.ticks.push_back(v);
    }
  return a;
}

// A linear axis on steps of 1, 2, 2.5 or 5 times a power of ten.
Axis linear_axis(double lo, double hi, bool from_zero) {
  Axis a;
  if (from_zero) lo = std::min(lo, 0.0);
  if (!(hi > lo)) hi = lo + (lo == 0 ? 1 : std::fabs(lo));
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  for (double v = a.lo; v <= a.hi + step / 2; v += step) a.ticks.push_back(std::round(v / step) * step);
  return a;
}

Axis make_axis(double lo, double hi, bool log, bool from_zero) {
  return log ? log_axis(lo, hi) : linear_axis(lo, hi, from_zero);
}

// A line chart's two axes, and where a point lands in the plot area.
struct Frame {
  Axis ax, ay;
  double px(double x) const { return kLeft + ax.frac(x) * (kRight - kLeft); }
  double py(double y) const { return kBottom - ay.frac(y) * (kBottom - kTop); }
  bool visible(double x, double y) const {
    return std::isfinite(x) && std::isfinite(y) && (!ax.log || x > 0) && (!ay.log || y > 0);
  }
};

std::string header(const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      "<text x=\"{2:.1f}\" y=\"24\" font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\">{3}</text>\n",
      kWidth, kHeight, (kLeft + kRight) / 2, escape(title));
}

// A horizontal grid line and a label at each tick of the y axis.
template <class ToY>
void y_grid(std::string& out, const Axis& ay, ToY&& py) {
  for (double t : ay.ticks) {
    const double y = py(t);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e0e0e0\"/>\n", num(kLeft), num(y),
                       num(kRight), num(y));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", num(kLeft - 6), num(y + 4),
                       tick_text(t));
  }
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// The axes of a line chart over its series' points and its reference lines.
Frame chart_frame(const Chart& c) {
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  auto take = [](double v, bool log, double& lo, double& hi) {
    if (!std::isfinite(v) || (log && !(v > 0))) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (const Series& s : c.series)
    for (const auto& [x, y] : s.points) {
      take(x, c.log_x, xmin, xmax);
      take(y, c.log_y, ymin, ymax);
    }
  for (const Line& l : c.hlines) take(l.at, c.log_y, ymin, ymax);
  for (const Line& l : c.vlines) take(l.at, c.log_x, xmin, xmax);
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1;
  if (!std::isfinite(ymin)) ymin = 0, ymax = 1;
  if (c.diagonal) {
    ymin = std::min(ymin, xmin), ymax = std::max(ymax, xmax);
    xmin = ymin, xmax = ymax;
  }
  return Frame{make_axis(xmin, xmax, c.log_x, c.x_from_zero || c.diagonal), make_axis(ymin, ymax, c.log_y, c.y_from_zero)};
}

// The grid, the ticks, the plot's border, the axis labels and the diagonal.
void draw_axes(std::string& out, const Chart& c, const Frame& f) {
  y_grid(out, f.ay, [&](double y) { return f.py(y); });
  for (double t : f.ax.ticks) {
    const double x = f.px(t);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e0e0e0\"/>\n", num(x), num(kTop),
                       num(x), num(kBottom));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(x), num(kBottom + 16),
                       tick_text(t));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", num(kLeft),
                     num(kTop), num(kRight - kLeft), num(kBottom - kTop));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", num((kLeft + kRight) / 2),
                     num(kBottom + 40), escape(c.x_label), c.log_x ? " (log scale)" : "");
  out += fmt::format("<text transform=\"translate(20 {}) rotate(-90)\" text-anchor=\"middle\">{}{}</text>\n",
                     num((kTop + kBottom) / 2), escape(c.y_label), c.log_y ? " (log scale)" : "");
  if (c.diagonal)
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\" stroke-dasharray=\"2 3\"/>\n",
                       num(f.px(f.ax.lo)), num(f.py(f.ax.lo)), num(f.px(f.ax.hi)), num(f.py(f.ax.hi)));
}

// A reference line's stroke: its colour and dashes, by role.
struct Stroke {
  const char* colour;
  const char* dashes;
  const char* weight;  // of its label
};
Stroke stroke_of(Role role) {
  switch (role) {
    case Role::Answer: return {"#2ca02c", "4 3", "bold"};
    case Role::Level: return {"#777777", "2 3", "normal"};
    case Role::Target: break;
  }
  return {"#d62728", "6 4", "normal"};
}

// Reference lines, labelled inside the plot.
void draw_reference_lines(std::string& out, const Chart& c, const Frame& f) {
  for (const Line& l : c.hlines) {
    if (c.log_y && !(l.at > 0)) continue;
    const double y = f.py(l.at);
    const Stroke s = stroke_of(l.role);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" "
                       "stroke-dasharray=\"{}\"/>\n",
                       num(kLeft), num(y), num(kRight), num(y), s.colour, s.dashes);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" fill=\"{}\" font-weight=\"{}\">{}</text>\n",
                       num(l.label_left ? kLeft + 4 : kRight - 4), num(y - 5), l.label_left ? "start" : "end",
                       s.colour, s.weight, escape(l.label));
  }
  // Vertical labels are stacked one line apart, so that two lines close
  // together (a target beside an answer) keep readable labels.
  double label_y = kTop + 14;
  for (const Line& l : c.vlines) {
    if (c.log_x && !(l.at > 0)) continue;
    const double x = f.px(l.at);
    const Stroke s = stroke_of(l.role);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" "
                       "stroke-dasharray=\"{}\"/>\n",
                       num(x), num(kTop), num(x), num(kBottom), s.colour, s.dashes);
    // Near the right edge the label goes on the line's left.
    const bool left = x > kLeft + 0.7 * (kRight - kLeft);
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\" font-weight=\"{}\"{}>{}</text>\n",
                       num(left ? x - 4 : x + 4), num(label_y), s.colour, s.weight,
                       left ? " text-anchor=\"end\"" : "", escape(l.label));
    label_y += 14;
  }
}

// A series' point labels, skipping those that would overlap the previous one.
void draw_point_labels(std::string& out, const Series& s, const Frame& f) {
  double last_x = -1e9, last_y = -1e9;
  for (size_t p = 0; p < s.point_labels.size() && p < s.points.size(); ++p) {
    const auto& [x, y] = s.points[p];
    if (!f.visible(x, y) || s.point_labels[p].empty() || !(std::hypot(f.px(x) - last_x, f.py(y) - last_y) >= 22))
      continue;
    last_x = f.px(x), last_y = f.py(y);
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#555\">{}</text>\n", num(f.px(x) + 5),
                       num(f.py(y) + 13), escape(s.point_labels[p]));
  }
}

// Series `i` of the chart: its line, dots, point labels and legend entry.
void draw_series(std::string& out, const Chart& c, const Frame& f, size_t i) {
  const Series& s = c.series[i];
  const char* colour = kPalette[i % kColours];
  std::string path;
  for (const auto& [x, y] : s.points)
    if (f.visible(x, y)) path += fmt::format("{}{},{}", path.empty() ? "" : " ", num(f.px(x)), num(f.py(y)));
  if (!path.empty() && s.line)
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", path, colour,
                       s.dashed ? " stroke-dasharray=\"6 4\"" : "");
  if (s.dots)
    for (const auto& [x, y] : s.points)
      if (f.visible(x, y))
        out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"/>\n", num(f.px(x)), num(f.py(y)), colour);
  draw_point_labels(out, s, f);
  const double ly = kTop + 8 + 20 * static_cast<double>(i);
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"{}/>\n",
                     num(kRight + 14), num(ly), num(kRight + 38), num(ly), colour,
                     s.dashed ? " stroke-dasharray=\"6 4\"" : "");
  out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", num(kRight + 44), num(ly + 4), escape(s.name));
}

}  // namespace

std::string line_chart(const Chart& c) {
  const Frame f = chart_frame(c);
  std::string out = header(c.title);
  draw_axes(out, c, f);
  draw_reference_lines(out, c, f);
  for (size_t i = 0; i < c.series.size(); ++i) draw_series(out, c, f, i);
  return out + "</svg>\n";
}

std::string bar_chart(const Bars& b) {
  double hi = 0;
  for (double v : b.values) hi = std::max(hi, v);
  const Axis ay = make_axis(0, hi > 0 ? hi * 1.1 : 1, false, true);
  auto py = [&](double y) { return kBottom - ay.frac(y) * (kBottom - kTop); };
  std::string out = header(b.title);
  y_grid(out, ay, py);
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", num(kLeft),
                     num(kTop), num(kRight - kLeft), num(kBottom - kTop));
  out += fmt::format("<text transform=\"translate(20 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     num((kTop + kBottom) / 2), escape(b.y_label));
  const size_t n = std::max<size_t>(1, b.categories.size());
  const double slot = (kRight - kLeft) / static_cast<double>(n);
  for (size_t i = 0; i < b.categories.size(); ++i) {
    const double cx = kLeft + slot * (static_cast<double>(i) + 0.5);
    const double w = std::min(60.0, slot * 0.6);
    const double v = i < b.values.size() ? b.values[i] : -1;
    const bool chosen = static_cast<int>(i) == b.highlight;
    if (v >= 0) {
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", num(cx - w / 2), num(py(v)),
                         num(w), num(kBottom - py(v)), chosen ? "#2ca02c" : "#1f77b4");
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(cx), num(py(v) - 5),
                         escape(fmt::format(fmt::runtime(b.value_format), v)));
    } else {
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888\">none</text>\n", num(cx),
                         num(kBottom - 6));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\"{}>{}</text>\n", num(cx), num(kBottom + 18),
                       chosen ? " font-weight=\"bold\"" : "", escape(b.categories[i]));
  }
  if (b.highlight >= 0)
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#2ca02c\">green: the cheapest that "
                       "meets the targets</text>\n",
                       num((kLeft + kRight) / 2), num(kBottom + 42));
  return out + "</svg>\n";
}

}  // namespace blis::svg
