#include "strategy_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <ostream>
#include <thread>

#include "core/error.hpp"
#include "score.hpp"
#include "strategies/strategy.hpp"

namespace cutune {
namespace {

std::vector<std::string> landscape_files(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw UsageError("--strategy-bench: '" + folder + "' is not a folder");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw UsageError("--strategy-bench: no .json or .json.gz landscapes in '" + folder + "'");
  return files;
}

bool is_nlopt(const std::string& strategy) { return strategy.rfind("nlopt_", 0) == 0; }

}  // namespace

double StrategyBenchReport::mean(std::size_t strategy, std::size_t landscape) const {
  const auto& runs = scores.at(strategy).at(landscape);
  return std::accumulate(runs.begin(), runs.end(), 0.0) / static_cast<double>(runs.size());
}

double StrategyBenchReport::mean(std::size_t strategy) const {
  double sum = 0;
  for (std::size_t l = 0; l < landscapes.size(); ++l) sum += mean(strategy, l);
  return sum / static_cast<double>(landscapes.size());
}

double StrategyBenchReport::standard_error(std::size_t strategy) const {
  const std::size_t repeats = scores.at(strategy).at(0).size();
  if (repeats < 2) return 0;
  std::vector<double> per_seed(repeats, 0);
  for (const auto& runs : scores[strategy])
    for (std::size_t r = 0; r < repeats; ++r) per_seed[r] += runs[r] / static_cast<double>(landscapes.size());
  const double mean = std::accumulate(per_seed.begin(), per_seed.end(), 0.0) / static_cast<double>(repeats);
  double squares = 0;
  for (double m : per_seed) squares += (m - mean) * (m - mean);
  return std::sqrt(squares / static_cast<double>(repeats - 1) / static_cast<double>(repeats));
}

StrategyBenchReport run_strategy_bench(const StrategyBenchOptions& options) {
  if (options.repeats <= 0) throw UsageError("--repeats must be positive");
  StrategyBenchReport report;
  report.strategies = options.strategies.empty() ? strategy_names() : options.strategies;
  for (const auto& s : report.strategies) check_strategy_name(s);

  std::vector<Landscape> landscapes;
  std::vector<RandomBaseline> baselines;
  for (const auto& file : landscape_files(options.folder)) {
    landscapes.push_back(read_kernel_tuner_cache(file));
    baselines.emplace_back(landscapes.back());
    const auto& b = baselines.back();
    report.landscapes.push_back({landscapes.back().name(), b.configs(), b.budget_draws(), b.budget_seconds()});
  }

  // Every (strategy, landscape, seed) is an independent job writing its own slot, so the
  // result does not depend on the number of threads or their timing.
  const std::size_t per_strategy = landscapes.size() * static_cast<std::size_t>(options.repeats);
  const std::size_t jobs = report.strategies.size() * per_strategy;
  report.scores.assign(report.strategies.size(),
                       std::vector<std::vector<double>>(landscapes.size(), std::vector<double>(options.repeats)));
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t job; (job = next++) < jobs;) {
      const std::size_t s = job / per_strategy, l = job % per_strategy / options.repeats, r = job % options.repeats;
      SimulationOptions simulation;
      simulation.budget.time_limit_seconds = baselines[l].budget_seconds();
      const auto strategy = make_strategy(report.strategies[s], landscapes[l].space(), r + 1);
      report.scores[s][l][r] = score(baselines[l], simulate(landscapes[l], *strategy, simulation));
    }
  };
  std::vector<std::jthread> threads;
  for (int t = 1; t < std::max(1, options.threads); ++t) threads.emplace_back(worker);
  worker();
  threads.clear();  // joins
  return report;
}

void print_strategy_bench(std::ostream& out, const StrategyBenchReport& report) {
  out << "| landscape | configs | T (random draws) | T (recorded s) |\n|---|---:|---:|---:|\n";
  for (const auto& l : report.landscapes)
    out << fmt::format("| {} | {} | {} | {:.0f} |\n", l.name, l.configs, l.budget_draws, l.budget_seconds);

  const auto runs = report.scores.empty() || report.scores[0].empty() ? 0 : report.scores[0][0].size();
  for (const bool nlopt : {false, true}) {
    std::vector<std::size_t> rows;
    for (std::size_t s = 0; s < report.strategies.size(); ++s)
      if (is_nlopt(report.strategies[s]) == nlopt) rows.push_back(s);
    if (rows.empty()) continue;
    std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) { return report.mean(a) > report.mean(b); });
    out << fmt::format("\n{} (score: 1 = optimum by T/2, 0 = random search; mean of {} seeds, ± its standard "
                       "error)\n\n",
                       nlopt ? "nlopt algorithms" : "Strategies", runs);
    out << "| strategy |";
    for (const auto& l : report.landscapes) out << ' ' << l.name << " |";
    out << " mean | ± | min |\n|---|";
    for (std::size_t l = 0; l <= report.landscapes.size() + 2; ++l) out << "---:|";
    out << '\n';
    for (std::size_t s : rows) {
      out << "| " << report.strategies[s] << " |";
      double lowest = 1e300;
      for (std::size_t l = 0; l < report.landscapes.size(); ++l) {
        out << fmt::format(" {:.3f} |", report.mean(s, l));
        lowest = std::min(lowest, report.mean(s, l));
      }
      out << fmt::format(" **{:.3f}** | {:.3f} | {:.3f} |\n", report.mean(s), report.standard_error(s), lowest);
    }
  }
}

}  // namespace cutune
