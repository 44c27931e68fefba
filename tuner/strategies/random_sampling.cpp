#include "random_sampling.hpp"

namespace cutune {

std::vector<Config> RandomSampling::propose(std::size_t max_batch) {
  std::vector<Config> batch;
  while (batch.size() < max_batch) {
    auto config = state_.claim_random();
    if (!config) break;
    batch.push_back(std::move(*config));
  }
  return batch;
}

}  // namespace cutune
