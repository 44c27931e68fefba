#include "score.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace cutune {

RandomBaseline::RandomBaseline(const Landscape& landscape) : configs_(landscape.records().size()) {
  double total_cost = 0;
  for (const auto& r : landscape.records()) {
    if (r.objective) sorted_.push_back(*r.objective);
    total_cost += r.cost_seconds;
  }
  if (sorted_.empty()) throw UsageError(landscape.name() + ": no successful config to score against");
  std::sort(sorted_.begin(), sorted_.end());
  const std::size_t k = sorted_.size();
  median_ = k % 2 ? sorted_[k / 2] : (sorted_[k / 2 - 1] + sorted_[k / 2]) / 2;
  mean_cost_seconds_ = total_cost / static_cast<double>(configs_);
  if (!(mean_cost_seconds_ > 0)) throw UsageError(landscape.name() + ": recorded evaluations cost no time");

  // Expected best falls as draws grow: bisect for the first whole number that reaches the target.
  const double target = optimum() + 0.04 * (median_ - optimum());
  std::size_t low = 1, high = configs_;
  while (low < high) {
    const std::size_t mid = (low + high) / 2;
    if (expected_best_whole(mid) <= target)
      high = mid;
    else
      low = mid + 1;
  }
  budget_draws_ = low;
}

double RandomBaseline::expected_best_whole(std::size_t draws) const {
  const std::size_t n = configs_, k = sorted_.size();
  draws = std::clamp<std::size_t>(draws, 1, n);
  // With successes ranked 1..k (failures after them), P(best rank > i) = C(n - i, m) / C(n, m),
  // built up one rank at a time: q_i = q_{i-1} (n - i - m + 1) / (n - i + 1).
  double expected = 0, beyond = 1;  // beyond = q_{i-1}
  for (std::size_t i = 1; i <= k; ++i) {
    const double next =
        n - i + 1 > draws ? beyond * static_cast<double>(n - i + 1 - draws) / static_cast<double>(n - i + 1) : 0.0;
    expected += sorted_[i - 1] * (beyond - next);
    beyond = next;
  }
  return expected / (1 - beyond);  // given at least one success among the draws
}

double RandomBaseline::expected_best(double draws) const {
  const double m = std::clamp(draws, 1.0, static_cast<double>(configs_));
  const auto whole = static_cast<std::size_t>(std::floor(m));
  const double fraction = m - static_cast<double>(whole);
  const double at = expected_best_whole(whole);
  return fraction == 0 ? at : at + fraction * (expected_best_whole(whole + 1) - at);
}

std::vector<double> RandomBaseline::score_times() const {
  constexpr int kTimes = 50;
  const double end = budget_seconds(), start = end / 2;
  std::vector<double> times;
  for (int i = 0; i < kTimes; ++i) times.push_back(start + (end - start) * i / (kTimes - 1));
  return times;
}

std::optional<double> best_by(const SimulationResult& run, double seconds) {
  std::optional<double> best;
  for (const auto& e : run.evaluations) {
    if (e.elapsed_seconds > seconds) break;
    if (e.objective && (!best || *e.objective < *best)) best = e.objective;
  }
  return best;
}

double score(const RandomBaseline& baseline, const SimulationResult& run) {
  const auto times = baseline.score_times();
  double sum = 0;
  for (double t : times) {
    const double random = baseline.expected_best_after(t);
    const double found = best_by(run, t).value_or(baseline.worst());
    const double gap = random - baseline.optimum();
    sum += gap > 0 ? (random - found) / gap : (found <= random ? 1.0 : 0.0);
  }
  return sum / static_cast<double>(times.size());
}

}  // namespace cutune
