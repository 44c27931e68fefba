#pragma once
// Random inputs for the families: reproducible from a seed and never zero (so a kernel that
// leaves an output untouched, or reads zeros, cannot pass by luck). Large buffers are filled in
// chunks of kChunk elements, each from its own splitmix64 stream seeded by (seed, chunk index),
// on every core: a GiB of inputs takes a fraction of a second instead of seconds, and the values
// depend on the seed alone, never on the number of threads. fill_dyadic and fill_uniform_nonzero
// give the sums and extremes that reductions verify exactly.
#include <algorithm>
#include <cstdint>
#include <span>

#include "parallel.hpp"

namespace cutune {

// Steele, Lea & Flood's splitmix64: a full-period 64-bit generator with good mixing; cheap
// enough that generating inputs never dominates a tuning run.
class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 53 random bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  // Uniform in [0, n) for n ≤ 2^32: the high bits of a 64-bit product, without a modulo's bias
  // worth mentioning (below 2^-32).
  std::uint64_t below(std::uint64_t n) { return ((next() >> 32) * n) >> 32; }

 private:
  std::uint64_t state_;
};

// Calls fill(first, count, stream) for each chunk of [0, n), on up to every core; each chunk's
// stream is seeded from (seed, chunk index).
template <class F>
void fill_in_chunks(std::size_t n, std::uint64_t seed, F&& fill) {
  for_each_chunk(n, kChunk, [&](std::size_t chunk, std::size_t first, std::size_t count) {
    RandomStream stream(RandomStream(seed ^ (0x632be59bd9b4e019ull * (chunk + 1))).next());
    fill(first, count, stream);
  });
}

// ±j/8 with j uniform in 1..63 and a random sign: mean zero, and every value a multiple of 1/8.
// Any partial sum of n such values is a multiple of 1/8 of size about 4.6·sqrt(n), far below the
// 2^21 where float stops representing multiples of 1/8 exactly (n ≤ 2^27 gives ~53 000), so a sum
// computed in any order is exact: verification can be tight enough to catch one lost element.
template <class T>
void fill_dyadic(std::span<T> values, std::uint64_t seed) {
  fill_in_chunks(values.size(), seed, [&](std::size_t first, std::size_t count, RandomStream& random) {
    for (std::size_t i = first; i < first + count; ++i) {
      const std::uint64_t bits = random.next();
      const int j = static_cast<int>(bits % 63) + 1;
      values[i] = static_cast<T>((bits & (1ull << 40)) ? -j : j) / T(8);
    }
  });
}

// Uniform in ±[low, high) with a random sign: values with full mantissas, almost all distinct, so
// the minimum or maximum of a range is one particular element.
template <class T>
void fill_uniform_nonzero(std::span<T> values, std::uint64_t seed, double low = 0.125, double high = 8.0) {
  fill_in_chunks(values.size(), seed, [&](std::size_t first, std::size_t count, RandomStream& random) {
    for (std::size_t i = first; i < first + count; ++i) {
      const double magnitude = random.uniform(low, high);
      values[i] = static_cast<T>(random.next() & 1 ? -magnitude : magnitude);
    }
  });
}

// Fills `out` with values uniform in [lo, hi), drawing from `random` (so consecutive calls
// continue one stream). With 0 < lo < hi every value is non-zero.
template <class T>
void fill_uniform(std::span<T> out, double lo, double hi, RandomStream& random) {
  const double scale = (hi - lo) * 0x1p-32;
  for (std::size_t i = 0; i < out.size(); i += 2) {
    const std::uint64_t bits = random.next();
    out[i] = static_cast<T>(lo + scale * static_cast<double>(bits >> 32));
    if (i + 1 < out.size()) out[i + 1] = static_cast<T>(lo + scale * static_cast<double>(bits & 0xffffffffu));
  }
}

// The same for a whole buffer from a seed, in parallel chunks.
template <class T>
void fill_uniform(std::span<T> out, double lo, double hi, std::uint64_t seed) {
  fill_in_chunks(out.size(), seed, [&](std::size_t first, std::size_t count, RandomStream& random) {
    fill_uniform(out.subspan(first, count), lo, hi, random);
  });
}

}  // namespace cutune
