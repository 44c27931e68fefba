#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/space.hpp"
#include "rare_space.hpp"
#include "scan.hpp"

using namespace cutune;

namespace {
Space small_space() {
  Space s;
  s.labelled_axis("algo", {"a", "b"}).axis("block", {64, 128, 256}).axis("ept", {1, 2, 4});
  s.require("block * ept <= 512", [](const ConfigView& c) { return c["block"] * c["ept"] <= 512; });
  return s;
}
}  // namespace

TEST(Space, EnumeratesOnlyValidConfigsInOrder) {
  const Space s = small_space();
  const auto all = s.enumerate();
  EXPECT_EQ(s.raw_size(), 18);
  // block*ept <= 512 removes (256,4) for each algo.
  ASSERT_EQ(all.size(), 16u);
  for (const auto& c : all) EXPECT_TRUE(s.valid(c));
  EXPECT_EQ(s.key(all.front()), "algo=a,block=64,ept=1");
  EXPECT_EQ(s.key(all.back()), "algo=b,block=256,ept=2");
}

TEST(Space, ViolationNamesTheConstraint) {
  const Space s = small_space();
  const auto v = s.violation(Config{{0, 256, 4}});
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, "block * ept <= 512");
  EXPECT_TRUE(s.violation(Config{{0, 100, 1}}));  // not a value of the axis
  EXPECT_TRUE(s.violation(Config{{0, 64}}));      // too few values
}

TEST(Space, KeyAndJsonRoundTrip) {
  const Space s = small_space();
  const Config c{{1, 128, 2}};
  EXPECT_EQ(s.key(c), "algo=b,block=128,ept=2");
  EXPECT_EQ(s.json(c), R"({"algo":"b","block":128,"ept":2})");
  EXPECT_EQ(s.parse("ept=2,algo=b,block=128"), c);
  EXPECT_EQ(s.parse("algo=1,block=128,ept=2"), c);  // numbers work for labelled axes too
}

TEST(Space, ParseRejectsBadKeys) {
  const Space s = small_space();
  EXPECT_THROW(s.parse("algo=b,block=128"), UsageError);
  EXPECT_THROW(s.parse("algo=c,block=128,ept=2"), UsageError);
  EXPECT_THROW(s.parse("algo=b,block=128,ept=2,colour=red"), UsageError);
  EXPECT_THROW(s.parse("algo"), UsageError);
}

TEST(ScanSpace, RespectsDeviceLimitsAndItsConstraints) {
  ScanFamily scan;
  DeviceLimits limits;
  const auto h100 = scan.space(limits).enumerate();
  const Space space = scan.space(limits);
  for (const auto& config : h100) {
    const ConfigView c(space, config);
    EXPECT_EQ(c["ept"] % c["vec"], 0) << space.key(config);
    EXPECT_TRUE(c["pad"] == 0 || c["algo"] == ScanFamily::blelloch || c["ept"] > 1) << space.key(config);
    EXPECT_LE(ScanFamily::static_shared_bytes(c["algo"], c["block"], c["pad"]) +
                  ScanFamily::dynamic_shared_bytes(c["algo"], c["block"], c["ept"], c["pad"]),
              limits.max_shared_per_block_optin);
  }
  // A device with 512 threads and 64 KiB per block admits fewer configs, none beyond its limits.
  DeviceLimits small = limits;
  small.max_threads_per_block = 512;
  small.max_shared_per_block_optin = 64 * 1024;
  const Space small_space = scan.space(small);
  const auto fewer = small_space.enumerate();
  EXPECT_LT(fewer.size(), h100.size());
  EXPECT_GT(fewer.size(), 0u);
  for (const auto& config : fewer) {
    const ConfigView c(small_space, config);
    EXPECT_LE(c["block"], 512);
    EXPECT_LE(ScanFamily::dynamic_shared_bytes(c["algo"], c["block"], c["ept"], c["pad"]), 64 * 1024);
  }
}

// striped came after lookback as a fourth algo label, so configs stored before it still parse to
// what they meant (the axis numbers are unchanged) and keep their keys.
TEST(ScanSpace, StripedIsAppendedAndStoredConfigsKeepTheirMeaning) {
  ScanFamily scan;
  const Space space = scan.space(DeviceLimits{});
  const std::string stored = "algo=lookback,block=512,ept=16,vec=4,pad=1";
  const Config old = space.parse(stored);
  EXPECT_EQ(old.values, (std::vector<std::int64_t>{ScanFamily::lookback, 512, 16, 4, 1}));
  EXPECT_EQ(space.key(old), stored);
  EXPECT_TRUE(space.valid(old));

  // Every block size and ept/vec pair the blocked look-back takes, without padding: nothing is
  // staged in shared memory.
  std::set<std::pair<std::int64_t, std::int64_t>> blocked_shapes, striped_shapes;
  int striped = 0;
  for (const auto& config : space.enumerate()) {
    const ConfigView c(space, config);
    if (c["algo"] == ScanFamily::lookback) blocked_shapes.insert({c["ept"], c["vec"]});
    if (c["algo"] != ScanFamily::striped) continue;
    ++striped;
    striped_shapes.insert({c["ept"], c["vec"]});
    EXPECT_EQ(c["pad"], 0) << space.key(config);
    EXPECT_EQ(ScanFamily::dynamic_shared_bytes(c["algo"], c["block"], c["ept"], c["pad"]), 0);
  }
  // Up to 16 elements a thread the same shapes as the blocked look-back, in every block size; the
  // long tiles (24 and 32) only at vec 4 in 256- and 512-thread blocks.
  std::set<std::pair<std::int64_t, std::int64_t>> short_striped;
  for (const auto& shape : striped_shapes)
    if (shape.first <= 16) short_striped.insert(shape);
  EXPECT_EQ(short_striped, blocked_shapes);
  EXPECT_EQ(striped_shapes.size(), blocked_shapes.size() + 2);
  EXPECT_TRUE(striped_shapes.count({24, 4}) && striped_shapes.count({32, 4}));
  EXPECT_EQ(striped, 5 * static_cast<int>(blocked_shapes.size()) + 2 * 2);  // 5 block sizes; 2 for ept 24, 32
  EXPECT_FALSE(space.valid(space.parse("algo=lookback,block=256,ept=32,vec=4,pad=0")));
  EXPECT_FALSE(space.valid(space.parse("algo=striped,block=1024,ept=24,vec=4,pad=0")));
  EXPECT_FALSE(space.valid(space.parse("algo=striped,block=256,ept=24,vec=2,pad=0")));
  EXPECT_TRUE(space.violation(space.parse("algo=striped,block=256,ept=16,vec=4,pad=1")));

  // One look-back launch with no dynamic shared memory, after clearing the tile states.
  const Problem p = ScanFamily::make_problem(100'000, "int32");
  const Config config = space.parse("algo=striped,block=256,ept=16,vec=2,pad=0");
  const ConfigView c(space, config);
  const auto steps = scan.plan(p, c);
  ASSERT_EQ(steps.size(), 3u);
  const auto* launch = std::get_if<KernelLaunch>(&steps[2]);
  ASSERT_TRUE(launch);
  EXPECT_EQ(launch->kernel, "scan_lookback");
  EXPECT_EQ(launch->grid.x, (100'000u + 4095) / 4096);
  EXPECT_EQ(launch->dynamic_shared_bytes, 0u);
  const auto scratch = scan.scratch(p, c);
  ASSERT_EQ(scratch.size(), 1u);
  EXPECT_EQ(scratch[0].name, "tile_state");
}

// The striped variants (cache hints, an L2 prefetch) are appended after striped, so blelloch to
// striped keep their numbers, and each variant takes exactly the vector tiles of at least 4
// elements a thread. The three that never won a size on an H100 are gone: their stored keys no
// longer parse, where the kept ones do.
TEST(ScanSpace, StripedVariantsAreAppendedOnlyForVectorTiles) {
  ScanFamily scan;
  const Space space = scan.space(DeviceLimits{});
  EXPECT_EQ(space.parse("algo=striped,block=1024,ept=16,vec=4,pad=0").values,
            (std::vector<std::int64_t>{ScanFamily::striped, 1024, 16, 4, 0}));
  EXPECT_EQ(space.parse("algo=striped_pf_cs,block=1024,ept=16,vec=4,pad=0").values,
            (std::vector<std::int64_t>{ScanFamily::striped_pf_cs, 1024, 16, 4, 0}));
  std::map<std::int64_t, int> per_variant;
  for (const auto& config : space.enumerate()) {
    const ConfigView c(space, config);
    if (c["algo"] <= ScanFamily::striped) continue;
    ++per_variant[c["algo"]];
    EXPECT_GE(c["ept"], 4) << space.key(config);
    EXPECT_GE(c["vec"], 2) << space.key(config);
    EXPECT_EQ(c["pad"], 0) << space.key(config);
    EXPECT_TRUE(ScanFamily::single_pass(c["algo"]));
    EXPECT_EQ(ScanFamily::dynamic_shared_bytes(c["algo"], c["block"], c["ept"], c["pad"]), 0);
  }
  // 5 blocks x (ept 4, 8, 12, 16) x (vec 2, 4), and blocks of 256 and 512 x ept 24 and 32 at vec 4,
  // for each of the three variants.
  ASSERT_EQ(per_variant.size(), 3u);
  for (const auto& [algo, count] : per_variant) EXPECT_EQ(count, 44) << algo;
  EXPECT_EQ(space.enumerate().size(), 651u);  // 515 before the variants, 40 for each, 16 long striped tiles
  EXPECT_TRUE(space.violation(space.parse("algo=striped_pf_cs,block=256,ept=2,vec=2,pad=0")));
  EXPECT_TRUE(space.violation(space.parse("algo=striped_ld_cs,block=256,ept=16,vec=1,pad=0")));
  EXPECT_EQ(space.parse("algo=striped_ld_nc,block=512,ept=16,vec=2,pad=0").values[0], ScanFamily::striped_ld_nc);
  for (const char* removed : {"striped_st_cs", "striped_st_ef", "striped_pf"})
    EXPECT_THROW(space.parse(std::string("algo=") + removed + ",block=256,ept=16,vec=4,pad=0"), UsageError) << removed;

  // One look-back launch, like striped.
  const Problem p = ScanFamily::make_problem(100'000, "int32");
  const Config config = space.parse("algo=striped_pf_cs,block=256,ept=16,vec=2,pad=0");
  const auto steps = scan.plan(p, ConfigView(space, config));
  ASSERT_EQ(steps.size(), 3u);
  const auto* launch = std::get_if<KernelLaunch>(&steps[2]);
  ASSERT_TRUE(launch);
  EXPECT_EQ(launch->kernel, "scan_lookback");
  EXPECT_EQ(launch->dynamic_shared_bytes, 0u);
}

TEST(ScanProblems, DefaultsAndValidation) {
  ScanFamily scan;
  const auto defaults = scan.problems({});
  ASSERT_FALSE(defaults.empty());
  EXPECT_EQ(defaults.back().size(), std::int64_t{1} << 27);
  for (const auto& p : defaults) EXPECT_EQ(p.dtype(), "int32");
  // Every power of two from 2^10 to 2^27 is tuned (an application asking between two tuned sizes
  // gets the nearer one's config), in ascending order, and a size that is no multiple of a tile.
  std::vector<std::int64_t> sizes;
  for (const auto& p : defaults) sizes.push_back(p.size());
  EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
  for (int log_n = 10; log_n <= 27; ++log_n)
    EXPECT_EQ(std::count(sizes.begin(), sizes.end(), std::int64_t{1} << log_n), 1) << "2^" << log_n;
  EXPECT_EQ(std::count(sizes.begin(), sizes.end(), 10'000'000), 1);
  EXPECT_EQ(scan.problems({"int64", {1000}}).at(0).key(), "n=1000,type=int64");
  EXPECT_THROW(scan.problems({"float16", {}}), UsageError);
  EXPECT_THROW(scan.problems({std::nullopt, {0}}), UsageError);
  EXPECT_THROW(scan.problems({std::nullopt, {-5}}), UsageError);
}

TEST(ConfigDefinitions, OneDefinePerAxis) {
  const Space s = small_space();
  const auto defs = config_definitions(s, Config{{1, 128, 2}});
  EXPECT_EQ(defs, (std::vector<std::string>{"-DCUTUNE_ALGO=1", "-DCUTUNE_BLOCK=128", "-DCUTUNE_EPT=2"}));
}

// A plan-only axis shapes the host's plan only: configs that differ in it compile the same.
TEST(ConfigDefinitions, PlanOnlyAxesAreNotDefined) {
  Space s;
  s.axis("block", {128, 256}).labelled_axis("preset", {"memset", "stream"}).plan_only().axis("ept", {2, 4});
  EXPECT_EQ(config_definitions(s, Config{{128, 1, 4}}),
            (std::vector<std::string>{"-DCUTUNE_BLOCK=128", "-DCUTUNE_EPT=4"}));
  EXPECT_EQ(config_definitions(s, Config{{128, 0, 4}}), config_definitions(s, Config{{128, 1, 4}}));
  EXPECT_EQ(s.parse("block=128,preset=stream,ept=4"), (Config{{128, 1, 4}}));  // still a parameter of the config
  EXPECT_THROW(Space().plan_only(), Error);
}

// ---- large spaces: backtracking enumeration and sampling -------------------------------------

namespace {
// 6^8 = 1 679 616 raw configs; the expression constraints bind after the first few axes, so
// most of the product is never visited.
Space large_space() {
  Space s;
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "h"}) s.axis(name, {1, 2, 3, 4, 5, 6});
  s.require("a * b <= 6").require("c + d < a + 4").require("e % b == 0 || e == 1");
  s.require("f * g * h <= 3 * e");
  s.require("not an expression: checked once every axis is bound",
            [](const ConfigView& c) { return c["h"] != c["a"]; });
  return s;
}

bool large_space_allows(const std::array<std::int64_t, 8>& v) {
  const auto [a, b, c, d, e, f, g, h] = v;
  return a * b <= 6 && c + d < a + 4 && (e % b == 0 || e == 1) && f * g * h <= 3 * e && h != a;
}
}  // namespace

TEST(LargeSpace, BacktrackingFindsExactlyTheValidConfigsInOrder) {
  const Space s = large_space();
  EXPECT_GE(s.raw_size(), 1e6);
  std::vector<Config> expected;
  std::array<std::int64_t, 8> v{};
  // The plain odometer over the whole product, for comparison.
  for (int i = 0; i < 1679616; ++i) {
    int rest = i;
    for (int axis = 7; axis >= 0; --axis, rest /= 6) v[axis] = rest % 6 + 1;
    if (large_space_allows(v)) expected.push_back(Config{{v.begin(), v.end()}});
  }
  const auto configs = s.enumerate();
  EXPECT_EQ(configs, expected);
  EXPECT_GT(configs.size(), 1000u);
}

TEST(LargeSpace, SamplesAreValidAndCoverTheSpace) {
  const Space s = large_space();
  std::mt19937_64 rng(7);
  std::set<Config> seen;
  for (int i = 0; i < 2000; ++i) {
    const auto config = s.sample(rng);
    ASSERT_TRUE(config);
    ASSERT_TRUE(s.valid(*config)) << s.key(*config);
    seen.insert(*config);
  }
  EXPECT_GT(seen.size(), 1000u);  // thousands of valid configs: draws rarely repeat
}

TEST(SpaceSample, IsUniformOverValidConfigs) {
  const Space s = small_space();  // 16 valid of 18
  std::mt19937_64 rng(11);
  std::map<Config, int> count;
  for (int i = 0; i < 16000; ++i) ++count[*s.sample(rng)];
  EXPECT_EQ(count.size(), 16u);
  for (const auto& [config, n] : count) EXPECT_NEAR(n, 1000, 160) << s.key(config);  // about 5 sigma
}

TEST(SpaceSample, FindsRareConfigsAndReportsAnEmptySpace) {
  // 10^10 raw configs of which 10 are valid: rejection sampling gives up, the depth-first search
  // finds them.
  const Space rare = cutune::testing::rare_space(10);
  std::mt19937_64 rng(3);
  bool came_to_search = false;
  const auto config = rare.sample(rng, &came_to_search);
  ASSERT_TRUE(config);
  EXPECT_TRUE(rare.valid(*config));
  EXPECT_TRUE(came_to_search);  // callers that draw often list such a space instead

  Space common;
  common.axis("x", {0, 1, 2, 3}).axis("y", {0, 1, 2, 3}).require("x != y");
  ASSERT_TRUE(common.sample(rng, &came_to_search));
  EXPECT_FALSE(came_to_search);

  Space empty;
  empty.axis("x", {1, 2, 3}).require("x > 3");
  EXPECT_FALSE(empty.sample(rng));
  EXPECT_TRUE(empty.enumerate().empty());
}

TEST(SpaceExpression, LabelsNameTheirValues) {
  Space s;
  s.labelled_axis("algo", {"naive", "tiled", "regtile"})
      .labelled_axis("finish", {"smem", "shuffle"})
      .axis("tile", {16, 64, 128});
  s.require("algo == regtile || (algo == tiled && finish == shuffle)").require("tile >= 64 || algo != regtile");
  for (const auto& config : s.enumerate()) {
    const ConfigView c(s, config);
    EXPECT_TRUE(c["algo"] == 2 || (c["algo"] == 1 && c["finish"] == 1));
  }
  EXPECT_EQ(s.enumerate().size(), 2u * 2 + 3);             // regtile: 2 finishes x 2 tiles; tiled + shuffle: 3 tiles
  EXPECT_THROW(s.require("algo == blocked"), UsageError);  // no such label
  // A label two axes give different values is ambiguous, so it names nothing.
  Space ambiguous;
  ambiguous.labelled_axis("a", {"x", "y"}).labelled_axis("b", {"y", "x"});
  EXPECT_THROW(ambiguous.require("a == y"), UsageError);
}

// The sample CI compiles: valid configs, every value and every pair of values that valid configs
// take, far fewer configs than the space, and the same for a seed.
TEST(SpaceCoveringSample, CoversEveryValueAndPairOfTheValidConfigs) {
  ScanFamily scan;
  const Space space = scan.space(limits_for_arch("sm_90"));
  const auto valid = space.enumerate();
  const auto sample = covering_sample(space, valid, 7);
  ASSERT_FALSE(sample.empty());
  EXPECT_LT(sample.size(), valid.size() / 4);
  using Pair = std::array<std::int64_t, 4>;
  const auto pairs_of = [&](const std::vector<Config>& configs) {
    std::set<Pair> pairs;
    for (const Config& c : configs)
      for (std::size_t a = 0; a < c.values.size(); ++a)
        for (std::size_t b = a; b < c.values.size(); ++b)
          pairs.insert({static_cast<std::int64_t>(a), c.values[a], static_cast<std::int64_t>(b), c.values[b]});
    return pairs;
  };
  for (const Config& c : sample) EXPECT_TRUE(space.valid(c)) << space.key(c);
  EXPECT_EQ(pairs_of(sample), pairs_of(valid));  // the a == b entries are the single values
  EXPECT_EQ(sample, covering_sample(space, valid, 7));
  EXPECT_EQ(std::set<Config>(sample.begin(), sample.end()).size(), sample.size());
}
