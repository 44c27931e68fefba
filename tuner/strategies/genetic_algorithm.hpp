#pragma once
#include "search_state.hpp"

namespace cutune {

// A genetic algorithm on grid positions: rank-weighted parents, uniform crossover, per-axis
// mutation, and (μ + λ) survival, so the best configs found stay in the population. Children
// already observed join the next generation at no cost; a generation that breeds nothing new
// takes in random immigrants. A whole generation is proposed at once, so batches are large.
class GeneticAlgorithm : public Strategy {
 public:
  struct Options {
    std::size_t population = 20;
    double mutation_rate = 0.1;  // per axis
  };
  GeneticAlgorithm(const Space& space, std::uint64_t seed, Options options) : state_(space, seed), options_(options) {}
  std::string name() const override { return "genetic_algorithm"; }
  std::vector<Config> propose(std::size_t max_batch) override;
  void observe(const Observation& observation) override;

 private:
  struct Member {
    Config config;
    double fitness = 0;
  };
  void breed();  // fills brood_ (unseen children) and arrivals_ (children already observed)
  std::optional<Config> child();
  void next_generation();

  SearchState state_;
  Options options_;
  std::vector<Member> population_;  // best first
  std::vector<Config> brood_;       // this generation's children still to propose
  std::vector<Member> arrivals_;    // this generation's observed children
  std::size_t awaiting_ = 0;        // proposed, not observed yet
};

}  // namespace cutune
