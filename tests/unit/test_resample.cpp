// The resample family without a GPU: problems, reference (partial last windows included),
// verification, space, plan, and the staging arithmetic the template relies on.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "family_test_support.hpp"
#include "resample.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {

const ResampleFamily resample;

HostBuffers with_inputs(const std::vector<float>& values) {
  HostBuffers inputs;
  inputs.at("in").resize(values.size() * sizeof(float));
  std::copy(values.begin(), values.end(), inputs.as<float>("in").begin());
  return inputs;
}

std::vector<float> outputs(const HostBuffers& buffers) {
  const auto out = buffers.as<float>("out");
  return {out.begin(), out.end()};
}

}  // namespace

TEST(ResampleProblems, WindowsAndOperatorsOverADayOfPoints) {
  const auto list = resample.problems({});
  ASSERT_EQ(list.size(), 16u);  // k = 6, 60, 3600, 7, each with sum, mean, min and max
  EXPECT_EQ(list.front().key(), "series=384,points=86400,window=6,op=sum,type=float32");
  EXPECT_EQ(list.back().key(), "series=384,points=86400,window=7,op=max,type=float32");
  EXPECT_EQ(list.front().size(), 384 * 86400);
  const auto small = resample.problems({std::nullopt, {10'000}});
  EXPECT_EQ(small.front().key(), "series=1,points=10000,window=6,op=sum,type=float32");
  const auto odd = resample.problems({std::nullopt, {200'000}});
  EXPECT_EQ(odd.front().key(), "series=3,points=86400,window=6,op=sum,type=float32");
  EXPECT_THROW(resample.problems({"float64", {}}), UsageError);
  EXPECT_THROW(ResampleFamily::make_problem(1, 100, 0, ReductionOp::sum), UsageError);
  EXPECT_THROW(ResampleFamily::make_problem(1 << 20, 1 << 12, 1, ReductionOp::sum), UsageError);  // 2^32 windows
  // A mean shares the sum's binary; min and max have their own.
  const auto definitions = [](ReductionOp op) {
    return resample.problem_definitions(ResampleFamily::make_problem(2, 60, 6, op)).at(1);
  };
  EXPECT_EQ(definitions(ReductionOp::sum), "-DCUTUNE_OP=0");
  EXPECT_EQ(definitions(ReductionOp::mean), "-DCUTUNE_OP=0");
  EXPECT_EQ(definitions(ReductionOp::min), "-DCUTUNE_OP=1");
  EXPECT_EQ(definitions(ReductionOp::max), "-DCUTUNE_OP=2");
}

TEST(ResampleReference, HandComputedWithAPartialLastWindow) {
  // Two series of 7 points, windows of 3: the third window of each series has one point.
  const HostBuffers inputs = with_inputs({1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16});
  const auto run = [&](ReductionOp op) {
    return outputs(resample.reference(ResampleFamily::make_problem(2, 7, 3, op), inputs));
  };
  EXPECT_EQ(run(ReductionOp::sum), (std::vector<float>{6, 15, 7, 33, 42, 16}));
  EXPECT_EQ(run(ReductionOp::mean), (std::vector<float>{2, 5, 7, 11, 14, 16}));
  EXPECT_EQ(run(ReductionOp::min), (std::vector<float>{1, 4, 7, 10, 13, 16}));
  EXPECT_EQ(run(ReductionOp::max), (std::vector<float>{3, 6, 7, 12, 15, 16}));
  // A window longer than the series: one partial window each.
  EXPECT_EQ(outputs(resample.reference(ResampleFamily::make_problem(2, 7, 100, ReductionOp::mean), inputs)),
            (std::vector<float>{4, 13}));
}

TEST(ResampleReference, LastWindowOfADayWithSevenPointWindows) {
  const Problem p = ResampleFamily::make_problem(2, 86'400, 7, ReductionOp::mean);
  const HostBuffers inputs = generated_inputs(resample, p, 4);
  const auto in = inputs.as<float>("in");
  const HostBuffers expected = resample.reference(p, inputs);
  const auto out = expected.as<float>("out");
  ASSERT_EQ(out.size(), 2u * 12'343);
  for (const std::size_t series : {0u, 1u}) {
    // 86 400 = 12 342 * 7 + 6: the last window averages 6 points.
    const float* last = in.data() + series * 86'400 + 12'342 * 7;
    const double mean = std::accumulate(last, last + 6, 0.0) / 6;
    EXPECT_EQ(out[series * 12'343 + 12'342], static_cast<float>(mean));
  }
}

TEST(ResampleInputs, NonZeroDeterministicAndSuitedToTheOperator) {
  const Problem mean = ResampleFamily::make_problem(3, 1000, 6, ReductionOp::mean);
  const HostBuffers a = generated_inputs(resample, mean, 8), b = generated_inputs(resample, mean, 8),
                    c = generated_inputs(resample, mean, 9);
  EXPECT_EQ(a.all(), b.all());
  EXPECT_NE(a.all(), c.all());
  for (const float v : a.as<float>("in")) {
    ASSERT_NE(v, 0.0f);
    ASSERT_EQ(v * 8, std::round(v * 8));  // eighths: window sums are exact in any order
  }
  const HostBuffers max_inputs =
      generated_inputs(resample, ResampleFamily::make_problem(3, 1000, 6, ReductionOp::max), 8);
  const auto extremes = max_inputs.as<float>("in");
  EXPECT_EQ(std::count(extremes.begin(), extremes.end(), 0.0f), 0);
  EXPECT_GT(std::count_if(extremes.begin(), extremes.end(), [](float v) { return v * 8 != std::round(v * 8); }), 2900);
}

TEST(ResampleVerify, FirstMismatchNaNAndTheMeansRounding) {
  const Problem p = ResampleFamily::make_problem(4, 86'400, 7, ReductionOp::mean);
  const HostBuffers expected = resample.reference(p, generated_inputs(resample, p, 1));
  EXPECT_TRUE(resample.compare(p, expected, expected).ok);

  HostBuffers rounded = expected;  // one ulp off wherever a division rounds (a zero sum divides exactly)
  for (float& v : rounded.as<float>("out"))
    if (v != 0) v = std::nextafter(v, std::numeric_limits<float>::infinity());
  EXPECT_TRUE(resample.compare(p, expected, rounded).ok);

  HostBuffers wrong = expected;
  const std::int64_t partial = 2 * 12'343 + 12'342;  // series 2's last, partial window
  wrong.as<float>("out")[partial] *= 7.0f / 6.0f;    // as if it had been divided by k, not by 6
  wrong.as<float>("out")[partial + 5] += 1;
  const Verdict v = resample.compare(p, expected, wrong);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, partial);
  EXPECT_NE(v.message.find("out[" + std::to_string(partial) + "]"), std::string::npos) << v.message;

  HostBuffers nan = expected;
  nan.as<float>("out")[17] = std::nanf("");
  EXPECT_EQ(resample.compare(p, expected, nan).first_bad_index, 17);
}

TEST(ResampleSpace, ConstraintsAndDeviceLimits) {
  const auto check = [](const DeviceLimits& limits) {
    return expect_every_config(resample, limits, [&](const ConfigView& c) {
      EXPECT_TRUE(c["wpt"] == 1 || c["map"] == ResampleFamily::thread);
      EXPECT_TRUE(c["stage"] == 0 || c["map"] == ResampleFamily::thread);
      EXPECT_TRUE(c["pad"] == 0 || c["stage"] == 1);
      EXPECT_TRUE(c["stage"] == 0 || ResampleFamily::kStageCapBytes <= limits.max_shared_per_block);
    });
  };
  const std::size_t hopper = check(DeviceLimits{});
  EXPECT_GE(hopper, 60u);
  EXPECT_LE(hopper, 150u);
  const DeviceLimits small = small_device();  // 16 KiB per block: no staging
  const std::size_t fewer = check(small);
  EXPECT_GT(fewer, 0u);
  EXPECT_LT(fewer, hopper);
}

TEST(ResamplePlan, GridPerMapAndStagingWhereItFits) {
  const Space space = resample.space(DeviceLimits{});
  const auto launch = [&](const Problem& p, const std::string& key) {
    const Config config = space.parse(key);
    const auto steps = resample.plan(p, ConfigView(space, config));
    EXPECT_EQ(steps.size(), 1u);
    return std::get<KernelLaunch>(steps.at(0));
  };
  const Problem k6 = ResampleFamily::make_problem(384, 86'400, 6, ReductionOp::mean);
  const std::int64_t windows = 384 * 14'400;
  const KernelLaunch staged = launch(k6, "map=thread,block=256,wpt=4,stage=1,vec=4,pad=1");
  EXPECT_EQ(staged.grid.x, static_cast<unsigned>((windows + 1023) / 1024));
  EXPECT_EQ(staged.dynamic_shared_bytes, ResampleFamily::stage_bytes(256, 4, 6, 4, 1));
  EXPECT_EQ(std::get<std::int32_t>(staged.args[5]), 1);  // divide: a mean
  EXPECT_EQ(std::get<std::int32_t>(staged.args[6]), 1);  // staged

  const Problem k3600 = ResampleFamily::make_problem(384, 86'400, 3600, ReductionOp::max);
  const KernelLaunch too_big = launch(k3600, "map=thread,block=256,wpt=4,stage=1,vec=4,pad=1");
  EXPECT_EQ(too_big.dynamic_shared_bytes, 0u);
  EXPECT_EQ(std::get<std::int32_t>(too_big.args[5]), 0);
  EXPECT_EQ(std::get<std::int32_t>(too_big.args[6]), 0);

  EXPECT_EQ(launch(k3600, "map=warp,block=512,wpt=1,stage=0,vec=4,pad=0").grid.x, (384u * 24 + 15) / 16);
  EXPECT_EQ(launch(k3600, "map=block,block=128,wpt=1,stage=0,vec=2,pad=0").grid.x, 384u * 24);
}

// The template stages, for each block, the vectors from its first window's start (rounded down
// to a vector) to its last window's end, at padded indices. Replays that for awkward geometries
// and checks the plan's allocation holds the highest index it touches.
TEST(ResamplePlan, StagingAllocationHoldsEveryBlocksRange) {
  for (const auto& [series, points, window] : {std::tuple{3, 86'400, 6}, {5, 1001, 7}, {7, 999, 60}, {2, 50'001, 61}}) {
    const std::int64_t per_series = (points + window - 1) / window, windows = series * per_series;
    const std::int64_t total = series * points;
    for (const std::int64_t block : {128, 512})
      for (const std::int64_t wpt : {1, 4})
        for (const std::int64_t vec : {1, 2, 4})
          for (const std::int64_t pad : {0, 1}) {
            const std::int64_t capacity = ResampleFamily::stage_bytes(block, wpt, window, vec, pad) / 4;
            std::int64_t highest = 0;
            for (std::int64_t first = 0; first < windows; first += block * wpt) {
              const std::int64_t last = std::min(first + block * wpt, windows) - 1;
              const auto start = [&](std::int64_t g) { return (g / per_series) * points + (g % per_series) * window; };
              const std::int64_t lo = start(first) / vec * vec;
              const std::int64_t hi = std::min(start(last) + window, (last / per_series + 1) * points);
              ASSERT_LE(hi, total);
              const std::int64_t top = ((hi - lo + vec - 1) / vec) * vec - 1;
              highest = std::max(highest, pad ? top + top / 32 : top);
            }
            EXPECT_LT(highest, capacity) << series << "x" << points << " k=" << window << " block=" << block
                                         << " wpt=" << wpt << " vec=" << vec << " pad=" << pad;
          }
  }
}

TEST(ResampleWork, ReadsEveryPointAndWritesEveryWindow) {
  const Work w = resample.work(ResampleFamily::make_problem(384, 86'400, 6, ReductionOp::sum));
  EXPECT_DOUBLE_EQ(w.bytes, (384.0 * 86'400 + 384.0 * 14'400) * 4);
}
