#pragma once
#include "search_state.hpp"

namespace cutune {

// Simulated annealing over single-axis moves. A worse neighbour is accepted with probability
// exp(-relative loss / temperature); the temperature cools geometrically and is reheated at
// its floor. Moves onto configs already observed cost nothing, so the walk crosses known ground
// freely and only unseen configs are proposed; one config per batch, since each move depends on
// the last result.
class SimulatedAnnealing : public Strategy {
 public:
  SimulatedAnnealing(const Space& space, std::uint64_t seed) : state_(space, seed) {}
  std::string name() const override { return "simulated_annealing"; }
  std::vector<Config> propose(std::size_t max_batch) override;
  void observe(const Observation& observation) override;

 private:
  void consider(const Config& candidate, double candidate_fitness);  // the Metropolis step

  SearchState state_;
  std::optional<Config> current_;
  double current_fitness_ = 0;
  double temperature_ = 1.0;
};

}  // namespace cutune
