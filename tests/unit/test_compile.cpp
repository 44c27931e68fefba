// NVRTC needs no GPU: compile success, failure as data, and the cache.
#include <gtest/gtest.h>

#include <filesystem>

#include "compile.hpp"
#include "compile_pool.hpp"
#include "family.hpp"
#include "core/limits.hpp"
#include "output_check.hpp"
#include "ptxas_report.hpp"
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

// ptxas' report is the only place a kernel's spills are told (the driver's attributes have none):
// every compile asks for it, and the log of a clean compile is that report and nothing else.
TEST(PtxasReport, EveryCompileReportsEachKernelsRegistersAndSpills) {
  // Twice: NVRTC's own cache would answer the second without a report (it is off).
  ASSERT_TRUE(compile(request("*out = VALUE + 1;")).ok);
  const Compiled c = compile(request("*out = VALUE + 1;"));
  ASSERT_TRUE(c.ok) << c.log;
  const PtxasReport report = parse_ptxas_report(c.log);
  ASSERT_TRUE(report.functions.count("probe")) << c.log;
  const PtxasFunction& probe = report.functions.at("probe");
  ASSERT_TRUE(probe.registers) << c.log;
  EXPECT_GT(*probe.registers, 0);
  EXPECT_EQ(probe.spill_store_bytes, 0);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings;
}

TEST(PtxasReport, ABuiltInFamilysKernelIsReportedUnderTheNameItIsLaunchedBy) {
  const Family& copy = family_named("copy");
  const DeviceLimits limits = limits_for_arch("sm_90");
  const Space space = copy.space(limits);
  const Problem problem = copy.parse_problem("n=1048576");
  const Config config = space.enumerate().front();
  const Compiled c = compile(compile_request(copy, copy.source(), space, config, problem, "sm_90"));
  ASSERT_TRUE(c.ok) << c.log;
  const PtxasReport report = parse_ptxas_report(c.log);
  const ConfigView view(space, config);
  for (const Step& step : copy.plan(problem, view))
    if (const auto* launch = std::get_if<KernelLaunch>(&step)) {
      ASSERT_TRUE(report.functions.count(launch->kernel)) << launch->kernel << " not in:\n" << c.log;
      EXPECT_TRUE(report.functions.at(launch->kernel).registers) << c.log;
    }
}

TEST(PtxasReport, KeepsWarningsAndReadsStackFramesSpillsAndCallees) {
  const std::string log = R"(t.cu(2): warning #177-D: variable "unused" was declared but never referenced
   int unused;
       ^

ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kILi64EEvPf' for 'sm_90'
ptxas info    : Function properties for _Z1kILi64EEvPf
ptxas         .     256 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 256 bytes cumulative stack size
ptxas info    : Compile time = 20.917 ms
ptxas info    : Function properties for _Z1fPf
ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas warning : Registers are spilled to local memory in function '_Z1kILi64EEvPf', 24 bytes spill stores)";
  const PtxasReport report = parse_ptxas_report(log);
  ASSERT_EQ(report.functions.size(), 2u);
  const PtxasFunction& k = report.functions.at("_Z1kILi64EEvPf");
  EXPECT_EQ(k.registers, 255);
  EXPECT_EQ(k.stack_frame_bytes, 256);
  EXPECT_EQ(k.spill_store_bytes, 24);
  EXPECT_EQ(k.spill_load_bytes, 16);
  const PtxasFunction& callee = report.functions.at("_Z1fPf");
  EXPECT_FALSE(callee.registers);  // not an entry: ptxas reports no registers of its own
  EXPECT_EQ(callee.stack_frame_bytes, 8);
  EXPECT_NE(report.warnings.find("warning #177-D"), std::string::npos) << report.warnings;
  EXPECT_NE(report.warnings.find("ptxas warning : Registers are spilled"), std::string::npos) << report.warnings;
  EXPECT_EQ(report.warnings.find("ptxas info"), std::string::npos) << report.warnings;
  EXPECT_EQ(report.warnings.find("bytes stack frame"), std::string::npos) << report.warnings;
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
  std::vector<CompileRequest> requests{request("*out = VALUE;"), request("*out = broken"),
                                       request("*out = VALUE + 1;")};
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
  // A hit keeps NVRTC's cold time apart from what reading it cost now (what a result stores).
  const auto hit = cache.find(compile_key(requests[0]));
  EXPECT_GT(hit->cold_seconds, 0);
  EXPECT_EQ(hit->cold_seconds, cache.find(compile_key(requests[0]))->cold_seconds);
  EXPECT_GE(hit->seconds, 0);
  EXPECT_NE(cache.find(compile_key(requests[1]))->log.find("broken"), std::string::npos);
}

// The GPU's output-comparison kernels compile for every architecture cutune tunes for.
TEST(Compile, OutputCheckKernelsCompile) {
  for (const char* arch : {"sm_75", "sm_80", "sm_90"}) {  // CUDA 13 starts at Turing
    const Compiled c = compile({"cutune_output_check.cu", output_check_source(), {}, arch});
    EXPECT_TRUE(c.ok) << arch << ": " << c.log;
  }
}

// The pool compiles in its worker processes, shares one compile among requests with one key, and
// fills the cache; failures are results like any other.
TEST(CompilePool, CompilesInWorkerProcessesAndSharesEqualKeys) {
  cutune::testing::TempFolder folder;
  const CompileCache cache(folder.string());
  std::vector<std::shared_future<Compiled>> futures;
  {
    CompilePool pool(cache, 2);
    for (const char* body : {"*out = VALUE;", "*out = broken", "*out = VALUE + 1;", "*out = VALUE;"})
      futures.push_back(pool.submit(request(body)));
    for (auto& f : futures) f.wait();
  }
  EXPECT_TRUE(futures[0].get().ok);
  EXPECT_FALSE(futures[1].get().ok);
  EXPECT_NE(futures[1].get().log.find("broken"), std::string::npos);
  EXPECT_TRUE(futures[2].get().ok);
  EXPECT_EQ(futures[3].get().cubin, futures[0].get().cubin);
  EXPECT_EQ(futures[0].get().cubin, compile(request("*out = VALUE;")).cubin);
  EXPECT_TRUE(cache.find(compile_key(request("*out = VALUE + 1;"))));
  // Without a cache the pool still compiles (nothing to put the results in).
  const CompileCache none("");
  CompilePool pool(none, 1);
  EXPECT_TRUE(pool.submit(request("*out = VALUE;")).get().ok);
}

// The folder stays bounded: entries go least recently used first, a hit renews an entry, and a run
// finds what it used last.
TEST(CompileCache, EvictsTheLeastRecentlyUsedEntriesDownToItsLimit) {
  cutune::testing::TempFolder folder;
  const CompileCache cache(folder.path().string(), 10'000);
  Compiled entry;
  entry.ok = true;
  entry.cubin.assign(4000, 0x5a);
  const auto now = std::filesystem::file_time_type::clock::now();
  for (int i = 0; i < 5; ++i) {
    const std::string key = "k" + std::to_string(i);
    cache.put(key, entry);
    // k0 the oldest, k4 the newest.
    std::filesystem::last_write_time(folder.path() / (key + ".json"), now - std::chrono::hours(10 - i));
  }
  ASSERT_TRUE(cache.find("k1"));  // used now: the newest
  EXPECT_GT(cache.evict(), 12'000u);
  for (const char* gone : {"k0", "k2", "k3"}) {
    EXPECT_FALSE(cache.find(gone)) << gone;
    EXPECT_FALSE(std::filesystem::exists(folder.path() / (std::string(gone) + ".cubin"))) << gone;
  }
  for (const char* kept : {"k1", "k4"}) EXPECT_TRUE(cache.find(kept)) << kept;
  EXPECT_EQ(cache.evict(), 0u);  // within the limit now
}
