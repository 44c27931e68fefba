#include "auc_bandit.hpp"

#include <cmath>

namespace cutune {
namespace {
// OpenTuner's defaults: credit over the last 500 uses, exploration weight 0.05.
constexpr std::size_t kWindow = 500;
constexpr double kExploration = 0.05;
}  // namespace

AucBandit::AucBandit(const Space& space, std::uint64_t seed, const std::vector<std::string>& arms)
    : state_(space, seed) {
  for (std::size_t i = 0; i < arms.size(); ++i)
    arms_.push_back({make_strategy(arms[i], space, seed * 1000003ULL + i + 1), {}, false});
}

double AucBandit::credit(const Arm& arm) const {
  const std::size_t n = std::min(arm.hits.size(), kWindow);
  if (n == 0) return 0;
  double area = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (arm.hits[arm.hits.size() - n + i]) area += static_cast<double>(i + 1);
  return area * 2.0 / (static_cast<double>(n) * static_cast<double>(n + 1));
}

std::size_t AucBandit::choose() const {
  std::size_t chosen = arms_.size();
  double chosen_score = -1;
  for (std::size_t i = 0; i < arms_.size(); ++i) {
    const Arm& arm = arms_[i];
    if (arm.exhausted) continue;
    if (arm.hits.empty()) return i;  // every arm gets a first turn
    const double bonus =
        kExploration * std::sqrt(2.0 * std::log(static_cast<double>(uses_)) / static_cast<double>(arm.hits.size()));
    if (credit(arm) + bonus > chosen_score) {
      chosen = i;
      chosen_score = credit(arm) + bonus;
    }
  }
  return chosen;
}

std::vector<Config> AucBandit::propose(std::size_t max_batch) {
  if (max_batch == 0) return {};
  // Arms that only repeat known configs lose their turn but keep being answered; the bound
  // keeps a space the arms cannot escape from stalling the caller.
  for (int turn = 0; turn < 10000; ++turn) {
    const std::size_t chosen = choose();
    if (chosen == arms_.size()) return {};  // every arm is exhausted
    Arm& arm = arms_[chosen];
    std::vector<Config> batch = arm.strategy->propose(max_batch);
    if (batch.empty()) {
      arm.exhausted = true;
      continue;
    }
    std::vector<Config> fresh;
    for (auto& config : batch) {
      if (state_.claim(config)) {
        fresh.push_back(std::move(config));
      } else {
        const double known = *state_.fitness_of(config);
        arm.strategy->observe({config, std::isinf(known) ? std::nullopt : std::optional<double>(known), 0});
      }
    }
    if (fresh.empty()) {
      arm.hits.push_back(false);
      ++uses_;
      continue;
    }
    turn_arm_ = chosen;
    return fresh;
  }
  return {};
}

void AucBandit::observe(const Observation& observation) {
  const auto best_before = state_.best();
  state_.record(observation);
  Arm& arm = arms_[turn_arm_];
  arm.hits.push_back(observation.objective && (!best_before || *observation.objective < *best_before->objective));
  ++uses_;
  arm.strategy->observe(observation);
}

}  // namespace cutune
