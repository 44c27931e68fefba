#pragma once
// Gaussian-process regression, the surrogate of the model-based strategy (bayes_opt.hpp).
//
// A Matérn 5/2 kernel with one length scale per input (ARD): GPU tuning axes differ wildly in how
// much they matter, and ARD lets the model learn that an axis barely moves the time. Inputs are
// the unit coordinates of neighbours.hpp's UnitEncoding; targets are standardised by the caller.
// Hyperparameters (length scales, signal and noise variance) are fitted by maximum a posteriori:
// the log marginal likelihood plus weak log-normal priors, which keep a handful of points from
// choosing absurd scales. The fit uses nlopt's BOBYQA (derivative-free; d + 2 parameters).
//
// Cost: fitting is O(evals · n³), a prediction O(n²) per point; callers keep n to a window of a
// few hundred observations.
#include <Eigen/Dense>
#include <atomic>
#include <vector>

namespace cutune {

class GaussianProcess {
 public:
  struct Hyperparameters {
    Eigen::VectorXd log_length;  // one per input dimension
    double log_signal = 0;       // log of the signal variance
    double log_noise = -6.9;     // log of the noise variance (a nugget: recorded times barely repeat-vary)
  };
  struct Prediction {
    Eigen::VectorXd mean, variance;  // of the latent function, per point
  };

  explicit GaussianProcess(std::size_t dimensions);

  // Replaces the data (rows of x are points) and factors the kernel matrix with the current
  // hyperparameters.
  void set_data(Eigen::MatrixXd x, Eigen::VectorXd y);
  // Fits the hyperparameters to the data, starting from the current ones, with at most
  // `max_evaluations` likelihood evaluations, then refactors. Once `stop` (if given) turns true,
  // the fit ends at its next evaluation and keeps the hyperparameters it started from: a fit on
  // another thread whose result is no longer wanted.
  void fit(int max_evaluations, const std::atomic<bool>* stop = nullptr);
  // Hyperparameters fitted elsewhere (a copy of this model fitted on another thread); refactors.
  void set_hyperparameters(const Hyperparameters& hyper);

  Prediction predict(const Eigen::MatrixXd& points) const;

  // The joint posterior over a fixed set of points, conditioned further on fantasised
  // observations at some of them: batched proposals' "constant liar". A fantasy observed at its
  // own predicted mean leaves every mean unchanged and shrinks the variances near it, so each
  // fantasy costs O(points · (n + fantasies)) instead of a refactorisation.
  class Candidates {
   public:
    Candidates(const GaussianProcess& model, Eigen::MatrixXd points);
    const Eigen::VectorXd& mean() const { return mean_; }
    const Eigen::VectorXd& variance() const { return variance_; }
    void fantasise(Eigen::Index point);

   private:
    const GaussianProcess& model_;
    Eigen::MatrixXd points_;
    Eigen::MatrixXd whitened_;  // L⁻¹ K(X, points), one row per observation or fantasy
    Eigen::VectorXd mean_, variance_;
  };
  std::size_t size() const { return static_cast<std::size_t>(y_.size()); }
  const Hyperparameters& hyperparameters() const { return hyper_; }

  // log p(y | X, θ) + log p(θ), for the fit (and its tests).
  double log_posterior(const Hyperparameters& hyper) const;

 private:
  Eigen::MatrixXd covariance(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, const Hyperparameters& hyper) const;
  void factor();

  std::size_t dimensions_;
  Hyperparameters hyper_;
  Eigen::MatrixXd x_;
  Eigen::VectorXd y_;
  Eigen::LLT<Eigen::MatrixXd> cholesky_;
  Eigen::VectorXd alpha_;  // K⁻¹ y
};

}  // namespace cutune
