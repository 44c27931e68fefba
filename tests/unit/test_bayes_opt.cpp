// The model-based strategy's parts: the Gaussian process, its batched "constant liar" update,
// the warm start (what it reads and how it opens a search), and strategy options.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <deque>
#include <set>

#include "core/error.hpp"
#include "results_fixture.hpp"
#include "session.hpp"
#include "strategies/bayes_opt.hpp"
#include "strategies/gaussian_process.hpp"
#include "strategies/strategy.hpp"
#include "strategies/warm_prior.hpp"

using namespace cutune;

namespace {

// Points on [0, 1] and a smooth function of them.
Eigen::MatrixXd line_points(int n) {
  Eigen::MatrixXd x(n, 1);
  for (int i = 0; i < n; ++i) x(i, 0) = static_cast<double>(i) / (n - 1);
  return x;
}
Eigen::VectorXd wave(const Eigen::MatrixXd& x) { return (6.0 * x.col(0)).array().sin().matrix(); }

Space grid_space() {
  Space s;
  s.axis("a", {1, 2, 3, 4, 5, 6, 7, 8}).axis("b", {1, 2, 3, 4, 5, 6, 7, 8}).require("a + b <= 14");
  return s;
}

}  // namespace

TEST(GaussianProcess, InterpolatesItsDataAndIsUnsureFarFromIt) {
  GaussianProcess gp(1);
  const Eigen::MatrixXd x = line_points(8);
  gp.set_data(x, wave(x));
  const double before = gp.log_posterior(gp.hyperparameters());
  gp.fit(200);
  EXPECT_GE(gp.log_posterior(gp.hyperparameters()), before);  // the fit never ends worse than its start

  const auto at_data = gp.predict(x);
  for (int i = 0; i < x.rows(); ++i) {
    EXPECT_NEAR(at_data.mean(i), wave(x)(i), 0.05) << i;
    EXPECT_LT(at_data.variance(i), 0.01) << i;
  }
  Eigen::MatrixXd between(1, 1), far(1, 1);
  between << 0.5 / 7;
  far << 3.0;
  EXPECT_NEAR(gp.predict(between).mean(0), std::sin(6.0 * 0.5 / 7), 0.1);
  EXPECT_GT(gp.predict(far).variance(0), 10 * gp.predict(between).variance(0));
}

// A fit on another thread whose result is no longer wanted ends at once and changes nothing.
TEST(GaussianProcess, AFitToldToStopKeepsTheHyperparametersItStartedFrom) {
  GaussianProcess stopped(1), fitted(1);
  const Eigen::MatrixXd x = line_points(12);
  stopped.set_data(x, wave(x));
  fitted.set_data(x, wave(x));
  const auto start = stopped.hyperparameters();
  const std::atomic<bool> stop = true;
  stopped.fit(200, &stop);
  EXPECT_EQ(stopped.hyperparameters().log_length, start.log_length);
  EXPECT_EQ(stopped.hyperparameters().log_signal, start.log_signal);
  EXPECT_EQ(stopped.hyperparameters().log_noise, start.log_noise);
  // Not stopped, the same fit moves them (so the check above could fail); set on another model,
  // they give its predictions.
  fitted.fit(200);
  EXPECT_NE(fitted.hyperparameters().log_length, start.log_length);
  stopped.set_hyperparameters(fitted.hyperparameters());
  EXPECT_NEAR(stopped.predict(x).mean(3), fitted.predict(x).mean(3), 1e-12);
  EXPECT_NEAR(stopped.predict(x).variance(3), fitted.predict(x).variance(3), 1e-12);
}

TEST(GaussianProcess, AFantasyShrinksVariancesAsRefittingWithItWould) {
  GaussianProcess gp(2);
  Eigen::MatrixXd x(5, 2);
  x << 0.1, 0.2, 0.8, 0.3, 0.5, 0.9, 0.3, 0.6, 0.9, 0.9;
  Eigen::VectorXd y(5);
  y << 0.3, -1.0, 0.5, 0.1, 1.2;
  gp.set_data(x, y);
  Eigen::MatrixXd points(4, 2);
  points << 0.5, 0.5, 0.55, 0.5, 0.0, 1.0, 1.0, 0.0;

  GaussianProcess::Candidates candidates(gp, points);
  const Eigen::VectorXd mean_before = candidates.mean();
  candidates.fantasise(0);
  candidates.fantasise(3);

  // The same with the fantasies added as data at their predicted means: the means must not
  // move and the variances must match.
  Eigen::MatrixXd more(7, 2);
  more << x, points.row(0), points.row(3);
  Eigen::VectorXd more_y(7);
  more_y << y, mean_before(0), mean_before(3);
  GaussianProcess refit = gp;
  refit.set_data(more, more_y);
  const auto expected = refit.predict(points);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(candidates.mean()(i), expected.mean(i), 1e-9) << i;
    EXPECT_NEAR(candidates.variance()(i), expected.variance(i), 1e-9) << i;
  }
  EXPECT_LT(candidates.variance()(1), gp.predict(points).variance(1));  // a neighbour of a fantasy is surer too
}

namespace {

// Results of another GPU: its fastest would be (8, 8), which grid_space() does not hold.
WarmStartSource other_gpu() {
  WarmStartSource other{"other GPU", {}};
  other.results.push_back({Config{{8, 8}}, 0.1, 1});
  other.results.push_back({Config{{7, 7}}, 0.2, 1});
  other.results.push_back({Config{{2, 3}}, 0.3, 1});
  other.results.push_back({Config{{5, 1}}, std::nullopt, 1});  // failed there
  other.results.push_back({Config{{1, 1}}, 9.0, 1});
  other.results.push_back({Config{{4, 4}}, 0.25, 1});
  return other;
}

// Proposes one config and observes it at `time`.
Config step(BayesOpt& search, double time) {
  const auto batch = search.propose(1);
  EXPECT_EQ(batch.size(), 1u);
  search.observe({batch.at(0), time, 1});
  return batch.at(0);
}

// A design of five with up to three warm seeds.
BayesOpt::Options five_with_three_seeds() {
  BayesOpt::Options options;
  options.warm_seeds = 3;
  options.initial = 5;
  return options;
}

}  // namespace

TEST(BayesOpt, AWarmStartOpensWithTheOtherResultsBestValidConfigAndAddsSeedsWhileTheyWin) {
  const Space space = grid_space();
  BayesOpt search(space, 7, five_with_three_seeds(), {other_gpu()});
  // Seed, space-filling, then a seed only while the seeds beat the space-filling configs.
  EXPECT_EQ(step(search, 1.0), (Config{{7, 7}}));
  const Config filling = step(search, 2.0);
  EXPECT_TRUE(space.valid(filling));
  EXPECT_EQ(step(search, 1.5), (Config{{4, 4}}));  // confirmed: 1.0 beat 2.0
  step(search, 3.0);
  EXPECT_EQ(step(search, 1.2), (Config{{2, 3}}));
}

TEST(BayesOpt, AWarmStartThatLosesToTheSpaceFillingConfigsGetsNoSecondSeed) {
  const Space space = grid_space();
  BayesOpt search(space, 7, five_with_three_seeds(), {other_gpu()});
  EXPECT_EQ(step(search, 5.0), (Config{{7, 7}}));
  step(search, 1.0);  // a config chosen without the warm start beats its favourite
  for (int i = 0; i < 3; ++i) {
    const Config next = step(search, 2.0);
    EXPECT_NE(next, (Config{{4, 4}})) << i;
    EXPECT_NE(next, (Config{{2, 3}})) << i;
  }
  // Asked for the whole design at once, nothing is confirmed yet: one seed, the rest fill.
  BayesOpt batched(space, 7, five_with_three_seeds(), {other_gpu()});
  const auto first = batched.propose(5);
  ASSERT_EQ(first.size(), 5u);
  EXPECT_EQ(first[0], (Config{{7, 7}}));
  for (std::size_t i = 1; i < first.size(); ++i) {
    EXPECT_NE(first[i], (Config{{4, 4}}));
    EXPECT_NE(first[i], (Config{{2, 3}}));
  }
}

TEST(WarmPrior, KeepsSourcesApartAndWeighsThemByWhatTheyPredict) {
  const Space space = grid_space();
  // Times of this device: a + b. One source agrees (a + b, slower), one is reversed (1 / (a + b)).
  WarmStartSource agreeing{"agreeing", {}}, reversed{"reversed", {}};
  space.for_each_valid([&](const Config& c) {
    const double t = static_cast<double>(c.values[0] + c.values[1]);
    agreeing.results.push_back({c, 10 * t, 1});
    reversed.results.push_back({c, 1 / t, 1});
  });
  const WarmPrior prior({agreeing, reversed}, space);
  ASSERT_EQ(prior.sources(), 2u);
  // The consensus of a perfect and a reversed source ranks nothing well, but the fit sorts them.
  std::vector<Config> measured;
  space.for_each_valid([&](const Config& c) {
    if ((c.values[0] * 3 + c.values[1]) % 5 == 0) measured.push_back(c);
  });
  Eigen::MatrixXd scores(static_cast<Eigen::Index>(measured.size()), 2);
  Eigen::VectorXd y(scores.rows());
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    scores.row(i) = prior.scores(measured[static_cast<std::size_t>(i)]).transpose();
    y(i) = std::log(static_cast<double>(measured[static_cast<std::size_t>(i)].values[0] +
                                        measured[static_cast<std::size_t>(i)].values[1]));
  }
  y = (y.array() - y.mean()) / std::sqrt((y.array() - y.mean()).square().sum() / static_cast<double>(y.size() - 1));
  const Eigen::VectorXd both = prior.fit_weights(scores, y);
  EXPECT_GT(both(0), 0.8);
  EXPECT_EQ(both(1), 0.0);  // never negative: a reversed source is dropped, not turned around

  const WarmPrior reversed_only({reversed}, space);
  Eigen::MatrixXd reversed_scores(scores.rows(), 1);
  reversed_scores.col(0) = scores.col(1);
  EXPECT_EQ(reversed_only.fit_weights(reversed_scores, y)(0), 0.0);
  // Without evidence (nothing measured), the guess.
  EXPECT_DOUBLE_EQ(reversed_only.fit_weights(Eigen::MatrixXd(0, 1), Eigen::VectorXd(0))(0), WarmPrior::kGuess);
  // Measured only where the source's scores are all alike, its weight learns little and falls
  // from the guess instead of being confirmed by it.
  Eigen::MatrixXd alike = Eigen::MatrixXd::Constant(3, 1, -2.0);
  Eigen::VectorXd spread(3);
  spread << -1, 0, 1;
  EXPECT_LT(reversed_only.fit_weights(alike, spread)(0), 0.1);
}

// A source's favourite, far ahead of the rest there, is predicted good but not best: its z-score
// is floored in the model, while the ranking (the seeds' order) still puts it first.
TEST(WarmPrior, FloorsASourcesFavouritesInTheModelButRanksThemFirst) {
  const Space space = grid_space();
  WarmStartSource source{"other", {}};
  const Config favourite{{7, 7}};
  space.for_each_valid([&](const Config& c) {
    const double t = c == favourite ? 1e-3 : static_cast<double>(1 + c.values[0] + c.values[1]);
    source.results.push_back({c, t, 1});
  });
  const WarmPrior prior({source}, space);
  ASSERT_EQ(prior.sources(), 1u);
  EXPECT_EQ(prior.ranked().front(), favourite);
  EXPECT_DOUBLE_EQ(prior.scores(favourite)(0), WarmPrior::kFloor);  // unfloored it is below -7
  double least = 0;
  space.for_each_valid([&](const Config& c) { least = std::min(least, prior.scores(c)(0)); });
  EXPECT_DOUBLE_EQ(least, WarmPrior::kFloor);
  // The middle of the ranking keeps its own score: only the favourites are cut.
  EXPECT_GT(prior.scores(prior.ranked()[prior.ranked().size() / 2])(0), WarmPrior::kFloor);
  EXPECT_LT(prior.scores(prior.ranked()[prior.ranked().size() / 2])(0), 0.5);
}

TEST(BayesOpt, BatchesGrowWithWhatTheModelKnows) {
  const Space space = grid_space();
  BayesOpt::Options options;
  options.initial = 6;
  BayesOpt search(space, 3, options, {});
  std::set<Config> seen;
  std::size_t observed = 0;
  for (const std::size_t expected : {6, 3, 4, 6, 9, 14, 16, 3, 0}) {  // 61 valid configs
    const auto batch = search.propose(16);
    EXPECT_EQ(batch.size(), expected) << "after "
                                      << observed;  // the design, then half of what was observed, then the rest
    for (const auto& c : batch) {
      EXPECT_TRUE(space.valid(c));
      EXPECT_TRUE(seen.insert(c).second) << space.key(c);
      search.observe({c, 1.0 + std::abs(static_cast<double>(c.values[0]) - 5) + static_cast<double>(c.values[1]), 0.5});
      ++observed;
    }
  }
}

// On several GPUs the design has a config for each, and as many may be outstanding from the start.
TEST(BayesOpt, KeepsAConfigOutstandingForEveryGpu) {
  const Space space = grid_space();
  BayesOpt search(space, 3, {}, {});  // a design of 3
  search.set_gpus(6);
  std::deque<Config> outstanding;
  std::set<Config> seen;
  const auto take = [&](const std::vector<Config>& batch) {
    for (const auto& c : batch) {
      EXPECT_TRUE(space.valid(c));
      EXPECT_TRUE(seen.insert(c).second) << space.key(c);
      outstanding.push_back(c);
    }
  };
  take(search.propose(16));
  EXPECT_EQ(outstanding.size(), 6u) << "one design config per GPU";
  std::size_t observed = 0;
  while (!outstanding.empty()) {
    const Config c = outstanding.front();
    outstanding.pop_front();
    search.observe({c, 1.0 + std::abs(static_cast<double>(c.values[0]) - 5) + static_cast<double>(c.values[1]), 0.5});
    ++observed;
    take(search.propose(16));
    EXPECT_LE(outstanding.size(), std::max<std::size_t>(6, observed / 2)) << "after " << observed;
    if (observed < 12) {
      EXPECT_EQ(outstanding.size(), 6u) << "a GPU left idle after " << observed;
    }
  }
  EXPECT_EQ(seen.size(), 61u);
}

// In a session, hyperparameter fits run on another thread: proposals go on meanwhile, never
// invalid or repeated, and a strategy dropped while a fit runs stops it instead of waiting.
TEST(BayesOpt, FitsOnAnotherThreadLeaveProposalsValidAndStopWhenTheSearchIsDropped) {
  const Space space = grid_space();
  for (const std::size_t drop_after : {std::size_t{12}, std::size_t{61}}) {
    BayesOpt search(space, 5, {}, {});
    search.allow_background_work();
    std::set<Config> seen;
    while (seen.size() < drop_after) {
      const auto batch = search.propose(4);
      if (batch.empty()) break;
      for (const auto& c : batch) {
        EXPECT_TRUE(space.valid(c));
        EXPECT_TRUE(seen.insert(c).second) << space.key(c);
        search.observe(
            {c, 1.0 + std::abs(static_cast<double>(c.values[0]) - 5) + static_cast<double>(c.values[1]), 0.5});
      }
    }
    EXPECT_GE(seen.size(), drop_after);
  }  // dropped with a fit perhaps still running: the destructor stops it (a hang or crash fails)
}

TEST(WarmStart, ReadsOnlyTheSameFamilyAndLeavesOutTheSearchsOwnResults) {
  const cutune::testing::TempFolder folder{"cutune-warm"};
  db::Store store((folder / "w.db").string());
  cutune::testing::ResultsBuilder add(store);
  const auto here = add.device("GPU-here", "H100", 9, 0), there = add.device("GPU-there", "A100", 8, 0);
  add.result(here, "scan", 1024, "int32", "algo=warp,block=256", 1.0);   // this search's own
  add.result(here, "scan", 2048, "int32", "algo=warp,block=128", 2.0);   // another size
  add.result(there, "scan", 1024, "int32", "algo=warp,block=512", 3.0);  // another GPU
  add.result(there, "scan", 1024, "int32", "algo=warp,block=999", 3.0);  // off this space
  add.result(there, "scan", 1024, "int32", "algo=warp,block=64", std::nullopt, "compile_error");
  add.result(there, "reduce", 1024, "int32", "algo=warp,block=128", 0.5);  // another family

  Space space;
  space.labelled_axis("algo", {"warp", "blelloch"}).axis("block", {64, 128, 256, 512});
  const auto sources = store.family_results_by_source("scan");
  ASSERT_EQ(sources.size(), 3u);
  const WarmStart warm = warm_start_for(space, sources, "GPU-here", "n=1024,type=int32");
  ASSERT_EQ(warm.size(), 2u);
  std::size_t results = 0;
  for (const auto& source : warm) {
    EXPECT_EQ(source.name.find("reduce"), std::string::npos);
    for (const auto& r : source.results) {
      EXPECT_TRUE(space.valid(r.config));
      EXPECT_NE(space.key(r.config), "algo=warp,block=256") << "the search's own result";
      if (space.key(r.config) == "algo=warp,block=64") {
        EXPECT_FALSE(r.objective.has_value());
      }
      ++results;
    }
  }
  EXPECT_EQ(results, 3u);  // block=128 (2048), block=512 and the failed block=64 (A100); not 999, not reduce
}

TEST(StrategyOptions, AreValidatedWhereTheStrategyReadsThem) {
  EXPECT_NO_THROW(check_strategy({"bayes_opt", {{"initial", "12"}, {"cost_power", "0.5"}}}));
  EXPECT_NO_THROW(check_strategy({"greedy_ils", {{"neighbourhood", "adjacent"}}}));
  const auto message = [](const StrategySpec& spec) {
    try {
      check_strategy(spec);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"bayes_opt", {{"nosuch", "1"}}}).find("no such option (known: initial, candidates"),
            std::string::npos);
  EXPECT_NE(message({"bayes_opt", {{"initial", "0"}}}).find("whole number from 1 to"), std::string::npos);
  EXPECT_NE(message({"bayes_opt", {{"initial", "4x"}}}).find("initial=4x"), std::string::npos);
  EXPECT_NE(message({"bayes_opt", {{"exploration", "nan"}}}).find("a number from 0 to 10"), std::string::npos);
  EXPECT_NE(message({"greedy_ils", {{"neighbourhood", "far"}}}).find("one of adjacent, hamming"), std::string::npos);
  EXPECT_NE(message({"random_sampling", {{"x", "1"}}}).find("takes no options"), std::string::npos);
  EXPECT_THROW(parse_strategy_option("initial"), UsageError);
  EXPECT_THROW(parse_strategy_option("=3"), UsageError);
  EXPECT_EQ(parse_strategy_option("initial=3").second, "3");

  const auto options = strategy_options("bayes_opt");
  ASSERT_FALSE(options.empty());
  EXPECT_EQ(options.front().name, "initial");
  EXPECT_EQ(label_of({"bayes_opt", {{"window", "80"}, {"initial", "4"}}}), "bayes_opt initial=4 window=80");
}
