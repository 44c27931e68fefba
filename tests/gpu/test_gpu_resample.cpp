// Real tuning of the resample family on the device: every variant verified on awkward series
// (lengths no vector divides, partial last windows, staging that fits and that does not), and a
// planted wrong variant rejected at the first partial window.
#include <gtest/gtest.h>

#include "family_checks.hpp"
#include "resample.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {
const Family& registered_resample() { return family_named("resample"); }
}  // namespace

TEST(GpuResample, EveryConfigVerifiesOnAwkwardSeries) {
  const std::vector<Problem> problems{
      ResampleFamily::make_problem(5, 1001, 7, ReductionOp::mean),    // odd lengths: every series starts unaligned
      ResampleFamily::make_problem(3, 999, 60, ReductionOp::max),     // staging fits for small blocks only
      ResampleFamily::make_problem(2, 9000, 3600, ReductionOp::sum),  // never staged; 2 full + 1 partial window each
      ResampleFamily::make_problem(40, 1003, 6, ReductionOp::min)};
  expect_whole_space_verified(registered_resample(), problems);
}

TEST(GpuResample, PlantedWrongVariantIsRejectedAtThePartialWindow) {
  TempDb t;
  db::Store store(t.path);
  // Every window counted as a full one: the last window of a series reads into the next series
  // and a mean divides by k. Only partial windows change, so the first bad one is series 0's last.
  EditedFamily wrong(registered_resample(), "result.count = (int)(left < window ? left : window);",
                     "result.count = window;");
  const Problem problem =
      ResampleFamily::make_problem(6, 1000, 7, ReductionOp::mean);  // 143 windows, the last of 6 points
  const auto rows = tune(wrong, store, quick_session({problem}));
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_EQ(r.status, "wrong_result") << r.config;
    ASSERT_TRUE(r.error_index) << r.config << ": " << r.error;
    EXPECT_EQ(*r.error_index, 142) << r.config << ": " << r.error;
  }
}
