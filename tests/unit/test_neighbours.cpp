#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/error.hpp"
#include "core/neighbours.hpp"

using namespace cutune;

namespace {
// 5 x 4 x 1 x 3 with a diagonal hole; the single-value axis is not a coordinate.
Space holed_space() {
  Space s;
  s.axis("block", {32, 64, 128, 256, 512})
      .axis("ept", {1, 2, 4, 8})
      .axis("fixed", {15})
      .labelled_axis("algo", {"a", "b", "c"});
  s.require("block * ept <= 1024").require("algo != 1 || ept != 2");
  return s;
}
}  // namespace

TEST(Positions, RoundTripAndRejectValuesOffTheAxis) {
  const Space s = holed_space();
  const Config c{{128, 4, 15, 2}};
  EXPECT_EQ(positions_of(s, c), (Positions{2, 2, 0, 2}));
  EXPECT_EQ(config_at(s, positions_of(s, c)), c);
  EXPECT_THROW(positions_of(s, Config{{100, 4, 15, 2}}), Error);
}

TEST(Neighbours, AdjacentMovesOneAxisOneStepAndSkipsInvalid) {
  const Space s = holed_space();
  const auto around = neighbours(s, Config{{128, 4, 15, 0}}, Neighbourhood::adjacent);
  // block 64 and 256 (256 * 4 <= 1024), ept 2 and 8 (128 * 8 = 1024), algo b.
  EXPECT_EQ(around, (std::vector<Config>{
                        {{64, 4, 15, 0}}, {{256, 4, 15, 0}}, {{128, 2, 15, 0}}, {{128, 8, 15, 0}}, {{128, 4, 15, 1}}}));
  // algo b with ept 2 is invalid, so from (…, ept 1, algo b) the ept step up is missing.
  const auto from_b = neighbours(s, Config{{32, 1, 15, 1}}, Neighbourhood::adjacent);
  EXPECT_EQ(std::count(from_b.begin(), from_b.end(), Config{{32, 2, 15, 1}}), 0);
}

TEST(Neighbours, HammingChangesOneAxisToAnyValue) {
  const Space s = holed_space();
  const Config from{{32, 1, 15, 0}};
  const auto around = neighbours(s, from, Neighbourhood::hamming);
  EXPECT_EQ(around.size(), 4u + 3u + 2u);
  for (const auto& n : around) {
    EXPECT_TRUE(s.valid(n));
    EXPECT_EQ(hamming_distance(n, from), 1u);
  }
}

TEST(UnitEncoding, PointsRoundTripThroughNearestValid) {
  const Space s = holed_space();
  const UnitEncoding encoding(s);
  EXPECT_EQ(encoding.dimensions(), 3u);
  for (const auto& c : s.enumerate()) EXPECT_EQ(encoding.nearest_valid(encoding.point_of(c)), c);
}

TEST(UnitEncoding, NearestValidIsTheExactNearest) {
  const Space s = holed_space();
  const UnitEncoding encoding(s);
  const auto valid = s.enumerate();
  auto squared_distance = [&](const Config& c, const std::vector<double>& p) {
    const auto q = encoding.point_of(c);
    double d = 0;
    for (std::size_t i = 0; i < q.size(); ++i) d += (q[i] - p[i]) * (q[i] - p[i]);
    return d;
  };
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 500; ++trial) {
    const std::vector<double> p{unit(rng), unit(rng), unit(rng)};
    const auto nearest = encoding.nearest_valid(p);
    ASSERT_TRUE(nearest);
    ASSERT_TRUE(s.valid(*nearest));
    double best = 1e9;
    for (const auto& c : valid) best = std::min(best, squared_distance(c, p));
    EXPECT_NEAR(squared_distance(*nearest, p), best, 1e-12);
  }
}

TEST(UnitEncoding, OutOfRangeAndNonFinitePointsAreClamped) {
  const Space s = holed_space();
  const UnitEncoding encoding(s);
  EXPECT_EQ(encoding.nearest_valid({-3.0, -1.0, 7.0}), (Config{{32, 1, 15, 2}}));
  EXPECT_TRUE(encoding.nearest_valid({std::nan(""), 0.5, 0.5}));
}
