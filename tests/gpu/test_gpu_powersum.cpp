// Real tuning of the powersum family on the device: every variant verified (the study's window
// and a ragged one), and a planted wrong variant rejected.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "family_checks.hpp"
#include "powersum.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {
const Family& registered_powersum() { return family_named("powersum"); }
}  // namespace

TEST(GpuPowersum, EveryConfigOfTheSpaceVerifies) {
  TempDb t;
  db::Store store(t.path);
  // 77 points and 9 exponents: no block, lane group or exponent tile divides them. Grid
  // exponents take the ladder's multiplies; random ones its explog fallback. 600 points and 80
  // exponents: the line map's window in two chunks, the second partial.
  static_assert(PowersumFamily::kLineChunk < 600 && 600 < 2 * PowersumFamily::kLineChunk);
  const std::vector<Problem> problems{PowersumFamily::make_problem(77, 9), PowersumFamily::make_problem(600, 80),
                                      PowersumFamily::make_problem(77, 9, PowersumFamily::Alphas::random)};
  const auto rows = tune(registered_powersum(), store, quick_session(problems));
  EXPECT_EQ(rows.size(), registered_powersum().space(device().limits()).enumerate().size() * problems.size());
  expect_all_verified(rows);
  // The host's account of the transpose buffer and the diag maps' logs (which the space's
  // shared-memory constraint uses) is what the compiled kernels declare.
  for (const auto& r : rows) {
    const auto config = nlohmann::json::parse(r.config_json);
    const std::string map = config["map"];
    static const std::map<std::string, PowersumFamily::Map> counted{{"tile", PowersumFamily::tile},
                                                                    {"line", PowersumFamily::line},
                                                                    {"diag", PowersumFamily::diag},
                                                                    {"diag2", PowersumFamily::diag2}};
    const auto found = counted.find(map);
    if (found == counted.end()) continue;
    // diag and diag2 zero the sums first: the kernel is the plan's last step.
    const auto launch = nlohmann::json::parse(r.launch_json).back();
    EXPECT_EQ(launch["static_shared_bytes"].get<std::int64_t>(),
              PowersumFamily::static_shared_bytes(found->second, config["block"], config["jt"]))
        << r.config;
  }
}

TEST(GpuPowersum, PlantedWrongVariantIsRejected) {
  TempDb t;
  db::Store store(t.path);
  // The tile and line maps (they share how a group's sums are written) get X-(5, 2) and X+(5, 2)
  // wrong in the 7th significant digit: far beyond the tolerance. X- is checked first.
  EditedFamily wrong(registered_powersum(), "sums[(long long)(j0 + c0 + c) * w + i] = s;",
                     "sums[(long long)(j0 + c0 + c) * w + i] = s * (i == 5 && j0 + c0 + c == 2 ? 1.000001 : 1.0);");
  const std::int64_t w = 120;
  const auto rows = tune(wrong, store, quick_session({PowersumFamily::make_problem(w, 6)}));
  const int rejected = expect_rejected_exactly(rows, {"map=tile", "map=line"}, 2 * w + 5);
  EXPECT_GT(rejected, 50);
}
