#pragma once
// Bayesian optimisation over a discrete, constrained space (the model-based strategy).
//
// - Start: a space-filling design (greedy maximin over a pool of random valid configs). With a
//   warm start, its best config opens, and further seeds take every other slot only while the
//   seeds measured beat the space-filling configs measured (at most half the design): a source
//   that misleads costs one evaluation of the design, not the design.
// - Model: a Gaussian process (gaussian_process.hpp) on the log of the time, standardised.
//   Failed configs count as the slowest time seen, so the model learns to avoid their region.
//   With a warm start, the model's prior mean is a weighted sum of each source's normalised log
//   time, one weight per source fitted to what this search has measured and never negative
//   (warm_prior.hpp): a source that does not predict these results gets weight 0 and stops
//   steering the search, while one that does keeps its favourites among the best candidates.
// - Proposals: expected improvement divided by the predicted cost of measuring (cost ≈ a + b ·
//   time, fitted to what was measured) to the power `cost_power`, and every `exploit_every`-th
//   pick the lowest predicted time instead. Candidates are all valid and unproposed (random
//   configs, the neighbours of the best three, crossings of the best ten, the warm start's best),
//   so it never proposes an invalid config. Batches are chosen one pick at a time, each pick
//   entered into the model at its predicted time ("constant liar"), so a batch spreads out
//   instead of crowding one spot; a batch is at most half as large as the results so far.
// - Cost: the model is fitted to a window of at most `window` observations (the best half and
//   the most recent), and its hyperparameters refitted on a schedule, so a proposal stays in
//   milliseconds next to seconds of compiling and measuring.
#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "gaussian_process.hpp"
#include "search_state.hpp"
#include "warm_prior.hpp"

namespace cutune {

class BayesOpt : public Strategy {
 public:
  struct Options {
    std::size_t initial = 3;       // space-filling configs before the model leads (warm-start seeds count)
    std::size_t candidates = 256;  // random valid configs scored per proposal, besides neighbours of the best
    std::size_t window = 160;      // observations the model is fitted to, at most
    // A warm start's best configs in the design, at most (and at most half of it, rounded up);
    // after the first, each only while the seeds beat the space-filling configs.
    std::size_t warm_seeds = 3;
    double exploration = 0.0;  // ξ of expected improvement, in standard deviations of log time
    // Expected improvement is divided by the predicted cost of the evaluation to this power
    // (0: plain EI). Slow configs also take longest to measure, so on a small budget a search
    // that prefers cheap evaluations gets more of them.
    double cost_power = 0.5;
    // Every k-th pick takes the candidate with the lowest predicted time instead of the highest
    // expected improvement (0: never): a portfolio that refines the best region more greedily.
    std::size_t exploit_every = 4;
  };
  BayesOpt(const Space& space, std::uint64_t seed, Options options, const WarmStart& warm_start = {});
  ~BayesOpt() override;  // stops a background fit and waits for it (one likelihood evaluation)
  BayesOpt(const BayesOpt&) = delete;
  BayesOpt& operator=(const BayesOpt&) = delete;
  std::string name() const override { return "bayes_opt"; }
  std::vector<Config> propose(std::size_t max_batch) override;
  void observe(const Observation& observation) override;
  // With at most half as many configs outstanding as observed (see propose).
  bool proposes_ahead() const override { return true; }
  // Hyperparameter fits (O(120 n³): tens of milliseconds at the window's size, while four GPUs
  // on fast configs finish one every ~0.2 ms) run on another thread; proposals go on with the
  // previous hyperparameters until the fit is done.
  void allow_background_work() override { background_fits_ = true; }
  // The opening design has at least one config per GPU, and at least that many may be outstanding.
  void set_gpus(std::size_t gpus) override { gpus_ = gpus; }

 private:
  struct Point {
    Config config;
    Eigen::VectorXd x;               // unit coordinates
    std::optional<double> log_time;  // nullopt: failed
    Eigen::VectorXd prior;           // each warm-start source's normalised log time (0: not held)
    double cost_seconds = 0;         // what evaluating it cost
  };
  void build_design(std::size_t size);
  std::optional<Config> next_design_config();  // nullopt once the design is spent
  bool warm_seeds_confirmed() const;
  Eigen::VectorXd coordinates(const Config& config) const;
  std::vector<Config> candidates();
  std::vector<const Point*> fastest(std::size_t count) const;  // successes, fastest first
  std::vector<const Point*> window() const;
  std::vector<Config> model_batch(std::size_t size);

  SearchState state_;
  Options options_;
  UnitEncoding encoding_;
  GaussianProcess model_;
  // The opening design (build_design): warm seeds and space-filling configs still to propose,
  // next last; the seeds proposed; how many design configs were proposed and are left.
  std::vector<Config> warm_seeds_, filling_;
  std::unordered_set<Config, ConfigHash> seeded_;
  std::size_t proposed_in_design_ = 0, design_left_ = 0;
  bool design_built_ = false;
  std::vector<Point> points_;  // every observation, in order
  // Refits the hyperparameters when due (next_fit_), in place or on another thread.
  void refit_when_due();
  std::size_t next_fit_ = 3;
  bool background_fits_ = false;
  std::size_t gpus_ = 1;
  std::future<GaussianProcess::Hyperparameters> background_fit_;  // valid while one runs or waits
  std::atomic<bool> stop_background_fit_ = false;
  std::size_t picks_ = 0;  // model picks so far   // refit the hyperparameters when this many points are observed
  WarmPrior prior_;        // the warm start: its sources' normalised times, weights and ranking
};

}  // namespace cutune
