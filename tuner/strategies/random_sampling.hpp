#pragma once
#include "search_state.hpp"

namespace cutune {

// Uniform draws without replacement: the baseline every other strategy must beat.
class RandomSampling : public Strategy {
 public:
  RandomSampling(const Space& space, std::uint64_t seed) : state_(space, seed) {}
  std::string name() const override { return "random_sampling"; }
  std::vector<Config> propose(std::size_t max_batch) override;
  void observe(const Observation& observation) override { state_.record(observation); }
  // Its draws never depend on what it observed.
  bool proposes_ahead() const override { return true; }

 private:
  SearchState state_;
};

}  // namespace cutune
