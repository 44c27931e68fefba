#pragma once
// What every family's GPU test needs: a throw-away database, a quick session over a (possibly
// narrowed) space, and a family whose template is edited to plant a wrong, faulting or hanging
// variant. One home for these, so each family's test says only what is particular to it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "family.hpp"
#include "session.hpp"

namespace cutune::testing {

// `tune` beside this test binary (so a carried build folder works), else the build-time path.
inline std::string tune_binary() {
  const auto beside = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "tune";
  return std::filesystem::exists(beside) ? beside.string() : std::string(TUNE_BINARY);
}

inline Device& device() {
  static Device d(0);
  return d;
}

struct TempDb {
  std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("cutune-gpu-" + std::to_string(getpid()) + "-" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::string path = (folder / "results.db").string();
  TempDb() {
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
  }
  ~TempDb() { std::filesystem::remove_all(folder); }
};

inline MeasureOptions quick_measure() {
  MeasureOptions o;
  o.warmup_runs = 1;
  o.min_samples = 3;
  o.max_samples = 10;
  return o;
}

inline SessionOptions quick_session(std::vector<Problem> problems) {
  SessionOptions o;
  o.problems = std::move(problems);
  o.strategy.name = "brute_force";
  o.compile_jobs = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  o.cache_folder = CompileCache::default_folder();
  o.measure = quick_measure();
  o.progress = false;
  return o;
}

// Runs a session of `family` into `store` and returns the rows it wrote.
inline std::vector<db::ResultRecord> tune(const Family& family, db::Store& store, const SessionOptions& options) {
  Session session(family, device(), store, options);
  return store.results_of_run(session.run().run_id);
}

inline std::map<std::string, int> status_counts(const std::vector<db::ResultRecord>& rows) {
  std::map<std::string, int> counts;
  for (const auto& r : rows) ++counts[r.status];
  return counts;
}

// Every row ok, verified and timed.
inline void expect_all_verified(const std::vector<db::ResultRecord>& rows) {
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_EQ(r.status, "ok") << r.config << ": " << r.error;
    if (r.status != "ok") continue;
    EXPECT_GT(r.verify_s, 0) << r.config;
    EXPECT_GT(*r.time_ms_median, 0) << r.config;
    EXPECT_LE(*r.time_ms_min, *r.time_ms_median) << r.config;
  }
}

// Tunes the whole space of `family` on `problems` into a throw-away database: one row per config
// and problem, every one verified.
inline void expect_whole_space_verified(const Family& family, const std::vector<Problem>& problems) {
  TempDb t;
  db::Store store(t.path);
  const auto rows = tune(family, store, quick_session(problems));
  EXPECT_EQ(rows.size(), family.space(device().limits()).enumerate().size() * problems.size());
  expect_all_verified(rows);
}

// A planted error in the variants whose config key starts with one of `wrong_prefixes`: those must be
// wrong_result with the first bad index at `index`, all others ok. Returns how many were rejected.
inline int expect_rejected_exactly(const std::vector<db::ResultRecord>& rows,
                                   const std::vector<std::string>& wrong_prefixes, std::int64_t index) {
  int rejected = 0;
  for (const auto& r : rows) {
    const bool wrong = std::any_of(wrong_prefixes.begin(), wrong_prefixes.end(),
                                   [&](const std::string& prefix) { return r.config.rfind(prefix, 0) == 0; });
    if (!wrong) {
      EXPECT_EQ(r.status, "ok") << r.config << ": " << r.error;
      continue;
    }
    EXPECT_EQ(r.status, "wrong_result") << r.config;
    EXPECT_TRUE(r.error_index) << r.config;
    if (r.error_index) {
      EXPECT_EQ(*r.error_index, index) << r.config << ": " << r.error;
    }
    ++rejected;
  }
  return rejected;
}

// A registered family with its template edited (the first occurrence of `from` becomes `to`)
// and, with `only`, its space narrowed to configs whose key contains `only`. Everything else
// forwards to the registered family of the same name, which is also what the GPU worker uses.
class EditedFamily : public Family {
 public:
  EditedFamily(const Family& base, std::string from, std::string to, std::string only = {})
      : base_(base), from_(std::move(from)), to_(std::move(to)), only_(std::move(only)) {}

  std::string source() const override {
    std::string text = base_.source();
    const auto at = text.find(from_);
    if (at == std::string::npos) throw Error("EditedFamily: '" + from_ + "' is not in " + base_.template_file());
    return text.replace(at, from_.size(), to_);
  }
  Space space(const DeviceLimits& limits) const override {
    Space s = base_.space(limits);
    if (!only_.empty()) {
      const Space unfiltered = s;
      s.require("test subset", [unfiltered, only = only_](const ConfigView& c) {
        return unfiltered.key(c.config()).find(only) != std::string::npos;
      });
    }
    return s;
  }
  std::string name() const override { return base_.name(); }
  std::string summary() const override { return base_.summary(); }
  std::string template_file() const override { return base_.template_file(); }
  std::vector<Problem> problems(const ProblemRequest& r) const override { return base_.problems(r); }
  const ProblemSchema& problem_schema() const override { return base_.problem_schema(); }
  void check_problem(const Problem& p) const override { base_.check_problem(p); }
  std::vector<std::string> problem_definitions(const Problem& p) const override { return base_.problem_definitions(p); }
  std::vector<BufferSpec> buffers(const Problem& p) const override { return base_.buffers(p); }
  std::vector<BufferSpec> scratch(const Problem& p, const ConfigView& c) const override { return base_.scratch(p, c); }
  std::vector<Step> plan(const Problem& p, const ConfigView& c) const override { return base_.plan(p, c); }
  void generate_inputs(const Problem& p, std::uint64_t seed, HostBuffers& inputs) const override {
    base_.generate_inputs(p, seed, inputs);
  }
  HostBuffers reference(const Problem& p, const HostBuffers& inputs) const override {
    return base_.reference(p, inputs);
  }
  Verdict compare(const Problem& p, const HostBuffers& e, const HostBuffers& a) const override {
    return base_.compare(p, e, a);
  }
  Work work(const Problem& p) const override { return base_.work(p); }

 private:
  const Family& base_;
  std::string from_, to_, only_;
};

}  // namespace cutune::testing
