// The strategies `tune --strategy` knows, by name, the default first: the genetic algorithm,
// which scored best where the strategies were developed (convolution and dedispersion on an
// A100) and held up on the landscapes kept out of development; bench/RESULTS.md has the numbers.
#include <functional>

#include "auc_bandit.hpp"
#include "brute_force.hpp"
#include "core/error.hpp"
#include "genetic_algorithm.hpp"
#include "greedy_ils.hpp"
#include "nlopt_search.hpp"
#include "random_sampling.hpp"
#include "simulated_annealing.hpp"
#include "strategy.hpp"

namespace cutune {
namespace {

using Factory = std::function<std::unique_ptr<Strategy>(const Space&, std::uint64_t seed)>;

struct Entry {
  std::string name;
  Factory make;
};

Factory nlopt_factory(nlopt::algorithm algorithm, const std::string& name) {
  return [algorithm, name](const Space& space, std::uint64_t seed) {
    return std::make_unique<NloptSearch>(space, seed, algorithm, name);
  };
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {"genetic_algorithm",
       [](const Space& s, std::uint64_t seed) {
         return std::make_unique<GeneticAlgorithm>(s, seed, GeneticAlgorithm::Options{});
       }},
      {"greedy_ils", [](const Space& s, std::uint64_t seed) { return std::make_unique<GreedyIls>(s, seed, GreedyIls::Options{}); }},
      {"brute_force", [](const Space& s, std::uint64_t) { return std::make_unique<BruteForce>(s); }},
      {"random_sampling", [](const Space& s, std::uint64_t seed) { return std::make_unique<RandomSampling>(s, seed); }},
      {"simulated_annealing",
       [](const Space& s, std::uint64_t seed) { return std::make_unique<SimulatedAnnealing>(s, seed); }},
      {"auc_bandit",
       [](const Space& s, std::uint64_t seed) {
         return std::make_unique<AucBandit>(s, seed, std::vector<std::string>{"genetic_algorithm", "greedy_ils"});
       }},
      {"nlopt_sbplx", nlopt_factory(nlopt::LN_SBPLX, "nlopt_sbplx")},
      {"nlopt_neldermead", nlopt_factory(nlopt::LN_NELDERMEAD, "nlopt_neldermead")},
      {"nlopt_bobyqa", nlopt_factory(nlopt::LN_BOBYQA, "nlopt_bobyqa")},
      {"nlopt_direct_l", nlopt_factory(nlopt::GN_DIRECT_L, "nlopt_direct_l")},
      {"nlopt_crs2", nlopt_factory(nlopt::GN_CRS2_LM, "nlopt_crs2")},
      {"nlopt_isres", nlopt_factory(nlopt::GN_ISRES, "nlopt_isres")},
  };
  return table;
}

}  // namespace

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& e : entries()) names.push_back(e.name);
  return names;
}

std::string default_strategy_name() { return entries().front().name; }

void check_strategy_name(const std::string& name) {
  for (const auto& n : strategy_names())
    if (n == name) return;
  std::string known;
  for (const auto& n : strategy_names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("unknown --strategy '" + name + "' (known: " + known + ")");
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const Space& space, std::uint64_t seed) {
  for (const auto& e : entries())
    if (e.name == name) return e.make(space, seed);
  check_strategy_name(name);  // throws, listing the known names
  return nullptr;
}

}  // namespace cutune
