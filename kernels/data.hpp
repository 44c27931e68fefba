#pragma once
// Random inputs for the families: deterministic for a seed, fast enough for a GiB of floats
// (splitmix64, two 32-bit draws per step), and drawn from ranges the caller picks to exclude zero.
#include <cstdint>
#include <span>

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

 private:
  std::uint64_t state_;
};

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

template <class T>
void fill_uniform(std::span<T> out, double lo, double hi, std::uint64_t seed) {
  RandomStream random(seed);
  fill_uniform(out, lo, hi, random);
}

}  // namespace cutune
