#pragma once
// The strategy score of Willemsen et al., "A methodology for comparing optimization algorithms
// for auto-tuning" (FGCS 2024), as ../shared/landscapes/README.md defines it: how much of the
// gap between random search and the optimum a strategy closes, over the time random search
// needs to come within 4 % of the way from the median to the optimum.
#include <vector>

#include "landscape.hpp"
#include "simulator.hpp"

namespace cutune {

class RandomBaseline {
 public:
  explicit RandomBaseline(const Landscape& landscape);  // throws UsageError without any success

  // The exact expected best objective of m uniform draws without replacement (failures never
  // best; given at least one success), linear between whole m.
  double expected_best(double draws) const;
  // Random search after `seconds` of recorded time, at the landscape's mean cost per evaluation.
  double expected_best_after(double seconds) const { return expected_best(seconds / mean_cost_seconds_); }

  double optimum() const { return sorted_.front(); }
  double median() const { return median_; }
  double worst() const { return sorted_.back(); }
  double mean_cost_seconds() const { return mean_cost_seconds_; }
  std::size_t configs() const { return configs_; }
  // T: the first whole number of draws at which random search reaches opt + 0.04 (median - opt), in seconds.
  double budget_seconds() const { return budget_draws_ * mean_cost_seconds_; }
  std::size_t budget_draws() const { return budget_draws_; }
  // The 50 evenly spaced times from T/2 to T at which runs are scored.
  std::vector<double> score_times() const;

 private:
  double expected_best_whole(std::size_t draws) const;

  std::vector<double> sorted_;  // successful objectives, ascending
  std::size_t configs_ = 0;     // all recorded configs, failures included
  double median_ = 0, mean_cost_seconds_ = 0;
  std::size_t budget_draws_ = 0;
};

// The best objective a run had found by `seconds`; nullopt before its first success.
std::optional<double> best_by(const SimulationResult& run, double seconds);

// Mean over the score times of (random − strategy) / (random − optimum); 1 means the optimum was
// found by T/2, 0 no better than random search, negative worse. Before a run's first success
// it counts as holding the landscape's worst result.
double score(const RandomBaseline& baseline, const SimulationResult& run);

}  // namespace cutune
