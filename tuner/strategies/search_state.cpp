#include "search_state.hpp"

#include <algorithm>

namespace cutune {

void SearchState::record(const Observation& observation) {
  observed_[observation.config] = observation.objective;
  if (observation.objective && (!best_ || *observation.objective < *best_->objective)) best_ = observation;
}

std::optional<double> SearchState::fitness_of(const Config& config) const {
  const auto it = observed_.find(config);
  if (it == observed_.end()) return std::nullopt;
  return fitness(it->second);
}

std::optional<Config> SearchState::random_unproposed() {
  if (!listed_) {
    // While most of the space is untried a few draws suffice; 64 misses in a row mean roughly
    // 90 % or more is proposed, and listing the rest becomes the cheaper way. So does a space
    // whose valid configs are too rare for rejection sampling (a --restrict to a few configs of
    // a large space): each draw there cost tens of milliseconds, seconds per proposal.
    for (int draw = 0; draw < 64; ++draw) {
      bool rare = false;
      auto config = space_.sample(rng_, &rare);
      if (!config) return std::nullopt;
      if (rare) break;
      if (!proposed(*config)) return config;
    }
    listed_ = space_.enumerate();
  }
  // Pick at random; drop proposed configs as they turn up, so each call is amortised O(1).
  while (!listed_->empty()) {
    const std::size_t i = std::uniform_int_distribution<std::size_t>(0, listed_->size() - 1)(rng_);
    if (!proposed((*listed_)[i])) return (*listed_)[i];
    std::swap((*listed_)[i], listed_->back());
    listed_->pop_back();
  }
  return std::nullopt;
}

std::optional<Config> SearchState::claim_random() {
  auto config = random_unproposed();
  if (config) claim(*config);
  return config;
}

std::vector<Config> SearchState::unproposed_neighbours(const Config& config, Neighbourhood kind) {
  std::vector<Config> found = neighbours(space_, config, kind);
  std::erase_if(found, [&](const Config& c) { return proposed(c); });
  std::shuffle(found.begin(), found.end(), rng_);
  return found;
}

}  // namespace cutune
