// The powersum family on the CPU: reference sums, inputs, tolerance and verification, space.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "family_test_support.hpp"
#include "powersum.hpp"
#include "straight_math.cuh"
#include "templates.hpp"

using namespace cutune;
using namespace cutune::testing;

TEST(PowerSums, MatchHandComputedSums) {
  const std::vector<double> x{1, 2, 4}, alpha{1, 2};
  std::vector<double> minus(6), plus(6);
  power_sums(x, alpha, minus, plus);
  // Row j = 0 (alpha 1): minus(i) = sum over k <= i of |x_k - x_i|, plus(i) = sum over k > i.
  EXPECT_EQ(minus, (std::vector<double>{0, 1, 5, 0, 1, 13}));
  EXPECT_EQ(plus, (std::vector<double>{4, 2, 0, 10, 4, 0}));
}

TEST(PowerSums, ZeroDifferencesContributeNothing) {
  const std::vector<double> x{3, 3, 3}, alpha{2.5};
  std::vector<double> minus(3), plus(3);
  power_sums(x, alpha, minus, plus);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(minus[i], 0.0);
    EXPECT_EQ(plus[i], 0.0);
  }
}

TEST(PowersumInputs, SortedNonZeroDeterministic) {
  PowersumFamily family;
  const Problem p = PowersumFamily::make_problem(500);
  const HostBuffers a = generated_inputs(family, p, 1), b = generated_inputs(family, p, 1),
                    c = generated_inputs(family, p, 2);
  EXPECT_EQ(a.all(), b.all());
  EXPECT_NE(a.all(), c.all());
  const auto x = a.as<double>("x");
  const auto alpha = a.as<double>("alpha");
  ASSERT_EQ(x.size(), 500u);
  ASSERT_EQ(alpha.size(), 80u);
  EXPECT_TRUE(std::is_sorted(x.begin(), x.end()));
  EXPECT_GE(x.front(), 1.0);
  EXPECT_LE(x.back(), 1e4 * (1 + 1e-12));
  for (double v : alpha) {
    EXPECT_GE(v, 1.5);
    EXPECT_LE(v, 3.5);
  }
  // The default exponents are an MLE scan's evenly spaced grid over [1.5, 3.5] ...
  EXPECT_DOUBLE_EQ(alpha.front(), 1.5);
  EXPECT_DOUBLE_EQ(alpha.back(), 3.5);
  for (std::size_t j = 1; j < alpha.size(); ++j) EXPECT_NEAR(alpha[j] - alpha[j - 1], 2.0 / 79, 1e-15);
  // ... and the random ones are sorted draws that are not.
  const Problem r = PowersumFamily::make_problem(500, 80, PowersumFamily::Alphas::random);
  const HostBuffers random_inputs = generated_inputs(family, r, 1);
  const auto random_alpha = random_inputs.as<double>("alpha");
  EXPECT_TRUE(std::is_sorted(random_alpha.begin(), random_alpha.end()));
  EXPECT_GT(std::fabs((random_alpha[2] - random_alpha[1]) - (random_alpha[1] - random_alpha[0])), 1e-6);
}

TEST(PowersumVerify, AcceptsTheReferenceAndFindsTheFirstMismatch) {
  PowersumFamily family;
  const Problem p = PowersumFamily::make_problem(300, 7);
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 3));
  EXPECT_TRUE(family.compare(p, expected, expected).ok);

  // Different summation orders move the last bits: well within the tolerance.
  HostBuffers reordered = expected;
  for (double& v : reordered.as<double>("sums").first(300 * 7)) v *= 1 + 4e-16;  // the minus sums
  EXPECT_TRUE(family.compare(p, expected, reordered).ok);

  HostBuffers wrong = expected;
  // sums holds the 300 x 7 minus sums and then the plus sums.
  wrong.as<double>("sums")[2100 + 1234] *= 1 + 1e-11;  // a wrong term in a sum of ~300 is far larger
  wrong.as<double>("sums")[2100 + 1900] *= 2;
  const Verdict v = family.compare(p, expected, wrong);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 2100 + 1234);
  EXPECT_NE(v.message.find("plus[1234]"), std::string::npos) << v.message;
}

TEST(PowersumVerify, NaNAndUnwrittenNeverPass) {
  PowersumFamily family;
  const Problem p = PowersumFamily::make_problem(64, 3);
  const HostBuffers expected = family.reference(p, generated_inputs(family, p, 4));
  HostBuffers nan = expected;
  nan.as<double>("sums")[70] = std::nan("");  // minus[70]
  EXPECT_EQ(family.compare(p, expected, nan).first_bad_index, 70);
  // The last point's plus sum is empty (exactly 0); a poisoned, unwritten one must not pass.
  HostBuffers poisoned = expected;
  // plus[63] follows the 64 x 3 minus sums.
  std::memset(&poisoned.as<double>("sums")[192 + 63], 0xA5, 8);
  EXPECT_EQ(expected.as<double>("sums")[192 + 63], 0.0);
  const Verdict unwritten = family.compare(p, expected, poisoned);
  EXPECT_EQ(unwritten.first_bad_index, 192 + 63);
  EXPECT_NE(unwritten.message.find("plus[63]"), std::string::npos) << unwritten.message;
}

TEST(PowersumVerify, ToleranceIsAboutAThousandUnitsOfRoundoff) {
  const auto t = PowersumFamily::tolerance(500);
  EXPECT_GT(t.rtol, 500 * 0x1p-53);
  EXPECT_LT(t.rtol, 1100 * 0x1p-53);
  EXPECT_LT(t.atol, 1e-12);
}

TEST(PowersumSpace, RespectsItsConstraintsAndDeviceLimits) {
  PowersumFamily family;
  for_each_config_on_both_devices(family, [](const DeviceLimits& limits, const ConfigView& c) {
    EXPECT_LE(c["block"], limits.max_threads_per_block);
    EXPECT_LE(2 * c["fold"], c["block"]);
    EXPECT_LE(PowersumFamily::static_shared_bytes(c["map"], c["block"], c["jt"]) +
                  PowersumFamily::dynamic_shared_bytes(c["map"], c["block"], c["stage"], PowersumFamily::kMaxWindow),
              limits.max_shared_per_block_optin);
    EXPECT_LE(PowersumFamily::static_shared_bytes(c["map"], c["block"], c["jt"]), 48 * 1024);  // static: no opt-in
    if (c["map"] < PowersumFamily::tile) {
      EXPECT_EQ(c["ksplit"] * c["jt"], 1);
    }
    if (c["map"] == PowersumFamily::sym || c["map"] >= PowersumFamily::diag) {
      EXPECT_EQ(c["ksplit"], 1);
      EXPECT_EQ(c["stage"], 0);
    }
    if (c["map"] >= PowersumFamily::diag) {
      EXPECT_TRUE(PowersumFamily::is_table(c["term"]));  // the template's static_assert
      EXPECT_LE(c["block"] / 32 * c["jt"], PowersumFamily::kMaxExponentsPerGroup);
    }
    if (c["jt"] == 1 && c["term"] != PowersumFamily::pow_term) {
      EXPECT_TRUE(PowersumFamily::is_diag(c["map"]));  // only they share the logs across warps
    }
    if (c["jt"] == 2) {
      EXPECT_TRUE(PowersumFamily::is_diag(c["map"]));  // the finer split is the diag maps' only
    }
    if (c["term"] == PowersumFamily::tabexp32_term) {
      EXPECT_TRUE(PowersumFamily::is_diag(c["map"]));  // the template has it in the diag maps only
    }
    if (c["term"] == PowersumFamily::tabexp_term) {
      EXPECT_TRUE(c["map"] == PowersumFamily::tile || c["map"] == PowersumFamily::sym ||
                  c["map"] >= PowersumFamily::diag);
    }
    EXPECT_LE(c["jt"], PowersumFamily::kMaxExponentsPerGroup);  // the tolerance covers the ladder up to there
    if (c["term"] == PowersumFamily::ladder_term) {
      EXPECT_TRUE(c["map"] == PowersumFamily::tile || c["map"] == PowersumFamily::line);
    }
    if (c["map"] == PowersumFamily::line) {
      EXPECT_EQ(c["term"], PowersumFamily::ladder_term);
      EXPECT_EQ(c["ksplit"], 32);
      EXPECT_LE(c["block"] / 32 * c["jt"], PowersumFamily::kMaxExponentsPerGroup);  // the tolerance's line
    }
  });
  // Brute force stays minutes (524 configs: 380 before the table terms and the diag maps, 492 before the diag
  // maps' jt = 2, 508 before their jt = 1).
  EXPECT_LE(family.space(DeviceLimits{}).enumerate().size(), 530u);
}

TEST(PowersumProblems, DefaultsAndValidation) {
  PowersumFamily family;
  const auto defaults = family.problems({});
  ASSERT_EQ(defaults.size(), 3u);
  EXPECT_EQ(defaults[0].key(), "w=500,a=80,alphas=grid,type=float64");
  EXPECT_EQ(defaults[2].key(), "w=500,a=80,alphas=random,type=float64");
  EXPECT_EQ(family.problems({std::nullopt, {1000}}).at(0).key(), "w=1000,a=80,alphas=grid,type=float64");
  EXPECT_THROW(family.problems({"float32", {}}), UsageError);
  EXPECT_THROW(family.problems({std::nullopt, {0}}), UsageError);
  EXPECT_THROW(family.problems({std::nullopt, {PowersumFamily::kMaxWindow + 1}}), UsageError);
  const Work w = family.work(defaults[0]);
  EXPECT_DOUBLE_EQ(w.bytes, (500 + 80) * 8.0 + 2 * 500 * 80 * 8.0);
}

// base^exponent by squaring, as the template's power().
static double power_by_squaring(double base, std::size_t exponent) {
  double result = 1.0;
  for (std::size_t m = exponent; m > 0; m >>= 1) {
    if (m & 1) result *= base;
    base *= base;
  }
  return result;
}

// The ladder's arithmetic (templates/powersum.cu, term=ladder) replayed on the host in double,
// with the template's own log and exp (straight_math.cuh), for lines of `line` exponents split
// into groups of `jt`: d^a0 by exp(a0 log d) and d^step by exp(step log d) once per line; group g
// of a line starts at d^a0 times ((d^step)^jt, by squaring) g times over (the line map; the tile
// map's lines are one group); then four chains, each advanced by ratio^4, as the kernel's
// LADDER_CHAINS.
static HostBuffers ladder_sums(const PowersumFamily& family, const Problem& p, const HostBuffers& inputs,
                               std::size_t line, std::size_t jt) {
  const auto x = inputs.as<double>("x");
  const auto alpha = inputs.as<double>("alpha");
  const std::size_t w = x.size(), a = alpha.size();
  HostBuffers sums = family.reference(p, inputs);
  auto minus = sums.as<double>("sums").first(sums.as<double>("sums").size() / 2);
  auto plus = sums.as<double>("sums").subspan(minus.size());
  for (std::size_t line0 = 0; line0 < a; line0 += line) {
    const std::size_t line_count = std::min(line, a - line0);
    const double a0 = alpha[line0];
    const double step =
        line_count > 1 ? (alpha[line0 + line_count - 1] - a0) / static_cast<double>(line_count - 1) : 0.0;
    for (std::size_t group = 0; group * jt < line_count; ++group) {
      const std::size_t offset = group * jt, count = std::min(jt, line_count - offset);
      for (std::size_t i = 0; i < w; ++i) {
        std::vector<double> m(count, 0.0), q(count, 0.0);
        for (std::size_t k = 0; k < w; ++k) {
          const double d = std::fabs(x[k] - x[i]);
          if (d == 0) continue;
          const double log_d = straight_log(d);
          const double ratio = straight_exp(step * log_d);
          const double stride_of_groups = power_by_squaring(ratio, jt);
          double start = straight_exp(a0 * log_d);
          for (std::size_t g = 0; g < group; ++g) start *= stride_of_groups;
          std::array<double, 4> t{start};
          for (std::size_t c = 1; c < t.size(); ++c) t[c] = t[c - 1] * ratio;
          const double stride = ratio * ratio * ratio * ratio;
          for (std::size_t jj = 0; jj < count; ++jj) {
            (k <= i ? m : q)[jj] += t[jj % 4];
            t[jj % 4] *= stride;
          }
        }
        for (std::size_t jj = 0; jj < count; ++jj) {
          minus[(line0 + offset + jj) * w + i] = m[jj];
          plus[(line0 + offset + jj) * w + i] = q[jj];
        }
      }
    }
  }
  return sums;
}

// The ladder's sums must pass the family's verification on the default grid problem, as the
// kernel's must: the tile map's longest group (80 exponents, one ladder), and the line map's
// lines split into the most groups the space allows (8 groups of 10; 16 groups of 4 in a line
// of 64), whose starts take the largest powers.
TEST(PowersumVerify, LadderArithmeticIsWithinTheTolerance) {
  PowersumFamily family;
  const Problem p = PowersumFamily::make_problem(500);
  const HostBuffers inputs = generated_inputs(family, p, 5);
  const HostBuffers expected = family.reference(p, inputs);
  const std::size_t longest = PowersumFamily::kMaxExponentsPerGroup;
  for (const auto& [line, jt] : {std::pair<std::size_t, std::size_t>{longest, longest}, {longest, 10}, {64, 4}}) {
    const Verdict v = family.compare(p, expected, ladder_sums(family, p, inputs, line, jt));
    EXPECT_TRUE(v.ok) << "lines of " << line << " in groups of " << jt << ": " << v.message;
  }
}

// The tables' arithmetic (term = tabexp: straight_log16 once per pair, straight_power per term,
// with the clamp of the exponents' largest; tabexp32 the same with the table of 32) replayed on the host, in the diag
// map's order: each term added to the row's and the column's sum. It must pass the family's verification on the study's
// window with random exponents, where it runs, and on the grid.
TEST(PowersumVerify, TableArithmeticIsWithinTheTolerance) {
  PowersumFamily family;
  for (const auto alphas : {PowersumFamily::Alphas::random, PowersumFamily::Alphas::grid}) {
    const Problem p = PowersumFamily::make_problem(500, PowersumFamily::kDefaultExponents, alphas);
    const HostBuffers inputs = generated_inputs(family, p, 5);
    const HostBuffers expected = family.reference(p, inputs);
    HostBuffers sums = family.reference(p, inputs);
    const auto x = inputs.as<double>("x");
    const auto alpha = inputs.as<double>("alpha");
    auto minus = sums.as<double>("sums").first(sums.as<double>("sums").size() / 2);
    auto plus = sums.as<double>("sums").subspan(minus.size());
    const std::size_t w = x.size();
    const double a_max = *std::max_element(alpha.begin(), alpha.end());
    const double limit16 = straight_log16_limit(a_max), limit32 = straight_log32_limit(a_max);
    for (const bool table32 : {false, true}) {  // tabexp, tabexp32
      for (std::size_t j = 0; j < alpha.size(); ++j) {
        std::vector<double> m(w, 0.0), q(w, 0.0);
        for (std::size_t i = 0; i < w; ++i)
          for (std::size_t k = i + 1; k < w; ++k) {
            const double d = std::fabs(x[k] - x[i]);
            const double term = table32 ? straight_power32(alpha[j], straight_log32(d, limit32))
                                        : straight_power(alpha[j], straight_log16(d, limit16));
            q[i] += term;
            m[k] += term;
          }
        std::copy(m.begin(), m.end(), minus.begin() + static_cast<std::ptrdiff_t>(j * w));
        std::copy(q.begin(), q.end(), plus.begin() + static_cast<std::ptrdiff_t>(j * w));
      }
      const Verdict v = family.compare(p, expected, sums);
      EXPECT_TRUE(v.ok) << p.key() << (table32 ? " tabexp32: " : " tabexp: ") << v.message;
    }
  }
}

// The diag maps' grids count the tiles the template decodes: sym's triangle for one row a lane,
// strips of 64 rows meeting the column tiles from their first row on for two.
TEST(PowersumSpace, DiagTilesCoverThePairsAboveTheDiagonal) {
  for (const std::int64_t w : {1, 31, 32, 33, 77, 500, 600}) {
    const std::int64_t side = (w + 31) / 32;
    EXPECT_EQ(PowersumFamily::diag_tiles(PowersumFamily::diag, w), side * (side + 1) / 2) << w;
    // Every pair k > i lies in exactly one tile of diag2 as the template decodes them.
    std::int64_t covered = 0;
    const std::int64_t tiles = PowersumFamily::diag_tiles(PowersumFamily::diag2, w);
    for (std::int64_t b = 0; b < tiles; ++b) {
      std::int64_t r = 0, first = 0;
      while (first + (side - r * 2) <= b) first += side - 2 * r++;
      const std::int64_t i0 = 64 * r, k0 = 32 * (2 * r + b - first);
      ASSERT_LT(k0, 32 * side) << w << " tile " << b;
      for (std::int64_t i = i0; i < i0 + 64; ++i)
        for (std::int64_t k = k0; k < k0 + 32; ++k) covered += k > i && k < w;
    }
    EXPECT_EQ(covered, w * (w - 1) / 2) << w;
  }
}

// The template's chunk and the family's shared-memory count of it are one number in two files.
TEST(PowersumSpace, LineChunkMatchesTheTemplate) {
  const std::string source(template_source("powersum.cu"));
  EXPECT_NE(source.find("#define LINE_CHUNK " + std::to_string(PowersumFamily::kLineChunk) + "\n"), std::string::npos);
}

// Configs are stored by label. diagc and diag2c (removed: slower than diag on an H100) were the
// last two maps, so the stored results of every other map parse to the same values as before, and
// theirs no longer parse (a warm start skips them; bench and the cubin store say why).
TEST(PowersumSpace, RemovedMapsNoLongerParseAndTheOthersKeepTheirValues) {
  const Space space = PowersumFamily().space(DeviceLimits{});
  const std::string rest = ",block=128,fold=1,stage=global,ksplit=1,jt=4,term=tabexp32";
  for (const char* removed : {"diagc", "diag2c"})
    EXPECT_THROW(space.parse(std::string("map=") + removed + rest), UsageError);
  const std::vector<std::pair<std::string, PowersumFamily::Map>> kept{
      {"pair", PowersumFamily::pair},  {"exponent", PowersumFamily::exponent}, {"tile", PowersumFamily::tile},
      {"sym", PowersumFamily::sym},    {"line", PowersumFamily::line},         {"diag", PowersumFamily::diag},
      {"diag2", PowersumFamily::diag2}};
  for (const auto& [label, value] : kept) {
    const Config config = space.parse("map=" + label + rest);
    EXPECT_EQ(ConfigView(space, config)["map"], value) << label;
    EXPECT_EQ(ConfigView(space, config)["term"], PowersumFamily::tabexp32_term) << label;
  }
}

// The maps that add into zeroed sums zero both halves of the one output with one memset (a second
// memset was a second launch in every timed run), and every map writes minus into the first half
// and plus into the second.
TEST(PowersumPlan, OneMemsetZeroesBothHalvesAndTheKernelsGetBoth) {
  PowersumFamily family;
  const Problem p = PowersumFamily::make_problem(500, 80, PowersumFamily::Alphas::random);
  const auto buffers = family.buffers(p);
  ASSERT_EQ(buffers.size(), 3u);
  EXPECT_EQ(buffers[2].name, "sums");
  EXPECT_EQ(buffers[2].bytes, 2 * 500 * 80 * 8);
  const Space space = family.space(DeviceLimits{});
  std::set<std::int64_t> maps_seen;
  for (const Config& config : space.enumerate()) {
    const ConfigView c(space, config);
    if (!maps_seen.insert(c["map"]).second) continue;  // the first config of each map
    SCOPED_TRACE(space.key(config));
    const auto plan = family.plan(p, ConfigView(space, config));
    const auto& launch = std::get<KernelLaunch>(plan.back());
    EXPECT_EQ(std::get<BufferArg>(launch.args[4]), (BufferArg{"sums", 0}));
    EXPECT_EQ(std::get<BufferArg>(launch.args[5]), (BufferArg{"sums", 500 * 80 * 8}));
    const bool adds = PowersumFamily::is_diag(c["map"]) || c["map"] == PowersumFamily::sym;
    ASSERT_EQ(plan.size(), adds ? 2u : 1u);
    if (adds) {
      const auto& zero = std::get<MemsetStep>(plan[0]);
      EXPECT_EQ(zero.buffer, "sums");
      EXPECT_EQ(zero.byte_offset, 0);
      EXPECT_EQ(zero.bytes, 2 * 500 * 80 * 8);
      EXPECT_EQ(zero.word, 0u);
    }
  }
  EXPECT_EQ(maps_seen.size(), 7u);
}
