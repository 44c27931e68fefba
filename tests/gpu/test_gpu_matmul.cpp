// Real tuning of the matmul family on the device: every variant verified on sizes that are and
// are not multiples of the tiles (and of 4, the vector width), and a planted wrong variant rejected.
#include <gtest/gtest.h>

#include "family_checks.hpp"
#include "matmul.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {
const Family& registered_matmul() { return family_named("matmul"); }
}  // namespace

TEST(GpuMatmul, EveryConfigOfTheSpaceVerifies) {
  TempDb t;
  db::Store store(t.path);
  const std::vector<Problem> problems{
      MatmulFamily::make_problem(256, 128, 512),    // whole tiles, vector loads
      MatmulFamily::make_problem(333, 200, 150),    // partial tiles, k % 4 != 0: scalar loads
      MatmulFamily::make_problem(300, 260, 1100)};  // partial tiles, vector loads
  const auto rows = tune(registered_matmul(), store, quick_session(problems));
  EXPECT_EQ(rows.size(), registered_matmul().space(device().limits()).enumerate().size() * problems.size());
  expect_all_verified(rows);
}

TEST(GpuMatmul, PlantedWrongVariantIsRejected) {
  TempDb t;
  db::Store store(t.path);
  // Register-tiled variants double C[0][0] (stored by thread 0 of block 0 through the float4 path).
  EditedFamily wrong(registered_matmul(), "make_float4(acc[r][g * 4 + 0],",
                     "make_float4(acc[r][g * 4 + 0] * (row == 0 && col == 0 ? 2.0f : 1.0f),");
  const auto rows = tune(wrong, store, quick_session({MatmulFamily::make_problem(192, 128, 64)}));
  const int rejected = expect_rejected_exactly(rows, {"algo=regtile"}, 0);
  EXPECT_GT(rejected, 10);
}
