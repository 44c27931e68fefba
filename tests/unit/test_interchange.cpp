// Import and export: the shared Kernel Tuner landscapes, round trips through Kernel Tuner, T4 and
// cutune JSON, merging databases, and bad input that must change nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "compressed_file.hpp"
#include "interchange.hpp"
#include "lookup.hpp"
#include "results_fixture.hpp"

using namespace cutune;
using namespace cutune::db;
using cutune::testing::ResultsBuilder;
using cutune::testing::TempFolder;

namespace {

const std::filesystem::path kLandscapes = std::filesystem::path(CUTUNE_SHARED_DIR) / "landscapes";

// Every result of a database by its natural key: device uuid, family, problem key, config.
using NaturalKey = std::tuple<std::string, std::string, std::string, std::string>;

std::map<NaturalKey, ResultRecord> results_by_key(Store& store) {
  auto s = store.database().prepare(std::string("SELECT ") + kResultColumns + R"sql(,
      (SELECT uuid FROM devices WHERE id = results.device_id), (SELECT family FROM problems WHERE id = results.problem_id),
      (SELECT key FROM problems WHERE id = results.problem_id) FROM results)sql");
  std::map<NaturalKey, ResultRecord> rows;
  // kResultColumns has 27 columns; the natural key follows.
  while (s.step()) rows[{s.column_text(27), s.column_text(28), s.column_text(29), s.column_text(5)}] = read_result(s);
  return rows;
}

void expect_near_relative(double expected, double actual, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-12 * std::max(1.0, std::abs(expected))) << what;
}

// The same measurements: every field but the row ids; costs after a ms ↔ s conversion to rounding.
void expect_same_results(Store& expected_store, Store& actual_store) {
  const auto expected = results_by_key(expected_store), actual = results_by_key(actual_store);
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [key, e] : expected) {
    const auto it = actual.find(key);
    ASSERT_NE(it, actual.end()) << std::get<3>(key);
    const ResultRecord& a = it->second;
    const std::string what = std::get<3>(key);
    EXPECT_EQ(a.config_json, e.config_json) << what;
    EXPECT_EQ(a.status, e.status) << what;
    EXPECT_EQ(a.time_ms_median, e.time_ms_median) << what;
    EXPECT_EQ(a.time_ms_min, e.time_ms_min) << what;
    EXPECT_EQ(a.time_ms_max, e.time_ms_max) << what;
    EXPECT_EQ(a.time_ms_stdev, e.time_ms_stdev) << what;
    EXPECT_EQ(a.samples, e.samples) << what;
    expect_near_relative(e.compile_s, a.compile_s, what + " compile_s");
    expect_near_relative(e.verify_s, a.verify_s, what + " verify_s");
    expect_near_relative(e.benchmark_s, a.benchmark_s, what + " benchmark_s");
    EXPECT_EQ(a.gbs, e.gbs) << what;
    EXPECT_EQ(a.gflops, e.gflops) << what;
    EXPECT_EQ(a.copy_fraction, e.copy_fraction) << what;
    EXPECT_EQ(a.error, e.error) << what;
    EXPECT_EQ(a.error_index, e.error_index) << what;
    EXPECT_EQ(a.launch_json, e.launch_json) << what;
    EXPECT_EQ(a.created_at, e.created_at) << what;
    EXPECT_EQ(a.elapsed_s, e.elapsed_s) << what;
  }
}

std::int64_t count(Store& store, const std::string& table) {
  auto s = store.database().prepare("SELECT COUNT(*) FROM " + table);
  s.step();
  return s.column_int(0);
}

// Scan results on two devices with every kind of row: failures with their error and index, GB/s,
// copy fractions, a cubin.
struct Tuned {
  TempFolder folder;
  std::string path = folder.file("tuned.db");
  std::int64_t h100 = 0, a100 = 0;
  Tuned() {
    Store store(path);
    ResultsBuilder b(store);
    h100 = b.device("GPU-h100", "NVIDIA H100", 9, 0);
    a100 = b.device("GPU-a100", "NVIDIA A100", 8, 0);
    store.set_copy_bandwidth(h100, 2900.5);
    for (std::int64_t n : {4096, 1 << 20}) {
      auto fast = b.result(h100, "scan", n, "int32", "algo=lookback,block=256,ept=8,vec=4,pad=1", 0.0123456789);
      b.result(h100, "scan", n, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 0.02);
      b.result(h100, "scan", n, "int32", "algo=blelloch,block=1024,ept=16,vec=4,pad=1", std::nullopt, "compile_error");
      b.result(a100, "scan", n, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 0.05);
      store.put_cubin({0, "sm_90", fast.template_id, fast.problem_id, fast.config, {0x7f, 'E', 'L', 'F', 0, 255, 3},
                       fast.launch_json, R"(["-DCUTUNE_BLOCK=256"])", "13.0", ""});
    }
    auto wrong = b.result(h100, "scan", 4096, "int32", "algo=warp,block=64,ept=1,vec=1,pad=0", std::nullopt, "wrong_result");
    wrong.error = "tooffsets[17]: expected 3, got 4";
    wrong.error_index = 17;
    wrong.gbs = 12.5;
    wrong.copy_fraction = 0.25;
    wrong.created_at = "2026-11-22T01:02:03Z";
    wrong.elapsed_s = 42.5;
    store.add_result(wrong);
  }
};

// The file's fastest valid entry, as its comma-joined key.
std::string fastest_entry(const nlohmann::json& file) {
  std::string best;
  double best_ms = INFINITY;
  for (const auto& [key, entry] : file.at("cache").items())
    if (entry.at("time").is_number() && entry.at("time").get<double>() < best_ms) {
      best_ms = entry.at("time").get<double>();
      best = key;
    }
  return best;
}

std::string config_text_of_entry(const nlohmann::json& file, const std::string& key) {
  std::string text;
  for (const auto& name : file.at("tune_params_keys"))
    text += (text.empty() ? "" : ",") + name.get<std::string>() + "=" + file.at("cache").at(key).at(name.get<std::string>()).dump();
  return text;
}

}  // namespace

// ---- the shared Kernel Tuner landscapes -----------------------------------------------------------

TEST(KernelTunerImport, EveryLandscapeKeepsItsFastestEntryAndEveryFailure) {
  ASSERT_TRUE(std::filesystem::exists(kLandscapes)) << kLandscapes;
  int files = 0;
  for (const auto& file_entry : std::filesystem::directory_iterator(kLandscapes)) {
    if (file_entry.path().extension() != ".gz") continue;
    ++files;
    const std::string path = file_entry.path().string();
    SCOPED_TRACE(path);
    const auto file = nlohmann::json::parse(read_text_file(path));
    TempFolder folder;
    Store store(folder.file("imported.db"));
    const ImportSummary summary = import_kernel_tuner(store, path);
    EXPECT_EQ(summary.results, static_cast<std::int64_t>(file.at("cache").size()));
    EXPECT_EQ(store.result_count(), summary.results);

    const std::string family = file.at("kernel_name").get<std::string>();
    const auto best = store.best(family);
    ASSERT_EQ(best.size(), 1u);
    const std::string fastest = fastest_entry(file);
    EXPECT_EQ(best[0].config, config_text_of_entry(file, fastest));
    EXPECT_DOUBLE_EQ(best[0].time_ms, file.at("cache").at(fastest).at("time").get<double>());
    EXPECT_EQ(best[0].device_name, file.at("device_name").get<std::string>());
    EXPECT_EQ(best[0].device_uuid, synthetic_device_uuid(file.at("device_name").get<std::string>()));

    // Failures keep their name as the error; costs arrive in seconds.
    std::map<std::string, std::int64_t> failures_in_file, failures_stored;
    for (const auto& [key, entry] : file.at("cache").items())
      if (entry.at("time").is_string()) ++failures_in_file[entry.at("time").get<std::string>()];
    auto s = store.database().prepare("SELECT error, COUNT(*) FROM results WHERE status != 'ok' GROUP BY error");
    while (s.step()) failures_stored[s.column_text(0)] = s.column_int(1);
    EXPECT_EQ(failures_stored, failures_in_file);
    const auto& first = file.at("cache").begin().value();
    auto costs = store.database().prepare("SELECT compile_s, verify_s, benchmark_s FROM results WHERE config = ?1");
    costs.bind(1, config_text_of_entry(file, file.at("cache").begin().key()));
    ASSERT_TRUE(costs.step());
    EXPECT_DOUBLE_EQ(costs.column_double(0), first.at("compile_time").get<double>() / 1e3);
    EXPECT_DOUBLE_EQ(costs.column_double(1), first.at("verification_time").get<double>() / 1e3);
    EXPECT_DOUBLE_EQ(costs.column_double(2), first.at("benchmark_time").get<double>() / 1e3);

    if (file_entry.path().filename() == "pnpoly_RTX_3090.json.gz") {  // the smallest: importing it again adds nothing
      import_kernel_tuner(store, path);
      EXPECT_EQ(store.result_count(), summary.results);
      EXPECT_EQ(count(store, "runs"), 1);
    }
  }
  // Every landscape in the folder, however many it holds (the shared folder grows).
  int in_folder = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kLandscapes))
    in_folder += entry.path().filename().string().ends_with(".json.gz") ? 1 : 0;
  EXPECT_GT(files, 0);
  EXPECT_EQ(files, in_folder);
}

TEST(KernelTunerImport, ImportedResultsAnswerLookups) {
  TempFolder folder;
  const std::string db_path = folder.file("imported.db");
  {
    Store store(db_path);
    import_kernel_tuner(store, (kLandscapes / "convolution_A100.json.gz").string());
    import_kernel_tuner(store, (kLandscapes / "convolution_A4000.json.gz").string());
  }
  lookup::Database results(db_path);
  const lookup::Query a4000{"convolution_kernel", {"", "NVIDIA RTX A4000", 0, 0}, {4096 * 4096, ""}};
  const auto m = results.find(a4000);
  EXPECT_EQ(m->level, lookup::Level::exact_device);
  EXPECT_EQ(m->matched_problem, "problem_size=4096x4096");
  EXPECT_EQ(m->integer("block_size_x"), 256);
  const auto unknown = results.find({"convolution_kernel", {"", "Some GPU", 0, 0}, {1000, ""}});
  EXPECT_EQ(unknown->level, lookup::Level::family_default);
}

TEST(KernelTunerRoundTrip, ALandscapeExportedAndReimportedIsUnchanged) {
  TempFolder folder;
  Store original(folder.file("original.db"));
  import_kernel_tuner(original, (kLandscapes / "pnpoly_RTX_3090.json.gz").string());
  const std::string exported = folder.file("pnpoly.json.gz");
  export_kernel_tuner(original, {}, exported);
  Store again(folder.file("again.db"));
  import_kernel_tuner(again, exported);
  expect_same_results(original, again);
  // It is still a Kernel Tuner file: the same keys, times and failure names as the source.
  const auto source = nlohmann::json::parse(read_text_file((kLandscapes / "pnpoly_RTX_3090.json.gz").string()));
  const auto written = nlohmann::json::parse(read_text_file(exported));
  EXPECT_EQ(written.at("device_name"), source.at("device_name"));
  EXPECT_EQ(written.at("problem_size"), source.at("problem_size"));
  EXPECT_EQ(written.at("tune_params_keys"), source.at("tune_params_keys"));
  ASSERT_EQ(written.at("cache").size(), source.at("cache").size());
  for (const auto& [key, entry] : source.at("cache").items()) EXPECT_EQ(written.at("cache").at(key).at("time"), entry.at("time")) << key;
}

TEST(KernelTunerRoundTrip, OurResultsComeBackUnchanged) {
  Tuned tuned;
  Store original(tuned.path);
  const std::string exported = tuned.folder.file("scan.json");
  export_kernel_tuner(original, {"scan", "GPU-h100", "n=4096,type=int32"}, exported);
  const auto written = nlohmann::json::parse(read_text_file(exported));
  EXPECT_EQ(written.at("schema_version"), "1.1.0");
  EXPECT_EQ(written.at("cache").at("lookback,256,8,4,1").at("time"), 0.0123456789);
  EXPECT_EQ(written.at("cache").at("blelloch,1024,16,4,1").at("time"), "CompilationFailedConfig");
  EXPECT_EQ(written.at("cache").at("warp,64,1,1,0").at("time"), "RuntimeFailedConfig");

  Store again(tuned.folder.file("again.db"));
  import_kernel_tuner(again, exported);
  Store expected(tuned.folder.file("expected.db"));  // the exported slice alone, for comparison
  import_json(expected, [&] {
    export_json(original, {"scan", "GPU-h100", "n=4096,type=int32"}, tuned.folder.file("slice.json"));
    return tuned.folder.file("slice.json");
  }());
  expect_same_results(expected, again);
  EXPECT_EQ(again.device_by_uuid("GPU-h100")->copy_bandwidth_gbs, 2900.5);
}

TEST(T4RoundTrip, OurResultsComeBackUnchanged) {
  Tuned tuned;
  Store original(tuned.path);
  const std::string exported = tuned.folder.file("scan-t4.json");
  export_t4(original, {"scan", "NVIDIA H100", "n=1048576,type=int32"}, exported);
  const auto written = nlohmann::json::parse(read_text_file(exported));
  EXPECT_EQ(written.at("schema_version"), "1.0.0");
  ASSERT_EQ(written.at("results").size(), 3u);
  for (const auto& r : written.at("results"))
    for (const char* required : {"configuration", "times", "invalidity", "correctness"}) EXPECT_TRUE(r.contains(required)) << required;

  Store again(tuned.folder.file("again.db"));
  import_t4(again, exported);
  Store expected(tuned.folder.file("expected.db"));
  export_json(original, {"scan", "NVIDIA H100", "n=1048576,type=int32"}, tuned.folder.file("slice.json"));
  import_json(expected, tuned.folder.file("slice.json"));
  expect_same_results(expected, again);
}

TEST(T4RoundTrip, ALandscapeThroughT4KeepsItsMeasurements) {
  TempFolder folder;
  Store original(folder.file("original.db"));
  import_kernel_tuner(original, (kLandscapes / "pnpoly_RTX_3090.json.gz").string());
  export_t4(original, {}, folder.file("pnpoly-t4.json"));
  Store again(folder.file("again.db"));
  import_t4(again, folder.file("pnpoly-t4.json"));
  expect_same_results(original, again);
}

TEST(T4Import, APlainFileNeedsItsDeviceAndKernelNamed) {
  TempFolder folder;
  {
    std::ofstream(folder.file("plain.json")) << R"({"schema_version": "1.0.0", "results": [
      {"timestamp": "2025-01-01 00:00:00+00:00", "configuration": {"block": 128, "tile": 2}, "objectives": ["time"],
       "times": {"compilation": 1200, "benchmark": 30, "validation": 5, "runtimes": [1.0, 2.0, 3.0]},
       "invalidity": "correct", "correctness": 1, "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}]},
      {"timestamp": "2025-01-01 00:00:10+00:00", "configuration": {"block": 256, "tile": 2}, "objectives": ["time"],
       "times": {"compilation": 800}, "invalidity": "compile", "correctness": 1, "measurements": []}]})";
  }
  Store store(folder.file("t4.db"));
  EXPECT_THROW(import_t4(store, folder.file("plain.json")), InterchangeError);
  import_t4(store, folder.file("plain.json"), {"stencil", "Lab GPU", 1000, ""});
  const auto rows = results_by_key(store);
  ASSERT_EQ(rows.size(), 2u);
  const auto& ok = rows.at({synthetic_device_uuid("Lab GPU"), "stencil", "problem_size=1000", "block=128,tile=2"});
  EXPECT_EQ(ok.status, "ok");
  EXPECT_EQ(*ok.time_ms_median, 2.0);
  EXPECT_EQ(*ok.time_ms_stdev, 1.0);
  EXPECT_EQ(ok.samples, 3);
  EXPECT_DOUBLE_EQ(ok.compile_s, 1.2);
  const auto& failed = rows.at({synthetic_device_uuid("Lab GPU"), "stencil", "problem_size=1000", "block=256,tile=2"});
  EXPECT_EQ(failed.status, "compile_error");
  EXPECT_EQ(failed.error, "T4 invalidity: compile");
  EXPECT_EQ(failed.elapsed_s, 10.0);
  EXPECT_EQ(failed.created_at, "2025-01-01T00:00:10Z");
}

// ---- cutune JSON and merging ----------------------------------------------------------------------

TEST(JsonDocument, AWholeDatabaseComesBackUnchangedWithItsCubinsAndRuns) {
  Tuned tuned;
  Store original(tuned.path);
  export_json(original, {}, tuned.folder.file("all.json.gz"));
  Store again(tuned.folder.file("again.db"));
  const ImportSummary summary = import_json(again, tuned.folder.file("all.json.gz"));
  EXPECT_EQ(summary.devices, 2);
  EXPECT_EQ(summary.cubins, 2);
  expect_same_results(original, again);
  EXPECT_EQ(count(again, "runs"), count(original, "runs"));
  auto cubin = again.database().prepare("SELECT hex(cubin), compile_options FROM cubins ORDER BY id LIMIT 1");
  ASSERT_TRUE(cubin.step());
  EXPECT_EQ(cubin.column_text(0), "7F454C4600FF03");
  EXPECT_EQ(cubin.column_text(1), R"(["-DCUTUNE_BLOCK=256"])");
  // Importing it twice changes nothing.
  import_json(again, tuned.folder.file("all.json.gz"));
  expect_same_results(original, again);
  EXPECT_EQ(count(again, "runs"), count(original, "runs"));
  EXPECT_EQ(count(again, "cubins"), 2);
}

TEST(JsonDocument, FiltersSelectAFamilyOrADevice) {
  Tuned tuned;
  Store original(tuned.path);
  export_json(original, {"scan", "NVIDIA A100", ""}, tuned.folder.file("a100.json"));
  Store a100(tuned.folder.file("a100.db"));
  import_json(a100, tuned.folder.file("a100.json"));
  EXPECT_EQ(a100.result_count(), 2);
  EXPECT_EQ(count(a100, "devices"), 1);
  EXPECT_EQ(count(a100, "cubins"), 0) << "the A100 is sm_80; the stored cubins are sm_90";
  try {
    export_json(original, {"reduce", "", ""}, tuned.folder.file("x.json"));
    FAIL() << "exported an unknown family";
  } catch (const InterchangeError& e) {
    EXPECT_NE(std::string(e.what()).find("no family 'reduce'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scan"), std::string::npos) << e.what();
  }
  EXPECT_THROW(export_json(original, {"", "GPU-nosuch", ""}, tuned.folder.file("x.json")), InterchangeError);
  EXPECT_THROW(export_kernel_tuner(original, {"scan", "", ""}, tuned.folder.file("x.json")), InterchangeError)
      << "two devices and two problems: the Kernel Tuner format holds one of each";
}

TEST(Merge, ResultsFromSeveralMachinesCollapseOnTheirNaturalKey) {
  TempFolder folder;
  const std::string here = folder.file("here.db"), there = folder.file("there.db");
  {
    Store store(here);
    ResultsBuilder b(store);
    const auto gpu = b.device("GPU-shared", "Shared GPU", 9, 0);
    auto r = b.result(gpu, "scan", 4096, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 2.0);
    r.created_at = "2026-01-01T00:00:00Z";  // measured long ago
    store.add_result(r);
    b.result(gpu, "scan", 4096, "int32", "algo=lookback,block=256,ept=8,vec=4,pad=1", 1.5);
  }
  {
    Store store(there);
    ResultsBuilder b(store);
    const auto gpu = b.device("GPU-shared", "Shared GPU", 9, 0);
    const auto other = b.device("GPU-other", "Other GPU", 8, 6);
    b.result(gpu, "scan", 4096, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 1.0);  // measured again, newer
    b.result(other, "scan", 4096, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 3.0);
  }
  Store store(here);
  const ImportSummary summary = merge_database(store, there);
  EXPECT_EQ(summary.results, 2);
  EXPECT_EQ(store.result_count(), 3);
  EXPECT_EQ(count(store, "devices"), 2);
  const auto rows = results_by_key(store);
  EXPECT_EQ(*rows.at({"GPU-shared", "scan", "n=4096,type=int32", "algo=warp,block=128,ept=4,vec=4,pad=0"}).time_ms_median, 1.0);
  // Merging again, or merging an older copy, changes nothing.
  merge_database(store, there);
  EXPECT_EQ(store.result_count(), 3);
  EXPECT_THROW(merge_database(store, here), InterchangeError);
  EXPECT_THROW(merge_database(store, folder.file("missing.db")), InterchangeError);
}

TEST(Merge, AVersion1DatabaseMergesWithoutBeingChanged) {
  TempFolder folder;
  const std::string old_path = folder.file("v1.db");
  cutune::testing::create_version_1_database(old_path);
  Store store(folder.file("new.db"));
  merge_database(store, old_path);
  EXPECT_EQ(store.result_count(), 1);
  sql::Database raw(old_path, sql::Database::Mode::read_only);
  EXPECT_EQ(schema_version(raw), 1);
}

// ---- bad input changes nothing --------------------------------------------------------------------

TEST(BadInput, MalformedOrIncompleteFilesAreClearErrorsAndStoreNothing) {
  Tuned tuned;
  Store store(tuned.path);
  const auto before = store.result_count();
  const auto error_of = [&](auto&& call) {
    try {
      call();
    } catch (const InterchangeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(tuned.folder.file(name)) << text;
    return tuned.folder.file(name);
  };
  EXPECT_NE(error_of([&] { import_json(store, tuned.folder.file("missing.json")); }).find("missing.json"), std::string::npos);
  EXPECT_NE(error_of([&] { import_json(store, write("broken.json", "{\"format\": ")); }).find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of([&] { import_json(store, write("other.json", "[1, 2]")); }).find("not a cutune results document"),
            std::string::npos);
  EXPECT_NE(error_of([&] { import_kernel_tuner(store, write("nokt.json", "{\"cache\": 3}")); }).find("not a Kernel Tuner"),
            std::string::npos);
  // Half of it is fine; the second entry is not: the first must not stay behind.
  const std::string half = write("half.json", R"({"device_name": "X", "kernel_name": "k", "problem_size": 10,
      "tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, "objective": "time",
      "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": [1]}}})");
  const std::string message = error_of([&] { import_kernel_tuner(store, half); });
  EXPECT_NE(message.find("half.json"), std::string::npos) << message;
  EXPECT_NE(message.find("cache entry \"2\""), std::string::npos) << message;
  // A document whose result names a device it does not list.
  const std::string dangling = write("dangling.json", R"({"format": "cutune-results", "format_version": 1,
      "devices": [], "templates": [{"family": "scan", "source_hash": "h", "source": ""}],
      "problems": [{"family": "scan", "key": "n=1", "size": 1, "dtype": "int32", "descriptor": {}}],
      "runs": [], "results": [{"run": 1, "device_uuid": "GPU-x", "family": "scan", "template_hash": "h",
                               "problem_key": "n=1", "config": "a=1", "status": "ok"}]})");
  EXPECT_NE(error_of([&] { import_json(store, dangling); }).find("results[0]"), std::string::npos);
  EXPECT_EQ(store.result_count(), before);
  EXPECT_FALSE(store.device_by_uuid(synthetic_device_uuid("X")));
  auto templates = store.database().prepare("SELECT COUNT(*) FROM templates WHERE family = 'k'");
  templates.step();
  EXPECT_EQ(templates.column_int(0), 0);
}
