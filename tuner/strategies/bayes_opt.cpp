#include "bayes_opt.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <unordered_set>

namespace cutune {
namespace {

constexpr int kFitEvaluations = 120;
// Candidates besides random ones: crossings of the best `kLeaders` successes.
constexpr std::size_t kLeaders = 10, kCrossings = 64;

double normal_pdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); }
double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// Measuring cost ≈ base + slope · time, by least squares over the successes: measuring takes
// longer the slower the config. Without a positive slope (compiles dominate) every candidate
// costs the same.
struct CostModel {
  double base = 1, slope = 0, cheapest = std::numeric_limits<double>::infinity();

  template <class Points>
  static CostModel fit(const Points& points) {
    CostModel model;
    double n = 0, st = 0, sc = 0, stt = 0, stc = 0;
    for (const auto* p : points)
      if (p->log_time && p->cost_seconds > 0) {
        const double t = std::exp(*p->log_time);
        n += 1;
        st += t;
        sc += p->cost_seconds;
        stt += t * t;
        stc += t * p->cost_seconds;
        model.cheapest = std::min(model.cheapest, p->cost_seconds);
      }
    const double spread = n * stt - st * st;
    if (n >= 3 && spread > 0) {
      model.slope = std::max(0.0, (n * stc - st * sc) / spread);
      model.base = (sc - model.slope * st) / n;
    }
    return model;
  }
  double at(double time) const { return slope <= 0 ? 1.0 : std::max(base + slope * time, 0.5 * cheapest); }
};

}  // namespace

BayesOpt::BayesOpt(const Space& space, std::uint64_t seed, Options options, const WarmStart& warm_start)
    : state_(space, seed),
      options_(options),
      encoding_(space),
      model_(encoding_.dimensions()),
      prior_(warm_start, space) {
  options_.window = std::max<std::size_t>(options_.window, 8);
}

Eigen::VectorXd BayesOpt::coordinates(const Config& config) const {
  const std::vector<double> point = encoding_.point_of(config);
  return Eigen::Map<const Eigen::VectorXd>(point.data(), static_cast<Eigen::Index>(point.size()));
}

void BayesOpt::build_design(std::size_t size) {
  // The design: `size` configs, the warm start's best interleaved with space-filling ones. The
  // warm seeds are bets on the other results; the space-filling configs are the reference they are
  // judged by (and what tells the prior's weights how far to trust the sources, warm_prior.hpp,
  // since the sources say different things of them). The first seed opens; every other slot after
  // the first two is a further seed only while the bets are confirmed (next_design_config), and the
  // seeds take at most half of the design, rounded up. So a source that misleads costs one
  // evaluation of the design, and its other favourites come later only through the model, as
  // candidates whose prior mean counts once measurements confirm it.
  design_built_ = true;
  design_left_ = size;
  const std::size_t seed_count = std::min(options_.warm_seeds, (size + 1) / 2);
  for (const Config& config : prior_.ranked()) {
    if (warm_seeds_.size() >= seed_count) break;
    warm_seeds_.push_back(config);
  }
  // Greedy maximin over a pool of random valid configs: each pick is the pool config farthest
  // from everything chosen so far, so the design covers the space instead of clustering. As many
  // as the design could need if no seed but the first is confirmed.
  std::unordered_set<Config, ConfigHash> pooled(warm_seeds_.begin(), warm_seeds_.end());
  std::vector<Config> pool;
  const std::size_t wanted = warm_seeds_.empty() ? size : size - 1;
  for (std::size_t draw = 0; draw < 32 * wanted; ++draw) {
    auto config = state_.random_unproposed();
    if (!config) break;
    if (pooled.insert(*config).second) pool.push_back(std::move(*config));
  }
  std::vector<Eigen::VectorXd> pool_x;
  for (const Config& c : pool) pool_x.push_back(coordinates(c));
  std::vector<double> nearest(pool.size(), std::numeric_limits<double>::infinity());
  const auto account_for = [&](const Eigen::VectorXd& x) {
    for (std::size_t i = 0; i < pool.size(); ++i) nearest[i] = std::min(nearest[i], (pool_x[i] - x).squaredNorm());
  };
  if (!warm_seeds_.empty()) account_for(coordinates(warm_seeds_.front()));
  std::vector<bool> taken(pool.size(), false);
  std::vector<Config> filling;
  for (std::size_t pick = 0; pick < wanted && pick < pool.size(); ++pick) {
    // With nothing chosen yet every distance is infinite and the first of the (random) pool wins.
    std::size_t best = 0;
    double farthest = -1;
    for (std::size_t i = 0; i < pool.size(); ++i)
      if (!taken[i] && nearest[i] > farthest) {
        farthest = nearest[i];
        best = i;
      }
    taken[best] = true;
    filling.push_back(pool[best]);
    account_for(pool_x[best]);
  }
  filling_.assign(filling.rbegin(), filling.rend());
  std::reverse(warm_seeds_.begin(), warm_seeds_.end());
}

bool BayesOpt::warm_seeds_confirmed() const {
  // Confirmed: the fastest seed measured beats every space-filling config measured, i.e. the
  // sources' favourites are faster here than configs chosen without them. A seed or filling config
  // still unmeasured (a batch proposed ahead) leaves the question open, which does not confirm.
  if (points_.size() < proposed_in_design_) return false;
  double seeds = std::numeric_limits<double>::infinity(), filling = seeds;  // fastest log times
  for (const Point& p : points_) {
    const double time = p.log_time.value_or(std::numeric_limits<double>::infinity());
    double& fastest = seeded_.count(p.config) ? seeds : filling;
    fastest = std::min(fastest, time);
  }
  return seeds < filling;
}

std::optional<Config> BayesOpt::next_design_config() {
  if (design_left_ == 0) return std::nullopt;
  const std::size_t slot = proposed_in_design_;
  // Slot 0 the first seed, odd slots space-filling, even slots after that a seed if confirmed.
  const bool seed_slot = !warm_seeds_.empty() && (slot == 0 || (slot % 2 == 0 && warm_seeds_confirmed()));
  std::vector<Config>& from = seed_slot ? warm_seeds_ : (filling_.empty() ? warm_seeds_ : filling_);
  if (from.empty()) return std::nullopt;
  Config config = from.back();
  from.pop_back();
  if (seed_slot) seeded_.insert(config);
  --design_left_;
  ++proposed_in_design_;
  return config;
}

std::vector<Config> BayesOpt::candidates() {
  std::unordered_set<Config, ConfigHash> seen;
  std::vector<Config> found;
  const auto add = [&](const Config& c) {
    if (!state_.proposed(c) && seen.insert(c).second) found.push_back(c);
  };
  // Neighbours of the best few successes: where improvement is most likely.
  const std::vector<const Point*> best = fastest(kLeaders);
  const std::size_t leaders = best.size();
  for (std::size_t i = 0; i < std::min<std::size_t>(3, leaders); ++i)
    for (const Config& c : state_.unproposed_neighbours(best[i]->config, Neighbourhood::hamming)) add(c);
  // Crossings of the leaders, axis by axis: good configs often share good values per axis, and a
  // mix of two can land where neither's neighbourhood reaches.
  const Space& space = state_.space();
  for (std::size_t child = 0; leaders >= 2 && child < kCrossings; ++child) {
    const Config& a = best[std::uniform_int_distribution<std::size_t>(0, leaders - 1)(state_.rng())]->config;
    const Config& b = best[std::uniform_int_distribution<std::size_t>(0, leaders - 1)(state_.rng())]->config;
    Config mixed = a;
    for (std::size_t axis = 0; axis < mixed.values.size(); ++axis)
      if (state_.uniform() < 0.5) mixed.values[axis] = b.values[axis];
    if (space.valid(mixed)) add(mixed);
  }
  // The warm start's best configs not tried yet: they win only where the fitted prior weights
  // (confirmed by this search's measurements) make them look fast.
  const std::vector<Config>& ranked = prior_.ranked();
  for (std::size_t i = 0, added = 0; i < ranked.size() && added < 16; ++i)
    if (!state_.proposed(ranked[i])) {
      add(ranked[i]);
      ++added;
    }
  for (std::size_t draw = 0; draw < options_.candidates; ++draw) {
    auto config = state_.random_unproposed();
    if (!config) break;
    add(*config);
  }
  return found;
}

std::vector<const BayesOpt::Point*> BayesOpt::fastest(std::size_t count) const {
  std::vector<const Point*> successes;
  for (const Point& p : points_)
    if (p.log_time) successes.push_back(&p);
  const std::size_t kept = std::min(count, successes.size());
  std::partial_sort(successes.begin(), successes.begin() + static_cast<std::ptrdiff_t>(kept), successes.end(),
                    [](const Point* a, const Point* b) { return *a->log_time < *b->log_time; });
  successes.resize(kept);
  return successes;
}

std::vector<const BayesOpt::Point*> BayesOpt::window() const {
  std::vector<const Point*> kept;
  if (points_.size() <= options_.window) {
    for (const Point& p : points_) kept.push_back(&p);
    return kept;
  }
  // The best half, then the most recent: the model must be right near the optimum and where the
  // search is now.
  kept = fastest(options_.window / 2);
  std::unordered_set<const Point*> in(kept.begin(), kept.end());
  for (auto it = points_.rbegin(); it != points_.rend() && kept.size() < options_.window; ++it)
    if (in.insert(&*it).second) kept.push_back(&*it);
  return kept;
}

BayesOpt::~BayesOpt() {
  if (background_fit_.valid()) {
    stop_background_fit_ = true;
    background_fit_.wait();
  }
}

void BayesOpt::refit_when_due() {
  if (points_.size() < next_fit_ || background_fit_.valid()) return;  // not due, or one still runs
  if (background_fits_) {
    // A copy of the model (its data and current hyperparameters) is fitted on another thread.
    background_fit_ = std::async(std::launch::async, [model = model_, stop = &stop_background_fit_]() mutable {
      model.fit(kFitEvaluations, stop);
      return model.hyperparameters();
    });
  } else {
    model_.fit(kFitEvaluations);
  }
  // Often while a few points move the hyperparameters a lot, then at doublings, then once per
  // window's worth of new points: a fit costs O(120 · n³), the rest of a proposal O(m · n²).
  const std::size_t n_points = points_.size();
  next_fit_ = n_points < 32 ? n_points + std::max<std::size_t>(1, n_points / 4)
                            : n_points + std::min(n_points, options_.window);
}

std::vector<Config> BayesOpt::model_batch(std::size_t size) {
  const std::vector<const Point*> data = window();
  double slowest = -std::numeric_limits<double>::infinity();
  for (const Point* p : data)
    if (p->log_time) slowest = std::max(slowest, *p->log_time);
  const auto n = static_cast<Eigen::Index>(data.size());
  Eigen::VectorXd y(n);
  Eigen::MatrixXd prior(n, static_cast<Eigen::Index>(prior_.sources()));
  Eigen::MatrixXd x(n, static_cast<Eigen::Index>(encoding_.dimensions()));
  for (Eigen::Index i = 0; i < n; ++i) {
    y(i) = data[i]->log_time.value_or(slowest);
    prior.row(i) = data[i]->prior.transpose();
    x.row(i) = data[i]->x.transpose();
  }
  const double mean = y.mean();
  const double sd = n > 1 ? std::sqrt((y.array() - mean).square().sum() / static_cast<double>(n - 1)) : 0.0;
  const double log_sd = sd > 1e-12 ? sd : 1.0;
  y = (y.array() - mean) / log_sd;
  // The warm start's weight per source, fitted to what was measured (warm_prior.hpp); the model
  // learns what the prior misses.
  const Eigen::VectorXd weights = prior_.empty() ? Eigen::VectorXd() : prior_.fit_weights(prior, y);
  Eigen::VectorXd residual = y;
  if (!prior_.empty()) residual -= prior * weights;
  const double offset = residual.mean();
  residual.array() -= offset;
  // A background fit that finished is taken up before the data are factored with it.
  if (background_fit_.valid() && background_fit_.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    model_.set_hyperparameters(background_fit_.get());
  model_.set_data(x, residual);
  refit_when_due();
  double incumbent = std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < n; ++i)
    if (data[i]->log_time) incumbent = std::min(incumbent, y(i));

  std::vector<Config> pool = candidates();
  std::vector<Config> batch;
  if (pool.empty()) return batch;
  Eigen::MatrixXd px(static_cast<Eigen::Index>(pool.size()), x.cols());
  Eigen::VectorXd pprior = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(pool.size()));
  for (std::size_t i = 0; i < pool.size(); ++i) {
    px.row(static_cast<Eigen::Index>(i)) = coordinates(pool[i]).transpose();
    if (!prior_.empty()) pprior(static_cast<Eigen::Index>(i)) = prior_.scores(pool[i]).dot(weights);
  }
  const CostModel cost = options_.cost_power > 0 ? CostModel::fit(data) : CostModel{};

  GaussianProcess::Candidates predicted(model_, px);
  std::vector<bool> taken(pool.size(), false);
  while (batch.size() < size && batch.size() < pool.size()) {
    std::size_t pick = pool.size();
    double best_gain = -std::numeric_limits<double>::infinity();
    const bool exploit = options_.exploit_every > 0 && ++picks_ % options_.exploit_every == 0;
    for (std::size_t i = 0; i < pool.size(); ++i) {
      if (taken[i]) continue;
      const auto row = static_cast<Eigen::Index>(i);
      const double mu = offset + pprior(row) + predicted.mean()(row);
      const double sigma = std::sqrt(predicted.variance()(row));
      const double improvement = incumbent - options_.exploration - mu;
      const double z = improvement / sigma;
      double gain = improvement * normal_cdf(z) + sigma * normal_pdf(z);
      if (cost.slope > 0) gain /= std::pow(cost.at(std::exp(mean + log_sd * mu)), options_.cost_power);
      if (exploit) gain = -mu;
      if (gain > best_gain) {
        best_gain = gain;
        pick = i;
      }
    }
    if (pick == pool.size()) break;
    taken[pick] = true;
    batch.push_back(pool[pick]);
    if (batch.size() < size) predicted.fantasise(static_cast<Eigen::Index>(pick));
  }
  return batch;
}

std::vector<Config> BayesOpt::propose(std::size_t max_batch) {
  if (max_batch == 0) return {};
  if (!design_built_) build_design(std::max(options_.initial, gpus_));
  std::vector<Config> batch;
  while (batch.size() < max_batch) {
    const std::optional<Config> config = next_design_config();
    if (!config) break;
    if (state_.claim(*config)) batch.push_back(*config);
  }
  if (!batch.empty()) return batch;
  const bool any_success =
      std::any_of(points_.begin(), points_.end(), [](const Point& p) { return p.log_time.has_value(); });
  // From n observations, at most n / 2 (and at least 2, and one per GPU: a GPU left waiting
  // learns nothing either) configs are proposed and not yet observed:
  // a large batch chosen from little knowledge is mostly guesswork, and on a small budget it would
  // spend the budget before the model learns. Batches grow as the model does, to what the session
  // asks. Asked ahead (configs still outstanding), the outstanding ones count against that bound,
  // and the model waits for their results once it is reached.
  const std::size_t outstanding = state_.proposed_count() - std::min(state_.proposed_count(), points_.size());
  const std::size_t allowed = std::max({std::size_t{2}, gpus_, points_.size() / 2});
  if (outstanding > 0 && (!any_success || outstanding >= allowed)) return {};
  if (any_success) batch = model_batch(std::min(max_batch, allowed - outstanding));
  for (const Config& c : batch) state_.claim(c);
  // Nothing to model yet (every config so far failed): random configs, a batch of them.
  const std::size_t random_fill = any_success ? 0 : max_batch;
  while (batch.size() < random_fill) {
    auto config = state_.claim_random();
    if (!config) break;
    batch.push_back(std::move(*config));
  }
  return batch;
}

void BayesOpt::observe(const Observation& observation) {
  state_.record(observation);
  Point p;
  p.config = observation.config;
  p.x = coordinates(observation.config);
  // A time of 0 (a landscape's rounding) must not become -inf.
  if (observation.objective) p.log_time = std::log(std::max(*observation.objective, 1e-12));
  p.prior = prior_.scores(observation.config);
  p.cost_seconds = observation.cost_seconds;
  points_.push_back(std::move(p));
}

}  // namespace cutune
