// The branch-free log and exp of templates/straight_math.cuh, compiled on the host from the same
// text NVRTC compiles, against long double: the powersum tolerance counts 1 ulp for each.
#include <gtest/gtest.h>

#include <algorithm>
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

namespace {

// |got - want| / want.
double relative_error(double got, long double want) {
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / want);
}

constexpr double kUnitRoundoff = 0x1p-53;

// d^a computed by `power` for 200 000 draws of a and d = 10^magnitude: the worst relative error as a
// fraction of what the tolerance allows, `units` u + `units` u |a ln d| (the table and the argument).
template <class Power>
double worst_distance_power_error(std::mt19937_64& random, std::uniform_real_distribution<double>& exponent,
                                  std::uniform_real_distribution<double>& magnitude, int units, Power power) {
  double worst = 0;
  for (int t = 0; t < 200000; ++t) {
    const double a = exponent(random), d = std::pow(10.0, magnitude(random));
    const long double want = std::pow(static_cast<long double>(d), static_cast<long double>(a));
    const double allowed = units * kUnitRoundoff + units * kUnitRoundoff * std::fabs(a * std::log(d));
    worst = std::max(worst, relative_error(power(a, d), want) / allowed);
  }
  return worst;
}

// The table's power 2^(z/16), z = a * l16, on its own (l16 exact): within 3u relative (the entry,
// the polynomial's last step and the product each round once), as kernels/powersum.cpp's
// tolerance counts it. Both the product and the fused add.
TEST(StraightMath, TablePowerIsWithinThreeUnitsOfRoundoff) {
  std::mt19937_64 random(13);
  std::uniform_real_distribution<double> exponent(0.5, 4.0), log16(-16.0 * 1000 / 4, 16.0 * 250 / 4);
  double worst = 0, worst_sum = 0;
  for (int t = 0; t < 600000; ++t) {
    const double a = exponent(random), l16 = log16(random);
    const long double want = std::exp2(static_cast<long double>(a) * l16 / 16);
    worst = std::max(worst, relative_error(straight_power(a, l16), want));
    // The fused add's one rounding: against the exact sum of a power and an accumulator.
    const double acc = 0.25 * static_cast<double>(want);
    const long double sum_error = std::fabs(static_cast<long double>(straight_power_add(acc, a, l16)) - (want + acc));
    worst_sum = std::max(worst_sum, static_cast<double>(sum_error / want));
  }
  EXPECT_LE(worst, 3 * kUnitRoundoff);
  EXPECT_LE(worst_sum, 2 * kUnitRoundoff + 1.25 * kUnitRoundoff);  // no product rounding; the add's of 1.25 want
  EXPECT_EQ(straight_power(2.0, 0.0), 1.0);
  EXPECT_EQ(straight_power(1.0, 16.0), 2.0);  // 2^(16/16)
  EXPECT_EQ(straight_power(2.0, -56.0), 0x1p-7);
}

// d^a through straight_log16 and the table, for the study's range of points and exponents:
// within 3u + 3u|a ln d| (the argument's error), as the tolerance counts it; a d = 0 (a repeated
// point, or k = i) and an underflowing power give something below 2^-1022, never a negative or
// a NaN, for every exponent down to a_max / 65536.
TEST(StraightMath, TablePowersOfDistances) {
  std::mt19937_64 random(17);
  std::uniform_real_distribution<double> exponent(1.5, 3.5), magnitude(-12.0, 4.0);
  const double limit = straight_log16_limit(3.5);
  const double worst = worst_distance_power_error(
      random, exponent, magnitude, 3, [&](double a, double d) { return straight_power(a, straight_log16(d, limit)); });
  EXPECT_LE(worst, 1.0);
  for (const double a : {3.5 / 65536, 0.01, 1.5, 3.5}) {
    const double zero = straight_power(a, straight_log16(0.0, limit));
    EXPECT_GE(zero, 0.0) << a;
    EXPECT_LT(zero, 0x1p-1022) << a;
    const double tiny = straight_power(a, straight_log16(1e-300, limit));
    EXPECT_GE(tiny, 0.0) << a;
    if (a >= 3.5) {
      EXPECT_LT(tiny, 0x1p-1022) << a;
    }
  }
  // Overflow stays finite (the clamp of the power of two), never a NaN.
  EXPECT_TRUE(std::isfinite(straight_power(3.5, straight_log16(1e300, limit))));
}

// The table of 32 (tabexp32): 2^(z/32), z = a * l32, within 4u relative (the polynomial's 1.3u,
// its last step, the entry and the product); and d^a through straight_log32 within 4u + 4u|a ln d|,
// d = 0 below 2^-1022 and never negative for every exponent down to a_max / 32768, overflow finite.
TEST(StraightMath, TableOf32PowersAreWithinFourUnitsOfRoundoff) {
  std::mt19937_64 random(19);
  std::uniform_real_distribution<double> exponent(0.5, 4.0), log32(-32.0 * 1000 / 4, 32.0 * 250 / 4);
  double worst = 0;
  for (int t = 0; t < 600000; ++t) {
    const double a = exponent(random), l32 = log32(random);
    const long double want = std::exp2(static_cast<long double>(a) * l32 / 32);
    worst = std::max(worst, relative_error(straight_power32(a, l32), want));
  }
  EXPECT_LE(worst, 4 * kUnitRoundoff);
  EXPECT_EQ(straight_power32(2.0, 0.0), 1.0);
  EXPECT_EQ(straight_power32(1.0, 32.0), 2.0);  // 2^(32/32)
  EXPECT_EQ(straight_power32(2.0, -112.0), 0x1p-7);
  for (int i = 0; i < 32; ++i)  // the entries: 2^(i/32) correctly rounded
    EXPECT_LE(relative_error(straight_exp2_thirtyseconds[i], std::exp2(static_cast<long double>(i) / 32)),
              kUnitRoundoff)  // half an ulp of [1, 2)
        << i;

  std::uniform_real_distribution<double> distance_exponent(1.5, 3.5), magnitude(-12.0, 4.0);
  const double limit = straight_log32_limit(3.5);
  const double worst_distance =
      worst_distance_power_error(random, distance_exponent, magnitude, 4,
                                 [&](double a, double d) { return straight_power32(a, straight_log32(d, limit)); });
  EXPECT_LE(worst_distance, 1.0);
  for (const double a : {3.5 / 32768, 0.01, 1.5, 3.5}) {
    const double zero = straight_power32(a, straight_log32(0.0, limit));
    EXPECT_GE(zero, 0.0) << a;
    EXPECT_LT(zero, 0x1p-1022) << a;
  }
  EXPECT_TRUE(std::isfinite(straight_power32(3.5, straight_log32(1e300, limit))));
}

// tabexp32's log, 32 log2 d through its table: within 4u relative over normal and subnormal d,
// near 1 from both sides (where the table's ends make the result t Q(t) alone) and at the table's
// seams (m0 halfway between 32nds); 0 gives -inf, 1 gives 0, powers of two exactly 32 e.
TEST(StraightMath, TableLog32IsWithinFourUnitsOfRoundoff) {
  std::mt19937_64 random(23);
  std::uniform_real_distribution<double> magnitude(-320.0, 308.0), near_one(-0.05, 0.05), fraction(0.0, 1.0);
  auto check = [](double d, double& worst) {
    const long double want = 32 * std::log2(static_cast<long double>(d));
    if (want != 0)
      worst = std::max(worst, static_cast<double>(std::fabs(straight_log32_of(d) - want) / std::fabs(want)));
  };
  double worst = 0;
  for (int t = 0; t < 300000; ++t) {
    check(std::pow(10.0, magnitude(random)), worst);
    check(1.0 + near_one(random) * std::pow(10.0, -12 * fraction(random)), worst);
    const int j = static_cast<int>(fraction(random) * 64);  // a seam: m0 = 1 + (2 j' + 1) / 64, either side
    check(std::ldexp(1.0 + (2 * (j / 2) + 1) / 64.0 + (fraction(random) - 0.5) * 1e-9,
                     static_cast<int>(magnitude(random) / 4)),
          worst);
  }
  for (const double d : {0x1p-1074, 0x1p-1060, 2.2250738585072014e-308, 1.7976931348623157e308}) check(d, worst);
  EXPECT_LE(worst, 4 * kUnitRoundoff);
  EXPECT_EQ(straight_log32_of(1.0), 0.0);
  EXPECT_EQ(straight_log32_of(0x1p-7), -224.0);
  EXPECT_EQ(straight_log32_of(0x1p20), 640.0);
  EXPECT_EQ(straight_log32_of(0.0), -HUGE_VAL);
}

}  // namespace
