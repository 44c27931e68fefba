#pragma once
#include "search_state.hpp"

namespace cutune {

// Greedy iterated local search: climb to the first better neighbour until none is left, then
// perturb the best config found by a few random single-axis moves and climb again from there;
// after `patience` perturbations without a new best, restart from a random config.
class GreedyIls : public Strategy {
 public:
  struct Options {
    Neighbourhood neighbourhood = Neighbourhood::hamming;
    int perturbation_moves = 3;
    int patience = 10;
  };
  GreedyIls(const Space& space, std::uint64_t seed, Options options) : state_(space, seed), options_(options) {}
  std::string name() const override { return "greedy_ils"; }
  std::vector<Config> propose(std::size_t max_batch) override;
  void observe(const Observation& observation) override;

 private:
  Config perturbed(Config from);

  SearchState state_;
  Options options_;
  std::optional<Config> current_;
  double current_fitness_ = 0;
  std::optional<Config> jump_;  // a proposed perturbation: it becomes current whatever its result
  double best_fitness_ = 0;     // of the best config when perturbing began; a new best resets patience
  int perturbations_ = 0;
};

}  // namespace cutune
