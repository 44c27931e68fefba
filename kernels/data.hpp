#pragma once
// Random inputs for the floating-point families: reproducible from a seed and never zero (so a
// kernel that leaves an output untouched, or reads zeros, cannot pass by luck).
#include <cstdint>
#include <random>
#include <span>

namespace cutune {

// ±j/8 with j uniform in 1..63 and a random sign: mean zero, and every value a multiple of 1/8.
// Any partial sum of n such values is a multiple of 1/8 of size about 4.6·sqrt(n), far below the
// 2^21 where float stops representing multiples of 1/8 exactly (n ≤ 2^27 gives ~53 000), so a sum
// computed in any order is exact: verification can be tight enough to catch one lost element.
template <class T>
void fill_dyadic(std::span<T> values, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto& v : values) {
    const std::uint64_t bits = rng();
    const int j = static_cast<int>(bits % 63) + 1;
    v = static_cast<T>((bits & (1ull << 40)) ? -j : j) / T(8);
  }
}

// Uniform in ±[low, high) with a random sign: values with full mantissas, almost all distinct, so
// the minimum or maximum of a range is one particular element.
template <class T>
void fill_uniform_nonzero(std::span<T> values, std::uint64_t seed, double low = 0.125, double high = 8.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(low, high);
  for (auto& v : values) v = static_cast<T>(rng() & 1 ? -magnitude(rng) : magnitude(rng));
}

}  // namespace cutune
