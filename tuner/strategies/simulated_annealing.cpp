#include "simulated_annealing.hpp"

#include <cmath>

namespace cutune {
namespace {
// Kernel Tuner's defaults: start at 1, cool by 0.5 % a step, reheat below 0.001.
constexpr double kStartTemperature = 1.0, kCooling = 0.995, kFloorTemperature = 0.001;
// Free moves over observed configs before the walk is declared stuck and restarted.
constexpr int kFreeMoves = 1000;
}  // namespace

void SimulatedAnnealing::consider(const Config& candidate, double candidate_fitness) {
  bool accept = candidate_fitness <= current_fitness_ || std::isinf(current_fitness_);
  if (!accept && std::isfinite(candidate_fitness)) {
    const double relative_loss = (candidate_fitness - current_fitness_) / current_fitness_;
    accept = state_.uniform() < std::exp(-relative_loss / temperature_);
  }
  if (accept) {
    current_ = candidate;
    current_fitness_ = candidate_fitness;
  }
  temperature_ *= kCooling;
  if (temperature_ < kFloorTemperature) temperature_ = kStartTemperature;
}

std::vector<Config> SimulatedAnnealing::propose(std::size_t max_batch) {
  if (max_batch == 0) return {};
  std::vector<Config> around;
  std::optional<Config> around_of;  // the config `around` was listed for; a rejected move keeps it
  for (int move = 0; move < kFreeMoves; ++move) {
    if (!current_) break;
    if (around_of != current_) {
      around = neighbours(state_.space(), *current_, Neighbourhood::hamming);
      around_of = current_;
    }
    if (around.empty()) break;
    const Config& candidate = state_.pick(around);
    if (const auto known = state_.fitness_of(candidate)) {
      consider(candidate, *known);
    } else if (state_.claim(candidate)) {
      return {candidate};
    }
  }
  // No current config yet, an isolated one, or a walk stuck on known ground: start afresh.
  current_.reset();
  auto start = state_.claim_random();
  if (!start) return {};
  return {*start};
}

void SimulatedAnnealing::observe(const Observation& observation) {
  state_.record(observation);
  if (!current_) {
    current_ = observation.config;
    current_fitness_ = fitness(observation.objective);
    temperature_ = kStartTemperature;
  } else {
    consider(observation.config, fitness(observation.objective));
  }
}

}  // namespace cutune
