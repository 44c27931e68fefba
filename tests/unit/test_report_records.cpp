// The readers reports take their records from (db/report_records.hpp), and the device and run
// readers beside the store: counts, orders, filters, an empty database and an old one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report_records.hpp"
#include "results_fixture.hpp"
#include "store.hpp"

using namespace cutune;
using namespace cutune::db;
using cutune::testing::ResultsBuilder;

namespace {

struct TempStore {
  cutune::testing::TempFolder folder{"cutune-report-records"};
  Store store{folder.file("results.db")};
  ResultsBuilder add{store};
  sql::Database& db() { return store.database(); }
};

// A stored result of `add`'s run for (device, family), changed by `edit` before it is stored.
template <class Edit>
ResultRecord stored(TempStore& t, std::int64_t device, const std::string& family, std::int64_t n,
                    const std::string& config, std::optional<double> ms, Edit edit) {
  ResultRecord r = t.add.record(device, family, n, "int32", config, ms, "ok", {});
  edit(r);
  t.store.add_result(r);
  return r;
}

}  // namespace

TEST(ReportRecords, AnEmptyDatabaseHoldsNothingToReport) {
  TempStore t;
  EXPECT_TRUE(all_devices(t.db()).empty());
  EXPECT_FALSE(device_by_id(t.db(), 1));
  EXPECT_FALSE(run_by_id(t.db(), 1));
  EXPECT_TRUE(run_qualities(t.db(), {}, 3).empty());
  EXPECT_TRUE(device_families_with_results(t.db()).empty());
  EXPECT_TRUE(device_family_counts(t.db()).empty());
  EXPECT_TRUE(run_sources(t.db()).empty());
  EXPECT_TRUE(best_per_problem(t.db(), {}).empty());
  EXPECT_TRUE(problem_counts(t.db(), {}).empty());
  EXPECT_FALSE(fastest_time_of_config(t.db(), {}, 1, "block=256"));
  EXPECT_TRUE(latest_baselines(t.db(), "scan").empty());
  int visited = 0;
  for_each_result(t.db(), {}, [&](const ResultRecord&, const ProblemRecord&) { ++visited; });
  EXPECT_EQ(visited, 0);
}

TEST(ReportRecords, DevicesAndRunsReadBackByIdInIdOrder) {
  TempStore t;
  const auto b = t.add.device("GPU-b", "B", 9, 0), a = t.add.device("GPU-a", "A", 8, 0);
  const std::vector<DeviceRecord> devices = all_devices(t.db());
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].id, b);
  EXPECT_EQ(devices[1].uuid, "GPU-a");
  ASSERT_TRUE(device_by_id(t.db(), a));
  EXPECT_EQ(device_by_id(t.db(), a)->name, "A");
  EXPECT_EQ(device_by_id(t.db(), a)->cc_major, 8);

  const auto r = t.add.result(a, "scan", 1024, "int32", "block=256", 1.0);
  const std::optional<RunRecord> run = run_by_id(t.db(), r.run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->device_id, a);
  EXPECT_EQ(run->family, "scan");
  EXPECT_EQ(run->strategy, "brute_force");
  EXPECT_EQ(run->status, "running");
  EXPECT_EQ(run->finished_at, "");  // NULL while it runs
  t.store.finish_run(r.run_id, "finished");
  EXPECT_EQ(run_by_id(t.db(), r.run_id)->status, "finished");
  EXPECT_NE(run_by_id(t.db(), r.run_id)->finished_at, "");
  EXPECT_FALSE(run_by_id(t.db(), r.run_id + 1));
}

TEST(ReportRecords, TimeOutsideSamplesAllowsRoundingAtTheBounds) {
  ResultRecord r;
  r.status = "ok";
  r.time_ms_median = 1.0;
  r.time_ms_min = 1.0 + 1e-12;  // equal but for rounding
  r.time_ms_max = 2.0;
  EXPECT_FALSE(time_outside_samples(r));
  r.time_ms_min = 1.1;
  EXPECT_TRUE(time_outside_samples(r));
  r.status = "timeout";
  EXPECT_FALSE(time_outside_samples(r));  // only ok results count
  r.status = "ok";
  r.time_ms_max.reset();
  EXPECT_FALSE(time_outside_samples(r));  // no range to lie outside
}

TEST(ReportRecords, RunQualitiesCountResultsAndAnomaliesAndKeepTheFirstExamples) {
  TempStore t;
  const auto gpu = t.add.device("GPU-a", "A", 9, 0);
  const auto outside = [](ResultRecord& r) { r.time_ms_min = *r.time_ms_median * 2, r.time_ms_max = 4; };
  stored(t, gpu, "scan", 1024, "block=64", 1.0, outside);
  stored(t, gpu, "scan", 1024, "block=128", 1.5, outside);
  stored(t, gpu, "scan", 1024, "block=256", 0.5, outside);
  stored(t, gpu, "scan", 1024, "block=512", 0.7, [](ResultRecord& r) { r.samples = 0; });
  t.add.result(gpu, "scan", 1024, "int32", "block=1024", std::nullopt, "compile_error");
  t.add.result(gpu, "reduce", 1024, "int32", "block=64", 2.0);

  const auto runs = run_qualities(t.db(), {gpu, {}, {}}, 2);
  ASSERT_EQ(runs.size(), 2u);  // scan's run, then reduce's: by id
  const RunQuality& scan = runs[0];
  EXPECT_EQ(scan.run.family, "scan");
  EXPECT_EQ(scan.device_uuid, "GPU-a");
  EXPECT_EQ(scan.results, 5);
  EXPECT_EQ(scan.ok, 4);
  EXPECT_EQ(scan.outside_samples, 3);
  EXPECT_EQ(scan.ok_without_samples, 1);
  ASSERT_EQ(scan.outside_examples.size(), 2u);  // as many as asked, in the order stored
  EXPECT_EQ(scan.outside_examples[0].config, "block=64");
  EXPECT_DOUBLE_EQ(scan.outside_examples[0].min_ms, 2.0);
  EXPECT_EQ(scan.outside_examples[1].config, "block=128");
  EXPECT_EQ(runs[1].results, 1);
  EXPECT_EQ(runs[1].outside_samples, 0);
  EXPECT_TRUE(runs[1].outside_examples.empty());

  EXPECT_EQ(run_qualities(t.db(), {gpu, {}, std::string("reduce")}, 2).size(), 1u);
  EXPECT_EQ(run_qualities(t.db(), {gpu, scan.run.id, {}}, 2).at(0).run.id, scan.run.id);
  EXPECT_TRUE(run_qualities(t.db(), {gpu + 1, {}, {}}, 2).empty());
}

TEST(ReportRecords, DeviceFamilyPairsComeByDeviceThenFamilyWithTheirCounts) {
  TempStore t;
  const auto first = t.add.device("GPU-1", "One", 9, 0), second = t.add.device("GPU-2", "Two", 9, 0);
  t.add.result(second, "scan", 1024, "int32", "block=64", 1.0);
  t.add.result(first, "scan", 1024, "int32", "block=64", 1.0);
  t.add.result(first, "scan", 2048, "int32", "block=64", 1.0);
  t.add.result(first, "scan", 2048, "int32", "block=128", std::nullopt, "timeout");
  stored(t, first, "scan", 2048, "block=256", 1.0, [](ResultRecord& r) { r.time_ms_max = 0.5; });
  t.add.result(first, "reduce", 1024, "int32", "block=64", 1.0);

  const auto pairs = device_families_with_results(t.db());
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].device_id, first);
  EXPECT_EQ(pairs[0].family, "reduce");
  EXPECT_EQ(pairs[1].family, "scan");
  EXPECT_EQ(pairs[2].device_id, second);

  const auto counts = device_family_counts(t.db());
  ASSERT_EQ(counts.size(), pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    EXPECT_EQ(counts[k].pair.device_id, pairs[k].device_id);
    EXPECT_EQ(counts[k].pair.family, pairs[k].family);
  }
  const DeviceFamilyCounts& scan = counts[1];
  EXPECT_EQ(scan.results, 4);
  EXPECT_EQ(scan.ok, 3);
  EXPECT_EQ(scan.problems, 2);
  EXPECT_EQ(scan.runs, 1);
  EXPECT_EQ(scan.outside_samples, 1);
  EXPECT_EQ(counts[2].results, 1);

  const auto sources = run_sources(t.db());
  ASSERT_EQ(sources.size(), 3u);  // one run each, all brute_force
  EXPECT_EQ(sources[0].device_uuid, "GPU-1");
  EXPECT_EQ(sources[0].strategy, "brute_force");
}

TEST(ReportRecords, BestPerProblemIsTheFastestOkResultInFamilySizeKeyDeviceOrder) {
  TempStore t;
  const auto a = t.add.device("GPU-a", "A", 9, 0), b = t.add.device("GPU-b", "B", 9, 0);
  t.add.result(a, "scan", 2048, "int32", "block=64", 2.0);
  t.add.result(a, "scan", 2048, "int32", "block=128", 1.5);
  t.add.result(a, "scan", 2048, "int32", "block=256", 0.1, "wrong_result");  // faster, but failed
  t.add.result(b, "scan", 2048, "int32", "block=64", 3.0);
  t.add.result(a, "scan", 1024, "int32", "block=64", 1.0);
  t.add.result(a, "reduce", 4096, "int32", "block=64", 5.0);

  const auto bests = best_per_problem(t.db(), {});
  ASSERT_EQ(bests.size(), 4u);
  EXPECT_EQ(bests[0].family, "reduce");
  EXPECT_EQ(bests[1].problem_size, 1024);
  EXPECT_EQ(bests[2].device_id, a);
  EXPECT_EQ(bests[2].config, "block=128");
  EXPECT_DOUBLE_EQ(bests[2].time_ms, 1.5);
  EXPECT_EQ(bests[2].config_json, R"({"block":128})");
  EXPECT_EQ(bests[3].device_id, b);
  EXPECT_DOUBLE_EQ(bests[3].time_ms, 3.0);

  const auto of_b = best_per_problem(t.db(), {b, {}, {}});
  ASSERT_EQ(of_b.size(), 1u);
  EXPECT_EQ(of_b[0].config, "block=64");
  EXPECT_EQ(best_per_problem(t.db(), {a, {}, std::string("scan")}).size(), 2u);

  const auto counts = problem_counts(t.db(), {a, {}, std::string("scan")});
  ASSERT_EQ(counts.size(), 2u);  // by problem id: 2048 was stored first
  EXPECT_EQ(counts[0].problem_size, 2048);
  EXPECT_EQ(counts[0].results, 3);
  EXPECT_EQ(counts[0].ok, 2);
  EXPECT_EQ(counts[1].results, 1);

  const auto problem = bests[2].problem_id;
  EXPECT_EQ(fastest_time_of_config(t.db(), {b, {}, {}}, problem, "block=64"), 3.0);
  EXPECT_EQ(fastest_time_of_config(t.db(), {a, {}, {}}, problem, "block=64"), 2.0);
  EXPECT_FALSE(fastest_time_of_config(t.db(), {b, {}, {}}, problem, "block=128"));  // b never ran it
  EXPECT_FALSE(fastest_time_of_config(t.db(), {a, {}, {}}, problem, "block=256"));  // only failed
}

TEST(ReportRecords, ForEachResultGoesByRunThenAsStoredWithEachResultsProblem) {
  TempStore t;
  const auto gpu = t.add.device("GPU-a", "A", 9, 0);
  t.add.result(gpu, "scan", 2048, "int32", "block=64", 2.0);
  t.add.result(gpu, "reduce", 512, "int32", "block=64", 1.0);
  t.add.result(gpu, "scan", 1024, "int32", "block=128", std::nullopt, "launch_error");
  std::vector<std::string> seen;
  for_each_result(t.db(), {gpu, {}, std::string("scan")}, [&](const ResultRecord& r, const ProblemRecord& p) {
    EXPECT_EQ(r.problem_id, p.id);
    seen.push_back(p.key + " " + r.config + " " + r.status);
  });
  EXPECT_EQ(seen,
            (std::vector<std::string>{"n=2048,type=int32 block=64 ok", "n=1024,type=int32 block=128 launch_error"}));
  int all = 0;
  for_each_result(t.db(), {}, [&](const ResultRecord&, const ProblemRecord&) { ++all; });
  EXPECT_EQ(all, 3);
}

TEST(ReportRecords, AVersion1DatabaseReadsAsItIsWithDefaultsAndNoBaselines) {
  cutune::testing::TempFolder folder("cutune-report-records-v1");
  const std::string path = folder.file("old.db");
  cutune::testing::create_version_1_database(path);
  sql::Database db(path, sql::Database::Mode::read_only);  // as it is: no migration
  std::vector<ResultRecord> results;
  for_each_result(db, {}, [&](const ResultRecord& r, const ProblemRecord& p) {
    results.push_back(r);
    EXPECT_EQ(p.match_key, "");  // no match keys before version 4
  });
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].verified);
  EXPECT_FALSE(results[0].cut_short);
  EXPECT_FALSE(results[0].observations.energy_j);
  EXPECT_TRUE(latest_baselines(db, "scan").empty());
  ASSERT_EQ(run_qualities(db, {1, {}, {}}, 3).size(), 1u);
  EXPECT_EQ(run_qualities(db, {1, {}, {}}, 3)[0].run.finished_at, "");
}

TEST(ReportRecords, LatestBaselinesKeepTheNewestPerDeviceProblemAndLibrary) {
  TempStore t;
  const auto a = t.add.device("GPU-a", "A", 9, 0), b = t.add.device("GPU-b", "B", 9, 0);
  t.store.add_baseline({a, "scan", "n=1024", "cub", 1.0, 0.9, "block=64", "2026-01-01", "old"});
  t.store.add_baseline({a, "scan", "n=1024", "cub", 0.8, 0.7, "block=128", "2026-02-01", "new"});
  t.store.add_baseline({b, "scan", "n=1024", "cub", 2.0, 1.9, "block=64", "2026-01-01", "b"});
  t.store.add_baseline({a, "scan", "n=1024", "thrust", 3.0, 0.7, "block=128", "2026-01-01", "t"});
  t.store.add_baseline({a, "reduce", "n=1024", "cub", 1.0, 1.0, "block=64", "2026-01-01", "r"});

  const auto all = latest_baselines(t.db(), "scan");
  ASSERT_EQ(all.size(), 3u);  // by problem, library, device
  EXPECT_EQ(all[0].device_id, a);
  EXPECT_EQ(all[0].commit, "new");
  EXPECT_DOUBLE_EQ(all[0].library_ms, 0.8);
  EXPECT_EQ(all[1].device_id, b);
  EXPECT_EQ(all[2].library, "thrust");
  const auto of_b = latest_baselines(t.db(), "scan", b);
  ASSERT_EQ(of_b.size(), 1u);
  EXPECT_EQ(of_b[0].commit, "b");
  EXPECT_TRUE(latest_baselines(t.db(), "matmul").empty());
}
