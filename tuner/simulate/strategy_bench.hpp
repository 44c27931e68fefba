#pragma once
// `tune --strategy-bench FOLDER`: every strategy replayed on every landscape of a folder, with
// several seeds, scored against random search (score.hpp), printed as Markdown tables.
#include <iosfwd>
#include <string>
#include <vector>

namespace cutune {

struct StrategyBenchOptions {
  std::string folder;                   // *.json and *.json.gz Kernel Tuner cache files
  int repeats = 5;                      // seeds 1..repeats for every strategy and landscape
  std::vector<std::string> strategies;  // empty: every registered strategy
  int threads = 1;
};

struct LandscapeSummary {
  std::string name;
  std::size_t configs = 0;
  std::size_t budget_draws = 0;  // T in random draws
  double budget_seconds = 0;     // T
};

struct StrategyBenchReport {
  std::vector<LandscapeSummary> landscapes;
  std::vector<std::string> strategies;
  std::vector<std::vector<std::vector<double>>> scores;  // [strategy][landscape][repeat]
  double mean(std::size_t strategy, std::size_t landscape) const;
  double mean(std::size_t strategy) const;  // over landscapes, each weighted equally
  // Of mean(strategy), from the spread of its per-seed means over landscapes.
  double standard_error(std::size_t strategy) const;
};

// Throws UsageError for a folder without landscapes or a landscape that cannot be read.
StrategyBenchReport run_strategy_bench(const StrategyBenchOptions& options);

// The landscapes, then one table per group (Kernel Tuner-style strategies, nlopt algorithms):
// a row per strategy, a column per landscape, and the mean.
void print_strategy_bench(std::ostream& out, const StrategyBenchReport& report);

}  // namespace cutune
