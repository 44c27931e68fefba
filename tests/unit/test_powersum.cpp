// The powersum family on the CPU: reference sums, inputs, tolerance and verification, space.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "family_test_support.hpp"
#include "powersum.hpp"

using namespace cutune;
using namespace cutune::testing;

TEST(PowerSums, MatchHandComputedSums) {
  const std::vector<double> x{1, 2, 4}, alpha{1, 2};
  std::vector<double> minus(6), plus(6);
  power_sums(x, alpha, minus, plus);
  // Row j = 0 (alpha 1): minus(i) = sum over k <= i of |x_k - x_i|, plus(i) = sum over k > i.
  EXPECT_EQ(minus, (std::vector<double>{0, 1, 5, 0, 1, 13}));
  EXPECT_EQ(plus, (std::vector<double>{4, 2, 0, 10, 4, 0}));
}

TEST(PowerSums, ZeroDifferencesContributeNothing) {
  const std::vector<double> x{3, 3, 3}, alpha{2.5};
  std::vector<double> minus(3), plus(3);
  power_sums(x, alpha, minus, plus);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(minus[i], 0.0);
    EXPECT_EQ(plus[i], 0.0);
  }
}

TEST(PowersumInputs, SortedNonZeroDeterministic) {
  PowersumFamily family;
  const Problem p = PowersumFamily::make_problem(500);
  const HostBuffers a = generated_inputs(family, p, 1), b = generated_inputs(family, p, 1), c = generated_inputs(family, p, 2);
  EXPECT_EQ(a.all(), b.all());
  EXPECT_NE(a.all(), c.all());
  const auto x = a.as<double>("x");
  const auto alpha = a.as<double>("alpha");
  ASSERT_EQ(x.size(), 500u);
  ASSERT_EQ(alpha.size(), 80u);
  EXPECT_TRUE(std::is_sorted(x.begin(), x.end()));
  EXPECT_GE(x.front(), 1.0);
  EXPECT_LE(x.back(), 1e4 * (1 + 1e-12));
  for (double v : alpha) {
    EXPECT_GE(v, 1.5);
    EXPECT_LE(v, 3.5);
  }
}

TEST(PowersumVerify, AcceptsTheReferenceAndFindsTheFirstMismatch) {
  PowersumFamily family;
  const Problem p = PowersumFamily::make_problem(300, 7);
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 3));
  EXPECT_TRUE(family.compare(p, expected, expected).ok);

  // Different summation orders move the last bits: well within the tolerance.
  HostBuffers reordered = expected;
  for (double& v : reordered.as<double>("minus")) v *= 1 + 4e-16;
  EXPECT_TRUE(family.compare(p, expected, reordered).ok);

  HostBuffers wrong = expected;
  wrong.as<double>("plus")[1234] *= 1 + 1e-11;  // a wrong term in a sum of ~300 is far larger
  wrong.as<double>("plus")[1900] *= 2;
  const Verdict v = family.compare(p, expected, wrong);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 1234);
  EXPECT_NE(v.message.find("plus[1234]"), std::string::npos) << v.message;
}

TEST(PowersumVerify, NaNAndUnwrittenNeverPass) {
  PowersumFamily family;
  const Problem p = PowersumFamily::make_problem(64, 3);
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 4));
  HostBuffers nan = expected;
  nan.as<double>("minus")[70] = std::nan("");
  EXPECT_EQ(family.compare(p, expected, nan).first_bad_index, 70);
  // The last point's plus sum is empty (exactly 0); a poisoned, unwritten one must not pass.
  HostBuffers poisoned = expected;
  std::memset(&poisoned.as<double>("plus")[63], 0xA5, 8);
  EXPECT_EQ(expected.as<double>("plus")[63], 0.0);
  EXPECT_EQ(family.compare(p, expected, poisoned).first_bad_index, 63);
}

TEST(PowersumVerify, ToleranceIsAFewHundredUnitsOfRoundoff) {
  const auto t = PowersumFamily::tolerance(500);
  EXPECT_GT(t.rtol, 500 * 0x1p-53);
  EXPECT_LT(t.rtol, 1e-13);
  EXPECT_LT(t.atol, 1e-13);
}

TEST(PowersumSpace, RespectsItsConstraintsAndDeviceLimits) {
  PowersumFamily family;
  for_each_config_on_both_devices(family, [](const DeviceLimits& limits, const ConfigView& c) {
    EXPECT_LE(c["block"], limits.max_threads_per_block);
    EXPECT_LE(2 * c["fold"], c["block"]);
    EXPECT_LE(PowersumFamily::static_shared_bytes(c["map"], c["block"]) +
                  PowersumFamily::dynamic_shared_bytes(c["stage"], PowersumFamily::kMaxWindow),
              limits.max_shared_per_block_optin);
    if (c["map"] < PowersumFamily::tile) {
      EXPECT_EQ(c["ksplit"] * c["jt"], 1);
    }
    if (c["map"] == PowersumFamily::sym) {
      EXPECT_EQ(c["ksplit"], 1);
      EXPECT_EQ(c["stage"], 0);
    }
  });
  EXPECT_LE(family.space(DeviceLimits{}).enumerate().size(), 300u);  // brute force stays minutes
}

TEST(PowersumProblems, DefaultsAndValidation) {
  PowersumFamily family;
  const auto defaults = family.problems({});
  ASSERT_EQ(defaults.size(), 2u);
  EXPECT_EQ(defaults[0].key, "w=500,a=80,type=float64");
  EXPECT_EQ(family.problems({std::nullopt, {1000}}).at(0).key, "w=1000,a=80,type=float64");
  EXPECT_THROW(family.problems({"float32", {}}), UsageError);
  EXPECT_THROW(family.problems({std::nullopt, {0}}), UsageError);
  EXPECT_THROW(family.problems({std::nullopt, {PowersumFamily::kMaxWindow + 1}}), UsageError);
  const Work w = family.work(defaults[0]);
  EXPECT_DOUBLE_EQ(w.bytes, (500 + 80) * 8.0 + 2 * 500 * 80 * 8.0);
}
