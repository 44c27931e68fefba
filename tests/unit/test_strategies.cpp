// Every registered strategy, driven directly on synthetic spaces: only valid configs, never one
// twice, the whole space and then an empty batch, the optimum within a budget, and the same
// run for the same seed.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "rare_space.hpp"
#include "strategies/strategy.hpp"

using namespace cutune;

namespace {

// 16 x 16 x 4 raw configs with two expression constraints (one leaves holes), a failing corner
// and a unique optimum at x = 11, y = 5, z = 4.
Space bowl_space() {
  Space s;
  s.axis("x", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
      .axis("y", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
      .axis("z", {1, 2, 4, 8})
      .require("x + y <= 24")
      .require("x % 3 != 1 || y % 2 == 0");
  return s;
}

std::optional<double> bowl(const Config& c) {
  // A space of fewer axes (the one-config space) reads the missing ones as the optimum's values.
  const auto at = [&c](std::size_t axis, std::int64_t otherwise) {
    return static_cast<double>(axis < c.values.size() ? c.values[axis] : otherwise);
  };
  const double x = at(0, 11), y = at(1, 5), z = std::log2(at(2, 4));
  if (x < 2 && y < 2) return std::nullopt;  // "fails to compile"
  return 1 + (x - 11) * (x - 11) + (y - 5) * (y - 5) + 4 * std::abs(z - 2);
}

const Config kOptimum{{11, 5, 4}};

struct DrivenRun {
  std::vector<Config> proposed;
  bool ran_out = false;  // the strategy returned an empty batch
  bool found_optimum = false;
};

// Checks every proposal as it comes, then answers it with the bowl.
DrivenRun drive(const std::string& strategy_name, const Space& space, std::uint64_t seed, std::size_t max_evals,
                std::size_t batch_size = 1) {
  DrivenRun run;
  auto strategy = make_strategy(strategy_name, space, seed);
  std::set<Config> seen;
  while (run.proposed.size() < max_evals) {
    const auto batch = strategy->propose(std::min(batch_size, max_evals - run.proposed.size()));
    if (batch.empty()) {
      run.ran_out = true;
      break;
    }
    EXPECT_LE(batch.size(), batch_size);
    for (const auto& config : batch) {
      EXPECT_TRUE(space.valid(config)) << strategy_name << " proposed invalid " << space.key(config);
      EXPECT_TRUE(seen.insert(config).second) << strategy_name << " proposed " << space.key(config) << " twice";
      run.proposed.push_back(config);
      run.found_optimum = run.found_optimum || config == kOptimum;
    }
    for (const auto& config : batch) strategy->observe({config, bowl(config), 1.0});
  }
  return run;
}

class EveryStrategy : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(EveryStrategy, ProposesEachValidConfigOnceThenRunsOut) {
  const Space space = bowl_space();
  const std::size_t valid = space.enumerate().size();
  for (std::size_t batch : {1, 7}) {
    const DrivenRun run = drive(GetParam(), space, 3, valid + 10, batch);
    EXPECT_TRUE(run.ran_out) << "batch " << batch;
    EXPECT_EQ(run.proposed.size(), valid) << "batch " << batch;
  }
}

TEST_P(EveryStrategy, FindsTheOptimumWithinABudget) {
  const Space space = bowl_space();
  const std::size_t valid = space.enumerate().size();
  // Searching strategies get a third of the space; random sampling and brute force, which
  // ignore the results, the whole of it.
  const bool blind = GetParam() == "random_sampling" || GetParam() == "brute_force";
  const std::size_t budget = blind ? valid : valid / 3;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    EXPECT_TRUE(drive(GetParam(), space, seed, budget).found_optimum) << "seed " << seed << ", budget " << budget;
}

TEST_P(EveryStrategy, SameSeedSameRun) {
  const Space space = bowl_space();
  const DrivenRun first = drive(GetParam(), space, 42, 60, 4);
  const DrivenRun again = drive(GetParam(), space, 42, 60, 4);
  EXPECT_EQ(first.proposed, again.proposed);
  if (GetParam() != "brute_force") {
    EXPECT_NE(first.proposed, drive(GetParam(), space, 43, 60, 4).proposed);
  }
}

TEST_P(EveryStrategy, AcceptsASpaceOfOneConfig) {
  Space space;
  space.axis("only", {7});
  const DrivenRun run = drive(GetParam(), space, 1, 5);
  ASSERT_EQ(run.proposed.size(), 1u);
  EXPECT_TRUE(run.ran_out);
}

// 10 valid configs among 10^8 (a --restrict to a few configs of a large space): rejection
// sampling gives up on every draw there, and the strategies list the space instead.
TEST_P(EveryStrategy, ProposesEachOfARareSpacesConfigsOnce) {
  const Space space = cutune::testing::rare_space(8);
  const DrivenRun run = drive(GetParam(), space, 2, 20, 3);
  EXPECT_TRUE(run.ran_out);
  EXPECT_EQ(run.proposed.size(), 10u);
}

TEST_P(EveryStrategy, StopsCleanlyWhenDroppedMidBatch) {
  // A session that runs out of budget drops the strategy with proposals unobserved.
  const Space space = bowl_space();
  auto strategy = make_strategy(GetParam(), space, 5);
  EXPECT_FALSE(strategy->propose(3).empty());
  strategy.reset();
}

INSTANTIATE_TEST_SUITE_P(Registered, EveryStrategy, ::testing::ValuesIn(strategy_names()),
                         [](const auto& test_param) { return test_param.param; });

TEST(StrategyRegistry, DefaultIsRegisteredAndUnknownNamesAreUsageErrors) {
  const auto names = strategy_names();
  EXPECT_EQ(names.front(), default_strategy_name());
  for (const char* required : {"brute_force", "random_sampling", "simulated_annealing", "genetic_algorithm",
                               "greedy_ils", "auc_bandit", "nlopt_sbplx", "nlopt_direct_l", "nlopt_crs2"})
    EXPECT_NO_THROW(check_strategy_name(required)) << required;
  try {
    make_strategy("nosuch", bowl_space(), 1);
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("known: " + default_strategy_name()), std::string::npos) << e.what();
  }
}
