#include "simulator.hpp"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <unordered_set>

#include "core/error.hpp"

namespace cutune {

SimulationResult simulate(const Landscape& landscape, Strategy& strategy, const SimulationOptions& options) {
  SimulationResult result;
  std::unordered_set<Config, ConfigHash> evaluated;
  double elapsed = 0;
  auto evaluations = [&] { return static_cast<std::int64_t>(result.evaluations.size()); };
  // What the strategy itself costs: its model fits and proposals, next to the recorded GPU time.
  using Clock = std::chrono::steady_clock;
  const auto timed = [&](auto&& call) {
    const auto start = Clock::now();
    call();
    result.strategy_seconds += std::chrono::duration<double>(Clock::now() - start).count();
  };

  while (result.stop_reason.empty()) {
    if (auto reason = options.budget.exhausted(evaluations(), elapsed)) {
      result.stop_reason = *reason;
      break;
    }
    std::size_t batch_size = std::max<std::size_t>(1, options.batch);
    if (options.budget.max_evals)
      batch_size = std::min(batch_size, static_cast<std::size_t>(*options.budget.max_evals - evaluations()));
    std::vector<Config> batch;
    timed([&] { batch = strategy.propose(batch_size); });
    if (batch.empty()) {
      result.stop_reason = "the strategy has nothing left to propose";
      break;
    }
    for (const Config& config : batch) {
      const RecordedEvaluation& recorded = landscape.at(config);
      if (!evaluated.insert(config).second) {
        ++result.revisits;
        timed([&] { strategy.observe({config, recorded.objective, 0}); });
        continue;
      }
      if (auto reason = options.budget.exhausted(evaluations(), elapsed)) {
        result.stop_reason = *reason;
        break;
      }
      elapsed += recorded.cost_seconds;
      result.evaluations.push_back({recorded.key, recorded.cost_seconds, recorded.objective, elapsed});
      const auto& newest = result.evaluations.back();
      if (newest.objective && (!result.best || *newest.objective < *result.evaluations[*result.best].objective))
        result.best = result.evaluations.size() - 1;
      timed([&] { strategy.observe({config, recorded.objective, recorded.cost_seconds}); });
    }
  }
  return result;
}

void write_trace(std::ostream& out, const SimulationResult& result) {
  out << "index,config,cost_s,objective\n";
  for (std::size_t i = 0; i < result.evaluations.size(); ++i) {
    const auto& e = result.evaluations[i];
    // Keys hold commas, so the config is quoted (RFC 4180); the numbers keep full precision.
    std::string config = e.config;
    for (std::size_t q = config.find('"'); q != std::string::npos; q = config.find('"', q + 2)) config.insert(q, "\"");
    out << fmt::format("{},\"{}\",{},{}\n", i, config, e.cost_seconds, e.objective ? fmt::format("{}", *e.objective) : "");
  }
}

void write_trace_file(const std::string& path, const SimulationResult& result) {
  std::ofstream out(path);
  if (!out) throw UsageError("cannot write trace '" + path + "'");
  write_trace(out, result);
  if (!out.flush()) throw UsageError("cannot write trace '" + path + "'");
}

}  // namespace cutune
