#include "util/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <unistd.h>

namespace blis {

Progress::Progress(bool quiet, std::string label)
    : quiet_(quiet), tty_(::isatty(2) == 1), label_(std::move(label)), start_(std::chrono::steady_clock::now()) {}

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
