#include "nlopt_search.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.hpp"

namespace cutune {
namespace {

// A run that lands this many times in a row on known configs has converged or stalled.
int stall_limit(std::size_t dimensions) { return 10 + 4 * static_cast<int>(dimensions); }

// Local algorithms start from a random config with steps a quarter of each axis; global ones
// search the whole box first, then boxes of half the width around random configs.
bool is_global(nlopt::algorithm a) {
  return a == nlopt::GN_DIRECT_L || a == nlopt::GN_DIRECT_L_RAND || a == nlopt::GN_CRS2_LM || a == nlopt::GN_ISRES ||
         a == nlopt::GN_ESCH || a == nlopt::GN_DIRECT;
}
constexpr double kLocalStep = 0.25, kRestartHalfWidth = 0.25;

}  // namespace

NloptSearch::NloptSearch(const Space& space, std::uint64_t seed, nlopt::algorithm algorithm, std::string name)
    : state_(space, seed),
      encoding_(space),
      algorithm_(algorithm),
      name_(std::move(name)),
      seed_(seed),
      optimiser_([this] { run_optimiser(); }) {}

void NloptSearch::list_the_space() {
  listed_ = state_.space().enumerate();
  for (const Config& c : *listed_) listed_points_.push_back(encoding_.point_of(c));
}

NloptSearch::~NloptSearch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  optimiser_.join();
}

std::vector<Config> NloptSearch::propose(std::size_t max_batch) {
  if (max_batch == 0) return {};
  std::unique_lock lock(mutex_);
  if (awaiting_answer_) throw Error(name_ + ": propose() called before the previous config was observed");
  changed_.wait(lock, [&] { return request_ || exhausted_; });
  if (!request_) return {};
  std::vector<Config> batch{std::move(*request_)};
  request_.reset();
  awaiting_answer_ = true;
  return batch;
}

void NloptSearch::observe(const Observation& observation) {
  {
    std::lock_guard lock(mutex_);
    answer_ = observation;
    awaiting_answer_ = false;
  }
  changed_.notify_all();
}

double NloptSearch::evaluate(const Config& config) {
  state_.claim(config);
  std::unique_lock lock(mutex_);
  request_ = config;
  changed_.notify_all();
  changed_.wait(lock, [&] { return answer_ || stopping_; });
  if (stopping_) throw nlopt::forced_stop();
  const Observation observation = std::move(*answer_);
  answer_.reset();
  lock.unlock();
  state_.record(observation);
  return fitness(observation.objective);
}

double NloptSearch::scaled(double fitness) {
  // Run times span orders of magnitude; their logarithm is a gentler surface. A failure scores
  // worse than anything seen, yet finite, which every algorithm accepts.
  if (std::isfinite(fitness)) {
    const double value = std::log(fitness);
    worst_scaled_ = std::max(worst_scaled_.value_or(value), value);
    return value;
  }
  return worst_scaled_ ? *worst_scaled_ + 1.0 : 1e3;
}

double NloptSearch::objective(const std::vector<double>& point) {
  std::optional<Config> config =
      listed_ ? encoding_.nearest_of(point, *listed_, listed_points_) : encoding_.nearest_valid(point);
  if (!config && !listed_) {
    // No valid config within nearest_valid's reach (each such search cost a tenth of a second):
    // the space is listed once and scanned from then on; the nearest is the same config either way.
    list_the_space();
    config = encoding_.nearest_of(point, *listed_, listed_points_);
  }
  if (!config) config = state_.space().sample(state_.rng());
  if (!config) throw nlopt::forced_stop();
  if (const auto known = state_.fitness_of(*config)) {
    if (++known_in_a_row_ > stall_limit(encoding_.dimensions())) throw nlopt::forced_stop();
    return scaled(*known);
  }
  known_in_a_row_ = 0;
  return scaled(evaluate(*config));
}

void NloptSearch::run_once(const Config& start, bool whole_space) {
  const std::size_t n = encoding_.dimensions();
  std::vector<double> x = encoding_.point_of(start);
  std::vector<double> lower(n, 0.0), upper(n, 1.0);
  if (is_global(algorithm_) && !whole_space)
    for (std::size_t d = 0; d < n; ++d) {
      lower[d] = std::max(0.0, x[d] - kRestartHalfWidth);
      upper[d] = std::min(1.0, x[d] + kRestartHalfWidth);
    }
  nlopt::opt opt(algorithm_, static_cast<unsigned>(n));
  opt.set_lower_bounds(lower);
  opt.set_upper_bounds(upper);
  opt.set_min_objective([](const std::vector<double>& point, std::vector<double>&,
                           void* self) { return static_cast<NloptSearch*>(self)->objective(point); },
                        this);
  if (!is_global(algorithm_)) opt.set_initial_step(std::vector<double>(n, kLocalStep));
  known_in_a_row_ = 0;
  double value = 0;
  opt.optimize(x, value);
}

void NloptSearch::run_optimiser() {
  nlopt::srand(seed_);
  {
    // Valid configs too rare for rejection sampling (a --restrict to a few configs of a large
    // space) are too rare for nearest_valid's search too, which then visits up to 100 000 grid
    // points a call: such a space is listed from the start. Probed with a generator of its own,
    // so that the search's draws are the same as without the probe.
    std::mt19937_64 probe(seed_ ^ 0x9e3779b97f4a7c15ULL);
    bool rare = false;
    state_.space().sample(probe, &rare);
    if (rare) list_the_space();
  }
  try {
    for (bool first = true;; first = false) {
      // Each run begins by evaluating a config not tried yet: restarts always make progress.
      const auto start = state_.random_unproposed();  // evaluate() claims it
      if (!start) break;
      evaluate(*start);
      if (encoding_.dimensions() == 0) continue;
      try {
        run_once(*start, first);
      } catch (const nlopt::forced_stop&) {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
      } catch (const std::exception&) {
        // nlopt gave up (round-off, invalid arguments for this dimension): restart.
      }
    }
  } catch (const nlopt::forced_stop&) {
    return;  // stopped while evaluating a start config
  }
  std::lock_guard lock(mutex_);
  exhausted_ = true;
  changed_.notify_all();
}

}  // namespace cutune
