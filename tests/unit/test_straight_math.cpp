// The branch-free log and exp of templates/straight_math.cuh, compiled on the host from the same
// text NVRTC compiles, against long double: the powersum tolerance counts 1 ulp for each.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "straight_math.cuh"

namespace {

// |got - want| in units of the last place of want (for subnormal results, of the subnormals).
double ulps_off(double got, long double want) {
  const double rounded = static_cast<double>(want);
  int exponent = 0;
  std::frexp(rounded, &exponent);
  const long double ulp = std::fabs(rounded) < std::numeric_limits<double>::min() ? std::ldexp(1.0L, -1074)
                                                                                  : std::ldexp(1.0L, exponent - 53);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

TEST(StraightMath, LogIsWithinOneUlp) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0), exponent(-1074.0, 1024.0), near_one(-0.5, 0.5);
  double worst = 0, worst_at = 0;
  for (int t = 0; t < 600000; ++t) {
    // The whole range (subnormals included), around 1 where ln d is small, and around sqrt(2)
    // and sqrt(1/2), where the reduction switches binades.
    const double d =
        t % 3 == 0   ? std::ldexp(mantissa(random), static_cast<int>(exponent(random)))
        : t % 3 == 1 ? 1.0 + near_one(random)
                     : std::ldexp(1.4142135623730951 + near_one(random) * 1e-3, static_cast<int>(exponent(random) / 8));
    if (d == 0) continue;
    const double e = ulps_off(straight_log(d), std::log(static_cast<long double>(d)));
    if (e > worst) worst = e, worst_at = d;
  }
  EXPECT_LE(worst, 1.0) << "at d = " << worst_at;
  EXPECT_EQ(straight_log(1.0), 0.0);
  EXPECT_EQ(straight_log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(straight_log(std::numeric_limits<double>::denorm_min()), -1074 * std::log(2.0));
}

TEST(StraightMath, ExpIsWithinOneUlp) {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> whole(-745.0, 709.7), small(-2.0, 2.0);
  double worst = 0, worst_at = 0;
  for (int t = 0; t < 600000; ++t) {
    const double z = t % 2 ? whole(random) : small(random);
    const double e = ulps_off(straight_exp(z), std::exp(static_cast<long double>(z)));
    if (e > worst) worst = e, worst_at = z;
  }
  EXPECT_LE(worst, 1.0) << "at z = " << worst_at;
  EXPECT_EQ(straight_exp(0.0), 1.0);
  EXPECT_EQ(straight_exp(-std::numeric_limits<double>::infinity()), 0.0);  // d^a for d = 0
  EXPECT_EQ(straight_exp(710.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(straight_exp(-800.0), 0.0);
}

// What the ladder relies on: d^a = exp(a ln d) within a few ulp for the study's exponents.
TEST(StraightMath, PowersThroughLogAndExp) {
  for (const double d : {1e-8, 0.3, 1.0, 2.5, 977.0})
    for (const double a : {1.5, 2.0, 2.525, 3.5}) {
      const long double want = std::pow(static_cast<long double>(d), static_cast<long double>(a));
      EXPECT_LE(ulps_off(straight_exp(a * straight_log(d)), want), 1.0 + 3 * std::fabs(a * std::log(d)))
          << d << "^" << a;
    }
}

}  // namespace
