// The rematch's rules (tuner/rematch): which of a problem's leaders are timed again, in what
// order, and how their rounds become one measurement. The session's use of them runs on a GPU.
#include <gtest/gtest.h>

#include "rematch.hpp"

using namespace cutune;

namespace {

db::ResultRecord ok(const std::string& config, double ms, bool cut_short = false) {
  db::ResultRecord r;
  r.config = config;
  r.status = "ok";
  r.time_ms_median = ms;
  r.cut_short = cut_short;
  return r;
}

}  // namespace

TEST(Rematch, LeadersAreTheResultsWithinTheWindowOfTheBest) {
  const std::vector<db::ResultRecord> ranked{ok("a", 1.000), ok("b", 1.000), ok("c", 1.019), ok("d", 1.021)};
  const RematchRule rule;  // within 2 %
  EXPECT_EQ(rematch_candidates(ranked, rule, {}), (std::vector<std::string>{"a", "b", "c"}));
  RematchRule tight = rule;
  tight.within = 0.01;
  EXPECT_EQ(rematch_candidates(ranked, tight, {}), (std::vector<std::string>{"a", "b"}));
}

TEST(Rematch, ABestWithNothingNearItIsLeftAlone) {
  const std::vector<db::ResultRecord> ranked{ok("a", 1.0), ok("b", 1.5)};
  EXPECT_TRUE(rematch_candidates(ranked, RematchRule{}, {}).empty());
  EXPECT_TRUE(rematch_candidates({}, RematchRule{}, {}).empty());
}

TEST(Rematch, AtMostTheFastestFewAndNeverTwice) {
  std::vector<db::ResultRecord> ranked;
  for (int i = 0; i < 6; ++i) ranked.push_back(ok(std::string(1, static_cast<char>('a' + i)), 1.0 + 0.001 * i));
  RematchRule rule;
  rule.most = 4;
  EXPECT_EQ(rematch_candidates(ranked, rule, {}), (std::vector<std::string>{"a", "b", "c", "d"}));
  // The next pass: those rematched stay in the window (the tie is with them) but are not timed again.
  EXPECT_EQ(rematch_candidates(ranked, rule, {"a", "b", "c", "d"}), (std::vector<std::string>{"e", "f"}));
  EXPECT_TRUE(rematch_candidates(ranked, rule, {"a", "b", "c", "d", "e", "f"}).empty());
  // A rematched leader that now trails a first measurement still makes it a tie to settle.
  const std::vector<db::ResultRecord> after{ok("x", 1.000), ok("a", 1.005)};
  EXPECT_EQ(rematch_candidates(after, rule, {"a"}), (std::vector<std::string>{"x"}));
}

TEST(Rematch, CutShortResultsAreNoLeaders) {
  const std::vector<db::ResultRecord> ranked{ok("a", 1.0), ok("b", 1.0, /*cut_short=*/true), ok("c", 1.01)};
  EXPECT_EQ(rematch_candidates(ranked, RematchRule{}, {}), (std::vector<std::string>{"a", "c"}));
  const std::vector<db::ResultRecord> alone{ok("a", 1.0), ok("b", 1.0, true)};
  EXPECT_TRUE(rematch_candidates(alone, RematchRule{}, {}).empty());
}

TEST(Rematch, NoRoundsNoRematch) {
  RematchRule off;
  off.rounds = 0;
  EXPECT_TRUE(rematch_candidates({ok("a", 1.0), ok("b", 1.0)}, off, {}).empty());
}

TEST(Rematch, EachRoundRotatesTheOrder) {
  EXPECT_EQ(rematch_order(3, 3), (std::vector<std::size_t>{0, 1, 2, 1, 2, 0, 2, 0, 1}));
  EXPECT_EQ(rematch_order(2, 2), (std::vector<std::size_t>{0, 1, 1, 0}));
  EXPECT_EQ(rematch_order(1, 2), (std::vector<std::size_t>{0, 0}));
  EXPECT_TRUE(rematch_order(3, 0).empty());
}

TEST(Rematch, RoundsArePooledIntoOneMeasurement) {
  const Measurement pooled = pooled_measurement({summarize({1.0, 3.0}), summarize({2.0, 5.0, 4.0})});
  EXPECT_EQ(pooled.samples_ms.size(), 5u);
  EXPECT_DOUBLE_EQ(pooled.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(pooled.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(pooled.max_ms, 5.0);
}

namespace {

EvaluationQueue::Finished finished_round(std::vector<double> samples, Status status = Status::ok) {
  EvaluationQueue::Finished f;
  f.outcome.status = status;
  if (status == Status::ok) f.outcome.measurement = summarize(std::move(samples));
  f.outcome.verify_seconds = 0.1;
  f.outcome.benchmark_seconds = 0.2;
  return f;
}

}  // namespace

TEST(Rematch, ALeadersRoundsBecomeOneEvaluation) {
  auto last = finished_round({3.0, 4.0});
  last.lane = 1;
  const EvaluationQueue::Finished merged = merged_rounds({finished_round({1.0, 2.0}), last});
  ASSERT_TRUE(merged.outcome.measurement);
  EXPECT_EQ(merged.outcome.measurement->samples_ms.size(), 4u);
  EXPECT_DOUBLE_EQ(merged.outcome.measurement->min_ms, 1.0);
  EXPECT_DOUBLE_EQ(merged.outcome.verify_seconds, 0.2);
  EXPECT_DOUBLE_EQ(merged.outcome.benchmark_seconds, 0.4);
  EXPECT_EQ(merged.lane, 1u);  // the last round's GPU
}

TEST(Rematch, ARoundThatFailsIsWhatIsStored) {
  auto wrong = finished_round({}, Status::wrong_result);
  wrong.outcome.error = "out[7]: 3 expected, 4 found";
  const EvaluationQueue::Finished merged = merged_rounds({finished_round({1.0}), wrong, finished_round({1.0})});
  EXPECT_EQ(merged.outcome.status, Status::wrong_result);
  EXPECT_EQ(merged.outcome.error, "out[7]: 3 expected, 4 found");
  EXPECT_FALSE(merged.outcome.measurement);
}
