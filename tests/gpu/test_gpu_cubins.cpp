// After a tuning run the database holds each problem's best cubin for the device's architecture,
// and the lookup library hands it back, ready to load without NVRTC.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "lookup.hpp"
#include "scan.hpp"
#include "session.hpp"

using namespace cutune;

TEST(GpuCubins, TheBestConfigOfEachProblemIsStoredAndLoads) {
  const auto folder = std::filesystem::temp_directory_path() / ("cutune-gpu-cubins-" + std::to_string(getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  const std::string path = (folder / "results.db").string();
  Device device(0);
  ScanFamily scan;
  SessionOptions options;
  options.problems = {ScanFamily::make_problem(1 << 16, "int32"), ScanFamily::make_problem(1 << 20, "int64")};
  options.strategy.name = "brute_force";
  options.budget.max_evals = 6;
  options.cache_folder = CompileCache::default_folder();
  options.measure.min_samples = 3;
  options.measure.max_samples = 5;
  options.progress = false;
  {
    db::Store store(path);
    Session(scan, device, store, options).run();
  }

  lookup::Database results(path);
  const auto& fingerprint = device.fingerprint();
  const std::string arch = device.limits().arch();
  for (const Problem& problem : options.problems) {
    const lookup::Query query{"scan",
                              {fingerprint.uuid, fingerprint.name, fingerprint.cc_major, fingerprint.cc_minor},
                              {problem.size(), problem.dtype()}};
    const auto match = results.find(query);
    EXPECT_EQ(match->level, lookup::Level::exact_device);
    EXPECT_EQ(match->matched_problem, problem.key());
    const auto cubin = results.cubin(query, arch);
    ASSERT_TRUE(cubin) << cubin.reason;
    EXPECT_TRUE(cubin.exact_arch);
    const Module module(std::vector<char>(cubin.image.begin(), cubin.image.end()));  // the driver loads it
    EXPECT_NE(module.function(match->launches.at(0).kernel), nullptr);
    EXPECT_FALSE(results.cubin(query, "sm_" + std::to_string(fingerprint.cc_major + 1) + "0"));
  }
  std::filesystem::remove_all(folder);
}
