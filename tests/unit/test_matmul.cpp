// The matmul family on the CPU: reference (full and sampled), tolerance and verification, space.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "family_test_support.hpp"
#include "matmul.hpp"
#include "verify.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {

// What a correct kernel could return where the reference computed nothing: a plausible value.
HostBuffers plausible_actual(const HostBuffers& expected, std::int64_t k) {
  HostBuffers actual = expected;
  for (float& v : actual.as<float>("c"))
    if (std::isnan(v)) v = static_cast<float>(k);  // inputs average 1: results near k
  return actual;
}

}  // namespace

TEST(MatmulReference, MatchesHandComputedProduct) {
  const std::vector<float> a{1, 2, 3, 4, 5, 6};     // 2 x 3
  const std::vector<float> b{7, 8, 9, 10, 11, 12};  // 3 x 2
  const std::vector<std::int64_t> rows{0, 1};
  std::vector<double> c(4);
  matmul_rows(a, b, 2, 3, rows, c);
  EXPECT_EQ(c, (std::vector<double>{58, 64, 139, 154}));
  std::vector<double> column(2);
  matmul_column(a, b, 2, 2, 3, 1, column);
  EXPECT_EQ(column, (std::vector<double>{64, 154}));
}

TEST(MatmulReference, SmallProblemsAreComputedInFull) {
  MatmulFamily family;
  const Problem p = MatmulFamily::make_problem(70, 50, 30);
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 1));
  for (float v : expected.as<float>("c")) ASSERT_FALSE(std::isnan(v));
}

TEST(MatmulReference, LargeProblemsSampleEdgesAndStayWithinBudget) {
  const auto sample = MatmulFamily::reference_sample(4096, 4096, 4096);
  EXPECT_EQ(sample.rows.front(), 0);
  EXPECT_EQ(sample.rows.back(), 4095);
  EXPECT_EQ(sample.columns.front(), 0);
  EXPECT_EQ(sample.columns.back(), 4095);
  EXPECT_EQ(sample.rows.size(), 32u);  // 2^29 multiply-adds of 4096 x 4096 each
  EXPECT_EQ(sample.columns.size(), 32u);
  EXPECT_TRUE(std::is_sorted(sample.rows.begin(), sample.rows.end()));
  const auto again = MatmulFamily::reference_sample(4096, 4096, 4096);
  EXPECT_EQ(sample.rows, again.rows);  // every config is checked on the same elements
  const auto non_square = MatmulFamily::reference_sample(3000, 1500, 2500);
  EXPECT_EQ(non_square.rows.back(), 2999);
  EXPECT_EQ(non_square.columns.back(), 1499);
}

TEST(MatmulVerify, AcceptsTheReferenceAndFindsAPlantedMismatch) {
  MatmulFamily family;
  const Problem p = MatmulFamily::make_problem(70, 50, 30);
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 2));
  EXPECT_TRUE(family.compare(p, expected, expected).ok);

  HostBuffers wrong = expected;
  const double rtol = gamma_bound(30, kFloatUnitRoundoff) + 2 * kFloatUnitRoundoff;
  wrong.as<float>("c")[13 * 50 + 7] *= static_cast<float>(1 + 3 * rtol);
  wrong.as<float>("c")[60 * 50 + 1] = 0;
  const Verdict v = family.compare(p, expected, wrong);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 13 * 50 + 7);
  EXPECT_NE(v.message.find("row 13, column 7"), std::string::npos) << v.message;

  HostBuffers close = expected;
  close.as<float>("c")[13 * 50 + 7] *= static_cast<float>(1 + rtol / 4);
  EXPECT_TRUE(family.compare(p, expected, close).ok);
}

// Sums whose additions all err one way (the tensor cores' fp32 additions truncate) can stay inside
// gamma_k; their mean relative error gives them away. Errors as large both ways pass.
TEST(MatmulVerify, SumsThatDriftOneWayAreRejectedInsideTheTolerance) {
  MatmulFamily family;
  const Problem p = MatmulFamily::make_problem(64, 48, 4096);
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 4));
  const auto scaled = [&](auto factor_of) {
    HostBuffers actual = expected;
    auto c = actual.as<float>("c");
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(c[i] * factor_of(i));
    return actual;
  };
  // gamma_4096 is 2.4e-4; the drift bound 2 sqrt(k) u = 7.6e-6.
  const Verdict drifting = family.compare(p, expected, scaled([](std::size_t) { return 1 - 3e-5; }));
  EXPECT_FALSE(drifting.ok);
  EXPECT_NE(drifting.message.find("drift"), std::string::npos) << drifting.message;
  EXPECT_TRUE(family.compare(p, expected, scaled([](std::size_t i) { return i % 2 ? 1 - 3e-5 : 1 + 3e-5; })).ok);
  EXPECT_TRUE(family.compare(p, expected, scaled([](std::size_t) { return 1 - 4e-6; })).ok);
}

TEST(MatmulVerify, NaNAndUnwrittenNeverPassEvenWhereTheReferenceSampled) {
  MatmulFamily family;
  const Problem p = MatmulFamily::make_problem(1024, 1024, 1025);  // past the full-reference budget
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 3));
  const auto sample = MatmulFamily::reference_sample(1024, 1024, 1025);
  ASSERT_LT(sample.rows.size(), 1024u);
  std::int64_t unchecked_row = 1;
  while (std::binary_search(sample.rows.begin(), sample.rows.end(), unchecked_row)) ++unchecked_row;
  std::int64_t unchecked_column = 1;
  while (std::find(sample.columns.begin(), sample.columns.end(), unchecked_column) != sample.columns.end())
    ++unchecked_column;
  const std::int64_t unchecked = unchecked_row * 1024 + unchecked_column;
  ASSERT_TRUE(std::isnan(expected.as<float>("c")[unchecked]));

  const HostBuffers actual = plausible_actual(expected, 1025);
  EXPECT_TRUE(family.compare(p, expected, actual).ok);
  HostBuffers nan = actual;
  nan.as<float>("c")[unchecked] = std::nanf("");
  EXPECT_EQ(family.compare(p, expected, nan).first_bad_index, unchecked);
  HostBuffers poisoned = actual;
  std::memset(&poisoned.as<float>("c")[unchecked], 0xA5, 4);
  EXPECT_EQ(family.compare(p, expected, poisoned).first_bad_index, unchecked);

  // A sampled column catches a wrong element in a row that was not sampled.
  HostBuffers wrong = actual;
  const std::int64_t in_column = unchecked_row * 1024 + sample.columns[1];
  wrong.as<float>("c")[in_column] *= 1.01f;
  EXPECT_EQ(family.compare(p, expected, wrong).first_bad_index, in_column);
}

TEST(MatmulSpace, RespectsItsConstraintsAndDeviceLimits) {
  MatmulFamily family;
  int big_register_tiles = 0, warp_tiles = 0, large_warp_tiles = 0;
  for_each_config_on_both_devices(family, [&](const DeviceLimits& limits, const ConfigView& c) {
    const std::int64_t threads = MatmulFamily::threads(c["tile"], c["ept"], c["shape"]);
    EXPECT_GE(threads, 32);
    EXPECT_LE(threads, limits.max_threads_per_block);
    EXPECT_LE(MatmulFamily::static_shared_bytes(c["algo"], c["tile"], c["pad"], c["bk"]), limits.max_shared_per_block);
    const std::int64_t dynamic = MatmulFamily::dynamic_shared_bytes(c);
    if (c["algo"] == MatmulFamily::regtile) {
      EXPECT_EQ(c["ept"] % 4, 0);
      big_register_tiles += c["tile"] == 128 && c["ept"] == 8;
    }
    if (MatmulFamily::warp_tiled(c["algo"])) {
      ++warp_tiles;
      large_warp_tiles += c["shape"] != MatmulFamily::square;
      EXPECT_EQ(c["ept"], 8);
      EXPECT_EQ(c["vec"], 4);                   // 16-byte cp.async
      EXPECT_EQ(c["pad"] + c["swizzle"], 1);    // one layout against bank conflicts, not both
      if (c["algo"] == MatmulFamily::tf32x3) {  // paired k reads of a padded row-major A; two register tiles
        EXPECT_EQ(c["pad"], 1);
        EXPECT_EQ(c["transpose"], 0);
        EXPECT_GE(c["bk"], 16);
        EXPECT_EQ(c["shape"], MatmulFamily::square);
        EXPECT_EQ(c["minblocks"], 1);
      }
      EXPECT_LE(c["minblocks"] * dynamic, limits.max_shared_per_block_optin);
      EXPECT_LE(c["minblocks"] * threads, limits.max_threads_per_sm);
    } else {
      EXPECT_EQ(dynamic, 0);
      EXPECT_EQ(c["shape"], MatmulFamily::square);
      EXPECT_EQ(c["stages"], 2);
      EXPECT_EQ(c["swizzle"], 0);
      EXPECT_EQ(c["raster"], 1);
      EXPECT_EQ(c["transpose"], 0);
    }
  });
  EXPECT_GT(big_register_tiles, 0);  // the kernels that have to compete with cuBLAS are there
  EXPECT_GT(large_warp_tiles, 0);
  // A brute force of the whole family at its three default problems stays a few minutes.
  const Space h100 = family.space(DeviceLimits{});
  const auto configs = h100.enumerate();
  const auto algo_count = [&](MatmulFamily::Algorithm algo) {
    return std::count_if(configs.begin(), configs.end(),
                         [&](const Config& config) { return ConfigView(h100, config)["algo"] == algo; });
  };
  EXPECT_LE(algo_count(MatmulFamily::warptile), 248);  // 160, and 88 of them again as stream-K
  EXPECT_LE(algo_count(MatmulFamily::tf32x3), 32);     // 16, and 16 again as stream-K
  // bk 32: square warp tiles only, transposed for warptile (the template's other layouts take 8 or 16), in 2 or 3
  // stages.
  std::size_t deep_steps = 0;
  for (const Config& config : configs) {
    const ConfigView c(h100, config);
    if (c["bk"] != 32) continue;
    ++deep_steps;
    EXPECT_TRUE(MatmulFamily::warp_tiled(c["algo"]));
    EXPECT_EQ(c["transpose"], c["algo"] == MatmulFamily::warptile ? 1 : 0);
    EXPECT_EQ(c["shape"], MatmulFamily::square);
    EXPECT_LE(c["stages"], 3);
  }
  EXPECT_EQ(deep_steps, 24u + 16u);  // warptile 16 + 8 as stream-K; tf32x3 8 + 8 as stream-K
  EXPECT_GT(warp_tiles, 0);
  EXPECT_LE(configs.size(), 570u);
}

TEST(MatmulSpace, WarptileNeedsCpAsync) {
  MatmulFamily family;
  DeviceLimits turing = limits_for_arch("sm_75");
  const Space space = family.space(turing);
  for (const Config& config : space.enumerate())
    EXPECT_FALSE(MatmulFamily::warp_tiled(ConfigView(space, config)["algo"]));  // tf32x3's mma needs sm_80 too
}

// warptile: the plan launches the vector or scalar kernel by alignment, with its pipeline's shared
// memory as dynamic shared memory (beyond 48 KiB for the larger configs), and tiles C by the shape.
TEST(MatmulPlan, WarptileLaunchesItsShapeWithDynamicSharedMemory) {
  MatmulFamily family;
  const Space space = family.space(DeviceLimits{});
  const auto launch_of = [&](const std::string& key, const Problem& p) {
    const Config config = space.parse(key);
    EXPECT_TRUE(space.valid(config)) << key << ": " << space.violation(config).value_or("");
    const auto steps = family.plan(p, ConfigView(space, config));
    return std::get<KernelLaunch>(steps.back());
  };
  const Problem aligned = MatmulFamily::make_problem(3000, 1500, 2500);
  const std::string base = "algo=warptile,tile=128,ept=8,vec=4,splitk=1,warp_rows=8,raster=8,";

  const auto tall =
      launch_of(base + "minblocks=1,pad=0,bk=8,shape=tall,stages=4,swizzle=1,transpose=0,streamk=0", aligned);
  EXPECT_EQ(tall.kernel, "matmul_warptile");
  EXPECT_EQ(tall.grid.x, (1500u + 127) / 128);
  EXPECT_EQ(tall.grid.y, (3000u + 255) / 256);
  EXPECT_EQ(tall.block.x, 512u);  // (256 / 8) x (128 / 8)
  EXPECT_EQ(tall.dynamic_shared_bytes, 4u * (256 * 8 + 8 * 128) * 4);

  const auto square =
      launch_of(base + "minblocks=1,pad=1,bk=16,shape=square,stages=3,swizzle=0,transpose=0,streamk=0", aligned);
  EXPECT_EQ(square.block.x, 256u);
  EXPECT_EQ(square.dynamic_shared_bytes, 3u * (128 * (16 + 4) + 16 * 128) * 4);  // A's rows padded by 4 floats
  EXPECT_GT(square.dynamic_shared_bytes, 48u * 1024);                            // beyond the static limit

  const auto transposed =
      launch_of(base + "minblocks=2,pad=1,bk=16,shape=square,stages=2,swizzle=0,transpose=1,streamk=0", aligned);
  EXPECT_EQ(transposed.dynamic_shared_bytes, 2u * (16 * (128 + 4) + 16 * 128) * 4);  // k-major rows of A, padded

  const auto scalar = launch_of(base + "minblocks=1,pad=1,bk=8,shape=wide,stages=3,swizzle=0,transpose=1,streamk=0",
                                MatmulFamily::make_problem(333, 200, 150));
  EXPECT_EQ(scalar.kernel, "matmul_warptile_scalar");
  EXPECT_EQ(scalar.grid.x, (200u + 255) / 256);
  EXPECT_EQ(scalar.grid.y, (333u + 127) / 128);

  // Split k zeroes C first, as for regtile.
  const Config split_config = space.parse(
      "algo=warptile,tile=128,ept=8,vec=4,minblocks=2,splitk=4,warp_rows=4,raster=1,pad=0,bk=8,shape=square,stages=3,"
      "swizzle=1,transpose=0,streamk=0");
  ASSERT_TRUE(space.valid(split_config)) << space.violation(split_config).value_or("");
  const auto split = family.plan(aligned, ConfigView(space, split_config));
  ASSERT_EQ(split.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<MemsetStep>(split[0]));
  EXPECT_EQ(std::get<KernelLaunch>(split[1]).grid.z, 4u);

  EXPECT_FALSE(space.valid(space.parse(
      base + "minblocks=1,pad=1,bk=8,shape=square,stages=3,swizzle=1,transpose=0,streamk=0")));  // both layouts
  EXPECT_FALSE(space.valid(space.parse(
      base + "minblocks=2,pad=0,bk=8,shape=square,stages=3,swizzle=1,transpose=1,streamk=0")));  // transposed is padded
  EXPECT_FALSE(space.valid(space.parse(
      "algo=regtile,tile=128,ept=8,pad=1,vec=4,minblocks=1,bk=16,splitk=1,shape=wide,warp_rows=4,stages=2,swizzle=0,"
      "raster=1,transpose=0,streamk=0")));  // shapes are warptile's
}

// tf32x3 launches warptile's kernel with its own shared layout: A's rows padded by 8 floats, B's by 4.
TEST(MatmulPlan, Tf32x3LaunchesTheWarptileKernelWithItsPaddedRows) {
  MatmulFamily family;
  const Space space = family.space(DeviceLimits{});
  const std::string base = "algo=tf32x3,tile=128,ept=8,vec=4,splitk=1,warp_rows=8,raster=8,swizzle=0,";
  const Config config = space.parse(base + "minblocks=1,pad=1,bk=32,shape=square,stages=2,transpose=0,streamk=0");
  ASSERT_TRUE(space.valid(config)) << space.violation(config).value_or("");
  const auto steps = family.plan(MatmulFamily::make_problem(4096, 4096, 4096), ConfigView(space, config));
  ASSERT_EQ(steps.size(), 1u);
  const auto& launch = std::get<KernelLaunch>(steps[0]);
  EXPECT_EQ(launch.kernel, "matmul_warptile");
  EXPECT_EQ(launch.block.x, 256u);
  EXPECT_EQ(launch.dynamic_shared_bytes, 2u * (128 * (32 + 8) + 32 * (128 + 4)) * 4);

  const auto stream_k = space.parse(base + "minblocks=1,pad=1,bk=16,shape=square,stages=3,transpose=0,streamk=1");
  ASSERT_TRUE(space.valid(stream_k)) << space.violation(stream_k).value_or("");
  EXPECT_EQ(MatmulFamily::dynamic_shared_bytes(ConfigView(space, stream_k)), 3 * (128 * (16 + 8) + 16 * (128 + 4)) * 4);

  // Its fragments read A row-major and padded, two k at a time.
  EXPECT_FALSE(space.valid(space.parse(base + "minblocks=1,pad=1,bk=16,shape=square,stages=2,transpose=1,streamk=0")));
  EXPECT_FALSE(space.valid(space.parse(
      "algo=tf32x3,tile=128,ept=8,vec=4,splitk=1,warp_rows=8,raster=8,swizzle=1,minblocks=1,pad=0,bk=16,shape=square,"
      "stages=2,transpose=0,streamk=0")));
  EXPECT_FALSE(space.valid(space.parse(base + "minblocks=1,pad=1,bk=8,shape=square,stages=3,transpose=0,streamk=0")));
  // Two register tiles a thread: one block an SM, of 256 threads.
  EXPECT_FALSE(space.valid(space.parse(base + "minblocks=2,pad=1,bk=16,shape=square,stages=2,transpose=0,streamk=0")));
  EXPECT_FALSE(space.valid(space.parse(base + "minblocks=1,pad=1,bk=16,shape=wide,stages=2,transpose=0,streamk=0")));
}

TEST(MatmulProblems, DefaultsAndValidation) {
  MatmulFamily family;
  const auto defaults = family.problems({});
  ASSERT_EQ(defaults.size(), 3u);
  EXPECT_EQ(defaults[0].key(), "m=1024,n=1024,k=1024,type=float32");
  const Problem& odd = defaults[2];
  EXPECT_NE(odd.integer("m"), odd.integer("n"));
  for (const char* d : {"m", "n", "k"}) EXPECT_NE(odd.integer(d) % 128, 0) << d;
  EXPECT_EQ(family.problems({std::nullopt, {512}}).at(0).key(), "m=512,n=512,k=512,type=float32");
  EXPECT_THROW(family.problems({"float64", {}}), UsageError);
  EXPECT_THROW(family.problems({std::nullopt, {0}}), UsageError);
  const Work w = family.work(defaults[0]);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(w.bytes, 3.0 * 1024 * 1024 * 4);
}

// Split k: the plan zeroes C (the splits add into it) and launches one block per split in z;
// without a split, C is written once and nothing zeroes it.
TEST(MatmulPlan, SplitKZeroesCAndLaunchesOneBlockPerSplit) {
  MatmulFamily family;
  const Space space = family.space(DeviceLimits{});
  const Problem p = MatmulFamily::make_problem(3000, 1500, 2500);
  // warptile's axes, at the values every other algo takes.
  const std::string kFixed = ",shape=square,warp_rows=4,stages=2,swizzle=0,raster=1,transpose=0,streamk=0";
  const auto plan_of = [&](const std::string& key) {
    const Config config = space.parse(key);
    return family.plan(p, ConfigView(space, config));
  };
  const auto split = plan_of("algo=regtile,tile=128,ept=8,pad=1,vec=4,minblocks=2,bk=16,splitk=2" + kFixed);
  ASSERT_EQ(split.size(), 2u);
  const auto& zero = std::get<MemsetStep>(split[0]);
  EXPECT_EQ(zero.buffer, "c");
  EXPECT_EQ(zero.word, 0u);
  EXPECT_EQ(zero.bytes, 3000 * 1500 * 4);
  const auto& launch = std::get<KernelLaunch>(split[1]);
  EXPECT_EQ(launch.grid.x, (1500u + 127) / 128);
  EXPECT_EQ(launch.grid.y, (3000u + 127) / 128);
  EXPECT_EQ(launch.grid.z, 2u);

  const auto whole = plan_of("algo=regtile,tile=128,ept=8,pad=1,vec=4,minblocks=2,bk=16,splitk=1" + kFixed);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(std::get<KernelLaunch>(whole[0]).grid.z, 1u);
  EXPECT_FALSE(space.valid(
      space.parse(std::string("algo=ab_shared,tile=64,ept=4,pad=0,vec=4,minblocks=1,bk=8,splitk=2") + kFixed)));
}

TEST(MatmulPlan, StreamKZeroesItsTicketsAndFillsTheDevice) {
  MatmulFamily family;
  const Space space = family.space(DeviceLimits{});
  const std::string warptile =
      "algo=warptile,tile=128,ept=8,pad=1,vec=4,minblocks=2,bk=32,shape=square,warp_rows=4,stages=2,swizzle=0,"
      "raster=1,transpose=1,";
  const Config config = space.parse(warptile + "splitk=1,streamk=1");
  ASSERT_TRUE(space.valid(config));
  const ConfigView view(space, config);

  const Problem big = MatmulFamily::make_problem(4096, 4096, 4096);  // 32 x 32 tiles of 128 k-steps
  const auto plan = family.plan(big, view);
  ASSERT_EQ(plan.size(), 2u);
  const auto& zero = std::get<MemsetStep>(plan[0]);
  EXPECT_EQ(zero.buffer, "tickets");
  EXPECT_EQ(zero.word, 0u);
  EXPECT_EQ(zero.bytes, 1024 * 4);  // a ticket per tile
  const auto& launch = std::get<KernelLaunch>(plan[1]);
  EXPECT_TRUE(launch.fill_device);  // the evaluator cuts the grid to what the device holds
  EXPECT_EQ(launch.grid.x, static_cast<unsigned>(MatmulFamily::kMaxStreamKBlocks));
  EXPECT_EQ(launch.grid.y, 1u);
  ASSERT_EQ(launch.args.size(), 8u);
  EXPECT_EQ(std::get<BufferArg>(launch.args[6]).buffer, "workspace");
  EXPECT_EQ(std::get<BufferArg>(launch.args[7]).buffer, "tickets");
  const auto scratch = family.scratch(big, view);
  ASSERT_EQ(scratch.size(), 2u);
  EXPECT_EQ(scratch[0].bytes, 2 * MatmulFamily::kMaxStreamKBlocks * 128 * 128 * 4);  // two parts a block
  EXPECT_EQ(scratch[1].bytes, 1024 * 4);

  // A small problem asks for a block per k-step at most: 2 tiles of 2 k-steps.
  const Problem small = MatmulFamily::make_problem(192, 128, 64);
  EXPECT_EQ(std::get<KernelLaunch>(family.plan(small, view)[1]).grid.x, 4u);
  EXPECT_EQ(family.scratch(small, view)[0].bytes, 2 * 4 * 128 * 128 * 4);

  // A block per tile needs no scratch; stream-K shares k out itself, so not with split k.
  const Config per_tile = space.parse(warptile + "splitk=1,streamk=0");
  EXPECT_TRUE(family.scratch(big, ConfigView(space, per_tile)).empty());
  EXPECT_FALSE(space.valid(space.parse(warptile + "splitk=2,streamk=1")));
}
