// The bench programs' shared command line (bench/bench_args.hpp): options, --problem selection,
// and one clear error for anything else.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench_args.hpp"
#include "core/error.hpp"
#include "matmul.hpp"
#include "scan.hpp"

using namespace cutune;
using cutune::bench::BenchArgs;
using cutune::bench::parse_bench_args;

namespace {
BenchArgs parse(std::vector<std::string> words, const std::vector<std::string>& own = {}) {
  words.insert(words.begin(), "bench_x");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return parse_bench_args(static_cast<int>(argv.size()), argv.data(), own);
}

std::string error_of(std::vector<std::string> words, const std::vector<std::string>& own = {}) {
  try {
    parse(std::move(words), own);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(BenchArgs, ReadsTheCommonOptionsAndTheBenchsOwn) {
  const BenchArgs args = parse({"--db", "x.db", "--device", "2", "--min-log", "20"}, {"--min-log", "--max-log"});
  EXPECT_EQ(args.db_path, "x.db");
  EXPECT_EQ(args.device, 2);
  EXPECT_EQ(args.integer("--min-log", 10), 20);
  EXPECT_EQ(args.integer("--max-log", 27), 27);  // not given: the fallback
  EXPECT_TRUE(args.problems.empty());
}

TEST(BenchArgs, ProblemSelectsTheProblemsWhoseKeyHoldsItsPairs) {
  const Problem big = MatmulFamily::make_problem(4096, 4096, 4096),
                small = MatmulFamily::make_problem(1024, 1024, 1024);
  EXPECT_TRUE(parse({}).wants(big));  // no --problem: every problem
  const BenchArgs one = parse({"--problem", "m=4096,k=4096"});
  EXPECT_TRUE(one.wants(big));
  EXPECT_FALSE(one.wants(small));
  EXPECT_FALSE(parse({"--problem", "m=409"}).wants(big));  // whole values, not prefixes
  const BenchArgs either = parse({"--problem", "m=1024", "--problem", "m=4096"});
  EXPECT_TRUE(either.wants(big));
  EXPECT_TRUE(either.wants(small));
  EXPECT_FALSE(parse({"--problem", "n=8388608,type=int64"}).wants(ScanFamily::make_problem(8388608, "int32")));
}

TEST(BenchArgs, AnythingElseIsOneClearError) {
  EXPECT_NE(error_of({"--problme", "m=4096"}).find("unknown argument '--problme'"), std::string::npos);
  EXPECT_NE(error_of({"--min-log", "20"}).find("unknown argument '--min-log'"), std::string::npos);  // not this bench's
  EXPECT_NE(error_of({"--db"}).find("--db needs a value"), std::string::npos);
  EXPECT_NE(error_of({"--device", "one"}).find("--device takes an integer"), std::string::npos);
  EXPECT_NE(error_of({"--device", "-1"}).find("--device takes a device number"), std::string::npos);
  EXPECT_NE(error_of({"--problem", "4096"}).find("--problem takes name=value pairs"), std::string::npos);
  EXPECT_THROW(parse({"--min-log", "2x"}, {"--min-log"}).integer("--min-log", 10), UsageError);
}
