// The model-based strategy's parts: the Gaussian process, its batched "constant liar" update,
// the warm start (what it reads and how it opens a search), and strategy options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
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

TEST(WarmPrior, GivesEachSourceAModelInputOfItsOwn) {
  const Space space = grid_space();
  // Times of this device: a + b. One source agrees (a + b, slower), one is reversed (1 / (a + b)),
  // one holds only configs with a = 1.
  WarmStartSource agreeing{"agreeing", {}}, reversed{"reversed", {}}, partial{"partial", {}};
  space.for_each_valid([&](const Config& c) {
    const double t = static_cast<double>(c.values[0] + c.values[1]);
    agreeing.results.push_back({c, 10 * t, 1});
    reversed.results.push_back({c, 1 / t, 1});
    if (c.values[0] == 1) partial.results.push_back({c, t, 1});
  });
  const WarmPrior prior({agreeing, reversed, partial}, space);
  ASSERT_EQ(prior.sources(), 3u);
  const Eigen::VectorXd fast = prior.inputs(Config{{1, 1}}), slow = prior.inputs(Config{{7, 7}});
  ASSERT_EQ(fast.size(), 3);
  // Each source is normalised on its own: z-scores on the unit scale of the coordinates, so the
  // agreeing source's favourite sits low and the reversed source's high, about the middle (0.5).
  EXPECT_LT(fast(0), 0.5);
  EXPECT_GT(slow(0), 0.5);
  EXPECT_GT(fast(1), 0.5);
  EXPECT_LT(slow(1), 0.5);
  EXPECT_NEAR(fast(0) + fast(1), 1.0, 0.1);  // mirror images (of log t and −log t)
  EXPECT_DOUBLE_EQ(slow(2), 0.5);            // a config a source lacks: its mean
  EXPECT_LT(fast(2), 0.5);
  for (Eigen::Index k = 0; k < 3; ++k)
    EXPECT_DOUBLE_EQ(prior.inputs(Config{{3, 4}})(k), (prior.scores(Config{{3, 4}})(k) + 3) / 6);
  // The ranking is the consensus; with the agreeing source alone, its favourite first.
  EXPECT_EQ(WarmPrior({agreeing}, space).ranked().front(), (Config{{1, 1}}));
}

namespace {

// A landscape whose coordinates say little: the time of (a, b) is a hash of it, unique per config.
double scrambled_time(const Config& c) {
  return 1.0 + static_cast<double>((c.values[0] * 37 + c.values[1] * 91) % 61) / 61.0 + 1e-3 * c.values[0];
}

// Evaluations bayes_opt needs to propose `optimum`, at most `budget`.
std::size_t evaluations_to(const Config& optimum, std::uint64_t seed, const WarmStart& warm, std::size_t budget) {
  const Space space = grid_space();
  BayesOpt search(space, seed, BayesOpt::Options{}, warm);
  for (std::size_t n = 1; n <= budget; ++n) {
    const auto batch = search.propose(1);
    if (batch.empty()) return budget;
    if (batch.at(0) == optimum) return n;
    search.observe({batch.at(0), scrambled_time(batch.at(0)), 1});
  }
  return budget;
}

// Mean evaluations to the optimum of scrambled_time over seeds 1..5, warm-started from `warm`.
double mean_evaluations_to_optimum(const WarmStart& warm) {
  const Space space = grid_space();
  Config optimum;
  double best = std::numeric_limits<double>::infinity();
  space.for_each_valid([&](const Config& c) {
    if (scrambled_time(c) < best) {
      best = scrambled_time(c);
      optimum = c;
    }
  });
  double sum = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) sum += static_cast<double>(evaluations_to(optimum, seed, warm, 61));
  return sum / 5;
}

// Another device's results on grid_space(): the same ranking as scrambled_time in the large, on a
// scale of its own and reordered in the small (so its favourite is not this device's optimum);
// with `mediocre_favourites`, its eight favourites are configs of this device's middle.
WarmStartSource another_device(bool mediocre_favourites) {
  const Space space = grid_space();
  std::vector<Config> here;  // fastest first
  space.for_each_valid([&](const Config& c) { here.push_back(c); });
  std::sort(here.begin(), here.end(),
            [](const Config& a, const Config& b) { return scrambled_time(a) < scrambled_time(b); });
  WarmStartSource there{mediocre_favourites ? "right in the large, wrong at the top" : "agreeing in the large", {}};
  for (std::size_t rank = 0; rank < here.size(); ++rank) {
    const Config& c = here[rank];
    const double t = scrambled_time(c) + 0.05 * static_cast<double>((c.values[0] * 13 + c.values[1] * 7) % 5);
    const bool favourite = mediocre_favourites && rank >= 24 && rank < 32;
    there.results.push_back({c, favourite ? 0.1 * static_cast<double>(rank - 23) : 3 * t * t, 1});
  }
  return there;
}

}  // namespace

TEST(BayesOpt, LearnsWhatASourcesScoresSayHereThroughItsInput) {
  const double cold = mean_evaluations_to_optimum({});
  // A source that orders this device: its input leads the model to the optimum.
  const double agreeing = mean_evaluations_to_optimum({another_device(false)});
  EXPECT_LT(agreeing, cold / 2) << "cold " << cold;
  // A source whose favourites are mediocre here: once its seed measures mediocre, configs it
  // scores alike are predicted mediocre too, so its favourites do not hold the search up, and the
  // rest of its ranking still helps. (With the sources in the model's prior mean instead, fitted
  // weights and all, the search chased the favourites: 33 evaluations against cold's 35.)
  const double weak = mean_evaluations_to_optimum({another_device(true)});
  EXPECT_LT(weak, 0.75 * cold) << "cold " << cold;
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
