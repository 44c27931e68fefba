// The avgmatvec family on the CPU: reference, inputs, tolerance and verification, space.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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
    if (AvgmatvecFamily::matvec_async(c["fuse"])) {
      EXPECT_GE(limits.cc_major, 8);  // cp.async
      EXPECT_LE(AvgmatvecFamily::matvec_shape(c["fuse"]).dynamic_shared_bytes(), limits.max_shared_per_block_optin);
    }
    if (c["pdl"] != AvgmatvecFamily::pdl_off) {  // griddepcontrol, and only the cp product waits
      EXPECT_GE(limits.cc_major, 9);
      EXPECT_TRUE(AvgmatvecFamily::matvec_async(c["fuse"]));
    }
  });
  EXPECT_LE(family.space(DeviceLimits{}).enumerate().size(), 1700u);  // 1632 on sm_90
}

// A GPU without cp.async (sm_75) keeps the register-staged forms and loses the cp and tc ones (the
// tc forms' TF32 mma also needs sm_80); one without programmatic dependent launch (sm_80) keeps
// them launched plainly.
TEST(AvgmatvecSpace, CpFormsNeedSm80) {
  AvgmatvecFamily family;
  const Space turing = family.space(limits_for_arch("sm_75"));
  const Space ampere = family.space(limits_for_arch("sm_80"));
  const Space hopper = family.space(limits_for_arch("sm_90"));
  const auto count_cp = [](const Space& space) {
    std::size_t n = 0;
    for (const Config& config : space.enumerate())
      n += AvgmatvecFamily::matvec_async(ConfigView(space, config)["fuse"]) ? 1 : 0;
    return n;
  };
  EXPECT_EQ(count_cp(turing), 0u);
  EXPECT_EQ(count_cp(ampere), 6u * 96u);      // 3 cp and 3 tc forms x reduce x block x ept x vec
  EXPECT_EQ(count_cp(hopper), 6u * 96u * 2);  // and pdl off or end
  EXPECT_EQ(ampere.enumerate().size() - turing.enumerate().size(), 6u * 96u);
  EXPECT_EQ(hopper.enumerate().size() - ampere.enumerate().size(), 6u * 96u);
}

// Configs are stored by label. splitpf (removed: never faster than split or split64k2/k4 on an
// H100) was the last fuse label, so the stored results of the others parse to the same values as
// before, and splitpf's no longer parse (a warm start skips them).
TEST(AvgmatvecSpace, RemovedFuseNoLongerParsesAndTheOthersKeepTheirValues) {
  const Space space = AvgmatvecFamily().space(DeviceLimits{});
  const std::string rest = ",reduce=warp,block=256,ept=4,vec=4,pdl=off";
  EXPECT_THROW(space.parse("fuse=splitpf" + rest), UsageError);
  const std::vector<std::pair<std::string, AvgmatvecFamily::Fuse>> kept{
      {"split", AvgmatvecFamily::split},
      {"fused", AvgmatvecFamily::fused},
      {"split64x32", AvgmatvecFamily::split_64x32},
      {"split64k2", AvgmatvecFamily::split_64k2},
      {"split64k4", AvgmatvecFamily::split_64k4},
      {"splitcp", AvgmatvecFamily::split_cp},
      {"split64k2cp", AvgmatvecFamily::split_64k2_cp},
      {"split64k4cp", AvgmatvecFamily::split_64k4_cp},
      {"splittc", AvgmatvecFamily::split_tc},
      {"split64k2tc", AvgmatvecFamily::split_64k2_tc},
      {"split64k4tc", AvgmatvecFamily::split_64k4_tc}};
  for (const auto& [label, value] : kept) {
    const Config config = space.parse("fuse=" + label + rest);
    EXPECT_EQ(ConfigView(space, config)["fuse"], value) << label;
  }
}

TEST(AvgmatvecPlan, SplitTilesTheProductByTheVariantsShape) {
  AvgmatvecFamily family;
  const Space space = family.space(DeviceLimits{});
  // 130 sets, vectors of 70: 3 x 2 tiles of 64 x 64, 5 x 2 of 64 x 32.
  const Problem p = AvgmatvecFamily::make_problem(130, 50, 70);
  struct Expected {
    const char* fuse;
    Dim3 grid;
    unsigned threads;
    unsigned dynamic_shared = 0;  // the cp forms' 4 stages of 128 rows of 36 floats (tc forms: 40)
  };
  for (const Expected& e :
       {Expected{"split", {3, 2, 1}, 256}, Expected{"split64x32", {5, 2, 1}, 128},
        Expected{"split64k2", {3, 2, 2}, 256}, Expected{"split64k4", {3, 2, 4}, 256},
        Expected{"splitcp", {3, 2, 1}, 256, 73728}, Expected{"split64k2cp", {3, 2, 2}, 256, 73728},
        Expected{"split64k4cp", {3, 2, 4}, 256, 73728}, Expected{"splittc", {3, 2, 1}, 256, 81920},
        Expected{"split64k2tc", {3, 2, 2}, 256, 81920}, Expected{"split64k4tc", {3, 2, 4}, 256, 81920}}) {
    const Config config = space.parse(std::string("fuse=") + e.fuse + ",reduce=warp,block=256,ept=1,vec=1,pdl=off");
    const ConfigView view(space, config);
    const auto steps = family.plan(p, view);
    ASSERT_EQ(steps.size(), 2u) << e.fuse;
    EXPECT_FALSE(std::get<KernelLaunch>(steps[1]).programmatic) << e.fuse;
    const auto& averages = std::get<KernelLaunch>(steps[0]);
    EXPECT_EQ(averages.kernel, "avg_rows");
    EXPECT_EQ(averages.grid.x, (130u * 70u + 7u) / 8u) << e.fuse;  // a warp per row, 8 warps a block
    const auto& product = std::get<KernelLaunch>(steps[1]);
    EXPECT_EQ(product.kernel, "matvec_tiles");
    EXPECT_EQ(product.grid.x, e.grid.x) << e.fuse;
    EXPECT_EQ(product.grid.y, e.grid.y) << e.fuse;
    EXPECT_EQ(product.grid.z, e.grid.z) << e.fuse;
    EXPECT_EQ(product.block.x, e.threads) << e.fuse;
    EXPECT_EQ(product.dynamic_shared_bytes, e.dynamic_shared) << e.fuse;
    const auto scratch = family.scratch(p, view);
    ASSERT_GE(scratch.size(), 1u);
    EXPECT_EQ(scratch[0].name, "avg");
    EXPECT_EQ(scratch[0].bytes, 130 * 70 * 4);
    if (e.grid.z == 1) {
      EXPECT_EQ(scratch.size(), 1u) << e.fuse;
      EXPECT_EQ(product.args.size(), 5u) << e.fuse;  // a, avg, sets, l, y
      continue;
    }
    EXPECT_EQ(product.args.size(), 7u) << e.fuse;  // and the parts and their counters
    ASSERT_EQ(scratch.size(), 3u) << e.fuse;
    EXPECT_EQ(scratch[1].name, "part");
    EXPECT_EQ(scratch[1].bytes, 6 * e.grid.z * 256 * 16 * 4) << e.fuse;  // each part's 16 results a thread
    EXPECT_EQ(scratch[2].name, "finished");
    EXPECT_EQ(scratch[2].bytes, 6 * 4) << e.fuse;  // a counter per tile
  }
  EXPECT_THROW(AvgmatvecFamily::matvec_shape(AvgmatvecFamily::fused), Error);
}

// With pdl, the product's launch is programmatic (it may start while the averages run) and the
// averages' is not; otherwise the plan is the same.
TEST(AvgmatvecPlan, PdlLaunchesTheProductProgrammatically) {
  AvgmatvecFamily family;
  const Space space = family.space(limits_for_arch("sm_90"));
  const Problem p = AvgmatvecFamily::make_problem(130, 50, 70);
  const auto plan_of = [&](const std::string& pdl) {
    const Config config = space.parse("fuse=split64k2cp,reduce=warp,block=256,ept=1,vec=1,pdl=" + pdl);
    return family.plan(p, ConfigView(space, config));
  };
  const auto off = plan_of("off");
  for (const char* pdl : {"end"}) {
    const auto steps = plan_of(pdl);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_FALSE(std::get<KernelLaunch>(steps[0]).programmatic) << pdl;
    EXPECT_TRUE(std::get<KernelLaunch>(steps[1]).programmatic) << pdl;
    EXPECT_EQ(std::get<KernelLaunch>(steps[1]).grid.z, std::get<KernelLaunch>(off[1]).grid.z) << pdl;
  }
  const Space ampere = family.space(limits_for_arch("sm_80"));
  EXPECT_FALSE(ampere.valid(ampere.parse("fuse=splitcp,reduce=warp,block=256,ept=1,vec=1,pdl=end")));
  EXPECT_FALSE(space.valid(space.parse("fuse=split64k2,reduce=warp,block=256,ept=1,vec=1,pdl=end")));
}

TEST(AvgmatvecPlan, FusedLaunchesABlockPerSetWithItsAverageInSharedMemory) {
  AvgmatvecFamily family;
  const Space space = family.space(DeviceLimits{});
  const Config config = space.parse("fuse=fused,reduce=shared,block=128,ept=2,vec=2,pdl=off");
  const ConfigView view(space, config);
  const Problem p = AvgmatvecFamily::make_problem(33, 50, 70);
  const auto steps = family.plan(p, view);
  ASSERT_EQ(steps.size(), 1u);
  const auto& launch = std::get<KernelLaunch>(steps[0]);
  EXPECT_EQ(launch.kernel, "avgmatvec_fused");
  EXPECT_EQ(launch.grid.x, 33u);
  EXPECT_EQ(launch.dynamic_shared_bytes, 70u * 4u);
  EXPECT_TRUE(family.scratch(p, view).empty());
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
