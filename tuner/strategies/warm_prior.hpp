#pragma once
// The warm start's prior for the model-based strategy (bayes_opt.hpp): what results measured
// elsewhere (other devices, other problem sizes) say about this search's configs, and how the
// model uses it.
//
// - Each source is kept apart and normalised on its own: its successful log times become
//   z-scores, its failures count as its slowest success. Devices differ in speed and in what
//   suits them, so one source may predict this device well and another not at all.
// - Each source's z-score is one more input of the model (inputs()), next to the config's
//   coordinates, with a length scale of its own fitted like theirs: configs a source scores alike
//   are predicted alike here to the extent that this search's measurements show it. So a source's
//   unmeasured favourites look fast only once a config it scored alike measured fast here. One
//   whose favourites are mediocre here (a weak source: right in the large, wrong at the top) pulls
//   nothing, and one that does not predict at all gets a long length scale and is ignored. (An
//   earlier version put the sources in the model's prior mean, Σ w_k · z_k with fitted weights:
//   a small positive weight, earned by ordering the device in the large, kept a weak source's
//   favourites ahead exactly where nothing had been measured, and delayed the optimum.)
// - The ranking of configs (best first) is the sources' consensus, each counting equally (it is
//   needed before any evidence): it orders the warm seeds and the prior's candidates, which then
//   win or lose in the model.
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
  // Each source's z-score of the config (0, its mean, where a source lacks it); size sources().
  Eigen::VectorXd scores(const Config& config) const;
  // The same as model inputs on the scale of the config's unit coordinates: z-scores from −3 to 3
  // map onto 0 to 1 (kInputSpan), so the length-scale prior of the coordinates suits them too.
  Eigen::VectorXd inputs(const Config& config) const;

  // Configs some source holds, best first by the sources' mean z-score (ties in config order, so
  // nothing depends on hashing).
  const std::vector<Config>& ranked() const { return ranked_; }

  static constexpr double kInputSpan = 6.0;

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
}

inline Eigen::VectorXd WarmPrior::scores(const Config& config) const {
  const auto it = scores_.find(config);
  return it == scores_.end() ? Eigen::VectorXd::Zero(static_cast<Eigen::Index>(sources_)) : it->second;
}

inline Eigen::VectorXd WarmPrior::inputs(const Config& config) const {
  return (scores(config).array() + kInputSpan / 2) / kInputSpan;
}

}  // namespace cutune
