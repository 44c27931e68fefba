#include "greedy_ils.hpp"

namespace cutune {

Config GreedyIls::perturbed(Config from) {
  for (int move = 0; move < options_.perturbation_moves; ++move) {
    const auto around = neighbours(state_.space(), from, Neighbourhood::hamming);
    if (around.empty()) break;
    from = state_.pick(around);
  }
  return from;
}

std::vector<Config> GreedyIls::propose(std::size_t max_batch) {
  if (max_batch == 0) return {};
  // Each pass proposes, or moves over known ground; after a bounded walk over known ground,
  // restart (which proposes, or finds the space exhausted).
  for (int pass = 0; current_ && pass < 100; ++pass) {
    auto candidates = state_.unproposed_neighbours(*current_, options_.neighbourhood);
    if (!candidates.empty()) {
      if (candidates.size() > max_batch) candidates.resize(max_batch);
      for (const auto& c : candidates) state_.claim(c);
      return candidates;
    }
    // Every neighbour is known; move to the best of them if it beats current (current may have
    // been reached by a jump onto known ground), else current is a local optimum.
    std::optional<Config> better;
    for (const auto& n : neighbours(state_.space(), *current_, options_.neighbourhood))
      if (const auto known = state_.fitness_of(n); known && *known < current_fitness_) {
        better = n;
        current_fitness_ = *known;
      }
    if (better) {
      current_ = better;
      continue;
    }
    const double best = state_.best() ? *state_.best()->objective : fitness(std::nullopt);
    if (perturbations_ == 0 || best < best_fitness_) {
      best_fitness_ = best;
      perturbations_ = 0;
    }
    if (++perturbations_ > options_.patience) break;
    const Config jump = perturbed(state_.best() ? state_.best()->config : *current_);
    if (state_.claim(jump)) {
      jump_ = jump;
      return {jump};
    }
    if (const auto known = state_.fitness_of(jump)) {
      current_ = jump;
      current_fitness_ = *known;
    }
  }
  current_.reset();
  perturbations_ = 0;
  auto start = state_.claim_random();
  if (!start) return {};
  jump_ = *start;
  return {*start};
}

void GreedyIls::observe(const Observation& observation) {
  state_.record(observation);
  const double f = fitness(observation.objective);
  if (!current_ || (jump_ && observation.config == *jump_) || f < current_fitness_) {
    current_ = observation.config;
    current_fitness_ = f;
    if (jump_ && observation.config == *jump_) jump_.reset();
  }
}

}  // namespace cutune
