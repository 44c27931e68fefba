// Real tuning of the matmul family on the device: every variant verified on sizes that are and
// are not multiples of the tiles (and of 4, the vector width), and planted wrong variants rejected.
#include <gtest/gtest.h>

#include "family_checks.hpp"
#include "matmul.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {
const Family& registered_matmul() { return family_named("matmul"); }

// Every config of an edited family's subset is rejected at 192 x 128 x 64 (and there are some).
void expect_every_config_rejected(const EditedFamily& wrong) {
  TempDb t;
  db::Store store(t.path);
  const auto rows = tune(wrong, store, quick_session({MatmulFamily::make_problem(192, 128, 64)}));
  ASSERT_GT(rows.size(), 20u);
  for (const auto& r : rows) EXPECT_EQ(r.status, "wrong_result") << r.config;
}

// Every config whose key holds `only` verifies on problems its tiles overhang in every direction:
// smaller than one tile (k shorter than the pipeline, so split k leaves whole splits empty), k not
// a multiple of 4 (the scalar kernel's 4-byte copies), and more block rows than a raster group (a
// second, partial group).
void expect_verified_on_ragged_problems(const std::string& only, std::size_t at_least) {
  TempDb t;
  db::Store store(t.path);
  const EditedFamily subset(registered_matmul(), "", "", only);
  const std::vector<Problem> problems{MatmulFamily::make_problem(70, 36, 20), MatmulFamily::make_problem(129, 257, 33),
                                      MatmulFamily::make_problem(1100, 300, 40)};
  const auto rows = tune(subset, store, quick_session(problems));
  EXPECT_EQ(rows.size(), subset.space(device().limits()).enumerate().size() * problems.size());
  EXPECT_GT(rows.size(), at_least);
  expect_all_verified(rows);
}
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

TEST(GpuMatmul, WarptileVerifiesOnRaggedProblems) { expect_verified_on_ragged_problems("algo=warptile", 100); }

TEST(GpuMatmul, PlantedWrongWarptileIsRejected) {
  TempDb t;
  db::Store store(t.path);
  // Every warptile variant doubles C[0][0] (thread 0 of block 0, its first row and run of columns).
  const EditedFamily wrong(registered_matmul(), "make_float4(acc[i][g * 4],",
                           "make_float4(acc[i][g * 4] * (row == 0 && col == 0 ? 2.0f : 1.0f),", "algo=warptile");
  const auto rows = tune(wrong, store, quick_session({MatmulFamily::make_problem(192, 128, 64)}));
  EXPECT_EQ(expect_rejected_exactly(rows, {"algo=warptile"}, 0), static_cast<int>(rows.size()));
  EXPECT_GT(rows.size(), 100u);
}

// tf32x3 (warptile's pipeline, products on the tensor cores) on the same problems: partial mma
// tiles at every edge, k not a multiple of the k8 steps.
TEST(GpuMatmul, Tf32x3VerifiesOnRaggedProblems) { expect_verified_on_ragged_problems("algo=tf32x3", 60); }

TEST(GpuMatmul, PlantedWrongTf32x3IsRejected) {
  TempDb t;
  db::Store store(t.path);
  // Every tf32x3 variant doubles C[0][0] (lane 0 of warp 0: its first row, column slot and fragment).
  const EditedFamily wrong(registered_matmul(), "make_float4(FRAG(acc, mt, 4 * q, 2 * h + c),",
                           "make_float4(FRAG(acc, mt, 4 * q, 2 * h + c) * (row == 0 && col == 0 ? 2.0f : 1.0f),",
                           "algo=tf32x3");
  const auto rows = tune(wrong, store, quick_session({MatmulFamily::make_problem(192, 128, 64)}));
  EXPECT_EQ(expect_rejected_exactly(rows, {"algo=tf32x3"}, 0), static_cast<int>(rows.size()));
  EXPECT_GT(rows.size(), 20u);
}

// tf32x3 left to add every product into the running sums on the tensor cores (its first form),
// whose fp32 additions truncate: inside gamma_k at k = 4096, but the sums drift, and verification
// says so. Stream-K configs are left out: at 256 x 128 their blocks share each tile's k-steps, and
// each block's few steps drift too little to tell.
TEST(GpuMatmul, Tf32x3SumsLeftToTheTensorCoresDriftAndAreRejected) {
  TempDb t;
  db::Store store(t.path);
  const EditedFamily first_form(registered_matmul(), "  clear_tile(part);",
                                "  for (int i = 0; i < RT; ++i)\n"
                                "    for (int j = 0; j < RT; ++j) part[i][j] = acc[i][j], acc[i][j] = 0.0f;",
                                "algo=tf32x3");
  const auto rows = tune(first_form, store, quick_session({MatmulFamily::make_problem(256, 128, 4096)}));
  int drifting = 0;
  for (const auto& r : rows) {
    if (r.config.find("streamk=0") == std::string::npos) continue;
    EXPECT_EQ(r.status, "wrong_result") << r.config;
    EXPECT_NE(r.error.find("drift"), std::string::npos) << r.config << ": " << r.error;
    ++drifting;
  }
  EXPECT_GE(drifting, 10);
}

// The fragments' k order must be the same for A and B: pairing A's k = 2t with B's k = 2t + 1 (and
// the other way round) computes a different sum in every tf32x3 variant.
TEST(GpuMatmul, Tf32x3PairsTheSameKInAAndB) {
  expect_every_config_rejected(
      EditedFamily(registered_matmul(), "b + (k + j) * B_STRIDE", "b + (k + 1 - j) * B_STRIDE", "algo=tf32x3"));
}

// The swizzle must be undone where A's tile is read: reading the row-major tile as if unswizzled
// takes the wrong k-steps of every row the swizzle moves, in every swizzled variant.
TEST(GpuMatmul, WarptileSwizzleIsUndoneOnRead) {
  expect_every_config_rejected(EditedFamily(registered_matmul(), "a + r * A_STRIDE + a_chunk(r, kc) * 4",
                                            "a + r * A_STRIDE + kc * 4", "swizzle=1"));
}

// Stream-K's shared tiles: the last block to arrive must add every block's part. Dropping the
// first part is wrong in every stream-K config: at 192 x 128 x 64 (2 tiles, 2 to 8 k-steps each)
// the launch asks for a block per k-step, so every tile is shared.
TEST(GpuMatmul, StreamKAddsEveryPartOfASharedTile) {
  expect_every_config_rejected(EditedFamily(registered_matmul(), "for (int b = first_block; b <= last_block; ++b) {",
                                            "for (int b = first_block + 1; b <= last_block; ++b) {", "streamk=1"));
}
