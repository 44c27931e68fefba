// The reduce family without a GPU: problems, inputs, reference, verification, space and plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "family_test_support.hpp"
#include "reduce.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {

const ReduceFamily reduce;

HostBuffers expected_for(const Problem& p, const HostBuffers& inputs) { return reduce.reference(p, inputs); }

// What a device run wrote: the reference's outputs only, never its tolerance.
template <class T>
HostBuffers device_result(T value) {
  HostBuffers actual;
  actual.at("out").resize(sizeof(T));
  actual.as<T>("out")[0] = value;
  return actual;
}

}  // namespace

TEST(ReduceProblems, OperatorAndTypeArePartOfTheProblem) {
  const auto floats = reduce.problems({});
  ASSERT_EQ(floats.size(), 15u);  // five sizes, each with sum, min and max
  EXPECT_EQ(floats.front().key(), "n=1024,op=sum,type=float32");
  EXPECT_EQ(floats[1].key(), "n=1024,op=min,type=float32");
  EXPECT_EQ(floats.back().key(), "n=134217728,op=max,type=float32");
  const auto doubles = reduce.problems({"float64", {1000, 1 << 20}});
  ASSERT_EQ(doubles.size(), 2u);
  EXPECT_EQ(doubles[0].key(), "n=1000,op=sum,type=float64");
  EXPECT_EQ(doubles[0].size(), 1000);
  EXPECT_THROW(reduce.problems({"int32", {}}), UsageError);
  EXPECT_THROW(ReduceFamily::make_problem(10, ReductionOp::min, "float64"), UsageError);
  EXPECT_THROW(ReduceFamily::make_problem(0, ReductionOp::sum, "float32"), UsageError);
  EXPECT_EQ(reduce.problem_definitions(floats[2]), (std::vector<std::string>{"-DCUTUNE_T=float", "-DCUTUNE_OP=2"}));
  EXPECT_EQ(reduce.problem_definitions(doubles[0]), (std::vector<std::string>{"-DCUTUNE_T=double", "-DCUTUNE_OP=0"}));
}

TEST(ReduceReference, HandComputed) {
  const std::vector<float> values{1.0f, -2.0f, 3.5f, 0.25f, -8.0f};
  for (const auto& [op, want] :
       {std::pair{ReductionOp::sum, -5.25f}, {ReductionOp::min, -8.0f}, {ReductionOp::max, 3.5f}}) {
    const Problem p = ReduceFamily::make_problem(5, op, "float32");
    HostBuffers inputs;
    inputs.at("in").resize(5 * sizeof(float));
    std::copy(values.begin(), values.end(), inputs.as<float>("in").begin());
    EXPECT_EQ(reduce.reference(p, inputs).as<float>("out")[0], want) << to_string(op);
  }
}

TEST(ReduceInputs, SumsGetEighthsMinimaAUniqueExtreme) {
  const Problem sum = ReduceFamily::make_problem(100'000, ReductionOp::sum, "float32");
  const HostBuffers a = generated_inputs(reduce, sum, 5), b = generated_inputs(reduce, sum, 5),
                    c = generated_inputs(reduce, sum, 6);
  EXPECT_EQ(a.all(), b.all());
  EXPECT_NE(a.all(), c.all());
  for (const float v : a.as<float>("in")) {
    ASSERT_NE(v, 0.0f);
    ASSERT_EQ(v * 8, std::round(v * 8));
    ASSERT_LE(std::fabs(v), 63.0f / 8);
  }
  const Problem min = ReduceFamily::make_problem(100'000, ReductionOp::min, "float32");
  const HostBuffers min_inputs = generated_inputs(reduce, min, 5);
  const auto values = min_inputs.as<float>("in");
  const auto lowest = std::min_element(values.begin(), values.end());
  EXPECT_EQ(*lowest, -9.0f);
  EXPECT_EQ(std::count(values.begin(), values.end(), -9.0f), 1);
  EXPECT_EQ(std::count(values.begin(), values.end(), 0.0f), 0);
}

// The claim the tight sum check rests on: generated sums are the same in any order of additions.
TEST(ReduceInputs, FloatSumsOfGeneratedDataDoNotDependOnTheOrder) {
  const Problem p = ReduceFamily::make_problem(1 << 22, ReductionOp::sum, "float32");
  const HostBuffers inputs = generated_inputs(reduce, p, 11);
  const auto values = inputs.as<float>("in");
  const float exact = reduce.reference(p, inputs).as<float>("out")[0];
  float forward = 0, backward = 0;
  for (const float v : values) forward += v;
  for (auto it = values.rbegin(); it != values.rend(); ++it) backward += *it;
  EXPECT_EQ(forward, exact);
  EXPECT_EQ(backward, exact);
  // Per-thread runs of a strided arrangement, then the runs in order: a kernel's kind of order.
  for (const std::size_t threads : {128u, 4096u, 65536u}) {
    float total = 0;
    for (std::size_t t = 0; t < threads; ++t) {
      float run = 0;
      for (std::size_t i = t; i < values.size(); i += threads) run += values[i];
      total += run;
    }
    EXPECT_EQ(total, exact) << threads << " threads";
  }
}

TEST(ReduceVerify, SumToleranceAdmitsRoundingAndCatchesOneLostElement) {
  const Problem p = ReduceFamily::make_problem(1 << 22, ReductionOp::sum, "float32");
  const HostBuffers expected = expected_for(p, generated_inputs(reduce, p, 3));
  const float want = expected.as<float>("out")[0];
  const double tolerance = expected.as<double>("tolerance")[0];
  EXPECT_GT(tolerance, 0);
  EXPECT_LT(tolerance, 0.125);  // the smallest element's size
  // The bound grows like log2(n)·sqrt(n); at 2^27 elements of mean square 21.17 it is still below 1/8.
  EXPECT_LT(std::numeric_limits<float>::epsilon() / 2 * 27 * std::sqrt(21.17 * std::ldexp(1.0, 27)), 0.125);

  EXPECT_TRUE(reduce.compare(p, expected, device_result(want)).ok);
  EXPECT_TRUE(reduce.compare(p, expected, device_result(static_cast<float>(want + tolerance / 2))).ok);
  const Verdict lost = reduce.compare(p, expected, device_result(want + 0.125f));
  EXPECT_FALSE(lost.ok);
  EXPECT_EQ(lost.first_bad_index, 0);
  EXPECT_NE(lost.message.find("out[0]"), std::string::npos) << lost.message;
  EXPECT_FALSE(reduce.compare(p, expected, device_result(std::nanf(""))).ok);
  EXPECT_FALSE(reduce.compare(p, expected, device_result(std::numeric_limits<float>::infinity())).ok);
}

TEST(ReduceVerify, DoubleSumsAreCheckedToo) {
  const Problem p = ReduceFamily::make_problem(100'003, ReductionOp::sum, "float64");
  const HostBuffers expected = expected_for(p, generated_inputs(reduce, p, 9));
  const double want = expected.as<double>("out")[0];
  EXPECT_TRUE(reduce.compare(p, expected, device_result(want)).ok);
  EXPECT_FALSE(reduce.compare(p, expected, device_result(want - 0.125)).ok);
  EXPECT_FALSE(reduce.compare(p, expected, device_result(std::nan(""))).ok);
}

TEST(ReduceVerify, MinAndMaxAreExact) {
  for (const ReductionOp op : {ReductionOp::min, ReductionOp::max}) {
    const Problem p = ReduceFamily::make_problem(50'000, op, "float32");
    const HostBuffers inputs = generated_inputs(reduce, p, 2);
    const HostBuffers expected = expected_for(p, inputs);
    const float want = expected.as<float>("out")[0];
    EXPECT_EQ(want, op == ReductionOp::min ? -9.0f : 9.0f);
    EXPECT_TRUE(reduce.compare(p, expected, device_result(want)).ok);
    // A kernel that missed the extreme finds the runner-up, which must fail.
    const auto values = inputs.as<float>("in");
    std::vector<float> rest(values.begin(), values.end());
    rest.erase(std::find(rest.begin(), rest.end(), want));
    const float runner_up = op == ReductionOp::min ? *std::min_element(rest.begin(), rest.end())
                                                   : *std::max_element(rest.begin(), rest.end());
    const Verdict v = reduce.compare(p, expected, device_result(runner_up));
    EXPECT_FALSE(v.ok) << to_string(op);
    EXPECT_EQ(v.first_bad_index, 0);
    EXPECT_FALSE(reduce.compare(p, expected, device_result(std::nanf(""))).ok);
  }
}

TEST(ReduceSpace, ConstraintsAndDeviceLimits) {
  const auto check = [](const DeviceLimits& limits) {
    return expect_every_config(reduce, limits, [&](const ConfigView& c) {
      EXPECT_EQ(c["ept"] % c["vec"], 0);
      EXPECT_TRUE(c["finish"] == ReduceFamily::smem || 2 * c["fold"] <= c["block"] / 32);
      EXPECT_TRUE(c["pad"] == 0 || c["finish"] == ReduceFamily::smem);
      EXPECT_TRUE(c["vec"] == 4 || (c["finish"] == ReduceFamily::shuffle && c["fold"] == 1));
      EXPECT_LE(ReduceFamily::shared_bytes(c["finish"], c["block"], c["pad"], 8), limits.max_shared_per_block);
    });
  };
  const std::size_t hopper = check(DeviceLimits{});
  EXPECT_GE(hopper, 150u);
  EXPECT_LE(hopper, 400u);  // brute force over 15 default problems stays in minutes
  const std::size_t small = check(small_device());
  EXPECT_GT(small, 0u);
  EXPECT_LT(small, hopper);
  // Every pass and both block folds, at fold 1 and at the study's 8, are in the space.
  const Space space = reduce.space(DeviceLimits{});
  for (const char* key : {"block=256,ept=16,vec=4,finish=shuffle,fold=1,pad=0,pass=atomic,preset=memset",
                          "block=512,ept=64,vec=4,finish=smem,fold=8,pad=1,pass=lastblock,preset=memset",
                          "block=512,ept=16,vec=4,finish=shuffle,fold=8,pad=0,pass=twopass,preset=memset",
                          "block=128,ept=4,vec=1,finish=shuffle,fold=1,pad=0,pass=atomic,preset=memset",
                          "block=1024,ept=16,vec=4,finish=shuffle,fold=1,pad=0,pass=atomic,preset=stream"})
    EXPECT_TRUE(space.valid(space.parse(key))) << key;
  // Only the atomic pass has an output to preset.
  EXPECT_FALSE(
      space.valid(space.parse("block=512,ept=16,vec=4,finish=shuffle,fold=8,pad=0,pass=twopass,preset=stream")));
}

TEST(ReducePlan, EachPassPreparesWhatItNeeds) {
  const Space space = reduce.space(DeviceLimits{});
  const Problem min = ReduceFamily::make_problem(1'000'000, ReductionOp::min, "float32");
  const Config atomic = space.parse("block=256,ept=16,vec=4,finish=shuffle,fold=1,pad=0,pass=atomic,preset=memset");
  const auto steps = reduce.plan(min, ConfigView(space, atomic));
  ASSERT_EQ(steps.size(), 2u);
  const auto& memset = std::get<MemsetStep>(steps[0]);
  EXPECT_EQ(memset.buffer, "out");
  EXPECT_EQ(memset.word, std::bit_cast<std::uint32_t>(std::numeric_limits<float>::infinity()));
  EXPECT_EQ(memset.bytes, 4);
  EXPECT_FALSE(memset.stream_write);
  const auto& launch = std::get<KernelLaunch>(steps[1]);
  EXPECT_EQ(launch.kernel, "reduce_atomic");
  EXPECT_EQ(launch.grid.x, (1'000'000u + 4095) / 4096);
  EXPECT_EQ(launch.block.x, 256u);
  EXPECT_TRUE(reduce.scratch(min, ConfigView(space, atomic)).empty());

  const Problem sum64 = ReduceFamily::make_problem(1 << 20, ReductionOp::sum, "float64");
  const auto double_steps = reduce.plan(sum64, ConfigView(space, atomic));
  EXPECT_EQ(std::get<MemsetStep>(double_steps[0]).bytes, 8);
  EXPECT_EQ(std::get<MemsetStep>(double_steps[0]).word, 0u);
  // preset=stream: the same words, written as stream memory operations (two for a double).
  const Config streamed = space.parse("block=256,ept=16,vec=4,finish=shuffle,fold=1,pad=0,pass=atomic,preset=stream");
  const auto streamed_steps = reduce.plan(sum64, ConfigView(space, streamed));
  ASSERT_EQ(streamed_steps.size(), 2u);
  const auto& preset = std::get<MemsetStep>(streamed_steps[0]);
  EXPECT_TRUE(preset.stream_write);
  EXPECT_EQ(preset.bytes, 8);
  EXPECT_LE(preset.bytes / 4, MemsetStep::kMaxStreamWriteWords);

  const Config last = space.parse("block=512,ept=64,vec=4,finish=smem,fold=8,pad=1,pass=lastblock,preset=memset");
  const auto last_steps = reduce.plan(min, ConfigView(space, last));
  ASSERT_EQ(last_steps.size(), 1u);  // one launch: its counter resets itself
  EXPECT_EQ(std::get<KernelLaunch>(last_steps[0]).kernel, "reduce_lastblock");
  const auto scratch = reduce.scratch(min, ConfigView(space, last));
  ASSERT_EQ(scratch.size(), 2u);
  EXPECT_EQ(scratch[0].bytes, ((1'000'000 + 32767) / 32768) * 4);

  const Config two = space.parse("block=128,ept=4,vec=4,finish=shuffle,fold=1,pad=0,pass=twopass,preset=memset");
  const auto two_steps = reduce.plan(sum64, ConfigView(space, two));
  ASSERT_EQ(two_steps.size(), 2u);
  EXPECT_EQ(std::get<KernelLaunch>(two_steps[0]).kernel, "reduce_partials");
  const auto& final_launch = std::get<KernelLaunch>(two_steps[1]);
  EXPECT_EQ(final_launch.kernel, "reduce_final");
  EXPECT_EQ(final_launch.grid.x, 1u);
  EXPECT_EQ(std::get<std::int64_t>(final_launch.args[1]), (1 << 20) / 512);
}

TEST(ReduceWork, ReadsEveryValueOnce) {
  const Work w = reduce.work(ReduceFamily::make_problem(1 << 20, ReductionOp::sum, "float64"));
  EXPECT_DOUBLE_EQ(w.bytes, ((1 << 20) + 1) * 8.0);
  EXPECT_DOUBLE_EQ(w.flops, 1 << 20);
}
