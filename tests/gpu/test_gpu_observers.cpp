// The observers on a real GPU (issue 20): energy and power plausible for a 2^27 copy, registers as
// the loaded cubin's attributes say, clocks read, and no clock or power setting changed by a run.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "compile.hpp"
#include "compile_pool.hpp"
#include "copy.hpp"
#include "evaluate.hpp"
#include "family_checks.hpp"
#include "nvml.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {

const Family& copy_family() { return family_named("copy"); }

std::optional<nvml::Gpu> nvml_gpu() { return nvml::Gpu::find(device().fingerprint().uuid); }

// Three configs of the copy, vectorised and not: enough to see plausible numbers, quick to run.
SessionOptions copy_session(std::int64_t n, double energy_seconds) {
  SessionOptions o = quick_session({CopyFamily::make_problem(n)});
  o.restrictions = {"block == 256 && (ept == 4 || ept == 8)"};
  o.measure.energy_seconds = energy_seconds;
  o.warm_start = false;
  return o;
}

// Compiled as a session compiles: in a compile process of the pool.
Compiled compile_apart(const CompileRequest& request) {
  static const CompileCache no_cache("");
  static CompilePool pool(no_cache, 1);
  return pool.submit(request).get();
}

// The first `count` configs of the family's space, evaluated on `problem` one by one.
std::vector<std::pair<std::string, Outcome>> evaluate_some(const Family& family, const Problem& problem,
                                                           const MeasureOptions& measure, std::size_t count) {
  const Space space = family.space(device().limits());
  GpuEvaluator evaluator(device(), family, measure);
  evaluator.set_problem(problem, 1);
  const std::string source = family.source();
  std::vector<std::pair<std::string, Outcome>> outcomes;
  for (const Config& config : space.enumerate()) {
    if (outcomes.size() == count) break;
    const Compiled compiled =
        compile_apart(compile_request(family, source, space, config, problem, device().limits().arch()));
    EXPECT_TRUE(compiled.ok) << compiled.log;
    outcomes.emplace_back(space.key(config), evaluator.evaluate(space, config, compiled));
  }
  return outcomes;
}

}  // namespace

TEST(GpuObservers, EnergyAndPowerArePlausibleForA2To27Copy) {
  const auto gpu = nvml_gpu();
  if (!gpu) GTEST_SKIP() << "no NVML for this GPU";
  const auto limit_w = gpu->enforced_power_limit_w();
  ASSERT_TRUE(limit_w);
  // Idle: the GPU has had nothing to do for a second (the reading averages over its last window).
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double idle_w = gpu->power_w().value_or(0);

  MeasureOptions measure = quick_measure();
  measure.energy_seconds = 0.3;
  const auto outcomes = evaluate_some(copy_family(), CopyFamily::make_problem(std::int64_t{1} << 27), measure, 3);
  ASSERT_EQ(outcomes.size(), 3u);
  for (const auto& [config, outcome] : outcomes) {
    ASSERT_EQ(outcome.status, Status::ok) << config << ": " << outcome.error;
    const db::Observations& o = outcome.observations;
    ASSERT_TRUE(o.energy_j && o.power_w) << config;
    EXPECT_FALSE(o.energy_method.empty());
    EXPECT_GT(o.energy_runs.value_or(0), 0);
    // A copy at full bandwidth draws more than the idle board and at most the board's limit (a
    // reading may overshoot the limit briefly: 10 % allowed).
    EXPECT_GT(*o.power_w, idle_w) << config << " (idle " << idle_w << " W)";
    EXPECT_LT(*o.power_w, *limit_w * 1.1) << config << " (limit " << *limit_w << " W)";
    // Energy per run is that power over a run's time back to back: about the median (no flush
    // matters at 1 GiB moved per run).
    const double median_ms = outcome.measurement->median_ms;
    const double expected_j = *o.power_w * median_ms * 1e-3;
    EXPECT_NEAR(*o.energy_j / expected_j, 1.0, 0.3)
        << config << ": " << *o.energy_j << " J, median " << median_ms << " ms at " << *o.power_w << " W";
    std::cout << config << ": " << median_ms << " ms, " << *o.energy_j * 1e3 << " mJ/run, " << *o.power_w << " W ("
              << o.energy_method << ", " << *o.energy_runs << " runs, idle " << idle_w << " W, limit " << *limit_w
              << " W), SM " << o.sm_clock_mhz.value_or(0) << " MHz, throttled " << o.throttled_samples.value_or(-1)
              << ", benchmark " << outcome.benchmark_seconds << " s\n";
  }
}

TEST(GpuObservers, WithoutEnergyAskedForOnlyClocksAndResourcesAreStored) {
  TempDb t;
  db::Store store(t.path);
  const auto rows = tune(copy_family(), store, copy_session(1 << 20, 0));
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    ASSERT_EQ(r.status, "ok") << r.config << ": " << r.error;
    EXPECT_FALSE(r.observations.energy_j) << r.config;
    EXPECT_TRUE(r.observations.energy_method.empty()) << r.config;
    EXPECT_TRUE(r.observations.registers) << r.config;
    if (nvml_gpu()) {
      ASSERT_TRUE(r.observations.sm_clock_mhz) << r.config;
      EXPECT_GT(*r.observations.sm_clock_mhz, 100) << r.config;
      EXPECT_GE(r.observations.throttled_samples.value_or(-1), 0) << r.config;
    }
  }
}

TEST(GpuObservers, RegisterCountsMatchTheCubinsAttributes) {
  const Family& family = copy_family();
  const Problem problem = CopyFamily::make_problem(1 << 20);
  const Space space = family.space(device().limits());
  GpuEvaluator evaluator(device(), family, quick_measure());
  evaluator.set_problem(problem, 1);
  const std::string source = family.source();
  int checked = 0;
  for (const Config& config : space.enumerate()) {
    if (checked == 6) break;
    const Compiled compiled =
        compile_apart(compile_request(family, source, space, config, problem, device().limits().arch()));
    ASSERT_TRUE(compiled.ok) << compiled.log;
    const Outcome outcome = evaluator.evaluate(space, config, compiled);
    ASSERT_EQ(outcome.status, Status::ok) << outcome.error;
    const db::Observations& o = outcome.observations;

    device().make_current();
    const Module module(compiled.cubin);
    const CUfunction f = module.function("copy_kernel");
    int registers = 0, local = 0, shared = 0;
    CUTUNE_CU(cuFuncGetAttribute, &registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    CUTUNE_CU(cuFuncGetAttribute, &local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
    CUTUNE_CU(cuFuncGetAttribute, &shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    EXPECT_EQ(o.registers, registers) << space.key(config);
    EXPECT_EQ(o.local_bytes, local) << space.key(config);
    EXPECT_EQ(o.static_shared_bytes, shared) << space.key(config);
    // ptxas' own report was read (spills known) and agrees on the registers.
    EXPECT_TRUE(o.spill_store_bytes && o.spill_load_bytes) << space.key(config) << " (log of " << compiled.log.size()
                                                           << " bytes, options " << compiled.options.size() << "):\n"
                                                           << compiled.log;
    EXPECT_NE(compiled.log.find("Used " + std::to_string(registers) + " registers"), std::string::npos) << compiled.log;
    ASSERT_TRUE(o.blocks_per_sm && o.occupancy) << space.key(config);
    EXPECT_GT(*o.blocks_per_sm, 0);
    EXPECT_GT(*o.occupancy, 0);
    EXPECT_LE(*o.occupancy, 1.0);
    EXPECT_TRUE(o.compile_warnings.empty()) << o.compile_warnings;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(GpuObservers, NoClockOrPowerSettingChangesDuringARun) {
  const auto gpu = nvml_gpu();
  if (!gpu) GTEST_SKIP() << "no NVML for this GPU";
  const nvml::Settings before = gpu->settings();
  TempDb t;
  db::Store store(t.path);
  const auto rows = tune(copy_family(), store, copy_session(std::int64_t{1} << 24, 0.2));
  ASSERT_FALSE(rows.empty());
  const nvml::Settings after = gpu->settings();
  EXPECT_EQ(before, after) << "before: " << nvml::describe(before) << "\nafter:  " << nvml::describe(after);
  EXPECT_TRUE(before.power_limit_mw || before.applications_sm_clock_mhz) << "NVML reported no setting to compare";
}
