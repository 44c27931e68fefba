// The CPU reference scan and the verification logic (no GPU).
#include <gtest/gtest.h>

#include <random>

#include "scan.hpp"
#include "verify.hpp"

using namespace cutune;

namespace {

HostBuffers inputs_for(const Problem& p, std::uint64_t seed) {
  ScanFamily scan;
  HostBuffers inputs;
  for (const auto& spec : scan.buffers(p))
    if (spec.role == BufferRole::input) inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  scan.generate_inputs(p, seed, inputs);
  return inputs;
}

// What a correct device run would have written: the reference itself.
HostBuffers as_actual(const HostBuffers& expected) { return expected; }

}  // namespace

TEST(CompactOffsets, MatchesHandComputedOffsets) {
  const std::vector<std::int32_t> starts{0, 5, 5, 10}, stops{3, 9, 5, 11};
  std::vector<std::int64_t> out(5);
  EXPECT_FALSE(compact_offsets<std::int32_t>(starts, stops, out));
  EXPECT_EQ(out, (std::vector<std::int64_t>{0, 3, 7, 7, 8}));
}

TEST(CompactOffsets, ReportsTheLowestBadIndex) {
  std::vector<std::int64_t> starts(100, 10), stops(100, 12);
  std::vector<std::int64_t> out(101);
  stops[70] = 3;
  stops[40] = 9;
  EXPECT_EQ(compact_offsets<std::int64_t>(starts, stops, out), 40);
  stops[0] = 0;
  EXPECT_EQ(compact_offsets<std::int64_t>(starts, stops, out), 0);
}

TEST(CompactOffsets, UnsignedComparesAsUnsigned) {
  const std::vector<std::uint32_t> starts{1, 4000000000u}, stops{4000000000u, 4000000001u};
  std::vector<std::int64_t> out(3);
  EXPECT_FALSE(compact_offsets<std::uint32_t>(starts, stops, out));
  EXPECT_EQ(out[1], 3999999999LL);
  EXPECT_EQ(out[2], 4000000000LL);
  const std::vector<std::uint32_t> bad_stops{0, 4000000001u};
  EXPECT_EQ(compact_offsets<std::uint32_t>(starts, bad_stops, out), 0);
}

// Over many chunks (the reference runs them on every core): the same offsets and bad index as the
// plain sequential loop, with the bad element in the first, a middle and the last chunk, or none.
TEST(CompactOffsets, ChunkedMatchesTheSequentialLoop) {
  const std::size_t n = 5 * kChunk + 123;
  std::mt19937_64 rng(3);
  std::vector<std::uint32_t> starts(n), stops(n);
  for (std::size_t i = 0; i < n; ++i) {
    starts[i] = static_cast<std::uint32_t>(rng() % 1000000);
    stops[i] = starts[i] + static_cast<std::uint32_t>(rng() % 32);
  }
  for (const std::int64_t bad : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{kChunk - 1}, std::int64_t{kChunk},
                                 std::int64_t{3 * kChunk + 17}, static_cast<std::int64_t>(n - 1)}) {
    auto broken = stops;
    if (bad >= 0) broken[bad] = starts[bad] - 1;
    std::vector<std::int64_t> want(n + 1, -7), got(n + 1, -7);
    std::optional<std::int64_t> want_bad;
    want[0] = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (broken[i] < starts[i]) {
        want_bad = static_cast<std::int64_t>(i);
        break;
      }
      want[i + 1] = want[i] + (static_cast<std::int64_t>(broken[i]) - static_cast<std::int64_t>(starts[i]));
    }
    EXPECT_EQ(compact_offsets<std::uint32_t>(starts, broken, got), want_bad) << "bad at " << bad;
    EXPECT_EQ(got, want) << "bad at " << bad;
  }
}

TEST(ScanInputs, RandomNonZeroDeterministicAndOffsetAware) {
  const Problem p = ScanFamily::make_problem(10000, "int32", 7, 3);
  const HostBuffers a = inputs_for(p, 42), b = inputs_for(p, 42), c = inputs_for(p, 43);
  EXPECT_EQ(a.all(), b.all());
  EXPECT_NE(a.all(), c.all());
  const auto starts = a.as<std::int32_t>("starts");
  const auto stops = a.as<std::int32_t>("stops");
  ASSERT_EQ(starts.size(), 10007u);
  ASSERT_EQ(stops.size(), 10003u);
  std::int64_t nonzero_lengths = 0;
  for (int i = 0; i < 10000; ++i) {
    ASSERT_GE(stops[3 + i], starts[7 + i]);
    nonzero_lengths += stops[3 + i] != starts[7 + i];
  }
  EXPECT_GT(nonzero_lengths, 9000);
}

TEST(ScanVerify, AcceptsTheReferenceAndFindsTheFirstMismatch) {
  ScanFamily scan;
  const Problem p = ScanFamily::make_problem(5000, "uint32", 1, 2);
  const HostBuffers inputs = inputs_for(p, 1);
  const HostBuffers expected = scan.reference(p, inputs);
  EXPECT_TRUE(scan.compare(p, expected, as_actual(expected)).ok);

  HostBuffers wrong = as_actual(expected);
  wrong.as<std::int64_t>("tooffsets")[4000] += 1;
  wrong.as<std::int64_t>("tooffsets")[4500] += 1;
  const Verdict v = scan.compare(p, expected, wrong);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 4000);
  EXPECT_NE(v.message.find("tooffsets[4000]"), std::string::npos) << v.message;
}

TEST(ScanVerify, ErrorIndexMustMatch) {
  ScanFamily scan;
  const Problem p = ScanFamily::make_problem(1000, "int64");
  HostBuffers inputs = inputs_for(p, 3);
  auto starts = inputs.as<std::int64_t>("starts");
  auto stops = inputs.as<std::int64_t>("stops");
  stops[600] = starts[600] - 1;
  stops[900] = starts[900] - 5;
  const HostBuffers expected = scan.reference(p, inputs);
  EXPECT_EQ(expected.as<std::uint64_t>("error")[0], 600u);

  HostBuffers actual = as_actual(expected);
  actual.as<std::int64_t>("tooffsets")[700] = -1;  // past the bad index: unspecified, not checked
  EXPECT_TRUE(scan.compare(p, expected, actual).ok);

  actual.as<std::uint64_t>("error")[0] = 900;  // a device that reports a later bad index is wrong
  const Verdict v = scan.compare(p, expected, actual);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 600);
  EXPECT_NE(v.message.find("expected 600, got 900"), std::string::npos) << v.message;

  actual.as<std::uint64_t>("error")[0] = ~0ull;  // or none at all
  EXPECT_FALSE(scan.compare(p, expected, actual).ok);
}

TEST(CompareClose, ToleranceAndNaN) {
  const std::vector<float> expected{1.0f, 2.0f, 3.0f};
  std::vector<float> actual{1.0f, 2.0000001f, 3.0f};
  EXPECT_TRUE(compare_close<float>("x", expected, actual, 1e-5, 0).ok);
  actual[2] = std::nanf("");
  const Verdict v = compare_close<float>("x", expected, actual, 1e-5, 0);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 2);
}

TEST(ScanWork, CountsEachInputOnceAndTheOutput) {
  ScanFamily scan;
  const Work w = scan.work(ScanFamily::make_problem(1 << 20, "int32"));
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (1 << 20) * 4 + ((1 << 20) + 1) * 8.0);
}
