#pragma once
// What every strategy keeps about its search: the space, a seeded random generator, the configs
// it has proposed and what it observed. The one home of "never propose a config twice",
// "best so far" and "a random config not tried yet", so the strategies hold only their policy.
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/neighbours.hpp"
#include "strategy.hpp"

namespace cutune {

// The value strategies minimise: the objective, or +infinity for a failed config, so a failure
// never wins a comparison.
inline double fitness(const std::optional<double>& objective) {
  return objective ? *objective : std::numeric_limits<double>::infinity();
}

class SearchState {
 public:
  SearchState(const Space& space, std::uint64_t seed) : space_(space), rng_(seed) {}

  const Space& space() const { return space_; }
  std::mt19937_64& rng() { return rng_; }

  // Marks `config` as proposed; false (and nothing changes) when it already was.
  bool claim(const Config& config) { return proposed_.insert(config).second; }
  bool proposed(const Config& config) const { return proposed_.count(config) != 0; }
  std::size_t proposed_count() const { return proposed_.size(); }

  void record(const Observation& observation);
  bool observed(const Config& config) const { return observed_.count(config) != 0; }
  // fitness() of an observed config; nullopt when it has not been observed.
  std::optional<double> fitness_of(const Config& config) const;
  // The best successful observation so far.
  const std::optional<Observation>& best() const { return best_; }
  std::size_t observed_count() const { return observed_.size(); }

  // A valid config not proposed yet, drawn uniformly; nullopt once every valid config has been
  // proposed. Draws from Space::sample, and lists the space only when draws keep landing on
  // proposed configs (a small or nearly exhausted space).
  std::optional<Config> random_unproposed();
  // random_unproposed(), claimed: a strategy's fresh start.
  std::optional<Config> claim_random();
  // Valid neighbours not proposed yet, in random order.
  std::vector<Config> unproposed_neighbours(const Config& config, Neighbourhood kind);
  // A uniformly chosen element of a non-empty vector.
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[std::uniform_int_distribution<std::size_t>(0, items.size() - 1)(rng_)];
  }
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }

 private:
  const Space& space_;
  std::mt19937_64 rng_;
  std::unordered_set<Config, ConfigHash> proposed_;
  std::unordered_map<Config, std::optional<double>, ConfigHash> observed_;
  std::optional<Observation> best_;
  std::optional<std::vector<Config>> listed_;  // the valid configs, once random draws stop paying off
};

}  // namespace cutune
