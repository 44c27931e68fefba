#pragma once
// Output comparison shared by all families: exact for integers, relative tolerance for floats.
// A mismatch names the buffer, the first bad index, and the expected and actual values.
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include <fmt/format.h>

#include "family.hpp"
#include "parallel.hpp"

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

// Signed relative errors (actual - expected) / expected of results, taken one element at a time:
// their mean (a sum that errs one way drifts; see matmul's verification) and the largest in size.
struct RelativeErrors {
  double sum = 0;
  std::int64_t count = 0;
  double largest = 0;          // |error|
  std::size_t largest_at = 0;  // its element
  void add(std::size_t index, double actual, double expected) {
    const double error = (actual - expected) / expected;
    sum += error;
    ++count;
    if (std::fabs(error) > largest || count == 1) largest = std::fabs(error), largest_at = index;
  }
  double mean() const { return count > 0 ? sum / static_cast<double>(count) : 0; }
};

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

// The error to allow in a floating-point sum of `values` whose order of additions is unknown
// (per-thread runs, shared-memory trees, atomics in any order): unit roundoff · log2(n) · ‖values‖₂.
// Rounding errors of a sum of mean-zero data grow like its partial sums, which grow like the
// root of the sum of squares, and log2(n) stands for the depth of the addition tree. It stays
// below one eighth for n ≤ 2^27 fill_dyadic values (data.hpp), so one lost element still fails.
template <class T>
double sum_tolerance(std::span<const T> values) {
  std::vector<long double> parts((values.size() + kChunk - 1) / kChunk);  // per chunk, added in order
  for_each_chunk(values.size(), kChunk, [&](std::size_t chunk, std::size_t first, std::size_t count) {
    long double squares = 0;
    for (const T v : values.subspan(first, count)) squares += static_cast<long double>(v) * static_cast<long double>(v);
    parts[chunk] = squares;
  });
  long double squares = 0;
  for (const long double part : parts) squares += part;
  const double depth = std::max(1.0, std::log2(static_cast<double>(values.size())));
  return std::numeric_limits<T>::epsilon() / 2 * depth * std::sqrt(static_cast<double>(squares));
}

// What the GPU computes for a family's output rules (tuner/output_check), on the host: the outputs
// pass when byte-identical to the expected ones, or when every checked output passes its rule at
// every element; otherwise the first break. Tests use it to hold each family's rules to its
// compare(), and the GPU's check to it.
OutputCheck check_outputs(const std::vector<OutputRule>& rules, const HostBuffers& expected, const HostBuffers& actual);

// A failed check as a verdict, in compare_exact's and compare_close's words: the buffer, the first
// bad index, the expected and actual values (and the tolerance), so the GPU and CPU paths describe
// a mismatch alike.
Verdict verdict_of(const std::vector<OutputRule>& rules, const OutputCheck& check);

}  // namespace cutune
