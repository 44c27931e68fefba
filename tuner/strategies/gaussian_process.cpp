#include "gaussian_process.hpp"

#include <nlopt.hpp>

#include <cmath>
#include <limits>

namespace cutune {
namespace {

// Weak priors and hard bounds on the hyperparameters, in log space. Inputs are unit coordinates
// and targets standardised, so one length scale of about half the axis, unit signal and a small
// noise are the expected values.
constexpr double kLengthPriorMean = -0.69, kLengthPriorSd = 1.0;  // log 0.5
constexpr double kSignalPriorMean = 0.0, kSignalPriorSd = 1.0;
constexpr double kNoisePriorMean = -4.6, kNoisePriorSd = 2.0;  // log 0.01
constexpr double kLogLengthMin = -3.5, kLogLengthMax = 3.4;    // 0.03 … 30
constexpr double kLogSignalMin = -4.6, kLogSignalMax = 4.6;    // 0.01 … 100
constexpr double kLogNoiseMin = -13.8, kLogNoiseMax = 0.0;     // 1e-6 … 1
constexpr double kJitter = 1e-8;

double log_normal_density(double x, double mean, double sd) {
  const double z = (x - mean) / sd;
  return -0.5 * z * z - std::log(sd);
}

}  // namespace

GaussianProcess::GaussianProcess(std::size_t dimensions) : dimensions_(dimensions) {
  hyper_.log_length = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(dimensions), kLengthPriorMean);
}

Eigen::MatrixXd GaussianProcess::covariance(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                                            const Hyperparameters& hyper) const {
  const Eigen::RowVectorXd inverse_length = (-hyper.log_length.array()).exp().matrix().transpose();
  const Eigen::MatrixXd as = a.array().rowwise() * inverse_length.array();
  const Eigen::MatrixXd bs = b.array().rowwise() * inverse_length.array();
  Eigen::MatrixXd r2 = (-2.0 * as * bs.transpose()).colwise() + as.rowwise().squaredNorm();
  r2.rowwise() += bs.rowwise().squaredNorm().transpose();
  const double signal = std::exp(hyper.log_signal), root5 = std::sqrt(5.0);
  return r2.unaryExpr([&](double d2) {
    const double r = std::sqrt(std::max(d2, 0.0));
    return signal * (1 + root5 * r + 5.0 / 3.0 * r * r) * std::exp(-root5 * r);
  });
}

void GaussianProcess::factor() {
  if (y_.size() == 0) return;
  Eigen::MatrixXd k = covariance(x_, x_, hyper_);
  k.diagonal().array() += std::exp(hyper_.log_noise) + kJitter;
  cholesky_.compute(k);
  // Duplicate points with a tiny noise can make K numerically singular: raise the nugget until
  // the factorisation holds.
  for (double extra = 1e-6; cholesky_.info() != Eigen::Success && extra < 1; extra *= 10) {
    k.diagonal().array() += extra;
    cholesky_.compute(k);
  }
  alpha_ = cholesky_.solve(y_);
}

void GaussianProcess::set_data(Eigen::MatrixXd x, Eigen::VectorXd y) {
  x_ = std::move(x);
  y_ = std::move(y);
  factor();
}

double GaussianProcess::log_posterior(const Hyperparameters& hyper) const {
  double prior = log_normal_density(hyper.log_signal, kSignalPriorMean, kSignalPriorSd) +
                 log_normal_density(hyper.log_noise, kNoisePriorMean, kNoisePriorSd);
  for (double l : hyper.log_length) prior += log_normal_density(l, kLengthPriorMean, kLengthPriorSd);
  if (y_.size() == 0) return prior;
  Eigen::MatrixXd k = covariance(x_, x_, hyper);
  k.diagonal().array() += std::exp(hyper.log_noise) + kJitter;
  const Eigen::LLT<Eigen::MatrixXd> llt(k);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const Eigen::VectorXd alpha = llt.solve(y_);
  const double log_det_half = llt.matrixLLT().diagonal().array().log().sum();
  return prior - 0.5 * y_.dot(alpha) - log_det_half - 0.5 * static_cast<double>(y_.size()) * std::log(2 * M_PI);
}

void GaussianProcess::set_hyperparameters(const Hyperparameters& hyper) {
  hyper_ = hyper;
  factor();
}

void GaussianProcess::fit(int max_evaluations, const std::atomic<bool>* stop) {
  if (y_.size() < 2 || max_evaluations <= 0) return;
  const auto d = static_cast<unsigned>(dimensions_);
  const auto unpack = [d](const std::vector<double>& v) {
    Hyperparameters h;
    h.log_length = Eigen::Map<const Eigen::VectorXd>(v.data(), d);
    h.log_signal = v[d];
    h.log_noise = v[d + 1];
    return h;
  };
  std::vector<double> start(hyper_.log_length.data(), hyper_.log_length.data() + d);
  start.push_back(hyper_.log_signal);
  start.push_back(hyper_.log_noise);
  std::vector<double> lower(d, kLogLengthMin), upper(d, kLogLengthMax);
  lower.push_back(kLogSignalMin);
  upper.push_back(kLogSignalMax);
  lower.push_back(kLogNoiseMin);
  upper.push_back(kLogNoiseMax);
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = std::clamp(start[i], lower[i], upper[i]);

  nlopt::opt optimiser(nlopt::LN_BOBYQA, d + 2);
  optimiser.set_lower_bounds(lower);
  optimiser.set_upper_bounds(upper);
  optimiser.set_maxeval(max_evaluations);
  optimiser.set_xtol_abs(1e-3);
  optimiser.set_initial_step(0.5);
  struct Context {
    const GaussianProcess* self;
    decltype(unpack)* to_hyperparameters;
    const std::atomic<bool>* stop;
    nlopt::opt* optimiser;
  } context{this, &unpack, stop, &optimiser};
  optimiser.set_max_objective(
      [](unsigned, const double* v, double*, void* data) {
        const auto* c = static_cast<const Context*>(data);
        if (c->stop && c->stop->load(std::memory_order_relaxed)) {
          c->optimiser->force_stop();  // optimize() then throws nlopt::forced_stop
          return -1e300;
        }
        const std::vector<double> values(v, v + c->self->dimensions_ + 2);
        const double value = c->self->log_posterior((*c->to_hyperparameters)(values));
        return std::isfinite(value) ? value : -1e300;
      },
      &context);
  std::vector<double> best = start;
  double best_value = log_posterior(unpack(start));
  try {
    std::vector<double> x = start;
    double value = 0;
    optimiser.optimize(x, value);
    if (value > best_value && !(stop && stop->load())) best = x;
  } catch (const std::exception&) {
    // nlopt gives up on a flat or ill-conditioned posterior (roundoff, forced stop): keep the start.
  }
  hyper_ = unpack(best);
  factor();
}

GaussianProcess::Prediction GaussianProcess::predict(const Eigen::MatrixXd& points) const {
  const Candidates candidates(*this, points);
  return {candidates.mean(), candidates.variance()};
}

GaussianProcess::Candidates::Candidates(const GaussianProcess& model, Eigen::MatrixXd points)
    : model_(model), points_(std::move(points)) {
  const double prior_variance = std::exp(model.hyper_.log_signal);
  if (model.y_.size() == 0) {
    whitened_.resize(0, points_.rows());
    mean_ = Eigen::VectorXd::Zero(points_.rows());
    variance_ = Eigen::VectorXd::Constant(points_.rows(), prior_variance);
    return;
  }
  const Eigen::MatrixXd cross = model.covariance(model.x_, points_, model.hyper_);
  mean_ = cross.transpose() * model.alpha_;
  whitened_ = model.cholesky_.matrixL().solve(cross);
  variance_ = (prior_variance - whitened_.colwise().squaredNorm().transpose().array()).max(1e-12).matrix();
}

void GaussianProcess::Candidates::fantasise(Eigen::Index point) {
  // Posterior covariance of every point with the fantasy, then the rank-one update that
  // observing it (with the model's noise) makes to the variances.
  const Eigen::VectorXd prior_cross = model_.covariance(points_, points_.row(point), model_.hyper_).col(0);
  const Eigen::VectorXd cross = prior_cross - whitened_.transpose() * whitened_.col(point);
  const double scale = std::sqrt(variance_(point) + std::exp(model_.hyper_.log_noise) + kJitter);
  const Eigen::RowVectorXd row = (cross / scale).transpose();
  variance_ = (variance_.array() - row.transpose().array().square()).max(1e-12).matrix();
  whitened_.conservativeResize(whitened_.rows() + 1, Eigen::NoChange);
  whitened_.row(whitened_.rows() - 1) = row;
}

}  // namespace cutune
