// NVRTC needs no GPU: compile success, failure as data, and the cache.
#include <gtest/gtest.h>

#include <filesystem>

#include "compile.hpp"
#include "temp_folder.hpp"

using namespace cutune;

namespace {
CompileRequest request(const std::string& body) {
  return {"probe.cu", "extern \"C\" __global__ void probe(int* out) { " + body + " }", {"-DVALUE=7"}, "sm_90"};
}

}  // namespace

TEST(Compile, ProducesACubinForTheArchitecture) {
  const Compiled c = compile(request("*out = VALUE;"));
  ASSERT_TRUE(c.ok) << c.log;
  ASSERT_GT(c.cubin.size(), 4u);
  EXPECT_EQ(std::string(c.cubin.data() + 1, 3), "ELF");
  EXPECT_NE(std::find(c.options.begin(), c.options.end(), "--gpu-architecture=sm_90"), c.options.end());
}

TEST(Compile, FailureIsAValueWithTheLog) {
  const Compiled c = compile(request("*out = undeclared_name;"));
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.cubin.empty());
  EXPECT_NE(c.log.find("undeclared_name"), std::string::npos) << c.log;
}

TEST(CompileKey, CoversSourceOptionsAndArch) {
  const auto base = request("*out = VALUE;");
  auto other_arch = base;
  other_arch.arch = "sm_80";
  auto other_option = base;
  other_option.options = {"-DVALUE=8"};
  auto other_source = base;
  other_source.source += " ";
  EXPECT_EQ(compile_key(base), compile_key(request("*out = VALUE;")));
  EXPECT_NE(compile_key(base), compile_key(other_arch));
  EXPECT_NE(compile_key(base), compile_key(other_option));
  EXPECT_NE(compile_key(base), compile_key(other_source));
}

TEST(CompileCache, ParallelBatchMatchesSerialAndHitsAfterwards) {
  cutune::testing::TempFolder folder;
  const CompileCache cache(folder.string());
  std::vector<CompileRequest> requests{request("*out = VALUE;"), request("*out = broken"), request("*out = VALUE + 1;")};
  const auto results = cache.compile_all(requests, 2);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok);
  EXPECT_FALSE(results[1].ok);
  EXPECT_TRUE(results[2].ok);
  for (const auto& r : requests) {
    const auto hit = cache.find(compile_key(r));
    ASSERT_TRUE(hit);
    EXPECT_TRUE(hit->from_cache);
  }
  EXPECT_EQ(cache.find(compile_key(requests[0]))->cubin, results[0].cubin);
  EXPECT_NE(cache.find(compile_key(requests[1]))->log.find("broken"), std::string::npos);
}
