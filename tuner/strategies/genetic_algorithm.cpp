#include "genetic_algorithm.hpp"

#include <algorithm>
#include <unordered_set>

namespace cutune {

std::optional<Config> GeneticAlgorithm::child() {
  const Space& space = state_.space();
  // Rank weights: the i-th best of n is drawn with weight n - i.
  const std::size_t n = population_.size();
  std::vector<double> weights(n);
  for (std::size_t i = 0; i < n; ++i) weights[i] = static_cast<double>(n - i);
  std::discrete_distribution<std::size_t> parent_of(weights.begin(), weights.end());
  for (int attempt = 0; attempt < 20; ++attempt) {
    const Positions mother = positions_of(space, population_[parent_of(state_.rng())].config);
    const Positions father = positions_of(space, population_[parent_of(state_.rng())].config);
    Positions genes(mother.size());
    for (std::size_t axis = 0; axis < genes.size(); ++axis) {
      genes[axis] = state_.uniform() < 0.5 ? mother[axis] : father[axis];
      const std::size_t size = space.axes()[axis].values.size();
      if (size > 1 && state_.uniform() < options_.mutation_rate)
        genes[axis] = std::uniform_int_distribution<std::size_t>(0, size - 1)(state_.rng());
    }
    Config config = config_at(space, genes);
    if (space.valid(config)) return config;
  }
  return std::nullopt;
}

void GeneticAlgorithm::breed() {
  std::unordered_set<Config, ConfigHash> bred;
  for (std::size_t tries = 0; brood_.size() + arrivals_.size() < options_.population && tries < 4 * options_.population;
       ++tries) {
    auto config = population_.empty() ? state_.random_unproposed() : child();
    if (!config || !bred.insert(*config).second) continue;
    if (const auto known = state_.fitness_of(*config))
      arrivals_.push_back({*config, *known});
    else if (!state_.proposed(*config))
      brood_.push_back(*config);
  }
  // Converged: nothing new was bred, so bring in strangers.
  if (brood_.empty())
    for (std::size_t i = 0; i < options_.population / 4 + 1; ++i)
      if (auto stranger = state_.random_unproposed(); stranger && bred.insert(*stranger).second)
        brood_.push_back(*stranger);
}

void GeneticAlgorithm::next_generation() {
  // (μ + λ): parents and children compete; ties keep the older member first.
  for (auto& m : arrivals_) population_.push_back(std::move(m));
  arrivals_.clear();
  std::stable_sort(population_.begin(), population_.end(),
                   [](const Member& a, const Member& b) { return a.fitness < b.fitness; });
  // Duplicates (a known child equal to a parent) would crowd out diversity.
  std::unordered_set<Config, ConfigHash> kept;
  std::erase_if(population_, [&](const Member& m) { return !kept.insert(m.config).second; });
  if (population_.size() > options_.population) population_.resize(options_.population);
}

std::vector<Config> GeneticAlgorithm::propose(std::size_t max_batch) {
  if (max_batch == 0) return {};
  if (brood_.empty() && awaiting_ == 0) {
    breed();
    if (brood_.empty()) return {};  // not even a stranger left: the space is exhausted
  }
  std::vector<Config> batch;
  while (!brood_.empty() && batch.size() < max_batch) {
    batch.push_back(std::move(brood_.back()));
    brood_.pop_back();
    state_.claim(batch.back());
  }
  awaiting_ += batch.size();
  return batch;
}

void GeneticAlgorithm::observe(const Observation& observation) {
  state_.record(observation);
  arrivals_.push_back({observation.config, fitness(observation.objective)});
  if (awaiting_ > 0) --awaiting_;
  if (awaiting_ == 0 && brood_.empty()) next_generation();
}

}  // namespace cutune
