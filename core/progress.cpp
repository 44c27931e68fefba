#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

namespace cutune {

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled), tty_(isatty(STDERR_FILENO)), started_(Clock::now()) {}

void ProgressLine::update(const std::string& text, bool force) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (!force && now - last_ < (tty_ ? std::chrono::milliseconds(100) : std::chrono::seconds(5))) return;
  last_ = now;
  if (tty_)
    std::cerr << "\r\033[K" << text << std::flush;
  else
    std::cerr << text << '\n';
}

void ProgressLine::count(const std::string& what, std::size_t done, std::size_t total, const std::string& unit) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
  const double left = done == 0 ? -1 : elapsed / static_cast<double>(done) * static_cast<double>(total - done);
  update(fmt::format("[{}] {}/{} {}  ETA {}", what, done, total, unit, format_duration(left)), done == total);
}

void ProgressLine::finish() {
  if (enabled_ && tty_) std::cerr << '\n';
}

std::string format_duration(double seconds) {
  if (seconds < 0) return "?";
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace cutune
