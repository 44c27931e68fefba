#pragma once
// The progress line every long command shows on stderr: rewritten in place on a terminal (at most
// every 100 ms), a plain line every few seconds in a pipe or log, nothing when disabled. Not
// thread-safe: callers on several threads serialise their updates.
#include <chrono>
#include <cstddef>
#include <string>

namespace cutune {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  // Shows `text` unless a line was shown too recently; `force` shows it regardless.
  void update(const std::string& text, bool force = false);
  // "[what] done/total unit  ETA …": the rate so far predicts the rest.
  void count(const std::string& what, std::size_t done, std::size_t total, const std::string& unit);
  // Ends the line on a terminal (so the next output starts on its own line).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_, tty_;
  Clock::time_point started_, last_{};
};

// "42s", "3m07s", "1h05m"; "?" for a negative (unknown) duration.
std::string format_duration(double seconds);

}  // namespace cutune
