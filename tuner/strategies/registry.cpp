// The strategies `tune --strategy` knows, by name, the default first, and the options each reads.
// The default is chosen by a rule fixed before the comparison (bench/RESULTS.md, "Search
// strategies"): the best mean score over every shared landscape with none below a floor, checked
// by leaving each landscape out in turn.
#include <functional>

#include "auc_bandit.hpp"
#include "bayes_opt.hpp"
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

using Build = std::function<std::unique_ptr<Strategy>(const Space&, std::uint64_t seed, const WarmStart&)>;

struct Entry {
  std::string name;
  // Reads the strategy's options (declaring them as it goes) and returns how to build it.
  std::function<Build(OptionReader&)> configure;
  bool uses_warm_start = false;
};

BayesOpt::Options bayes_opt_options(OptionReader& read) {
  BayesOpt::Options o;
  o.initial = read.count("initial", o.initial, 1, 10000, "space-filling configs before the model leads");
  o.candidates =
      read.count("candidates", o.candidates, 1, 100000,
                 "random valid configs the acquisition scores per proposal (besides neighbours of the best)");
  o.window = read.count("window", o.window, 8, 2000, "observations the model is fitted to, at most");
  o.warm_seeds = read.count("warm_seeds", o.warm_seeds, 0, 1000,
                            "a warm start's best configs in the opening design, at most (after the first, only "
                            "while they beat the space-filling configs)");
  o.exploration = read.real("exploration", o.exploration, 0, 10, "ξ of expected improvement (standard deviations)");
  o.cost_power = read.real("cost_power", o.cost_power, 0, 2,
                           "divide expected improvement by the predicted evaluation cost to this power (0: plain EI)");
  o.exploit_every = read.count("exploit_every", o.exploit_every, 0, 1000,
                               "every k-th pick takes the lowest predicted time instead of the best EI (0: never)");
  return o;
}

GeneticAlgorithm::Options genetic_options(OptionReader& read) {
  GeneticAlgorithm::Options o;
  o.population = read.count("population", o.population, 2, 10000, "members kept per generation");
  o.mutation_rate = read.real("mutation_rate", o.mutation_rate, 0, 1, "chance that an axis takes a random value");
  return o;
}

GreedyIls::Options ils_options(OptionReader& read) {
  GreedyIls::Options o;
  o.neighbourhood = read.choice("neighbourhood", "hamming", {"adjacent", "hamming"},
                                "adjacent: an axis moves one step; hamming: an axis takes any value") == "adjacent"
                        ? Neighbourhood::adjacent
                        : Neighbourhood::hamming;
  o.perturbation_moves = static_cast<int>(read.count(
      "perturbation_moves", static_cast<std::size_t>(o.perturbation_moves), 1, 100, "random moves per perturbation"));
  o.patience = static_cast<int>(read.count("patience", static_cast<std::size_t>(o.patience), 1, 100000,
                                           "perturbations without a new best before a restart"));
  return o;
}

// A strategy without options.
template <class Make>
std::function<Build(OptionReader&)> plain(Make make) {
  return [make](OptionReader&) -> Build {
    return [make](const Space& space, std::uint64_t seed, const WarmStart&) { return make(space, seed); };
  };
}

std::function<Build(OptionReader&)> nlopt_entry(nlopt::algorithm algorithm, const std::string& name) {
  return plain([algorithm, name](const Space& space, std::uint64_t seed) {
    return std::make_unique<NloptSearch>(space, seed, algorithm, name);
  });
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {"bayes_opt",
       [](OptionReader& read) -> Build {
         const auto options = bayes_opt_options(read);
         return [options](const Space& s, std::uint64_t seed, const WarmStart& warm) {
           return std::make_unique<BayesOpt>(s, seed, options, warm);
         };
       },
       true},
      {"genetic_algorithm",
       [](OptionReader& read) -> Build {
         const auto options = genetic_options(read);
         return [options](const Space& s, std::uint64_t seed, const WarmStart&) {
           return std::make_unique<GeneticAlgorithm>(s, seed, options);
         };
       }},
      {"greedy_ils",
       [](OptionReader& read) -> Build {
         const auto options = ils_options(read);
         return [options](const Space& s, std::uint64_t seed, const WarmStart&) {
           return std::make_unique<GreedyIls>(s, seed, options);
         };
       }},
      {"brute_force", plain([](const Space& s, std::uint64_t) { return std::make_unique<BruteForce>(s); })},
      {"random_sampling",
       plain([](const Space& s, std::uint64_t seed) { return std::make_unique<RandomSampling>(s, seed); })},
      {"simulated_annealing",
       plain([](const Space& s, std::uint64_t seed) { return std::make_unique<SimulatedAnnealing>(s, seed); })},
      {"auc_bandit", plain([](const Space& s, std::uint64_t seed) {
         return std::make_unique<AucBandit>(s, seed, std::vector<std::string>{"genetic_algorithm", "greedy_ils"});
       })},
      {"nlopt_sbplx", nlopt_entry(nlopt::LN_SBPLX, "nlopt_sbplx")},
      {"nlopt_neldermead", nlopt_entry(nlopt::LN_NELDERMEAD, "nlopt_neldermead")},
      {"nlopt_bobyqa", nlopt_entry(nlopt::LN_BOBYQA, "nlopt_bobyqa")},
      {"nlopt_direct_l", nlopt_entry(nlopt::GN_DIRECT_L, "nlopt_direct_l")},
      {"nlopt_crs2", nlopt_entry(nlopt::GN_CRS2_LM, "nlopt_crs2")},
      {"nlopt_isres", nlopt_entry(nlopt::GN_ISRES, "nlopt_isres")},
  };
  return table;
}

const Entry& entry(const std::string& name) {
  for (const auto& e : entries())
    if (e.name == name) return e;
  std::string known;
  for (const auto& e : entries()) known += (known.empty() ? "" : ", ") + e.name;
  throw UsageError("unknown --strategy '" + name + "' (known: " + known + ")");
}

Build configure(const StrategySpec& spec) {
  OptionReader read(spec.name, spec.options);
  Build build = entry(spec.name).configure(read);
  read.finish();
  return build;
}

}  // namespace

std::string label_of(const StrategySpec& spec) {
  std::string label = spec.name;
  for (const auto& [option, value] : spec.options) label += " " + option + "=" + value;
  return label;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& e : entries()) names.push_back(e.name);
  return names;
}

std::string default_strategy_name() { return entries().front().name; }

void check_strategy_name(const std::string& name) { entry(name); }

void check_strategy(const StrategySpec& spec) { configure(spec); }

std::vector<StrategyOptionInfo> strategy_options(const std::string& name) {
  OptionReader read(name, {});
  entry(name).configure(read);
  return read.declared();
}

bool strategy_uses_warm_start(const std::string& name) { return entry(name).uses_warm_start; }

std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, const Space& space, std::uint64_t seed,
                                        const WarmStart& warm_start) {
  return configure(spec)(space, seed, warm_start);
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const Space& space, std::uint64_t seed) {
  return make_strategy(StrategySpec{name, {}}, space, seed);
}

}  // namespace cutune
