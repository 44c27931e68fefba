// Each family's output rules (what the GPU compares) say what its compare() says, on planted
// errors at the first and last element, in the middle, across the default block sizes, within and
// beyond tolerance, and as NaN: the same verdict, the same first bad index, the same words. The GPU
// test (test_gpu_output_check) holds the GPU to the rules.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "family.hpp"
#include "verify.hpp"

using namespace cutune;

namespace {

// A small problem of each family that has rules.
const std::vector<std::pair<std::string, std::string>> kProblems{
    {"copy", "n=5000,stride=2"},
    {"reduce", "n=5000,op=sum"},
    {"reduce", "n=5000,op=max"},
    {"reduce", "n=777,op=sum,type=float64"},
    {"resample", "series=3,points=1000,window=7,op=mean"},
    {"scan", "n=5000,type=int32"},
    {"avgmatvec", "n=4,m=8,l=16"},
};

struct Case {
  const Family& family;
  Problem problem;
  HostBuffers inputs, expected;
  std::vector<OutputRule> rules;
};

Case make_case(const std::string& name, const std::string& text) {
  const Family& family = family_named(name);
  Case c{family, family.parse_problem(text), {}, {}, {}};
  for (const auto& spec : family.buffers(c.problem))
    if (spec.role == BufferRole::input) c.inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  family.generate_inputs(c.problem, 11, c.inputs);
  c.expected = family.reference(c.problem, c.inputs);
  c.rules = *family.output_rules(c.problem, c.expected);
  return c;
}

// Outputs as the kernels would leave them: the expected ones.
HostBuffers outputs_of(const Case& c) {
  HostBuffers actual;
  for (const auto& rule : c.rules) actual.at(rule.buffer) = c.expected.at(rule.buffer);
  return actual;
}

// Changes element i of an output by `how`: a relative nudge, or NaN.
template <class T>
void plant(HostBuffers& actual, const std::string& buffer, std::size_t i, double relative, bool nan) {
  auto values = actual.as<T>(buffer);
  if constexpr (std::is_floating_point_v<T>) {
    values[i] = nan ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(values[i] * (1 + relative) + relative);
  } else {
    values[i] = static_cast<T>(values[i] + (relative > 0 ? 1 : -1));
  }
}

void plant_any(HostBuffers& actual, const OutputRule& rule, std::size_t i, double relative, bool nan) {
  if (rule.element_type == "float32")
    plant<float>(actual, rule.buffer, i, relative, nan);
  else if (rule.element_type == "float64")
    plant<double>(actual, rule.buffer, i, relative, nan);
  else if (rule.element_type == "int64")
    plant<std::int64_t>(actual, rule.buffer, i, relative, nan);
  else if (rule.element_type == "uint64")
    plant<std::uint64_t>(actual, rule.buffer, i, relative, nan);
  else if (rule.element_type == "int32")
    plant<std::int32_t>(actual, rule.buffer, i, relative, nan);
  else
    plant<std::uint32_t>(actual, rule.buffer, i, relative, nan);
}

std::size_t elements(const Case& c, const OutputRule& rule) {
  const std::size_t bytes = rule.element_type.ends_with("64") ? 8 : 4;
  return c.expected.at(rule.buffer).size() / bytes;
}

}  // namespace

TEST(OutputRules, AgreeWithCompareOnPlantedErrors) {
  for (const auto& [name, text] : kProblems) {
    const Case c = make_case(name, text);
    SCOPED_TRACE(name + " " + c.problem.key());
    EXPECT_TRUE(check_outputs(c.rules, c.expected, outputs_of(c)).pass);
    for (const OutputRule& rule : c.rules) {
      const std::size_t n = elements(c, rule);
      // First, last, middle, and around the edges of blocks of 128, 256 and 1024 elements.
      std::vector<std::size_t> places{0, n - 1, n / 2};
      for (std::size_t edge : {128, 256, 1024})
        for (std::size_t at : {edge - 1, edge})
          if (at < n) places.push_back(at);
      for (const std::size_t i : places)
        for (const double relative : {1e-9, 1e-7, 1e-5, 1e-2})
          for (const bool nan : {false, true}) {
            if (nan && !rule.element_type.starts_with("float")) continue;
            HostBuffers actual = outputs_of(c);
            plant_any(actual, rule, i, relative, nan);
            // The same verdict, the same first bad index and the same words as the family's compare().
            const Verdict by_rules = verdict_of(c.rules, check_outputs(c.rules, c.expected, actual));
            const Verdict by_compare = c.family.compare(c.problem, c.expected, actual);
            EXPECT_EQ(by_rules.ok, by_compare.ok)
                << rule.buffer << "[" << i << "] nudged by " << relative << (nan ? " (NaN)" : "");
            if (by_rules.ok || by_compare.ok) continue;
            EXPECT_EQ(by_rules.first_bad_index, by_compare.first_bad_index) << rule.buffer << "[" << i << "]";
            EXPECT_EQ(by_rules.first_bad_index, std::optional<std::int64_t>(static_cast<std::int64_t>(i)));
            if (by_compare.message.starts_with(rule.buffer + "[")) {  // scan words its error index its own way
              EXPECT_NE(by_compare.message.find(by_rules.message), std::string::npos)
                  << "rules: " << by_rules.message << "\ncompare: " << by_compare.message;
            }
          }
    }
  }
}

// Scan with a bad input: the offsets past it are unspecified, so garbage there passes both ways,
// and a wrong error index fails both ways.
TEST(OutputRules, ScanChecksOnlyTheErrorIndexAfterABadInput) {
  const Family& scan = family_named("scan");
  const Problem problem = scan.parse_problem("n=1000,type=int32");
  HostBuffers inputs;
  for (const auto& spec : scan.buffers(problem))
    if (spec.role == BufferRole::input) inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  scan.generate_inputs(problem, 3, inputs);
  inputs.as<std::int32_t>("stops")[500] = inputs.as<std::int32_t>("starts")[500] - 1;
  const HostBuffers expected = scan.reference(problem, inputs);
  const auto rules = *scan.output_rules(problem, expected);
  HostBuffers actual;
  actual.at("error") = expected.at("error");
  actual.at("tooffsets") = expected.at("tooffsets");
  actual.as<std::int64_t>("tooffsets")[900] = -7;
  EXPECT_TRUE(check_outputs(rules, expected, actual).pass);
  EXPECT_TRUE(scan.compare(problem, expected, actual).ok);
  actual.as<std::uint64_t>("error")[0] = 499;
  EXPECT_FALSE(check_outputs(rules, expected, actual).pass);
  EXPECT_FALSE(scan.compare(problem, expected, actual).ok);
}

// Families whose compare() is more than rules keep the CPU comparison.
TEST(OutputRules, RangeChecksAndSampledReferencesStayOnTheCpu) {
  for (const char* name : {"matmul", "powersum"}) {
    const Family& family = family_named(name);
    EXPECT_FALSE(family.output_rules(family.problems({}).front(), HostBuffers{})) << name;
  }
}
