#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace cutune {

// Any failure the engine reports; the message carries what was being done and why it failed.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bad input from the user (unknown kernel, bad --n, …): the CLI prints one line and exits 2.
struct UsageError : Error {
  using Error::Error;
};

// The environment cannot do what was asked (no CUDA driver, no such device): one line, exit 3.
struct EnvironmentError : Error {
  using Error::Error;
};

// `text` as one line of at most about `limit` bytes: control characters (newlines, tabs, escapes)
// become spaces, and a longer text keeps its head and its tail around " … ", cut at UTF-8
// character boundaries. For error messages, which quote what they were given (paths, keys,
// values) and must stay one readable line however long that was.
inline std::string shortened(std::string_view text, std::size_t limit = 280) {
  constexpr std::string_view kEllipsis = " … ";
  const auto continuation = [&](std::size_t at) { return at < text.size() && (text[at] & 0xC0) == 0x80; };
  std::string_view head = text, tail;
  if (text.size() > limit) {
    const std::size_t room = limit > kEllipsis.size() + 2 ? limit - kEllipsis.size() : 2;
    std::size_t head_end = room * 2 / 3, tail_start = text.size() - (room - room * 2 / 3);
    while (head_end > 0 && continuation(head_end)) --head_end;
    while (continuation(tail_start)) ++tail_start;
    head = text.substr(0, head_end);
    tail = text.substr(tail_start);
  }
  std::string line;
  line.reserve(head.size() + tail.size() + kEllipsis.size());
  const auto append = [&](std::string_view part) {
    for (const char c : part) line += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? ' ' : c;
  };
  append(head);
  if (!tail.empty()) {
    line += kEllipsis;
    append(tail);
  }
  return line;
}

}  // namespace cutune
