// Import and export: the shared Kernel Tuner landscapes, round trips through Kernel Tuner, T4 and
// cutune JSON, merging databases, and bad input that must change nothing.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "compressed_file.hpp"
#include "interchange.hpp"
#include "lookup.hpp"
#include "results_fixture.hpp"
#include "shared_data.hpp"

using namespace cutune;
using namespace cutune::db;
using cutune::testing::ResultsBuilder;
using cutune::testing::TempFolder;

namespace {

const std::filesystem::path kLandscapes = cutune::testing::landscapes_folder();

// Every result of a database by its natural key: device uuid, family, problem key, config.
using NaturalKey = std::tuple<std::string, std::string, std::string, std::string>;

std::map<NaturalKey, ResultRecord> results_by_key(Store& store) {
  auto s = store.database().prepare(std::string("SELECT ") + kResultColumns + R"sql(,
      (SELECT uuid FROM devices WHERE id = results.device_id), (SELECT family FROM problems WHERE id = results.problem_id),
      (SELECT key FROM problems WHERE id = results.problem_id) FROM results)sql");
  std::map<NaturalKey, ResultRecord> rows;
  // kResultColumns has 28 columns and the observations; the natural key follows.
  const int key = 28 + static_cast<int>(kObservationFields.size());
  while (s.step())
    rows[{s.column_text(key), s.column_text(key + 1), s.column_text(key + 2), s.column_text(5)}] = read_result(s);
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
    EXPECT_EQ(a.observations, e.observations)
        << what << ": " << to_json(a.observations).dump() << " instead of " << to_json(e.observations).dump();
  }
}

std::int64_t count(Store& store, const std::string& table) {
  auto s = store.database().prepare("SELECT COUNT(*) FROM " + table);
  s.step();
  return s.column_int(0);
}

// Everything a result can observe besides its time (observations.hpp), none of it unknown.
Observations every_observation() {
  Observations o;
  o.energy_j = 0.0123;
  o.power_w = 612.5;
  o.energy_method = "power_samples";
  o.energy_runs = 200;
  o.sm_clock_mhz = 1755;
  o.throttled_samples = 2;
  o.throttle_reasons = "sw_power_cap";
  o.remeasured = true;
  o.registers = 64;
  o.spill_store_bytes = 0;
  o.spill_load_bytes = 0;
  o.local_bytes = 0;
  o.static_shared_bytes = 2048;
  o.dynamic_shared_bytes = 16904;
  o.blocks_per_sm = 4;
  o.occupancy = 0.5;
  o.compile_warnings = "warning #550-D: variable \"x\" was set but never used\n";
  return o;
}

// Scan results on two devices with every kind of row: failures with their error and index, GB/s,
// copy fractions, a cubin, observations (every one on the fastest, the energy alone on another).
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
      auto fast = b.observed(h100, "scan", n, "int32", "algo=lookback,block=256,ept=8,vec=4,pad=1", 0.0123456789,
                             every_observation());
      b.with_energy(h100, "scan", n, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 0.02, 0.009, 450);
      b.result(h100, "scan", n, "int32", "algo=blelloch,block=1024,ept=16,vec=4,pad=1", std::nullopt, "compile_error");
      b.result(a100, "scan", n, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 0.05);
      store.put_cubin({0,
                       "sm_90",
                       fast.template_id,
                       fast.problem_id,
                       fast.config,
                       {0x7f, 'E', 'L', 'F', 0, 255, 3},
                       fast.launch_json,
                       R"(["-DCUTUNE_BLOCK=256"])",
                       "13.0",
                       ""});
    }
    auto wrong =
        b.result(h100, "scan", 4096, "int32", "algo=warp,block=64,ept=1,vec=1,pad=0", std::nullopt, "wrong_result");
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
    text += (text.empty() ? "" : ",") + name.get<std::string>() + "=" +
            file.at("cache").at(key).at(name.get<std::string>()).dump();
  return text;
}

}  // namespace

// ---- the shared Kernel Tuner landscapes -----------------------------------------------------------

TEST(KernelTunerImport, EveryLandscapeKeepsItsFastestEntryAndEveryFailure) {
  CUTUNE_ASSERT_LANDSCAPES();
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
  CUTUNE_ASSERT_LANDSCAPES();
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
  CUTUNE_ASSERT_LANDSCAPES();
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
  for (const auto& [key, entry] : source.at("cache").items())
    EXPECT_EQ(written.at("cache").at(key).at("time"), entry.at("time")) << key;
}

// ---- faithful files (issue 21, item 8): an export of an import gives back every field ---------------

namespace {

// Every member of `source` is in `written` with the same JSON value (numbers exactly: what the
// source printed is what comes back); `written` may hold more (our "cutune" section).
void expect_every_member_kept(const nlohmann::json& source, const nlohmann::json& written, const std::string& where) {
  ASSERT_TRUE(written.is_object()) << where;
  for (const auto& [name, value] : source.items()) {
    ASSERT_TRUE(written.contains(name)) << where << ": \"" << name << "\" was lost";
    EXPECT_EQ(written.at(name), value) << where << ": \"" << name << "\"";
  }
}

// A Kernel Tuner file and its export: the header member by member, the cache entry by entry.
void expect_kernel_tuner_file_kept(const nlohmann::json& source, const nlohmann::json& written) {
  for (const auto& [name, value] : source.items())
    if (name != "cache") {
      ASSERT_TRUE(written.contains(name)) << "header \"" << name << "\" was lost";
      EXPECT_EQ(written.at(name), value) << "header \"" << name << "\"";
    }
  ASSERT_EQ(written.at("cache").size(), source.at("cache").size());
  for (const auto& [key, entry] : source.at("cache").items()) {
    ASSERT_TRUE(written.at("cache").contains(key)) << "entry " << key << " was lost";
    expect_every_member_kept(entry, written.at("cache").at(key), "entry " + key);
  }
}

// A T4 export imported into a new database and exported again.
nlohmann::json t4_exported_again(const TempFolder& folder, const std::string& exported) {
  Store again(folder.file("again.db"));
  import_t4(again, exported);
  export_t4(again, {}, folder.file("again.json"));
  return nlohmann::json::parse(read_text_file(folder.file("again.json")));
}

std::int64_t landscapes_in_folder() {
  std::int64_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kLandscapes))
    n += entry.path().filename().string().ends_with(".json.gz") ? 1 : 0;
  return n;
}

}  // namespace

TEST(KernelTunerRoundTrip, EveryLandscapeExportedFromItsImportKeepsEveryField) {
  CUTUNE_ASSERT_LANDSCAPES();
  // Samples, framework and strategy time, the costs as written, timestamps to the microsecond,
  // the objective and every tuned value (measured or not), failures by name; and (for one) the
  // export imported and exported again, or merged into another database first, is the same file.
  std::int64_t files = 0;
  for (const auto& file_entry : std::filesystem::directory_iterator(kLandscapes)) {
    if (!file_entry.path().filename().string().ends_with(".json.gz")) continue;
    ++files;
    const std::string path = file_entry.path().string();
    SCOPED_TRACE(path);
    TempFolder folder;
    Store store(folder.file("imported.db"));
    import_kernel_tuner(store, path);
    export_kernel_tuner(store, {}, folder.file("exported.json"));
    const auto source = nlohmann::json::parse(read_text_file(path));
    const auto written = nlohmann::json::parse(read_text_file(folder.file("exported.json")));
    expect_kernel_tuner_file_kept(source, written);
    if (file_entry.path().filename() != "pnpoly_RTX_3090.json.gz") continue;  // the smallest: once is enough

    Store again(folder.file("again.db"));
    import_kernel_tuner(again, folder.file("exported.json"));
    export_kernel_tuner(again, {}, folder.file("again.json"));
    EXPECT_EQ(nlohmann::json::parse(read_text_file(folder.file("again.json"))), written);
    // A merge (through cutune JSON) carries the source's fields along.
    Store merged(folder.file("merged.db"));
    merge_database(merged, folder.file("imported.db"));
    export_kernel_tuner(merged, {}, folder.file("merged.json"));
    EXPECT_EQ(nlohmann::json::parse(read_text_file(folder.file("merged.json"))), written);
  }
  EXPECT_GT(files, 0);
  EXPECT_EQ(files, landscapes_in_folder());
}

TEST(KernelTunerRoundTrip, FailuresOfEveryKindComeBackByName) {
  // InvalidConfig, a failure name this code does not know, and a failure that still has samples.
  TempFolder folder;
  std::ofstream(folder.file("failures.json")) << R"({
    "device_name": "Lab GPU", "kernel_name": "k", "problem_size": 4096, "objective": ["time"],
    "tune_params_keys": ["block", "unroll"], "tune_params": {"block": [32, 64, 128, 256], "unroll": [true, false]},
    "cache": {
      "32,true": {"block": 32, "unroll": true, "time": "InvalidConfig", "compile_time": 0, "verification_time": 0,
                  "benchmark_time": 0, "strategy_time": 0.25, "framework_time": 0.125, "timestamp": "2024-02-03 04:05:06.000007+00:00"},
      "64,true": {"block": 64, "unroll": true, "time": "SomeNewFailedConfig", "compile_time": 1.1, "verification_time": 0,
                  "benchmark_time": 0, "strategy_time": 0, "framework_time": 0.5, "timestamp": "2024-02-03 04:05:07.1+00:00"},
      "128,true": {"block": 128, "unroll": true, "time": "RuntimeFailedConfig", "times": [3.25, 3.5], "GFLOP/s": 12.0,
                   "compile_time": 2.2, "verification_time": 0, "benchmark_time": 0.75, "strategy_time": 0,
                   "framework_time": 0.5, "timestamp": "2024-02-03 04:05:08.2+00:00"},
      "256,true": {"block": 256, "unroll": true, "time": 1.5, "times": [1.25, 1.5, 1.75], "GFLOP/s": "n/a", "registers": 40,
                   "compile_time": 3.3, "verification_time": 0.1, "benchmark_time": 9.5, "strategy_time": 0,
                   "framework_time": 0.5, "timestamp": "2024-02-03 04:05:09.3+00:00"}}})";
  Store store(folder.file("failures.db"));
  import_kernel_tuner(store, folder.file("failures.json"));
  export_kernel_tuner(store, {}, folder.file("exported.json"));
  const auto source = nlohmann::json::parse(read_text_file(folder.file("failures.json")));
  const auto written = nlohmann::json::parse(read_text_file(folder.file("exported.json")));
  expect_kernel_tuner_file_kept(source, written);  // unroll=false, never run, is still a value of tune_params
}

TEST(T4RoundTrip, AT4FileExportedFromItsImportKeepsEveryField) {
  // The fuzzers' seed: a measured result with runtimes and GB/s, a compile failure, a wrong result.
  const std::string fixture =
      (std::filesystem::path(__FILE__).parent_path().parent_path() / "fuzz/corpus/t4-plain.json").string();
  TempFolder folder;
  Store store(folder.file("t4.db"));
  import_t4(store, fixture, {"stencil", "Lab GPU", 1000, ""});
  export_t4(store, {}, folder.file("exported.json"));
  const auto source = nlohmann::json::parse(read_text_file(fixture));
  const auto written = nlohmann::json::parse(read_text_file(folder.file("exported.json")));
  EXPECT_EQ(written.at("schema_version"), source.at("schema_version"));
  ASSERT_EQ(written.at("results").size(), source.at("results").size());
  for (std::size_t i = 0; i < source.at("results").size(); ++i)
    expect_every_member_kept(source.at("results")[i], written.at("results")[i], "results[" + std::to_string(i) + "]");
  EXPECT_EQ(t4_exported_again(folder, folder.file("exported.json")), written);
}

TEST(T4RoundTrip, ALandscapeThroughT4KeepsItsSamplesAsRuntimes) {
  CUTUNE_ASSERT_LANDSCAPES();
  TempFolder folder;
  Store original(folder.file("original.db"));
  const std::string landscape = (kLandscapes / "pnpoly_RTX_3090.json.gz").string();
  import_kernel_tuner(original, landscape);
  export_t4(original, {}, folder.file("pnpoly-t4.json"));
  const auto source = nlohmann::json::parse(read_text_file(landscape));
  const auto written = nlohmann::json::parse(read_text_file(folder.file("pnpoly-t4.json")));
  std::map<nlohmann::json, nlohmann::json> runtimes;  // by configuration
  for (const auto& r : written.at("results")) runtimes[r.at("configuration")] = r.at("times").at("runtimes");
  ASSERT_EQ(runtimes.size(), source.at("cache").size());
  for (const auto& [key, entry] : source.at("cache").items()) {
    nlohmann::json configuration;
    for (const auto& name : source.at("tune_params_keys"))
      configuration[name.get<std::string>()] = entry.at(name.get<std::string>());
    EXPECT_EQ(runtimes.at(configuration), entry.value("times", nlohmann::json::array())) << key;
  }
  EXPECT_EQ(t4_exported_again(folder, folder.file("pnpoly-t4.json")), written);  // and back through T4: the same file
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
  // Kernel Tuner's objective as a list, and every member it requires of an entry, timestamped when
  // the result was stored.
  EXPECT_EQ(written.at("objective"), nlohmann::json::array({"time"}));
  for (const auto& [key, entry] : written.at("cache").items()) {
    for (const char* required : {"time", "compile_time", "verification_time", "benchmark_time", "strategy_time",
                                 "framework_time", "timestamp"})
      EXPECT_TRUE(entry.contains(required)) << key << " " << required;
    EXPECT_EQ(entry.at("timestamp"), entry.at("cutune").at("created_at")) << key;
  }

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
    for (const char* required : {"configuration", "times", "invalidity", "correctness"})
      EXPECT_TRUE(r.contains(required)) << required;

  Store again(tuned.folder.file("again.db"));
  import_t4(again, exported);
  Store expected(tuned.folder.file("expected.db"));
  export_json(original, {"scan", "NVIDIA H100", "n=1048576,type=int32"}, tuned.folder.file("slice.json"));
  import_json(expected, tuned.folder.file("slice.json"));
  expect_same_results(expected, again);
}

TEST(T4RoundTrip, ALandscapeThroughT4KeepsItsMeasurements) {
  CUTUNE_ASSERT_LANDSCAPES();
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

// Each result carries what it observed as an object of the known observations only; one that
// observed nothing carries an empty object, and a member this cutune does not know is ignored.
TEST(JsonDocument, ObservationsAreAnObjectOfTheKnownOnes) {
  Tuned tuned;
  Store original(tuned.path);
  export_json(original, {"scan", "GPU-h100", ""}, tuned.folder.file("h100.json"));
  auto document = nlohmann::ordered_json::parse(read_text_file(tuned.folder.file("h100.json")));
  std::map<std::string, nlohmann::ordered_json> by_config;
  for (const auto& r : document.at("results"))
    if (r.at("problem_key") == "n=4096,type=int32") by_config[r.at("config")] = r.at("observations");
  EXPECT_EQ(by_config.at("algo=lookback,block=256,ept=8,vec=4,pad=1").size(), kObservationFields.size());
  EXPECT_EQ(by_config.at("algo=lookback,block=256,ept=8,vec=4,pad=1").at("spill_store_bytes"), 0) << "0 is known";
  EXPECT_EQ(
      by_config.at("algo=warp,block=128,ept=4,vec=4,pad=0"),
      nlohmann::ordered_json::parse(R"({"energy_j": 0.009, "power_w": 450.0, "energy_method": "energy_counter"})"));
  EXPECT_EQ(by_config.at("algo=blelloch,block=1024,ept=16,vec=4,pad=1"), nlohmann::ordered_json::object());

  for (auto& r : document.at("results")) r.at("observations")["from_a_newer_cutune"] = 1;
  { std::ofstream(tuned.folder.file("newer.json")) << document.dump(1); }
  Store again(tuned.folder.file("again.db"));
  import_json(again, tuned.folder.file("newer.json"));
  Store expected(tuned.folder.file("expected.db"));
  import_json(expected, tuned.folder.file("h100.json"));
  expect_same_results(expected, again);
  const auto rows = results_by_key(again);
  EXPECT_EQ(
      rows.at({"GPU-h100", "scan", "n=4096,type=int32", "algo=lookback,block=256,ept=8,vec=4,pad=1"}).observations,
      every_observation());
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
  EXPECT_EQ(
      *rows.at({"GPU-shared", "scan", "n=4096,type=int32", "algo=warp,block=128,ept=4,vec=4,pad=0"}).time_ms_median,
      1.0);
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

// A database of schema version 7 merges as it is: its results observed nothing cutune kept.
TEST(Merge, AVersion7DatabaseMergesWithUnknownObservations) {
  TempFolder folder;
  const std::string old_path = folder.file("v7.db");
  cutune::testing::create_version_1_database(old_path);
  {
    sql::Database raw(old_path, sql::Database::Mode::read_write_create);
    migrate_to(raw, 7);
  }
  Store store(folder.file("new.db"));
  merge_database(store, old_path);
  const auto rows = results_by_key(store);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.begin()->second.observations, Observations{});
  sql::Database raw(old_path, sql::Database::Mode::read_only);
  EXPECT_EQ(schema_version(raw), 7);
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
  EXPECT_NE(error_of([&] { import_json(store, tuned.folder.file("missing.json")); }).find("missing.json"),
            std::string::npos);
  EXPECT_NE(error_of([&] { import_json(store, write("broken.json", "{\"format\": ")); }).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(error_of([&] { import_json(store, write("other.json", "[1, 2]")); }).find("not a cutune results document"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { import_kernel_tuner(store, write("nokt.json", "{\"cache\": 3}")); }).find("not a Kernel Tuner"),
      std::string::npos);
  // Half of it is fine; the second entry is not: the first must not stay behind.
  const std::string half = write("half.json", R"({"device_name": "X", "kernel_name": "k", "problem_size": 10,
      "tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, "objective": "time",
      "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": [1]}}})");
  const std::string message = error_of([&] { import_kernel_tuner(store, half); });
  EXPECT_NE(message.find("half.json"), std::string::npos) << message;
  EXPECT_NE(message.find("cache entry '2'"), std::string::npos) << message;
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

// ---- bad input found by fuzzing (issue 17, items 9 and 10; tests/fuzz) ------------------------------
// Each is refused with one short InterchangeError naming the field and the entry, and the database
// keeps exactly what it held.

namespace {

// Every row of every table, as text: equal snapshots, equal databases.
std::string snapshot(Store& store) {
  std::string all;
  std::vector<std::string> tables;
  auto names = store.database().prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  while (names.step()) tables.push_back(names.column_text(0));
  for (const auto& table : tables) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(store.database().handle(), ("SELECT * FROM \"" + table + "\" ORDER BY 1").c_str(), -1, &s,
                       nullptr);
    all += table + ":";
    while (sqlite3_step(s) == SQLITE_ROW)
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const auto* bytes = static_cast<const char*>(sqlite3_column_blob(s, c));
        all.append(bytes ? bytes : "<null>", bytes ? static_cast<std::size_t>(sqlite3_column_bytes(s, c)) : 6) += '|';
      }
    sqlite3_finalize(s);
  }
  return all;
}

// A database with results in it, and files to throw at it.
struct Victim {
  Tuned tuned;
  Store store{tuned.path};
  std::string before = snapshot(store);

  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(tuned.folder.file(name)) << text;
    return tuned.folder.file(name);
  }
  // The refusal's message, after checking that it is one short line and changed nothing.
  std::string refusal(const std::function<void()>& import) {
    std::string message = "accepted";
    try {
      import();
    } catch (const InterchangeError& e) {
      message = e.what();
    }
    EXPECT_LE(message.size(), 285u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(snapshot(store), before) << "a refused import changed the database: " << message;
    return message;
  }
  std::string kernel_tuner(const std::string& name, const std::string& text) {
    return refusal([&] { import_kernel_tuner(store, write(name, text)); });
  }
  std::string t4(const std::string& name, const std::string& text, const ImportTarget& target = {}) {
    return refusal([&] { import_t4(store, write(name, text), target); });
  }
  std::string json(const std::string& name, const std::string& text) {
    return refusal([&] { import_json(store, write(name, text)); });
  }
};

// A Kernel Tuner cache file of parameters a and b whose cache is `cache`.
std::string kt_file(const std::string& cache, const std::string& header = R"("kernel_name": "k", "problem_size": 64,)",
                    const std::string& keys = R"(["a", "b"])") {
  return R"({"device_name": "GPU", )" + header + R"( "tune_params_keys": )" + keys +
         R"(, "tune_params": {"a": [1, 2], "b": [3, 4]}, "cache": )" + cache + "}";
}

// A cutune document with one device, problem, run and ok result; `edit` changes it first.
std::string cutune_document(const std::function<void(nlohmann::ordered_json&)>& edit) {
  auto d = nlohmann::ordered_json::parse(R"({"format": "cutune-results", "format_version": 1,
    "devices": [{"uuid": "GPU-x", "name": "X GPU", "cc_major": 9, "cc_minor": 0, "copy_bandwidth_gbs": 2000.0}],
    "templates": [{"family": "stencil", "source_hash": "h", "source": ""}],
    "problems": [{"family": "stencil", "key": "n=1", "size": 1, "dtype": "", "descriptor": {}}],
    "runs": [{"id": 1, "family": "stencil", "device_uuid": "GPU-x", "template_hash": "h", "strategy": "brute_force",
              "started_at": "2026-01-01T00:00:00Z"}],
    "results": [{"run": 1, "device_uuid": "GPU-x", "family": "stencil", "template_hash": "h", "problem_key": "n=1",
                 "config": "a=1", "status": "ok", "time_ms_median": 1.5}]})");
  edit(d);
  return d.dump(1);
}

bool has(const std::string& message, const std::string& part) { return message.find(part) != std::string::npos; }

}  // namespace

TEST(FuzzedKernelTuner, AnExtraTuneParamsKeyOrAShortKeyIsRefusedNotACrash) {
  Victim v;
  // Was: basic_string::substr: __pos (which is 4) > this->size() (which is 3), exit 1.
  std::string m = v.kernel_tuner("extra.json", kt_file(R"({"1,3": {"a": 1, "b": 3, "time": 1.5}})",
                                                       R"("kernel_name": "k",)", R"(["a", "b", "c"])"));
  EXPECT_TRUE(has(m, "cache entry '1,3'") && has(m, "lacks parameter 'c'") && has(m, "tune_params_keys")) << m;
  m = v.kernel_tuner("short.json", kt_file(R"({"1": {"time": 1.5}})"));
  EXPECT_TRUE(has(m, "cache entry '1'") && has(m, "lacks parameter 'a'")) << m;
  m = v.kernel_tuner("empty-key.json", kt_file(R"({"1,3": {"time": 1.5}, "": {"time": 2.5}})"));
  EXPECT_TRUE(has(m, "empty key")) << m;
  m = v.kernel_tuner("key-number.json", kt_file(R"({"1,3": {"time": 1.5}})", "", R"(["a", 7])"));
  EXPECT_TRUE(has(m, "\"tune_params_keys\" is 7, not a non-empty string")) << m;
  m = v.kernel_tuner("key-twice.json", kt_file(R"({"1,3": {"time": 1.5}})", "", R"(["a", "a"])"));
  EXPECT_TRUE(has(m, "parameter 'a' is named twice")) << m;
  m = v.kernel_tuner("object-value.json", kt_file(R"({"1,3": {"a": {"x": 1}, "b": 3, "time": 1.5}})"));
  EXPECT_TRUE(has(m, "\"a\" is {\"x\":1}, not a parameter value")) << m;
}

TEST(FuzzedKernelTuner, TimesThatMakeNoSenseAreRefusedNotStoredAsTheBest) {
  Victim v;
  for (const char* time : {"-0.25", "0", "-1e308"}) {
    const std::string m =
        v.kernel_tuner("time.json", kt_file(std::string(R"({"1,3": {"time": 1.5}, "2,4": {"time": )") + time + "}}"));
    EXPECT_TRUE(has(m, "cache entry '2,4'") && has(m, "\"time\" is") && has(m, "not a positive number")) << m;
  }
  std::string m = v.kernel_tuner("samples.json", kt_file(R"({"1,3": {"time": 1.5, "times": [1.5, -2.0]}})"));
  EXPECT_TRUE(has(m, "\"times\" is -2.0, not a positive number")) << m;
  m = v.kernel_tuner("cost.json", kt_file(R"({"1,3": {"time": 1.5, "compile_time": -5}})"));
  EXPECT_TRUE(has(m, "\"compile_time\" is -5, not a number of at least 0")) << m;
  m = v.kernel_tuner("huge.json", kt_file(R"({"1,3": {"time": 1e999}})"));  // was: number overflow, exit 1
  EXPECT_TRUE(has(m, "is not valid JSON") && has(m, "number overflow")) << m;
  // The cutune section of an entry is judged with the row it makes.
  m = v.kernel_tuner("section.json", kt_file(R"({"1,3": {"time": 1.5, "cutune": {"status": "bogus"}}})"));
  EXPECT_TRUE(has(m, "unknown status 'bogus'")) << m;
  m = v.kernel_tuner("section-type.json", kt_file(R"({"1,3": {"time": 1.5, "cutune": {"samples": "x"}}})"));
  EXPECT_TRUE(has(m, "\"samples\" is 'x', not an integer")) << m;
}

TEST(FuzzedKernelTuner, HeaderValuesThatMakeNoSenseAreRefused) {
  Victim v;
  const std::string cache = R"({"1,3": {"time": 1.5}})";
  std::string m = v.kernel_tuner("no-name.json", kt_file(cache, R"("kernel_name": "",)"));
  EXPECT_TRUE(has(m, "\"kernel_name\" is '', not a non-empty string")) << m;
  m = v.kernel_tuner("big.json", kt_file(cache, R"("kernel_name": "k", "problem_size": "big",)"));
  EXPECT_TRUE(has(m, "\"problem_size\" is 'big', not a positive integer or a list of them")) << m;
  m = v.kernel_tuner("negative.json", kt_file(cache, R"("kernel_name": "k", "problem_size": [0, -1],)"));
  EXPECT_TRUE(has(m, "\"problem_size\" is [0,-1]")) << m;
  m = v.kernel_tuner("overflow.json",
                     kt_file(cache, R"("kernel_name": "k", "problem_size": [4294967296, 4294967296],)"));
  EXPECT_TRUE(has(m, "more elements than 64 bits count")) << m;
  m = v.kernel_tuner("empty.json", kt_file("{}"));
  EXPECT_TRUE(has(m, "its \"cache\" is empty")) << m;
  // Without kernel_name or device_name (and no cutune section) the file does not say what it measured.
  m = v.kernel_tuner("anonymous.json", R"({"tune_params_keys": ["a"], "cache": {"1": {"time": 1.5}}})");
  EXPECT_TRUE(has(m, "\"kernel_name\" is missing")) << m;
  // --family is held to the same rules as the file's names.
  m = v.refusal([&] { import_kernel_tuner(v.store, v.write("family.json", kt_file(cache)), {"two\nlines"}); });
  EXPECT_TRUE(has(m, "\"--family\" is 'two lines', not a name without control characters")) << m;
}

TEST(FuzzedKernelTuner, DeepNestingIsRefusedBeforeItCanOverflowTheStack) {
  Victim v;
  // Was a segmentation fault: copying or printing 100 000 nested arrays recurses once per level.
  const std::string deep = std::string(100000, '[') + "1" + std::string(100000, ']');
  std::string m = v.kernel_tuner("deep.json", kt_file(R"({"1,3": {"time": 1.5, "times": )" + deep + "}}"));
  EXPECT_TRUE(has(m, "nests arrays and objects deeper than 64 levels")) << m;
  m = v.t4("deep-t4.json",
           R"({"results": [{"configuration": {"a": 1}, "invalidity": "correct", "measurements": )" + deep + "}]}");
  EXPECT_TRUE(has(m, "deeper than 64 levels")) << m;
  m = v.json("deep.json", cutune_document([](auto&) {}).replace(0, 1, "{\"x\": " + deep + ","));
  EXPECT_TRUE(has(m, "deeper than 64 levels")) << m;
}

TEST(FuzzedT4, TimesAndSizesThatMakeNoSenseAreRefused) {
  Victim v;
  const std::string section =
      R"("cutune": {"format_version": 1, "family": "stencil", "device": {"uuid": "GPU-t4", "name": "T4"},
      "template": {"hash": "h"}, "problem": {"family": "stencil", "key": "n=1", "size": 1, "dtype": ""}})";
  std::string m = v.t4("zero.json", R"({"results": [{"configuration": {"a": 1}, "invalidity": "correct",
      "measurements": [{"name": "time", "value": 0}]}], )" +
                                        section + "}");
  EXPECT_TRUE(has(m, "results[0]") && has(m, "\"time\" is 0, not a positive number")) << m;
  m = v.t4("runtime.json",
           R"({"results": [{"configuration": {"a": 1}, "invalidity": "correct", "times": {"runtimes": [1, -2]},
      "measurements": [{"name": "time", "value": 1.5}]}], )" +
               section + "}");
  EXPECT_TRUE(has(m, "\"runtimes\" is -2, not a positive number")) << m;
  // An "ok" laid over a result that has no time (its cutune section) would be a best without a time.
  m = v.t4("ok.json",
           R"({"results": [{"configuration": {"a": 1}, "invalidity": "correct", "cutune": {"status": "ok"}}], )" +
               section + "}");
  EXPECT_TRUE(has(m, "status ok without a time")) << m;
  m = v.t4("mixed.json", R"({"results": [{"configuration": {"a": 1}, "invalidity": "compile"},
      {"configuration": {"b": 1}, "invalidity": "compile"}], )" +
                             section + "}");
  EXPECT_TRUE(has(m, "results[1]") && has(m, "other parameters")) << m;
  const std::string plain = R"({"results": [{"configuration": {"a": 1}, "invalidity": "compile"}]})";
  m = v.t4("plain.json", plain, {"stencil", "Lab GPU", -5, ""});
  EXPECT_TRUE(has(m, "problem size -5")) << m;
}

TEST(FuzzedJsonDocument, UnknownStatusesAndNegativeBandwidthsAreRefused) {
  Victim v;
  std::string m = v.json("status.json", cutune_document([](auto& d) { d["results"][0]["status"] = "bogus_status"; }));
  EXPECT_TRUE(has(m, "(results[0])") && has(m, "unknown status 'bogus_status'")) << m;
  m = v.json("bandwidth.json", cutune_document([](auto& d) { d["devices"][0]["copy_bandwidth_gbs"] = -5; }));
  EXPECT_TRUE(has(m, "(devices[0])") && has(m, "\"copy_bandwidth_gbs\" is -5, not a positive number")) << m;
  m = v.json("no-time.json", cutune_document([](auto& d) { d["results"][0].erase("time_ms_median"); }));
  EXPECT_TRUE(has(m, "status ok without a time")) << m;
  m = v.json("time.json", cutune_document([](auto& d) { d["results"][0]["time_ms_min"] = 0; }));
  EXPECT_TRUE(has(m, "\"time_ms_min\" is 0, not a positive number")) << m;
  m = v.json("run-status.json", cutune_document([](auto& d) { d["runs"][0]["status"] = "paused"; }));
  EXPECT_TRUE(has(m, "unknown run status 'paused'")) << m;
  m = v.json("size.json", cutune_document([](auto& d) { d["problems"][0]["size"] = -4; }));
  EXPECT_TRUE(has(m, "\"size\" is -4, not an integer of at least 0")) << m;
  // Types: was "type must be string, but is number", exit 1.
  m = v.json("family.json", cutune_document([](auto& d) { d["results"][0]["family"] = 7; }));
  EXPECT_TRUE(has(m, "\"family\" is 7, not a non-empty string")) << m;
  m = v.json("samples.json", cutune_document([](auto& d) { d["results"][0]["samples"] = 1e300; }));
  EXPECT_TRUE(has(m, "\"samples\" is 1e+300, not an integer from 0 to 2147483647")) << m;
  m = v.json("format.json", cutune_document([](auto& d) { d["format_version"] = "1"; }));
  EXPECT_TRUE(has(m, "\"format_version\" is '1'")) << m;
  m = v.json("grid.json", cutune_document([](auto& d) {
               d["results"][0]["launch"] = nlohmann::ordered_json::parse(R"([{"grid": ["x"]}])");
             }));
  EXPECT_TRUE(has(m, "\"grid\" is 'x', not an integer")) << m;
  m = v.json("config.json", cutune_document([](auto& d) { d["results"][0]["config"] = "a"; }));
  EXPECT_TRUE(has(m, "its config is not name=value text")) << m;
}

TEST(FuzzedJsonDocument, ObservationsOfTheWrongTypeOrRangeAreRefused) {
  Victim v;
  const auto observed = [](const char* observations) {
    return cutune_document(
        [&](auto& d) { d["results"][0]["observations"] = nlohmann::ordered_json::parse(observations); });
  };
  std::string m = v.json("type.json", observed(R"({"energy_j": "a lot"})"));
  EXPECT_TRUE(has(m, "type.json' (results[0]): \"observations\": observation 'energy_j' must be a number")) << m;
  m = v.json("integer.json", observed(R"({"registers": 32.5})"));
  EXPECT_TRUE(has(m, "(results[0])") && has(m, "observation 'registers' must be an integer")) << m;
  m = v.json("flag.json", observed(R"({"remeasured": 1})"));
  EXPECT_TRUE(has(m, "observation 'remeasured' must be true or false")) << m;
  m = v.json("text.json", observed(R"({"throttle_reasons": ["hw_slowdown"]})"));
  EXPECT_TRUE(has(m, "observation 'throttle_reasons' must be a string")) << m;
  m = v.json("object.json", observed("[1, 2]"));
  EXPECT_TRUE(has(m, "(results[0])") && has(m, "\"observations\" is [1,2], not an object")) << m;
  m = v.json("negative.json", observed(R"({"energy_j": -0.5})"));
  EXPECT_TRUE(has(m, "result 'a=1': observation energy_j is -0.500000, not a number of at least 0")) << m;
  m = v.json("occupancy.json", observed(R"({"occupancy": 1.5})"));
  EXPECT_TRUE(has(m, "observation occupancy is 1.500000, more than 1")) << m;
  m = v.json("spills.json", observed(R"({"spill_store_bytes": -8})"));
  EXPECT_TRUE(has(m, "observation spill_store_bytes is -8, not an integer of at least 0")) << m;
  m = v.json("huge.json", observed(R"({"registers": 18446744073709551615})"));
  EXPECT_TRUE(has(m, "observation registers")) << m;
  m = v.json("method.json", observed(R"({"energy_method": "energy\ncounter"})"));
  EXPECT_TRUE(has(m, "observation energy_method holds a control character")) << m;
}

TEST(FuzzedJsonDocument, AMessageNeverQuotesAWholeDocument) {
  Victim v;
  // Was 9 743 characters: the parser's "last read" was a whole base64 string cut short.
  const std::string text = cutune_document([](auto& d) {
    d["cubins"] = nlohmann::ordered_json::array({{{"family", "stencil"},
                                                  {"template_hash", "h"},
                                                  {"problem_key", "n=1"},
                                                  {"arch", "sm_90"},
                                                  {"config", "a=1"},
                                                  {"cubin_base64", std::string(12000, 'Q')}}});
  });
  std::string m = v.json("cut.json", text.substr(0, text.find("QQQQ") + 9000));
  EXPECT_TRUE(has(m, "is not valid JSON")) << m;
  const std::string long_name(5000, 'x');
  m = v.json("name.json", cutune_document([&](auto& d) { d["runs"][0]["device_uuid"] = long_name; }));
  EXPECT_TRUE(has(m, "\"device_uuid\" is 'xxxx")) << m;
  m = v.json("run.json",
             cutune_document([&](auto& d) { d["results"][0]["template_hash"] = long_name.substr(0, 900); }));
  EXPECT_TRUE(has(m, "names template 'xxx")) << m;
}

TEST(FuzzedImports, OurOwnExportsStillComeBack) {
  // The checks refuse nothing that cutune writes: a whole database, a Kernel Tuner and a T4 slice.
  Tuned tuned;
  Store original(tuned.path);
  export_json(original, {}, tuned.folder.file("all.json"));
  export_kernel_tuner(original, {"scan", "GPU-h100", "n=4096,type=int32"}, tuned.folder.file("kt.json"));
  export_t4(original, {"scan", "GPU-h100", "n=4096,type=int32"}, tuned.folder.file("t4.json"));
  Store again(tuned.folder.file("again.db"));
  EXPECT_EQ(import_json(again, tuned.folder.file("all.json")).results, original.result_count());
  EXPECT_GT(import_kernel_tuner(again, tuned.folder.file("kt.json")).results, 0);
  EXPECT_GT(import_t4(again, tuned.folder.file("t4.json")).results, 0);
}
