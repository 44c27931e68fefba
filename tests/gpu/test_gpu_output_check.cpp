// The GPU's output comparison gives the host rule's verdict, first bad index and values
// (check_outputs, which unit tests hold to every family's compare()): errors planted at the first
// and last element, on both sides of block edges (the kernel's 256-thread blocks and its grid
// stride), within and beyond tolerance, as NaN, in unchecked outputs, for every element type; and
// two errors at once, where the lower index must win whichever block sees it.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "family_checks.hpp"
#include "output_check.hpp"
#include "verify.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {

template <class T>
std::vector<std::byte> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> values(n);
  std::uniform_real_distribution<double> real(0.5, 100.0);
  for (auto& v : values) v = static_cast<T>(real(rng));
  std::vector<std::byte> bytes(n * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <class T>
void nudge(std::vector<std::byte>& bytes, std::size_t i, double relative, bool nan) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  if constexpr (std::is_floating_point_v<T>)
    v = nan ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(v * (1 + relative));
  else
    v = static_cast<T>(v + 1);
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

struct Typed {
  std::string type;
  std::size_t bytes;
};

}  // namespace

TEST(GpuOutputCheck, AgreesWithTheHostRuleOnPlantedErrors) {
  device().make_current();
  OutputChecker& checker = OutputChecker::shared_for(device().limits().arch());
  Stream stream;
  std::mt19937_64 rng(5);
  // Sizes below, at and beyond one grid's worth of threads (8192 blocks of 256).
  for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{8192} * 256 + 17}) {
    for (const Typed& t : {Typed{"int32", 4}, Typed{"uint32", 4}, Typed{"int64", 8}, Typed{"uint64", 8},
                           Typed{"float32", 4}, Typed{"float64", 8}}) {
      for (const bool exact : {true, false}) {
        if (exact == false && !t.type.starts_with("float")) continue;
        OutputRule rule{"out", t.type, true, exact, exact ? 0.0 : 1e-5, 0.0};
        OutputRule unchecked{"scratch", t.type, false};
        HostBuffers expected;
        const auto make = [&](const std::string& name) {
          if (t.type == "int32")
            expected.at(name) = random_bytes<std::int32_t>(n, rng);
          else if (t.type == "uint32")
            expected.at(name) = random_bytes<std::uint32_t>(n, rng);
          else if (t.type == "int64")
            expected.at(name) = random_bytes<std::int64_t>(n, rng);
          else if (t.type == "uint64")
            expected.at(name) = random_bytes<std::uint64_t>(n, rng);
          else if (t.type == "float32")
            expected.at(name) = random_bytes<float>(n, rng);
          else
            expected.at(name) = random_bytes<double>(n, rng);
        };
        make("out");
        make("scratch");
        DeviceBuffer expected_out(n * t.bytes), expected_scratch(n * t.bytes), actual_out(n * t.bytes),
            actual_scratch(n * t.bytes);
        expected_out.upload(expected.at("out").data(), n * t.bytes);
        expected_scratch.upload(expected.at("scratch").data(), n * t.bytes);
        std::vector<std::size_t> places{0, n - 1, n / 2};
        for (std::size_t edge : {255, 256, 1023, 1024, 8192 * 256 - 1, 8192 * 256})
          if (edge < n) places.push_back(edge);
        for (const std::size_t i : places)
          for (const double relative : {1e-7, 1e-3})
            for (const bool nan : {false, true})
              for (const char* where : {"out", "scratch"}) {
                if (nan && !t.type.starts_with("float")) continue;
                HostBuffers actual;
                actual.at("out") = expected.at("out");
                actual.at("scratch") = expected.at("scratch");
                auto& bytes = actual.at(where);
                if (t.type == "int32")
                  nudge<std::int32_t>(bytes, i, relative, nan);
                else if (t.type == "uint32")
                  nudge<std::uint32_t>(bytes, i, relative, nan);
                else if (t.type == "int64")
                  nudge<std::int64_t>(bytes, i, relative, nan);
                else if (t.type == "uint64")
                  nudge<std::uint64_t>(bytes, i, relative, nan);
                else if (t.type == "float32")
                  nudge<float>(bytes, i, relative, nan);
                else
                  nudge<double>(bytes, i, relative, nan);
                actual_out.upload(actual.at("out").data(), n * t.bytes);
                actual_scratch.upload(actual.at("scratch").data(), n * t.bytes);
                const std::vector<OutputRule> rules{rule, unchecked};
                const std::vector<OutputChecker::Output> outputs{
                    {&rules[0], expected_out.get(), actual_out.get(), static_cast<std::int64_t>(n)},
                    {&rules[1], expected_scratch.get(), actual_scratch.get(), static_cast<std::int64_t>(n)}};
                const OutputCheck on_gpu = checker.check(outputs, stream.get());
                const OutputCheck on_host = check_outputs(rules, expected, actual);
                const std::string what = t.type + (exact ? " exact" : " rtol 1e-5") + ", n " + std::to_string(n) +
                                         ", " + where + "[" + std::to_string(i) + "] nudged by " +
                                         std::to_string(relative) + (nan ? " (NaN)" : "");
                ASSERT_EQ(on_gpu.pass, on_host.pass) << what;
                if (on_host.pass) continue;
                ASSERT_TRUE(on_gpu.first_break && on_host.first_break) << what;
                EXPECT_EQ(on_gpu.first_break->rule, on_host.first_break->rule) << what;
                EXPECT_EQ(on_gpu.first_break->index, on_host.first_break->index) << what;
                EXPECT_EQ(on_gpu.first_break->index, static_cast<std::int64_t>(i)) << what;
                EXPECT_EQ(on_gpu.first_break->expected, on_host.first_break->expected) << what;
                EXPECT_EQ(on_gpu.first_break->actual, on_host.first_break->actual) << what;
                EXPECT_EQ(verdict_of(rules, on_gpu).message, verdict_of(rules, on_host).message) << what;
              }
      }
    }
  }
}

// Two broken elements in different blocks (and different grid-stride rounds): the lower index is
// reported, whichever block finishes first.
TEST(GpuOutputCheck, ReportsTheLowestOfSeveralBrokenElements) {
  device().make_current();
  OutputChecker& checker = OutputChecker::shared_for(device().limits().arch());
  Stream stream;
  const std::size_t n = std::size_t{8192} * 256 * 3 + 5;
  std::vector<std::int64_t> expected(n), actual;
  for (std::size_t i = 0; i < n; ++i) expected[i] = static_cast<std::int64_t>(i * 7 + 3);
  DeviceBuffer expected_device(n * 8), actual_device(n * 8);
  expected_device.upload(expected.data(), n * 8);
  const OutputRule rule{"offsets", "int64"};
  const std::vector<OutputRule> rules{rule};
  for (const auto& [low, high] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, n - 1}, {255, 256}, {8192 * 256 + 1, 8192 * 256}, {5000, 8192 * 256 * 2 + 4999}, {n - 2, n - 1}}) {
    actual = expected;
    actual[low] = -1;
    actual[high] = -2;
    actual_device.upload(actual.data(), n * 8);
    const OutputCheck check = checker.check(
        {{&rules[0], expected_device.get(), actual_device.get(), static_cast<std::int64_t>(n)}}, stream.get());
    ASSERT_FALSE(check.pass);
    ASSERT_TRUE(check.first_break);
    EXPECT_EQ(check.first_break->index, static_cast<std::int64_t>(std::min(low, high))) << low << " and " << high;
    const Verdict verdict = verdict_of(rules, check);
    EXPECT_EQ(verdict.first_bad_index, static_cast<std::int64_t>(std::min(low, high)));
    EXPECT_NE(verdict.message.find("got " + std::to_string(low < high ? -1 : -2)), std::string::npos)
        << verdict.message;
  }
}
