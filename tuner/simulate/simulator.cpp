#include "simulator.hpp"

#include <fmt/format.h>

#include <deque>
#include <limits>
#include <fstream>
#include <unordered_set>

#include "core/error.hpp"
#include "search_loop.hpp"

namespace cutune {

namespace {

// The landscape as an evaluation queue: a job is finished as soon as it is asked for, with its
// recorded result. Sequential, so a replay is deterministic.
class Replay : public EvaluationQueue {
 public:
  void submit(std::vector<Job> jobs) override {
    for (Job& job : jobs) queued_.push_back(std::move(job));
  }
  std::optional<Finished> next_finished() override {
    if (queued_.empty()) return std::nullopt;
    Finished finished;
    finished.index = queued_.front().index;
    finished.config = std::move(queued_.front().config);
    queued_.pop_front();
    return finished;
  }
  std::size_t drop_queued() override { return std::exchange(queued_, {}).size(); }

 private:
  std::deque<Job> queued_;
};

}  // namespace

SimulationResult simulate(const Landscape& landscape, Strategy& strategy, const SimulationOptions& options) {
  SimulationResult result;
  std::unordered_set<Config, ConfigHash> evaluated;
  double elapsed = 0;  // recorded time spent: what the time budget counts
  auto evaluations = [&] { return static_cast<std::int64_t>(result.evaluations.size()); };

  SearchHooks hooks;
  // A revisit costs nothing and is not a new evaluation: the strategy only hears its result again.
  hooks.dispatch = [&](const Config& config) -> std::variant<EvaluationQueue::Job, Observation> {
    if (evaluated.insert(config).second) return EvaluationQueue::Job{0, config, {}};
    ++result.revisits;
    return Observation{config, landscape.at(config).objective, 0};
  };
  hooks.record = [&](const EvaluationQueue::Finished& finished) {
    const RecordedEvaluation& recorded = landscape.at(finished.config);
    elapsed += recorded.cost_seconds;
    result.evaluations.push_back({recorded.key, recorded.cost_seconds, recorded.objective, elapsed});
    const auto& newest = result.evaluations.back();
    if (newest.objective && (!result.best || *newest.objective < *result.evaluations[*result.best].objective))
      result.best = result.evaluations.size() - 1;
    return Observation{finished.config, recorded.objective, recorded.cost_seconds};
  };
  hooks.must_stop = [&] {
    if (auto reason = options.budget.exhausted(evaluations(), elapsed)) result.stop_reason = *reason;
    return !result.stop_reason.empty();
  };

  SearchLimits limits;
  limits.evaluations = std::numeric_limits<std::size_t>::max();  // the budget decides, through must_stop
  limits.batch_size = std::max<std::size_t>(1, options.batch);
  if (options.budget.max_evals)  // a batch never asks for more than the budget has left
    limits.batch_size = std::min<std::size_t>(
        limits.batch_size, static_cast<std::size_t>(std::max<std::int64_t>(1, *options.budget.max_evals)));
  limits.low_water = 0;  // a sequential tuner, as the landscapes were recorded
  Replay replay;
  const SearchTally tally = run_problem_search(strategy, replay, limits, hooks);
  // What the strategy itself costs: its model fits and proposals, next to the recorded GPU time.
  result.strategy_seconds = tally.strategy_seconds + tally.observe_seconds;
  if (result.stop_reason.empty()) result.stop_reason = "the strategy has nothing left to propose";
  return result;
}

void write_trace(std::ostream& out, const SimulationResult& result) {
  out << "index,config,cost_s,objective\n";
  for (std::size_t i = 0; i < result.evaluations.size(); ++i) {
    const auto& e = result.evaluations[i];
    // Keys hold commas, so the config is quoted (RFC 4180); the numbers keep full precision.
    std::string config = e.config;
    for (std::size_t q = config.find('"'); q != std::string::npos; q = config.find('"', q + 2)) config.insert(q, "\"");
    out << fmt::format("{},\"{}\",{},{}\n", i, config, e.cost_seconds,
                       e.objective ? fmt::format("{}", *e.objective) : "");
  }
}

void write_trace_file(const std::string& path, const SimulationResult& result) {
  std::ofstream out(path);
  if (!out) throw UsageError("cannot write trace '" + path + "'");
  write_trace(out, result);
  if (!out.flush()) throw UsageError("cannot write trace '" + path + "'");
}

}  // namespace cutune
