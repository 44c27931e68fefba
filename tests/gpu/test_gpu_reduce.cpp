// Real tuning of the reduce family on the device: every variant verified on awkward sizes, the
// extreme found wherever it is, and a planted wrong variant rejected.
#include <gtest/gtest.h>

#include "evaluate.hpp"
#include "family_checks.hpp"
#include "reduce.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {
const Family& registered_reduce() { return family_named("reduce"); }
}  // namespace

TEST(GpuReduce, EveryConfigVerifiesForEveryOperatorAndType) {
  // Sizes no tile divides (the last block takes the element-by-element path), one smaller than
  // any tile, and float64 sums through double atomics.
  const std::vector<Problem> problems{ReduceFamily::make_problem(100'003, ReductionOp::sum, "float32"),
                                      ReduceFamily::make_problem(77'777, ReductionOp::min, "float32"),
                                      ReduceFamily::make_problem(65'539, ReductionOp::max, "float32"),
                                      ReduceFamily::make_problem(1'000, ReductionOp::sum, "float32"),
                                      ReduceFamily::make_problem(300'001, ReductionOp::sum, "float64")};
  expect_whole_space_verified(registered_reduce(), problems);
}

TEST(GpuReduce, TheExtremeIsFoundWhereverItIs) {
  const Family& reduce = registered_reduce();
  const Space space = reduce.space(device().limits());
  const std::int64_t n = 200'003;
  CompileCache cache(CompileCache::default_folder());
  GpuEvaluator evaluator(device(), reduce, quick_measure());
  for (const ReductionOp op : {ReductionOp::min, ReductionOp::max}) {
    const Problem problem = ReduceFamily::make_problem(n, op, "float32");
    // First, last, at tile and vector boundaries, inside the partial last tile.
    for (const std::int64_t at : {std::int64_t{0}, n - 1, std::int64_t{4095}, std::int64_t{4096}, std::int64_t{32768},
                                  n - 3, std::int64_t{131'071}}) {
      HostBuffers inputs;
      inputs.at("in").resize(static_cast<std::size_t>(n) * 4);
      fill_for(op, inputs.as<float>("in"), 17);
      inputs.as<float>("in")[at] = op == ReductionOp::min ? -100.0f : 100.0f;
      evaluator.set_problem(problem, inputs);
      for (const char* key : {"block=256,ept=16,vec=4,finish=shuffle,fold=1,pad=0,pass=atomic,preset=memset",
                              "block=512,ept=64,vec=4,finish=smem,fold=8,pad=1,pass=lastblock,preset=memset",
                              "block=128,ept=4,vec=2,finish=shuffle,fold=1,pad=0,pass=twopass,preset=memset",
                              "block=512,ept=16,vec=4,finish=shuffle,fold=8,pad=0,pass=lastblock,preset=memset",
                              "block=1024,ept=16,vec=4,finish=shuffle,fold=1,pad=0,pass=atomic,preset=stream"}) {
        const Config config = space.parse(key);
        const Compiled compiled = cache.compile_one(
            compile_request(reduce, reduce.source(), space, config, problem, device().limits().arch()));
        const Outcome outcome = evaluator.evaluate(space, config, compiled);
        EXPECT_EQ(outcome.status, Status::ok) << key << ", " << to_string(op) << " at " << at << ": " << outcome.error;
      }
    }
  }
}

TEST(GpuReduce, PlantedWrongVariantIsRejected) {
  TempDb t;
  db::Store store(t.path);
  // The shuffle fold skips its last level within each warp: odd lanes' values are lost, in the
  // shuffle configs only.
  EditedFamily wrong(
      registered_reduce(),
      "  for (int s = 16; s > 0; s >>= 1) value = combine(value, __shfl_down_sync(FULL_MASK, value, s));\n"
      "  if (lane == 0) sh.warp_totals[warp] = value;",
      "  for (int s = 16; s > 1; s >>= 1) value = combine(value, __shfl_down_sync(FULL_MASK, value, s));\n"
      "  if (lane == 0) sh.warp_totals[warp] = value;");
  const auto rows =
      tune(wrong, store, quick_session({ReduceFamily::make_problem(100'003, ReductionOp::sum, "float32")}));
  int rejected = 0, accepted = 0;
  for (const auto& r : rows) {
    if (r.config.find("finish=shuffle") != std::string::npos) {
      EXPECT_EQ(r.status, "wrong_result") << r.config;
      ASSERT_TRUE(r.error_index) << r.config;
      EXPECT_EQ(*r.error_index, 0) << r.config << ": " << r.error;  // the one output
      EXPECT_NE(r.error.find("out[0]"), std::string::npos) << r.error;
      EXPECT_FALSE(r.time_ms_median);
      ++rejected;
    } else {
      EXPECT_EQ(r.status, "ok") << r.config << ": " << r.error;
      ++accepted;
    }
  }
  EXPECT_GT(rejected, 50);
  EXPECT_GT(accepted, 50);
  const auto best = store.best("reduce");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config.find("finish=shuffle"), std::string::npos) << best[0].config;
}
