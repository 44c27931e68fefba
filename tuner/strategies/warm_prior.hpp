#pragma once
// The warm start's prior for the model-based strategy (bayes_opt.hpp): what results measured
// elsewhere (other devices, other problem sizes) say about this search's configs, and how much
// of it to believe.
//
// - Each source is kept apart and normalised on its own: its successful log times become
//   z-scores, its failures count as its slowest success. Devices differ in speed and in what
//   suits them, so one source may predict this device well and another not at all.
// - The model's prior mean is Σ_k w_k · z_k(config), one weight per source, fitted to what this
//   search has measured by least squares shrunk towards a modest guess (ridge), and never
//   negative. A source that does not predict these measurements gets weight 0, so it stops
//   steering the search. The weights are never negative because a "reversed" source is not a
//   usable prior: it would make the source's failures and slowest configs the favourites here.
// - The fit is on z-scores that are not centred over the observed points: a search that has
//   only measured a source's favourites (all with similar, very negative z) learns nothing about
//   the slope from them, and the weight falls towards 0 instead of being confirmed by the guess.
//   Evidence comes from configs whose scores differ, such as the space-filling design's.
// - The ranking of configs (best first) is the sources' consensus, each counting equally (it is
//   needed before any evidence): it orders the warm seeds and the prior's candidates, which then
//   win or lose in the model under the fitted weights.
// - In the model a source's z-scores are floored at kFloor: a config that the source finds far
//   faster than its mean counts as no better than kFloor standard deviations, so the source's
//   favourites are predicted good, not best. Devices of one kernel agree in the large and differ
//   most at the top, and a source fitted with a positive weight for agreeing in the large kept
//   pulling the search towards its own favourites, where it knew least about this device (a
//   W6600 on an A100 whose optimum is the W6600's 1310th config). The ranking, and so the seeds,
//   still follow the unfloored scores.
//
// Defined in this header (inline), as the engine's source list is kept elsewhere.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "strategy.hpp"

namespace cutune {

class WarmPrior {
 public:
  WarmPrior() = default;
  // Keeps the valid configs of `space` only; a source with fewer than two successes is left out.
  WarmPrior(const WarmStart& warm_start, const Space& space);

  bool empty() const { return sources_ == 0; }
  std::size_t sources() const { return sources_; }
  // Each source's z-score of the config, floored at kFloor (0, its mean, where a source lacks it);
  // size sources().
  Eigen::VectorXd scores(const Config& config) const;

  // The weights that best explain standardised log times `y` (one per row of `scores`, a row per
  // observation, a column per source): ridge regression towards kGuess / sources() each, with
  // kGuessWeight pseudo-observations behind the guess, projected onto w ≥ 0 (coordinate descent).
  Eigen::VectorXd fit_weights(const Eigen::MatrixXd& scores, const Eigen::VectorXd& y) const;

  // Configs some source holds, best first by the sources' mean z-score (ties in config order, so
  // nothing depends on hashing).
  const std::vector<Config>& ranked() const { return ranked_; }

  // The guess behind the weights, in standard deviations of this search's log time per standard
  // deviation of a source's: sources of the same kernel usually agree in part. Its weight, in
  // pseudo-observations, is small so that evidence takes over within a few measurements.
  static constexpr double kGuess = 0.5, kGuessWeight = 2.0;
  // The least z-score a source gives a config in the model (see the header). Chosen over the
  // shared landscapes' warm pairs among -0.5, -1, -1.5, -2 and none (bench/RESULTS.md). -0.5 left
  // the one losing pair level, but a reversed source then cost 0.13
  // (WarmStartReplay.AReversedSourceCostsLittleAndAnAgreeingOneHelps), most likely because the
  // floored scores hide how far the source's favourites are from this device's best.
  static constexpr double kFloor = -1.5;

 private:
  std::size_t sources_ = 0;
  std::unordered_map<Config, Eigen::VectorXd, ConfigHash> scores_;
  std::vector<Config> ranked_;
};

namespace warm_prior_detail {

// One source's z-scores of log time; failures count as its slowest success. Empty with fewer
// than two successes (no spread to normalise by).
inline std::vector<std::pair<Config, double>> normalised(const WarmStartSource& source) {
  std::vector<double> logs;
  for (const auto& r : source.results)
    if (r.objective) logs.push_back(std::log(std::max(*r.objective, 1e-12)));
  if (logs.size() < 2) return {};
  const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / static_cast<double>(logs.size());
  double squares = 0;
  for (double l : logs) squares += (l - mean) * (l - mean);
  const double sd = std::max(std::sqrt(squares / static_cast<double>(logs.size() - 1)), 1e-9);
  const double slowest = (*std::max_element(logs.begin(), logs.end()) - mean) / sd;
  std::vector<std::pair<Config, double>> z;
  for (const auto& r : source.results)
    z.emplace_back(r.config, r.objective ? (std::log(std::max(*r.objective, 1e-12)) - mean) / sd : slowest);
  return z;
}

}  // namespace warm_prior_detail

inline WarmPrior::WarmPrior(const WarmStart& warm_start, const Space& space) {
  std::vector<std::vector<std::pair<Config, double>>> per_source;
  for (const auto& source : warm_start) {
    auto z = warm_prior_detail::normalised(source);
    std::erase_if(z, [&](const auto& entry) { return !space.valid(entry.first); });
    if (!z.empty()) per_source.push_back(std::move(z));
  }
  sources_ = per_source.size();
  std::unordered_map<Config, int, ConfigHash> held;  // how many sources hold a config
  for (std::size_t k = 0; k < sources_; ++k)
    for (const auto& [config, z] : per_source[k]) {
      auto [it, added] = scores_.try_emplace(config, Eigen::VectorXd::Zero(static_cast<Eigen::Index>(sources_)));
      it->second(static_cast<Eigen::Index>(k)) = z;
      ++held[config];
    }
  // The consensus: the mean z-score over the sources that hold the config.
  std::unordered_map<Config, double, ConfigHash> consensus;
  for (const auto& [config, z] : scores_) {
    consensus[config] = z.sum() / held.at(config);
    ranked_.push_back(config);
  }
  std::sort(ranked_.begin(), ranked_.end(), [&](const Config& a, const Config& b) {
    const double ca = consensus.at(a), cb = consensus.at(b);
    return ca != cb ? ca < cb : a < b;
  });
  for (auto& [config, z] : scores_) z = z.cwiseMax(kFloor);  // after the ranking, which keeps the favourites' order
}

inline Eigen::VectorXd WarmPrior::scores(const Config& config) const {
  const auto it = scores_.find(config);
  return it == scores_.end() ? Eigen::VectorXd::Zero(static_cast<Eigen::Index>(sources_)) : it->second;
}

inline Eigen::VectorXd WarmPrior::fit_weights(const Eigen::MatrixXd& scores, const Eigen::VectorXd& y) const {
  const Eigen::Index k = static_cast<Eigen::Index>(sources_);
  const double guess = kGuess / static_cast<double>(std::max<std::size_t>(sources_, 1));
  // Minimise |y − S w|² + λ |w − g|² over w ≥ 0, coordinate by coordinate: each step is the exact
  // minimiser along one weight, clipped at 0. The problem is convex, so the sweeps converge; with
  // one source, one step is the answer.
  const Eigen::MatrixXd gram = scores.transpose() * scores;
  const Eigen::VectorXd correlation = scores.transpose() * y;
  Eigen::VectorXd w = Eigen::VectorXd::Constant(k, guess);
  for (int sweep = 0; sweep < (k == 1 ? 1 : 50); ++sweep)
    for (Eigen::Index j = 0; j < k; ++j) {
      // ∂/∂w_j = 0 with the others fixed: (G w)_j − G_jj w_j is the pull of the other sources.
      const double others = gram.row(j).dot(w) - gram(j, j) * w(j);
      w(j) = std::max(0.0, (correlation(j) - others + kGuessWeight * guess) / (gram(j, j) + kGuessWeight));
    }
  return w;
}

}  // namespace cutune
