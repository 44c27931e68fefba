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

// Unit roundoff u of the IEEE formats the families compute in.
inline constexpr double kFloatUnitRoundoff = 0x1p-24;
inline constexpr double kDoubleUnitRoundoff = 0x1p-53;

// Higham's gamma_n = n u / (1 - n u): n floating-point operations, each with relative error at
// most u, in any order, leave a relative error at most gamma_n on a sum of non-negative terms
// (or on sum |a_i b_i| for a dot product). Accuracy and Stability of Numerical Algorithms, 3.1.
inline double gamma_bound(double n, double unit_roundoff) { return n * unit_roundoff / (1 - n * unit_roundoff); }

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
