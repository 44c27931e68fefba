// Real tuning of the copy family on the device: every variant verified on the three probes at
// sizes no tile divides, and a planted wrong variant rejected at the element it left behind.
#include <gtest/gtest.h>

#include "copy.hpp"
#include "family_checks.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {
const Family& registered_copy() { return family_named("copy"); }
}  // namespace

TEST(GpuCopy, EveryConfigVerifiesOnEveryProbe) {
  const std::vector<Problem> problems{CopyFamily::make_problem(100'003),        // vector path, partial last tile
                                      CopyFamily::make_problem(100'003, 1, 1),  // misaligned: element by element
                                      CopyFamily::make_problem(50'001, 3, 3),
                                      CopyFamily::make_problem(65'536, 4, 1)};  // offset by a whole vector: aligned
  expect_whole_space_verified(registered_copy(), problems);
}

TEST(GpuCopy, PlantedWrongVariantIsRejected) {
  TempDb t;
  db::Store store(t.path);
  // Block 1 drops the store of its threads' last vector, leaving poison in the output: the first
  // element left behind is thread 0's, at tile + (LOADS - 1) * BLOCK * VEC.
  EditedFamily wrong(registered_copy(), "for (int j = 0; j < LOADS; ++j) dst[j * BLOCK] = v[j];",
                     "for (int j = 0; j < LOADS; ++j) if (blockIdx.x != 1 || j != LOADS - 1) dst[j * BLOCK] = v[j];");
  const auto rows = tune(wrong, store, quick_session({CopyFamily::make_problem(1 << 20)}));
  const Space space = wrong.space(device().limits());
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_EQ(r.status, "wrong_result") << r.config;
    ASSERT_TRUE(r.error_index) << r.config << ": " << r.error;
    const Config config = space.parse(r.config);
    const ConfigView c(space, config);
    const std::int64_t tile = c["block"] * c["ept"];
    EXPECT_EQ(*r.error_index, tile + (c["ept"] / c["vec"] - 1) * c["block"] * c["vec"]) << r.config << ": " << r.error;
  }
}
