#include "brute_force.hpp"

#include <algorithm>

namespace cutune {

std::vector<Config> BruteForce::propose(std::size_t max_batch) {
  const std::size_t end = std::min(configs_.size(), next_ + max_batch);
  std::vector<Config> batch(configs_.begin() + static_cast<std::ptrdiff_t>(next_),
                            configs_.begin() + static_cast<std::ptrdiff_t>(end));
  next_ = end;
  return batch;
}

}  // namespace cutune
