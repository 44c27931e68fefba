#pragma once
// Replays a strategy against a recorded landscape on the CPU: each new evaluation is charged
// the time it cost when it was recorded, revisits cost nothing, and the budget is spent in that
// recorded time. The same strategies, budgets and stopping rules as a GPU session.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "budget.hpp"
#include "landscape.hpp"
#include "strategies/strategy.hpp"

namespace cutune {

struct SimulationOptions {
  Budget budget;
  // Configs asked of the strategy at a time. 1 replays a sequential tuner, which is how the
  // landscapes were recorded and how the strategy benchmark charges time.
  std::size_t batch = 1;
};

struct SimulatedEvaluation {
  std::string config;  // the landscape's key
  double cost_seconds = 0;
  std::optional<double> objective;  // nullopt: the config failed
  double elapsed_seconds = 0;       // recorded time spent once this evaluation finished
};

struct SimulationResult {
  std::vector<SimulatedEvaluation> evaluations;  // new evaluations, in order
  std::int64_t revisits = 0;
  std::string stop_reason;
  std::optional<std::size_t> best;  // into evaluations: the fastest success, the earliest on ties
  double strategy_seconds = 0;      // CPU time the strategy took to propose and observe (wall clock)
  double elapsed_seconds() const { return evaluations.empty() ? 0 : evaluations.back().elapsed_seconds; }
};

// `strategy` must search landscape.space().
SimulationResult simulate(const Landscape& landscape, Strategy& strategy, const SimulationOptions& options);

// CSV: "index,config,cost_s,objective", one row per evaluation; objective empty for failures.
void write_trace(std::ostream& out, const SimulationResult& result);
void write_trace_file(const std::string& path, const SimulationResult& result);  // throws UsageError

}  // namespace cutune
