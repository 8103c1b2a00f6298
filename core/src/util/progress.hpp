// Progress of a long search on stderr (never stdout): on a terminal one line
// redrawn in place, a bar with the units done, an estimate of the total and
// the time left; otherwise one line per unit. Off when quiet. What it prints
// depends on the clock, so it must never reach stdout.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace blis {

class Progress {
 public:
  Progress(bool quiet, std::string label);
  ~Progress();
  // The units expected in all (an estimate that may change as work goes).
  void expect(size_t total) { total_ = total; }
  // One unit done: on a terminal the bar moves and shows `what`.
  void tick(const std::string& what);
  // A line for logs: printed when stderr is not a terminal (where the bar
  // says it).
  void line(const std::string& text);
  // A message on its own line either way.
  void note(const std::string& text);
  // For one long simulation: `done` of `total` units so far. Silent for the
  // first 2 s (short runs print nothing; the environment variable
  // BLIS_PROGRESS_DELAY changes the 2 s); then the bar at most every 0.5 s on
  // a terminal, a line every 10 s otherwise.
  void update(size_t done, size_t total, const std::string& what);
  void finish();
  size_t done() const { return done_; }

 private:
  void draw(const std::string& line);
  bool quiet_, tty_;
  std::string label_;
  size_t done_ = 0, total_ = 0;
  bool drawn_ = false, updated_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace blis
