#pragma once
// `tune --strategy-bench FOLDER`: every strategy replayed on every landscape of a folder, with
// several seeds, scored against random search (score.hpp), printed as Markdown tables. Also:
// - option sweeps: a strategy given several values of an option becomes one row per setting;
// - leave one landscape out: each landscape scored with the setting that did best on the others,
//   the check that options were not fitted to the files they are judged on;
// - warm starts: each landscape replayed again, warm-started from each other landscape of the
//   same kernel and space (another GPU), beside its cold score.
#include <iosfwd>
#include <string>
#include <vector>

#include "strategies/strategy.hpp"

namespace cutune {

struct StrategyBenchOptions {
  std::string folder;                    // *.json and *.json.gz Kernel Tuner cache files
  int repeats = 5;                       // seeds 1..repeats for every strategy and landscape
  std::vector<StrategySpec> strategies;  // rows; empty: every registered strategy with its defaults
  int threads = 1;
  bool leave_one_out = false;
  bool warm_start = false;
  bool progress = false;  // a progress line on stderr (core/progress.hpp)
};

// "a=1,2 b=x" → every combination as its own spec of `name`; throws UsageError for bad text or
// an option the strategy does not have.
std::vector<StrategySpec> strategy_variants(const std::string& name, const std::vector<std::string>& option_texts);

struct LandscapeSummary {
  std::string name;
  std::size_t configs = 0;
  std::size_t budget_draws = 0;  // T in random draws
  double budget_seconds = 0;     // T
};

struct WarmStartPair {
  std::size_t target = 0, source = 0;  // landscapes: replay target, warm-started from source
};

struct StrategyBenchReport {
  std::vector<LandscapeSummary> landscapes;
  std::vector<StrategySpec> strategies;
  std::vector<std::vector<std::vector<double>>> scores;  // [strategy][landscape][repeat]
  std::vector<double> strategy_seconds;                  // [strategy]: summed over its runs
  std::vector<std::size_t> evaluations;                  // [strategy]: summed over its runs
  std::vector<WarmStartPair> pairs;                      // with warm_start
  // [strategy][pair][repeat]; empty for a strategy that ignores warm starts.
  std::vector<std::vector<std::vector<double>>> warm_scores;

  double mean(std::size_t strategy, std::size_t landscape) const;
  double mean(std::size_t strategy) const;   // over landscapes, each weighted equally
  double worst(std::size_t strategy) const;  // the lowest landscape mean
  // Of mean(strategy), from the spread of its per-seed means over landscapes.
  double standard_error(std::size_t strategy) const;
  double warm_mean(std::size_t strategy, std::size_t pair) const;
  // The strategy's own time per new evaluation, in milliseconds.
  double milliseconds_per_evaluation(std::size_t strategy) const;

  // Leave one landscape out, per strategy name: for each landscape, the row of that name with
  // the best mean over the other landscapes, and its score on the one left out.
  struct HeldOut {
    std::string strategy;
    std::vector<std::size_t> chosen;  // [landscape]: row chosen without it
    std::vector<double> score;        // [landscape]: that row's score on it
    double mean = 0, worst = 0;
  };
  std::vector<HeldOut> leave_one_out() const;
};

// Throws UsageError for a folder without landscapes or a landscape that cannot be read.
StrategyBenchReport run_strategy_bench(const StrategyBenchOptions& options);

// The landscapes, then one table per group (Kernel Tuner-style strategies, nlopt algorithms):
// a row per strategy, a column per landscape, the mean, and the strategy's own cost; then the
// leave-one-out and warm-start tables when asked for.
void print_strategy_bench(std::ostream& out, const StrategyBenchReport& report, const StrategyBenchOptions& options);

}  // namespace cutune
