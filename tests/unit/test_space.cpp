#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/space.hpp"
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
                  ScanFamily::dynamic_shared_bytes(c["block"], c["ept"], c["pad"]),
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
    EXPECT_LE(ScanFamily::dynamic_shared_bytes(c["block"], c["ept"], c["pad"]), 64 * 1024);
  }
}

TEST(ScanProblems, DefaultsAndValidation) {
  ScanFamily scan;
  const auto defaults = scan.problems({});
  ASSERT_FALSE(defaults.empty());
  EXPECT_EQ(defaults.back().size, std::int64_t{1} << 27);
  for (const auto& p : defaults) EXPECT_EQ(p.dtype, "int32");
  EXPECT_EQ(scan.problems({"int64", {1000}}).at(0).key, "n=1000,type=int64");
  EXPECT_THROW(scan.problems({"float16", {}}), UsageError);
  EXPECT_THROW(scan.problems({std::nullopt, {0}}), UsageError);
  EXPECT_THROW(scan.problems({std::nullopt, {-5}}), UsageError);
}

TEST(ConfigDefinitions, OneDefinePerAxis) {
  const Space s = small_space();
  const auto defs = config_definitions(s, Config{{1, 128, 2}});
  EXPECT_EQ(defs, (std::vector<std::string>{"-DCUTUNE_ALGO=1", "-DCUTUNE_BLOCK=128", "-DCUTUNE_EPT=2"}));
}
