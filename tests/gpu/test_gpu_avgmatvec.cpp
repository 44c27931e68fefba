// Real tuning of the avgmatvec family on the device: every variant verified on aligned and
// unaligned shapes, and a planted wrong variant rejected.
#include <gtest/gtest.h>

#include "avgmatvec.hpp"
#include "family_checks.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {
const Family& registered_avgmatvec() { return family_named("avgmatvec"); }
}  // namespace

TEST(GpuAvgmatvec, EveryConfigOfTheSpaceVerifies) {
  TempDb t;
  db::Store store(t.path);
  const std::vector<Problem> problems{AvgmatvecFamily::make_problem(64, 100, 36),   // float4 rows of v and A
                                      AvgmatvecFamily::make_problem(33, 50, 70),    // M, L only even: float2 at most
                                      AvgmatvecFamily::make_problem(130, 257, 65),  // odd: scalar loads, partial tiles
                                      AvgmatvecFamily::make_problem(20, 36, 300)};  // 19 steps: parts of 4 and 5
  const auto rows = tune(registered_avgmatvec(), store, quick_session(problems));
  EXPECT_EQ(rows.size(), registered_avgmatvec().space(device().limits()).enumerate().size() * problems.size());
  expect_all_verified(rows);
}

TEST(GpuAvgmatvec, PlantedWrongVariantIsRejected) {
  TempDb t;
  db::Store store(t.path);
  // The split variants' matrix product (store_results, shared by all seven) gets y[3][5] 1 % too
  // large.
  EditedFamily wrong(registered_avgmatvec(), "y[(long long)row * sets + set] = acc[i][j];",
                     "y[(long long)row * sets + set] = acc[i][j] * (row == 3 && set == 5 ? 1.01f : 1.0f);");
  const std::int64_t sets = 40;
  const auto rows = tune(wrong, store, quick_session({AvgmatvecFamily::make_problem(sets, 64, 48)}));
  const int rejected = expect_rejected_exactly(rows, {"fuse=split"}, 3 * sets + 5);
  EXPECT_GT(rejected, 300);  // 4 x 96 on an H100 or H200
}

TEST(GpuAvgmatvec, PlantedWrongPartSumIsRejected) {
  // The last block of a tile adds part 1 of y[3][5] 1 % too large (a thread's j = 1 in the
  // register-staged forms, whose sets run tx * 4 + j; j = 0 in the cp forms, tx + 16 j). The depth (48) is 3 steps of
  // 16: parts [0, 1), [1, 3) of split64k2; [0, 0), [0, 1), [1, 2), [2, 3) of split64k4 (an
  // empty part 0). The cp forms' steps are 32 deep: 2 steps, parts [0, 1), [1, 2) of
  // split64k2cp; [0, 0), [0, 1), [1, 1), [1, 2) of split64k4cp, and of split64k4tc (whose thread
  // holds set 5 as its j = 1). A narrowed space each (12 configs; 24 for the cp and tc forms on
  // sm_90, launched plainly and programmatically): the sum does not depend on the averages' axes.
  const std::int64_t sets = 40;
  for (const std::string variant :
       {"fuse=split64k2,reduce=warp,block=128", "fuse=split64k4,reduce=shared,block=1024",
        "fuse=split64k2cp,reduce=warp,block=256", "fuse=split64k4cp,reduce=shared,block=512",
        "fuse=split64k4tc,reduce=warp,block=256"}) {
    TempDb t;
    db::Store store(t.path);
    EditedFamily wrong(
        registered_avgmatvec(), "sum[i][0] += w.x, sum[i][1] += w.y,",
        "sum[i][0] += w.x * (z == 1 && row0 + result_row(ty, i) == 3 && set0 + result_set(tx, 0) == 5 ? 1.01f : 1.0f), "
        "sum[i][1] += w.y * (z == 1 && row0 + result_row(ty, i) == 3 && set0 + result_set(tx, 1) == 5 ? 1.01f : 1.0f),",
        variant);
    const auto rows = tune(wrong, store, quick_session({AvgmatvecFamily::make_problem(sets, 64, 48)}));
    const bool programmatic_too =
        (variant.find("cp,") != std::string::npos || variant.find("tc,") != std::string::npos) &&
        device().limits().cc_major >= 9;
    EXPECT_EQ(expect_rejected_exactly(rows, {variant}, 3 * sets + 5), programmatic_too ? 24 : 12) << variant;
  }
}
