// The copy family without a GPU: the probes, the gather reference, verification, space and plan.
#include <gtest/gtest.h>

#include <cmath>

#include "copy.hpp"
#include "core/error.hpp"
#include "family_test_support.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {
const CopyFamily copy;
}  // namespace

TEST(CopyProblems, AlignedOffsetAndStrideAtEverySize) {
  const auto list = copy.problems({});
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].key(), "n=134217728,type=float32");
  EXPECT_EQ(list[1].key(), "n=134217728,type=float32,offset=1");
  EXPECT_EQ(list[2].key(), "n=134217728,type=float32,stride=2");
  EXPECT_EQ(copy.problems({std::nullopt, {1000, 2000}}).size(), 6u);
  EXPECT_THROW(copy.problems({"float64", {}}), UsageError);
  EXPECT_THROW(CopyFamily::make_problem(10, -1, 1), UsageError);
  EXPECT_THROW(CopyFamily::make_problem(10, 0, 0), UsageError);
}

TEST(CopyReference, GathersWithOffsetAndStride) {
  const Problem p = CopyFamily::make_problem(5, 3, 4);
  const auto specs = copy.buffers(p);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].bytes, (3 + 4 * 4 + 1) * 4);  // the last element read is in[3 + 4*4]
  EXPECT_EQ(specs[1].bytes, 5 * 4);
  const HostBuffers inputs = generated_inputs(copy, p, 1);
  const auto in = inputs.as<float>("in");
  for (const float v : in) EXPECT_NE(v, 0.0f);
  const HostBuffers expected = copy.reference(p, inputs);
  const auto out = expected.as<float>("out");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out[i], in[3 + 4 * i]);
}

TEST(CopyVerify, ExactWithTheFirstBadIndex) {
  const Problem p = CopyFamily::make_problem(10'000, 1, 1);
  const HostBuffers expected = copy.reference(p, generated_inputs(copy, p, 2));
  EXPECT_TRUE(copy.compare(p, expected, expected).ok);
  HostBuffers wrong = expected;
  wrong.as<float>("out")[9'999] = std::nextafter(wrong.as<float>("out")[9'999], 0.0f);  // the last element
  wrong.as<float>("out")[4'096] = std::nanf("");
  const Verdict v = copy.compare(p, expected, wrong);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 4'096);
}

TEST(CopySpace, ConstraintsAndDeviceLimits) {
  const auto holds = [](const ConfigView& c) { EXPECT_EQ(c["ept"] % c["vec"], 0); };
  const std::size_t hopper = expect_every_config(copy, DeviceLimits{}, holds);
  EXPECT_EQ(hopper, 60u);
  const std::size_t small = expect_every_config(copy, small_device(), holds);
  EXPECT_GT(small, 0u);
  EXPECT_LT(small, hopper);
}

TEST(CopyPlan, OneTilePerBlockAndTheProbeAsArguments) {
  const Space space = copy.space(DeviceLimits{});
  const Config config = space.parse("block=256,ept=16,vec=4");
  const Problem p = CopyFamily::make_problem(1'000'000, 0, 2);
  const auto steps = copy.plan(p, ConfigView(space, config));
  ASSERT_EQ(steps.size(), 1u);
  const auto& launch = std::get<KernelLaunch>(steps[0]);
  EXPECT_EQ(launch.grid.x, (1'000'000u + 4095) / 4096);
  EXPECT_EQ(std::get<std::int64_t>(launch.args[1]), 0);          // offset
  EXPECT_EQ(std::get<std::int64_t>(launch.args[2]), 2);          // stride
  EXPECT_EQ(std::get<std::int64_t>(launch.args[3]), 1'000'000);  // n
  EXPECT_DOUBLE_EQ(copy.work(p).bytes, 2.0 * 1'000'000 * 4);
}
