#include <gtest/gtest.h>

#include "measure.hpp"

using namespace cutune;

TEST(Summarize, MedianMinMaxStdev) {
  const Measurement m = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(m.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(m.min_ms, 1);
  EXPECT_DOUBLE_EQ(m.max_ms, 4);
  EXPECT_DOUBLE_EQ(m.mean_ms, 2.5);
  EXPECT_NEAR(m.stdev_ms, 1.2909944, 1e-6);
  EXPECT_DOUBLE_EQ(summarize({5, 1, 9}).median_ms, 5);
}

TEST(StoppingRule, NeedsTheMinimumThenStopsWhenTight) {
  MeasureOptions o;
  o.min_samples = 5;
  o.max_samples = 100;
  std::vector<double> steady(4, 1.0);
  EXPECT_FALSE(enough_samples(steady, o));
  steady.push_back(1.0);
  EXPECT_TRUE(enough_samples(steady, o));
}

TEST(StoppingRule, KeepsSamplingNoisyTimesUntilTheCap) {
  MeasureOptions o;
  o.min_samples = 5;
  o.max_samples = 40;
  o.max_sample_seconds = 100;
  std::vector<double> noisy;
  for (int i = 0; i < 39; ++i) noisy.push_back(i % 2 ? 1.0 : 2.0);
  EXPECT_FALSE(enough_samples(noisy, o));
  noisy.push_back(1.0);
  EXPECT_TRUE(enough_samples(noisy, o));
}

TEST(StoppingRule, TimeCapEndsLongKernels) {
  MeasureOptions o;
  o.min_samples = 10;
  o.max_sample_seconds = 0.5;
  EXPECT_TRUE(enough_samples({300.0, 300.0}, o));  // 600 ms of samples
  EXPECT_FALSE(enough_samples({300.0}, o));
}

TEST(CutShort, OnlyAConfigClearlyBehindTheBestStopsEarly) {
  MeasureOptions o;                                                // cut_ratio 2, after 3 samples
  EXPECT_FALSE(clearly_behind({5.0, 5.0, 5.0}, std::nullopt, o));  // nothing to compare with yet
  EXPECT_FALSE(clearly_behind({5.0, 5.0}, 1.0, o));                // too few samples to judge
  EXPECT_TRUE(clearly_behind({5.0, 2.5, 5.0}, 1.0, o));            // even the fastest is 2.5x the best
  EXPECT_FALSE(clearly_behind({5.0, 1.9, 5.0}, 1.0, o));           // one sample within 2x: keep measuring
  EXPECT_FALSE(clearly_behind({2.0, 2.0, 2.0}, 1.0, o));           // exactly 2x is not "more than"
  o.cut_ratio = 0;
  EXPECT_FALSE(clearly_behind({50.0, 50.0, 50.0}, 1.0, o));  // disabled
}

TEST(StoppingRule, AsAValueItAppliesTheOptionsOrAFixedCount) {
  MeasureOptions o;
  o.min_samples = 5;
  const std::vector<double> steady(5, 1.0);
  EXPECT_TRUE(StoppingRule::from(o).enough(steady));
  EXPECT_FALSE(StoppingRule::from(o).enough({1.0, 1.0}));
  // A fixed count ignores how noisy the samples are, and how far behind.
  EXPECT_FALSE(StoppingRule::fixed_count(3).enough({1.0, 100.0}));
  EXPECT_TRUE(StoppingRule::fixed_count(3).enough({1.0, 100.0, 1.0}));
  EXPECT_TRUE(StoppingRule::fixed_count(0).enough({}));
  EXPECT_FALSE(StoppingRule::fixed_count(3).cut_short({50.0, 50.0, 50.0}));
  // Cut short only against a best median, as clearly_behind says.
  EXPECT_FALSE(StoppingRule::from(o).cut_short({50.0, 50.0, 50.0}));
  EXPECT_TRUE(StoppingRule::from(o, 1.0).cut_short({50.0, 50.0, 50.0}));
  EXPECT_FALSE(StoppingRule::from(o, 1.0).cut_short({50.0, 50.0}));
}
