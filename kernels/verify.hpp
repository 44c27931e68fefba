#pragma once
// Output comparison shared by all families: exact for integers, relative tolerance for floats.
// A mismatch names the buffer, the first bad index, and the expected and actual values.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include <fmt/format.h>

#include "family.hpp"

namespace cutune {

template <class T>
Verdict compare_exact(const std::string& buffer, std::span<const T> expected, std::span<const T> actual) {
  if (expected.size() != actual.size())
    return {false, fmt::format("{}: expected {} values, got {}", buffer, expected.size(), actual.size()), 0};
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (expected[i] != actual[i])
      return {false, fmt::format("{}[{}]: expected {}, got {}", buffer, i, expected[i], actual[i]),
              static_cast<std::int64_t>(i)};
  return {};
}

// |actual - expected| <= rtol * |expected| + atol; NaN never passes.
template <class T>
Verdict compare_close(const std::string& buffer, std::span<const T> expected, std::span<const T> actual, double rtol,
                      double atol) {
  if (expected.size() != actual.size())
    return {false, fmt::format("{}: expected {} values, got {}", buffer, expected.size(), actual.size()), 0};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double e = static_cast<double>(expected[i]), a = static_cast<double>(actual[i]);
    if (!(std::fabs(a - e) <= rtol * std::fabs(e) + atol))
      return {false, fmt::format("{}[{}]: expected {}, got {} (rtol {}, atol {})", buffer, i, e, a, rtol, atol),
              static_cast<std::int64_t>(i)};
  }
  return {};
}

}  // namespace cutune
