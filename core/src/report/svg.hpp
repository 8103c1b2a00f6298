// Charts as SVG text for the reports (report/report.hpp): line charts with
// linear or logarithmic axes, reference lines and markers, and bar charts.
// Self-contained (no fonts or scripts fetched), and deterministic: the same
// chart is the same bytes (every number printed with a fixed precision).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace blis::svg {

struct Series {
  std::string name;                               // in the legend
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in the order given
  bool dots = true;                               // a dot on every point
  bool dashed = false;
  std::vector<std::string> point_labels{};        // written beside the points, when given
  bool line = true;                               // false: dots only (a scatter)
};

// What a reference line marks, which alone picks its colour, in every chart:
// a target dashed red, an answer dashed green, a percentile level dotted grey.
enum class Role { Target, Answer, Level };

struct Line {
  double at = 0;
  std::string label;
  bool label_left = false;  // horizontal lines: label at the left end rather than the right
  Role role = Role::Target;
};

struct Chart {
  std::string title, x_label, y_label;  // labels carry their unit: "TTFT p99 (ms)"
  std::vector<Series> series;           // colours from a fixed palette, in order
  std::vector<Line> hlines{};           // horizontal reference lines (an SLO target, a level)
  std::vector<Line> vlines{};           // vertical markers (the answer, a target on an x axis)
  bool log_x = false, log_y = false;    // logarithmic axes (positive values only)
  bool y_from_zero = true;              // linear y axis starts at 0
  bool x_from_zero = false;
  bool diagonal = false;                // draw y = x (offered = served)
};

std::string line_chart(const Chart& chart);

struct Bars {
  std::string title, y_label;
  std::vector<std::string> categories;
  std::vector<double> values;  // one per category; < 0 = none (drawn as "none")
  int highlight = -1;          // the chosen bar
  std::string value_format = "{:.2f}";
};

std::string bar_chart(const Bars& bars);

// Text safe inside SVG/HTML elements and attributes.
std::string escape(const std::string& text);

}  // namespace blis::svg
