#include "util/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace blis {

Progress::Progress(bool quiet, std::string label)
    : quiet_(quiet),
      tty_(::isatty(2) == 1),
      label_(std::move(label)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() { finish(); }

void Progress::tick(const std::string& what) {
  ++done_;
  if (!quiet_ && tty_) draw(what);
}

void Progress::line(const std::string& text) {
  if (!quiet_ && !tty_) std::cerr << label_ << ": " << text << "\n";
}

void Progress::note(const std::string& text) {
  if (quiet_) return;
  if (drawn_) std::cerr << "\r\033[K";
  std::cerr << label_ << ": " << text << "\n";
  drawn_ = false;
}

void Progress::update(size_t done, size_t total, const std::string& what) {
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since_start = std::chrono::duration<double>(now - start_).count();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  // BLIS_PROGRESS_DELAY (seconds) replaces the 2 s: tests show a short run's progress.
  static const double delay = [] {
    const char* env = std::getenv("BLIS_PROGRESS_DELAY");
    return env != nullptr ? std::atof(env) : 2.0;
  }();
  if (since_start < delay || (updated_ && since_last < (tty_ ? 0.5 : 10))) return;
  last_ = now;
  updated_ = true;
  done_ = done;
  total_ = total;
  if (tty_) {
    draw(what);
    return;
  }
  const double left = done > 0 ? since_start / static_cast<double>(done) * static_cast<double>(total - std::min(done, total)) : 0;
  std::cerr << fmt::format("{}: {}/{} ({:.0f} %), about {:.0f} s left; {}\n", label_, done, total,
                           total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0, left, what);
}

void Progress::draw(const std::string& line) {
  const size_t total = std::max(total_, done_);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double left = done_ > 0 ? elapsed / static_cast<double>(done_) * static_cast<double>(total - done_) : 0;
  constexpr size_t kWidth = 24;
  const size_t filled = total > 0 ? kWidth * done_ / total : 0;
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::string text = fmt::format("{} [{}] {}/~{}  ETA {:.0f} s  {}", label_, bar, done_, total, left, line);
  if (text.size() > 118) text.resize(118);
  std::cerr << "\r\033[K" << text << std::flush;
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace blis
