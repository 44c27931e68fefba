#include "strategy_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <limits>
#include <mutex>
#include <numeric>
#include <ostream>
#include <thread>

#include "core/error.hpp"
#include "core/progress.hpp"
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
    if (entry.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz")))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw UsageError("--strategy-bench: no .json or .json.gz landscapes in '" + folder + "'");
  return files;
}

bool is_nlopt(const std::string& strategy) { return strategy.rfind("nlopt_", 0) == 0; }

double mean_of(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

std::vector<StrategySpec> strategy_variants(const std::string& name, const std::vector<std::string>& option_texts) {
  std::vector<StrategySpec> variants{{name, {}}};
  for (const std::string& text : option_texts) {
    const auto [option, values] = parse_strategy_option(text);
    std::vector<StrategySpec> grown;
    for (std::size_t from = 0; from <= values.size();) {
      const std::size_t comma = std::min(values.find(',', from), values.size());
      const std::string value = values.substr(from, comma - from);
      if (value.empty()) throw UsageError("--strategy-option '" + text + "': an empty value in the list");
      for (StrategySpec spec : variants) {
        spec.options[option] = value;
        grown.push_back(std::move(spec));
      }
      from = comma + 1;
    }
    variants = std::move(grown);
  }
  for (const auto& spec : variants) check_strategy(spec);
  return variants;
}

double StrategyBenchReport::mean(std::size_t strategy, std::size_t landscape) const {
  return mean_of(scores.at(strategy).at(landscape));
}

double StrategyBenchReport::mean(std::size_t strategy) const {
  double sum = 0;
  for (std::size_t l = 0; l < landscapes.size(); ++l) sum += mean(strategy, l);
  return sum / static_cast<double>(landscapes.size());
}

double StrategyBenchReport::worst(std::size_t strategy) const {
  double lowest = std::numeric_limits<double>::infinity();
  for (std::size_t l = 0; l < landscapes.size(); ++l) lowest = std::min(lowest, mean(strategy, l));
  return lowest;
}

double StrategyBenchReport::standard_error(std::size_t strategy) const {
  const std::size_t repeats = scores.at(strategy).at(0).size();
  if (repeats < 2) return 0;
  std::vector<double> per_seed(repeats, 0);
  for (const auto& runs : scores[strategy])
    for (std::size_t r = 0; r < repeats; ++r) per_seed[r] += runs[r] / static_cast<double>(landscapes.size());
  const double mean = mean_of(per_seed);
  double squares = 0;
  for (double m : per_seed) squares += (m - mean) * (m - mean);
  return std::sqrt(squares / static_cast<double>(repeats - 1) / static_cast<double>(repeats));
}

double StrategyBenchReport::warm_mean(std::size_t strategy, std::size_t pair) const {
  return mean_of(warm_scores.at(strategy).at(pair));
}

double StrategyBenchReport::milliseconds_per_evaluation(std::size_t strategy) const {
  return evaluations.at(strategy) ? 1e3 * strategy_seconds.at(strategy) / static_cast<double>(evaluations[strategy])
                                  : 0;
}

std::vector<StrategyBenchReport::HeldOut> StrategyBenchReport::leave_one_out() const {
  std::vector<HeldOut> table;
  for (std::size_t s = 0; s < strategies.size(); ++s) {
    const auto known =
        std::find_if(table.begin(), table.end(), [&](const HeldOut& h) { return h.strategy == strategies[s].name; });
    if (known != table.end()) continue;
    HeldOut held{strategies[s].name, {}, {}, 0, std::numeric_limits<double>::infinity()};
    for (std::size_t out = 0; out < landscapes.size(); ++out) {
      std::size_t chosen = s;
      double chosen_mean = -std::numeric_limits<double>::infinity();
      for (std::size_t row = s; row < strategies.size(); ++row) {
        if (strategies[row].name != held.strategy) continue;
        double sum = 0;
        for (std::size_t l = 0; l < landscapes.size(); ++l)
          if (l != out) sum += mean(row, l);
        if (sum > chosen_mean) {
          chosen_mean = sum;
          chosen = row;
        }
      }
      held.chosen.push_back(chosen);
      held.score.push_back(mean(chosen, out));
      held.worst = std::min(held.worst, held.score.back());
    }
    held.mean = mean_of(held.score);
    table.push_back(std::move(held));
  }
  return table;
}

StrategyBenchReport run_strategy_bench(const StrategyBenchOptions& options) {
  if (options.repeats <= 0) throw UsageError("--repeats must be positive");
  StrategyBenchReport report;
  report.strategies = options.strategies;
  if (report.strategies.empty())
    for (const auto& name : strategy_names()) report.strategies.push_back({name, {}});
  for (const auto& s : report.strategies) check_strategy(s);

  std::vector<Landscape> landscapes;
  std::vector<RandomBaseline> baselines;
  for (const auto& file : landscape_files(options.folder)) {
    landscapes.push_back(read_kernel_tuner_cache(file));
    baselines.emplace_back(landscapes.back());
    const auto& b = baselines.back();
    report.landscapes.push_back({landscapes.back().name(), b.configs(), b.budget_draws(), b.budget_seconds()});
  }
  std::vector<WarmStart> warm_starts;  // per pair
  if (options.warm_start)
    for (std::size_t target = 0; target < landscapes.size(); ++target)
      for (std::size_t source = 0; source < landscapes.size(); ++source)
        if (source != target && landscapes[target].same_space_as(landscapes[source])) {
          report.pairs.push_back({target, source});
          warm_starts.push_back({landscapes[source].as_warm_start()});
        }

  // Every (strategy, landscape or pair, seed) is an independent job writing its own slot, so the
  // result does not depend on the number of threads or their timing.
  const std::size_t repeats = static_cast<std::size_t>(options.repeats);
  const std::size_t strategies = report.strategies.size();
  report.scores.assign(strategies, std::vector<std::vector<double>>(landscapes.size(), std::vector<double>(repeats)));
  report.warm_scores.assign(strategies, {});
  for (std::size_t s = 0; s < strategies; ++s)
    if (strategy_uses_warm_start(report.strategies[s].name))
      report.warm_scores[s].assign(report.pairs.size(), std::vector<double>(repeats));
  std::vector<std::vector<double>> seconds(strategies, std::vector<double>(landscapes.size() * repeats, 0));
  std::vector<std::vector<std::size_t>> evaluated(strategies, std::vector<std::size_t>(landscapes.size() * repeats, 0));

  const std::size_t runs_per_strategy = (landscapes.size() + report.pairs.size()) * repeats;
  const std::size_t jobs = strategies * runs_per_strategy;
  std::atomic<std::size_t> next{0};
  std::size_t finished = 0;
  std::mutex progress_mutex;
  ProgressLine progress(options.progress);
  auto worker = [&] {
    for (std::size_t job; (job = next++) < jobs;) {
      const auto count_done = [&] {
        std::lock_guard lock(progress_mutex);
        progress.count("strategy bench", ++finished, jobs, "simulations");
      };
      const std::size_t s = job / runs_per_strategy, run = job % runs_per_strategy;
      const std::size_t slot = run / repeats, r = run % repeats;
      const bool warm = slot >= landscapes.size();
      if (warm && report.warm_scores[s].empty()) {
        count_done();
        continue;
      }
      const std::size_t l = warm ? report.pairs[slot - landscapes.size()].target : slot;
      SimulationOptions simulation;
      simulation.budget.time_limit_seconds = baselines[l].budget_seconds();
      const auto strategy = make_strategy(report.strategies[s], landscapes[l].space(), r + 1,
                                          warm ? warm_starts[slot - landscapes.size()] : WarmStart{});
      const SimulationResult result = simulate(landscapes[l], *strategy, simulation);
      const double value = score(baselines[l], result);
      if (warm) {
        report.warm_scores[s][slot - landscapes.size()][r] = value;
      } else {
        report.scores[s][l][r] = value;
        seconds[s][l * repeats + r] = result.strategy_seconds;
        evaluated[s][l * repeats + r] = result.evaluations.size();
      }
      count_done();
    }
  };
  std::vector<std::jthread> threads;
  for (int t = 1; t < std::max(1, options.threads); ++t) threads.emplace_back(worker);
  worker();
  threads.clear();  // joins
  progress.finish();
  for (std::size_t s = 0; s < strategies; ++s) {
    report.strategy_seconds.push_back(std::accumulate(seconds[s].begin(), seconds[s].end(), 0.0));
    report.evaluations.push_back(std::accumulate(evaluated[s].begin(), evaluated[s].end(), std::size_t{0}));
  }
  return report;
}

void print_strategy_bench(std::ostream& out, const StrategyBenchReport& report, const StrategyBenchOptions& options) {
  out << "| landscape | configs | T (random draws) | T (recorded s) |\n|---|---:|---:|---:|\n";
  for (const auto& l : report.landscapes)
    out << fmt::format("| {} | {} | {} | {:.0f} |\n", l.name, l.configs, l.budget_draws, l.budget_seconds);

  const auto runs = report.scores.empty() || report.scores[0].empty() ? 0 : report.scores[0][0].size();
  for (const bool nlopt : {false, true}) {
    std::vector<std::size_t> rows;
    for (std::size_t s = 0; s < report.strategies.size(); ++s)
      if (is_nlopt(report.strategies[s].name) == nlopt) rows.push_back(s);
    if (rows.empty()) continue;
    std::stable_sort(rows.begin(), rows.end(),
                     [&](std::size_t a, std::size_t b) { return report.mean(a) > report.mean(b); });
    out << fmt::format(
        "\n{} (score: 1 = optimum by T/2, 0 = random search; mean of {} seeds, ± its standard "
        "error; ms/eval: the strategy's own time per new evaluation)\n\n",
        nlopt ? "nlopt algorithms" : "Strategies", runs);
    out << "| strategy |";
    for (const auto& l : report.landscapes) out << ' ' << l.name << " |";
    out << " mean | ± | min | ms/eval |\n|---|";
    for (std::size_t l = 0; l <= report.landscapes.size() + 3; ++l) out << "---:|";
    out << '\n';
    for (std::size_t s : rows) {
      out << "| " << label_of(report.strategies[s]) << " |";
      for (std::size_t l = 0; l < report.landscapes.size(); ++l) out << fmt::format(" {:.3f} |", report.mean(s, l));
      out << fmt::format(" **{:.3f}** | {:.3f} | {:.3f} | {:.2f} |\n", report.mean(s), report.standard_error(s),
                         report.worst(s), report.milliseconds_per_evaluation(s));
    }
  }

  if (options.leave_one_out) {
    out << "\nLeave one landscape out (each landscape scored with the option setting that had the best mean on "
           "the others)\n\n| strategy |";
    for (const auto& l : report.landscapes) out << ' ' << l.name << " |";
    out << " mean | min |\n|---|";
    for (std::size_t l = 0; l <= report.landscapes.size() + 1; ++l) out << "---:|";
    out << '\n';
    for (const auto& held : report.leave_one_out()) {
      out << "| " << held.strategy << " |";
      for (double v : held.score) out << fmt::format(" {:.3f} |", v);
      out << fmt::format(" **{:.3f}** | {:.3f} |\n", held.mean, held.worst);
    }
    out << "\nSettings chosen without each landscape:\n\n";
    for (const auto& held : report.leave_one_out())
      for (std::size_t l = 0; l < held.chosen.size(); ++l)
        out << fmt::format("- {} without {}: {}\n", held.strategy, report.landscapes[l].name,
                           label_of(report.strategies[held.chosen[l]]));
  }

  if (options.warm_start) {
    out << "\nWarm start (each landscape replayed again, warm-started from another GPU's landscape of the same "
           "kernel)\n\n| strategy | landscape | warm-started from | cold | warm | gain "
           "|\n|---|---|---|---:|---:|---:|\n";
    if (report.pairs.empty()) out << "| (no two landscapes share a kernel and its space) | | | | | |\n";
    for (std::size_t s = 0; s < report.strategies.size(); ++s) {
      if (report.warm_scores[s].empty()) continue;
      for (std::size_t p = 0; p < report.pairs.size(); ++p) {
        const auto& pair = report.pairs[p];
        const double cold = report.mean(s, pair.target), warm = report.warm_mean(s, p);
        out << fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:+.3f} |\n", label_of(report.strategies[s]),
                           report.landscapes[pair.target].name, report.landscapes[pair.source].name, cold, warm,
                           warm - cold);
      }
    }
  }
}

}  // namespace cutune
