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
                                      AvgmatvecFamily::make_problem(20, 36, 300)};  // pipe: 3 blocks a group, 10 chunks
  const auto rows = tune(registered_avgmatvec(), store, quick_session(problems));
  EXPECT_EQ(rows.size(), registered_avgmatvec().space(device().limits()).enumerate().size() * problems.size());
  expect_all_verified(rows);
}

TEST(GpuAvgmatvec, PlantedWrongVariantIsRejected) {
  TempDb t;
  db::Store store(t.path);
  // The split variant's matrix product gets y[3][5] 1 % too large.
  EditedFamily wrong(registered_avgmatvec(), "y[(long long)row * sets + set] = acc[i][j];",
                     "y[(long long)row * sets + set] = acc[i][j] * (row == 3 && set == 5 ? 1.01f : 1.0f);");
  const std::int64_t sets = 40;
  const auto rows = tune(wrong, store, quick_session({AvgmatvecFamily::make_problem(sets, 64, 48)}));
  const int rejected = expect_rejected_exactly(rows, {"fuse=split"}, 3 * sets + 5);
  EXPECT_GT(rejected, 50);
}

TEST(GpuAvgmatvec, PlantedWrongStreamAndPipeVariantsAreRejected) {
  // The stream and pipe variants' last block (group_finish, shared by both) adds y[3][5] 1 % too
  // large; the sets (40) span groups of 8 and 16, the components (48) one or two chunks.
  const std::int64_t sets = 40;
  for (const auto& [variant, configs] : {std::pair<std::string, int>{"fuse=stream", 72}, {"fuse=pipe", 24}}) {
    TempDb t;
    db::Store store(t.path);
    EditedFamily wrong(registered_avgmatvec(), "if (s < set_count) y[(long long)r * sets + set0 + s] = sum[s];",
                       "if (s < set_count) y[(long long)r * sets + set0 + s] = sum[s] * (r == 3 && set0 + s == 5 ? "
                       "1.01f : 1.0f);",
                       variant);
    const auto rows = tune(wrong, store, quick_session({AvgmatvecFamily::make_problem(sets, 64, 48)}));
    EXPECT_EQ(expect_rejected_exactly(rows, {variant}, 3 * sets + 5), configs) << variant;
  }
}
