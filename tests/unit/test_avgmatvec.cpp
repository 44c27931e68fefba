// The avgmatvec family on the CPU: reference, inputs, tolerance and verification, space.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "avgmatvec.hpp"
#include "core/error.hpp"
#include "family_test_support.hpp"

using namespace cutune;
using namespace cutune::testing;

TEST(AverageThenMultiply, MatchesHandComputedResult) {
  // Two sets of two vectors of length 2, laid out v[n][l][m].
  const std::vector<float> v{1, 3, 2,  6,    // set 0: averages (2, 4)
                             0, 2, 10, 20};  // set 1: averages (1, 15)
  const std::vector<float> a{1, 2, 3, 4};
  std::vector<double> y(4);
  average_then_multiply(v, a, 2, 2, 2, y);
  // y[l][n]: row l of A times set n's average.
  EXPECT_EQ(y, (std::vector<double>{10, 31, 22, 63}));
}

TEST(AvgmatvecInputs, PositiveDeterministicAndRowsDiffer) {
  AvgmatvecFamily family;
  const Problem p = AvgmatvecFamily::make_problem(8, 16, 12);
  const HostBuffers a = generated_inputs(family, p, 5), b = generated_inputs(family, p, 5);
  EXPECT_EQ(a.all(), b.all());
  const auto v = a.as<float>("v");
  for (float x : v) ASSERT_GT(x, 0.0f);
  float lowest_row_mean = 1e9f, highest_row_mean = 0;
  for (int row = 0; row < 8 * 12; ++row) {
    float sum = 0;
    for (int i = 0; i < 16; ++i) sum += v[row * 16 + i];
    lowest_row_mean = std::min(lowest_row_mean, sum / 16);
    highest_row_mean = std::max(highest_row_mean, sum / 16);
  }
  EXPECT_GT(highest_row_mean / lowest_row_mean, 3.0f);  // rows have their own scales
}

TEST(AvgmatvecVerify, AcceptsTheReferenceAndFindsTheFirstMismatch) {
  AvgmatvecFamily family;
  const Problem p = AvgmatvecFamily::make_problem(20, 33, 17);
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 6));
  EXPECT_TRUE(family.compare(p, expected, expected).ok);
  const double rtol = AvgmatvecFamily::relative_tolerance(33, 17);
  HostBuffers close = expected, wrong = expected;
  close.as<float>("y")[100] *= static_cast<float>(1 + rtol / 4);
  EXPECT_TRUE(family.compare(p, expected, close).ok);
  wrong.as<float>("y")[100] *= static_cast<float>(1 + 3 * rtol);
  wrong.as<float>("y")[200] = std::nanf("");
  Verdict v = family.compare(p, expected, wrong);
  EXPECT_EQ(v.first_bad_index, 100);
  wrong.as<float>("y")[100] = expected.as<float>("y")[100];
  v = family.compare(p, expected, wrong);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 200);  // NaN never passes
  HostBuffers poisoned = expected;
  std::memset(&poisoned.as<float>("y")[0], 0xA5, 4);
  EXPECT_EQ(family.compare(p, expected, poisoned).first_bad_index, 0);
}

TEST(AvgmatvecSpace, RespectsItsConstraintsAndDeviceLimits) {
  AvgmatvecFamily family;
  for_each_config_on_both_devices(family, [](const DeviceLimits& limits, const ConfigView& c) {
    EXPECT_LE(c["block"], limits.max_threads_per_block);
    const std::int64_t shared = (c["reduce"] == AvgmatvecFamily::shared ? c["block"] * 4 : 0) +
                                (c["fuse"] == AvgmatvecFamily::fused ? AvgmatvecFamily::kMaxLength * 4 : 0);
    EXPECT_LE(shared, limits.max_shared_per_block_optin);
  });
  EXPECT_LE(family.space(DeviceLimits{}).enumerate().size(), 300u);
  std::size_t stream_configs = 0;
  for_each_config_on_both_devices(family, [&](const DeviceLimits&, const ConfigView& c) {
    if (!AvgmatvecFamily::is_stream(c["fuse"])) return;
    ++stream_configs;
    EXPECT_EQ(c["reduce"], AvgmatvecFamily::warp);  // stream and pipe average with warps only
    if (c["fuse"] >= AvgmatvecFamily::pipe_8x32) {
      EXPECT_EQ(c["vec"], 4);
      EXPECT_LE(c["block"], 512);
    } else {
      EXPECT_TRUE(c["block"] == 128 || c["block"] == 256);
    }
  });
  EXPECT_GT(stream_configs, 0u);
}

TEST(AvgmatvecPlan, StreamLaunchesABlockPerSetGroupAndChunkWithScratchForTheirPartials) {
  AvgmatvecFamily family;
  const Space space = family.space(DeviceLimits{});
  const Config config = space.parse("fuse=stream8x32,reduce=warp,block=128,ept=1,vec=1");
  const ConfigView view(space, config);
  // 33 sets in groups of 8 (the last holds one), 70 components in chunks of 32 (the last 6).
  const Problem p = AvgmatvecFamily::make_problem(33, 50, 70);
  const auto steps = family.plan(p, view);
  ASSERT_EQ(steps.size(), 1u);  // no memset: the counters reset themselves
  const auto& launch = std::get<KernelLaunch>(steps[0]);
  EXPECT_EQ(launch.kernel, "avgmatvec_stream");
  EXPECT_EQ(launch.grid.x, 5u * 3u);
  EXPECT_EQ(launch.block.x, 128u);
  const auto scratch = family.scratch(p, view);
  ASSERT_EQ(scratch.size(), 2u);
  EXPECT_EQ(scratch[0].name, "partial");
  EXPECT_EQ(scratch[0].bytes, 5 * 3 * 70 * 8 * 4);  // [groups][chunks][L][S] floats
  EXPECT_EQ(scratch[1].name, "finished");
  EXPECT_EQ(scratch[1].bytes, 5 * 4);  // a counter per group
  const auto shape = AvgmatvecFamily::stream_shape(AvgmatvecFamily::stream_16x64);
  EXPECT_EQ(shape.sets, 16);
  EXPECT_EQ(shape.rows, 64);
  EXPECT_THROW(AvgmatvecFamily::stream_shape(AvgmatvecFamily::split), Error);
}

TEST(AvgmatvecPlan, PipeLaunchesABlockPerSetGroupAndSpanOfFourChunks) {
  AvgmatvecFamily family;
  const Space space = family.space(DeviceLimits{});
  const Config config = space.parse("fuse=pipe16x32,reduce=warp,block=256,ept=2,vec=4");
  const ConfigView view(space, config);
  // 40 sets in groups of 16 (3 groups), 300 components in chunks of 32 (10 chunks: spans of 4, 4, 2).
  const Problem p = AvgmatvecFamily::make_problem(40, 64, 300);
  const auto steps = family.plan(p, view);
  ASSERT_EQ(steps.size(), 1u);
  const auto& launch = std::get<KernelLaunch>(steps[0]);
  EXPECT_EQ(launch.kernel, "avgmatvec_pipe");
  EXPECT_EQ(launch.grid.x, 3u * 3u);
  const auto scratch = family.scratch(p, view);
  ASSERT_EQ(scratch.size(), 2u);
  EXPECT_EQ(scratch[0].bytes, 3 * 10 * 300 * 16 * 4);  // a partial per chunk, not per block
  EXPECT_EQ(scratch[1].bytes, 3 * 4);
}

TEST(AvgmatvecProblems, DefaultsAndValidation) {
  AvgmatvecFamily family;
  const auto defaults = family.problems({});
  ASSERT_EQ(defaults.size(), 2u);
  EXPECT_EQ(defaults[1].key(), "n=1024,m=1024,l=1024,type=float32");
  EXPECT_THROW(family.problems({"int32", {}}), UsageError);
  EXPECT_THROW(family.problems({std::nullopt, {-1}}), UsageError);
  EXPECT_THROW(family.problems({std::nullopt, {AvgmatvecFamily::kMaxLength + 1}}), UsageError);
  const Work w = family.work(defaults[1]);
  const double n = 1024;
  EXPECT_DOUBLE_EQ(w.bytes, (n * n * n + n * n + n * n) * 4);  // the byte floor: v, A, y once each
}
