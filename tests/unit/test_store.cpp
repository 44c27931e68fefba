// The results store: round trip, resume, best, schema guard, and error handling.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <cmath>
#include <fstream>
#include <map>
#include <type_traits>
#include <variant>

#include "results_fixture.hpp"
#include "store.hpp"

using namespace cutune;
using namespace cutune::db;

namespace {

struct TempDb {
  cutune::testing::TempFolder folder{"cutune-store"};
  std::string path = folder.file("sub/results.db");
};

DeviceRecord h100() {
  DeviceRecord d;
  d.uuid = "GPU-00000000-1111-2222-3333-444444444444";
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bytes = 85'000'000'000;
  d.l2_bytes = 50 << 20;
  d.memory_clock_khz = 2'619'000;
  d.bus_width_bits = 5120;
  d.theoretical_bandwidth_gbs = 3352;
  d.driver_version = 13000;
  d.nvrtc_version = "13.0";
  return d;
}

ResultRecord result(std::int64_t run, std::int64_t device, std::int64_t tmpl, std::int64_t problem, std::string config,
                    std::string status, std::optional<double> ms) {
  ResultRecord r;
  r.run_id = run;
  r.device_id = device;
  r.template_id = tmpl;
  r.problem_id = problem;
  r.config = std::move(config);
  r.config_json = "{}";
  r.status = std::move(status);
  r.time_ms_median = ms;
  r.launch_json = "[]";
  return r;
}

// One device, one scan template and problem, and a run of them begun: the ids results need.
struct ScanRun {
  std::int64_t device, tmpl, problem, run;
  ResultRecord row(std::string config, std::string status, std::optional<double> ms) const {
    return result(run, device, tmpl, problem, std::move(config), std::move(status), ms);
  }
};

ScanRun begin_scan_run(Store& store) {
  ScanRun ids{};
  ids.device = store.upsert_device(h100());
  ids.tmpl = store.upsert_template("scan", "h", "s");
  ids.problem = store.upsert_problem({0, "scan", "n=1", 1, "int32", "{}"});
  ids.run = store.begin_run({0, "scan", ids.device, ids.tmpl, "brute_force", 1, "", "", "", "", "", ""});
  return ids;
}

}  // namespace

TEST(Store, CreatesFoldersAndRoundTrips) {
  TempDb t;
  Store store(t.path);
  const auto device_id = store.upsert_device(h100());
  EXPECT_EQ(store.upsert_device(h100()), device_id);  // same UUID, same row
  store.set_copy_bandwidth(device_id, 2950.5);
  const auto d = store.device_by_uuid(h100().uuid);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d->bus_width_bits, 5120);
  EXPECT_DOUBLE_EQ(*d->copy_bandwidth_gbs, 2950.5);
  EXPECT_FALSE(d->copy_bandwidth_measured_at.empty());

  const auto tmpl = store.upsert_template("scan", "abc123", "source text");
  EXPECT_EQ(store.upsert_template("scan", "abc123", "source text"), tmpl);
  EXPECT_NE(store.upsert_template("scan", "def456", "newer source"), tmpl);
  const auto problem = store.upsert_problem({0, "scan", "n=1024,type=int32", 1024, "int32", R"({"n":1024})"});
  RunRecord run{0, "scan", device_id, tmpl, "brute_force", 1, "unlimited", "tune --kernel scan", "test", "", "", ""};
  const auto run_id = store.begin_run(run);

  auto ok = result(run_id, device_id, tmpl, problem, "algo=warp", "ok", 0.5);
  ok.time_ms_min = 0.4;
  ok.time_ms_max = 0.7;
  ok.time_ms_stdev = 0.05;
  ok.samples = 12;
  ok.gbs = 100;
  ok.copy_fraction = 0.25;
  store.add_result(ok);
  auto bad = result(run_id, device_id, tmpl, problem, "algo=broken", "wrong_result", std::nullopt);
  bad.error = "tooffsets[17]: expected 3, got 4";
  bad.error_index = 17;
  store.add_result(bad);
  store.finish_run(run_id, "finished");

  const auto rows = store.results_of_run(run_id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].config, "algo=warp");
  EXPECT_DOUBLE_EQ(*rows[0].time_ms_median, 0.5);
  EXPECT_EQ(rows[0].samples, 12);
  EXPECT_EQ(rows[1].status, "wrong_result");
  EXPECT_EQ(*rows[1].error_index, 17);
  EXPECT_FALSE(rows[1].time_ms_median);
}

TEST(Store, ResumeSeesEveryMeasuredConfigAfterReopening) {
  TempDb t;
  ScanRun ids{};
  {
    Store store(t.path);
    ids = begin_scan_run(store);
    store.add_result(ids.row("a", "ok", 2.0));
    store.add_result(ids.row("b", "compile_error", std::nullopt));
    // The process "dies" here: no finish_run.
  }
  const auto [device_id, tmpl, problem, run] = ids;
  Store reopened(t.path);
  const auto measured = reopened.measured_configs(device_id, tmpl, problem);
  ASSERT_EQ(measured.size(), 2u);
  EXPECT_DOUBLE_EQ(*measured.at("a"), 2.0);
  EXPECT_FALSE(measured.at("b"));
  // Another template version starts afresh.
  const auto newer = reopened.upsert_template("scan", "h2", "s2");
  EXPECT_TRUE(reopened.measured_configs(device_id, newer, problem).empty());
}

TEST(Store, BestPicksTheFastestOkPerProblem) {
  TempDb t;
  Store store(t.path);
  const auto device_id = store.upsert_device(h100());
  const auto tmpl = store.upsert_template("scan", "h", "s");
  const auto small = store.upsert_problem({0, "scan", "n=1024,type=int32", 1024, "int32", "{}"});
  const auto large = store.upsert_problem({0, "scan", "n=4096,type=int32", 4096, "int32", "{}"});
  const auto run = store.begin_run({0, "scan", device_id, tmpl, "brute_force", 1, "", "", "", "", "", ""});
  store.add_result(result(run, device_id, tmpl, small, "slow", "ok", 3.0));
  store.add_result(result(run, device_id, tmpl, small, "fast", "ok", 1.0));
  store.add_result(result(run, device_id, tmpl, small, "wrong-but-fast", "wrong_result", 0.1));
  store.add_result(result(run, device_id, tmpl, large, "only", "ok", 5.0));
  const auto best = store.best("scan");
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].problem_key, "n=1024,type=int32");
  EXPECT_EQ(best[0].config, "fast");
  EXPECT_EQ(best[1].config, "only");
  EXPECT_TRUE(store.best("reduce").empty());
  EXPECT_TRUE(store.best("scan", "GPU-other").empty());
}

TEST(Store, RefusesANewerSchema) {
  TempDb t;
  { Store store(t.path); }
  {
    sql::Database raw(t.path, sql::Database::Mode::read_write_create);
    raw.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion + 1));
  }
  try {
    Store store(t.path);
    FAIL() << "opened a newer schema";
  } catch (const sql::DbError& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

TEST(Store, UnwritableLocationIsAClearError) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores file permissions";
  TempDb t;
  std::filesystem::create_directories(t.folder);
  std::filesystem::permissions(t.folder, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  EXPECT_THROW(Store(t.path), sql::DbError);
}

// Bytes of a file, to show that reading it changed nothing.
std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(StoreForReading, NeverChangesTheFile) {
  TempDb t;
  std::filesystem::create_directories(t.folder);
  // An older schema: read through a migrated copy in memory; the file keeps its version and bytes.
  cutune::testing::create_version_1_database(t.path);
  const std::string before = file_bytes(t.path);
  {
    Store store(t.path, Store::Access::read);
    const auto best = store.best();
    ASSERT_EQ(best.size(), 1u);
    EXPECT_EQ(best.front().config, "algo=warp");
  }
  EXPECT_EQ(file_bytes(t.path), before);

  // A SQLite file that is not cutune's is refused as such, and not given our schema.
  const std::string foreign = (t.folder / "foreign.sqlite").string();
  {
    sql::Database raw(foreign, sql::Database::Mode::read_write_create);
    raw.exec("CREATE TABLE notes (text TEXT)");
  }
  const std::string foreign_before = file_bytes(foreign);
  try {
    Store store(foreign, Store::Access::read);
    FAIL() << "opened a foreign database";
  } catch (const sql::DbError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a cutune database"), std::string::npos) << e.what();
  }
  EXPECT_EQ(file_bytes(foreign), foreign_before);

  // A newer schema is refused, as for writing.
  {
    Store store(t.path);  // migrates the file to the current version
  }
  {
    sql::Database raw(t.path, sql::Database::Mode::read_write_create);
    raw.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion + 1));
  }
  EXPECT_THROW(Store(t.path, Store::Access::read), sql::DbError);
}

TEST(Store, PathThroughAFileIsAClearError) {
  TempDb t;
  std::filesystem::create_directories(t.folder);
  { std::ofstream(t.folder / "plainfile") << "x"; }
  try {
    Store store((t.folder / "plainfile" / "results.db").string());
    FAIL() << "opened a database under a regular file";
  } catch (const sql::DbError& e) {
    EXPECT_NE(std::string(e.what()).find("plainfile"), std::string::npos) << e.what();
  }
}

TEST(DefaultPath, EnvironmentOverrides) {
  setenv("CUTUNE_DB", "/tmp/x/custom.db", 1);
  EXPECT_EQ(default_database_path(), "/tmp/x/custom.db");
  unsetenv("CUTUNE_DB");
  setenv("XDG_DATA_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(default_database_path(), "/tmp/xdg/cutune/cutune.db");
  unsetenv("XDG_DATA_HOME");
}

TEST(Store, MigratesAVersion1DatabaseKeepingItsResults) {
  TempDb t;
  cutune::testing::create_version_1_database(t.path);
  Store store(t.path);
  EXPECT_EQ(schema_version(store.database()), kSchemaVersion);
  const auto best = store.best("scan");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config, "algo=warp");
  EXPECT_EQ(best[0].device_uuid, "GPU-old");
  // What version 2 adds works on the migrated file.
  store.put_cubin({0, "sm_80", 1, 1, "algo=warp", {0x7f, 'E', 'L', 'F'}, "[]", "[]", "13.0", ""});
  store.refresh_family_defaults();
  // Its problem took the typed identity of the scan schema it was stored under.
  auto s = store.database().prepare(
      "SELECT config FROM family_defaults WHERE family = 'scan' AND match_key = "
      "'starts_offset=0,stops_offset=0,type=int32'");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "algo=warp");
}

// Version 4 is what the first cutune with typed problems wrote, without results.cut_short: opening it
// adds the column, keeps the old results as full measurements, and stores cut-short ones.
TEST(Store, MigratesAVersion4DatabaseToCutShortResults) {
  TempDb t;
  std::int64_t device_id = 0, tmpl = 0, problem = 0, run_id = 0;
  std::filesystem::create_directories(std::filesystem::path(t.path).parent_path());
  {
    sql::Database raw(t.path, sql::Database::Mode::read_write_create);
    migrate_to(raw, 4);
    auto columns = raw.prepare("SELECT COUNT(*) FROM pragma_table_info('results') WHERE name = 'cut_short'");
    columns.step();
    ASSERT_EQ(columns.column_int(0), 0);
    raw.exec(R"sql(
      INSERT INTO devices (id, name, uuid, cc_major, cc_minor, sm_count, memory_bytes, l2_bytes, memory_clock_khz,
                           bus_width_bits, theoretical_bandwidth_gbs, driver_version, nvrtc_version)
        VALUES (1, 'NVIDIA H100 80GB HBM3', 'GPU-v4', 9, 0, 132, 1, 1, 1, 1, 1, 13000, '13.0');
      INSERT INTO templates (id, family, source_hash, source, created_at) VALUES (1, 'scan', 'h', 's', '2026-11-25');
      INSERT INTO problems (id, family, key, size, dtype, descriptor, match_key)
        VALUES (1, 'scan', 'n=1024,type=int32', 1024, 'int32', '{"n":1024,"type":"int32"}', 'type=int32');
      INSERT INTO runs (id, family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at,
                        finished_at, status)
        VALUES (1, 'scan', 1, 1, 'brute_force', 1, '', '', 'cutune 0.1.0', '2026-11-25', '2026-11-25', 'finished');
      INSERT INTO results (run_id, device_id, template_id, problem_id, config, config_json, status, time_ms_median,
                           samples, compile_s, verify_s, benchmark_s, error, launch_json, created_at, elapsed_s, verified)
        VALUES (1, 1, 1, 1, 'algo=warp', '{}', 'ok', 0.5, 10, 0, 0, 0, '', '[]', '2026-11-25', 1, 1);
    )sql");
    device_id = tmpl = problem = run_id = 1;
  }
  Store store(t.path);
  EXPECT_EQ(schema_version(store.database()), kSchemaVersion);
  auto cut = result(run_id, device_id, tmpl, problem, "algo=blelloch", "ok", 2.5);
  cut.cut_short = true;
  store.add_result(cut);
  const auto rows = store.results_of_run(run_id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].config, "algo=warp");
  EXPECT_FALSE(rows[0].cut_short);
  EXPECT_TRUE(rows[1].cut_short);
  const auto best = store.best("scan");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config, "algo=warp");
}

TEST(Store, AFailedMigrationLeavesTheOldDatabaseAsItWas) {
  TempDb t;
  cutune::testing::create_version_1_database(t.path);
  {
    sql::Database raw(t.path, sql::Database::Mode::read_write_create);
    raw.exec("CREATE TABLE family_defaults (x)");  // collides with what version 2 creates
  }
  EXPECT_THROW(Store store(t.path), sql::DbError);
  sql::Database raw(t.path, sql::Database::Mode::read_only);
  EXPECT_EQ(schema_version(raw), 1);
  auto cubins = raw.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'cubins'");
  cubins.step();
  EXPECT_EQ(cubins.column_int(0), 0) << "the migration's first steps were not rolled back";
}

TEST(Store, UsesWriteAheadLoggingAndABusyTimeout) {
  TempDb t;
  Store store(t.path);
  auto mode = store.database().prepare("PRAGMA journal_mode");
  mode.step();
  EXPECT_EQ(mode.column_text(0), "wal");
  auto timeout = store.database().prepare("PRAGMA busy_timeout");
  timeout.step();
  EXPECT_GE(timeout.column_int(0), 1000);
}

TEST(Store, BestResultAndCubinsOfOneTemplate) {
  TempDb t;
  Store store(t.path);
  const auto device_id = store.upsert_device(h100());
  const auto tmpl = store.upsert_template("scan", "h", "s");
  const auto other_tmpl = store.upsert_template("scan", "h2", "s2");
  const auto problem = store.upsert_problem({0, "scan", "n=1", 1, "int32", "{}"});
  const auto run = store.begin_run({0, "scan", device_id, tmpl, "brute_force", 1, "", "", "", "", "", ""});
  store.add_result(result(run, device_id, tmpl, problem, "slow", "ok", 2.0));
  store.add_result(result(run, device_id, tmpl, problem, "fast", "ok", 1.0));
  store.add_result(result(run, device_id, tmpl, problem, "fastest-but-wrong", "wrong_result", 0.1));
  store.add_result(result(run, device_id, other_tmpl, problem, "other-template", "ok", 0.5));
  const auto best = store.best_result(device_id, tmpl, problem);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config, "fast");
  EXPECT_FALSE(store.best_result(device_id, tmpl, problem + 1));

  CubinRecord cubin{0, "sm_90", tmpl, problem, "fast", {0x7f, 'E', 'L', 'F', 1}, "[]", "[\"-DX=1\"]", "13.0", ""};
  store.put_cubin(cubin);
  cubin.cubin.back() = 2;
  store.put_cubin(cubin);  // the same config and architecture: replaced
  auto s = store.database().prepare("SELECT COUNT(*), MAX(length(cubin)), MAX(hex(cubin)) FROM cubins");
  s.step();
  EXPECT_EQ(s.column_int(0), 1);
  EXPECT_EQ(s.column_text(2), "7F454C4602");
}

TEST(Store, AnOlderResultDoesNotReplaceANewerOne) {
  TempDb t;
  Store store(t.path);
  const ScanRun ids = begin_scan_run(store);
  auto newer = ids.row("a", "ok", 1.0);
  newer.created_at = "2026-06-01T00:00:00Z";
  store.add_result(newer);
  auto older = newer;
  older.time_ms_median = 9.0;
  older.created_at = "2026-01-01T00:00:00Z";
  store.add_result(older);
  EXPECT_DOUBLE_EQ(*store.best_result(ids.device, ids.tmpl, ids.problem)->time_ms_median, 1.0);
}

// The rows a tuning loop took in together go in one transaction: all of them, or, where one is
// refused, none, and the statement stays usable for the next group.
TEST(Store, AddResultsStoresAGroupWhollyOrNotAtAll) {
  TempDb t;
  Store store(t.path);
  const ScanRun ids = begin_scan_run(store);
  const auto measured_count = [&] { return store.measured_configs(ids.device, ids.tmpl, ids.problem).size(); };
  store.add_results(std::vector<ResultRecord>{ids.row("a", "ok", 1.0), ids.row("b", "timeout", std::nullopt)});
  EXPECT_EQ(measured_count(), 2u);

  ScanRun elsewhere = ids;
  elsewhere.problem += 99;  // no such problem
  const std::vector<ResultRecord> refused{ids.row("c", "ok", 2.0), elsewhere.row("d", "ok", 3.0)};
  EXPECT_THROW(store.add_results(refused), std::exception);
  EXPECT_EQ(measured_count(), 2u) << "c was stored without d";

  store.add_result(ids.row("e", "ok", 0.5));
  const auto measured = store.measured_configs(ids.device, ids.tmpl, ids.problem);
  EXPECT_EQ(measured.size(), 3u);
  EXPECT_DOUBLE_EQ(*measured.at("e"), 0.5);
}

// ---- schema version 6: precomputed lookup choices and the record of what changed since -----------

namespace {

std::int64_t count_of(sql::Database& db, const std::string& sql) {
  auto s = db.prepare(sql);
  s.step();
  return s.column_int(0);
}

// A database as cutune left it at schema version 5: one device, one scan problem, two results.
void create_version_5_database(const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  sql::Database raw(path, sql::Database::Mode::read_write_create);
  migrate_to(raw, 5);
  raw.exec(R"sql(
    INSERT INTO devices (id, name, uuid, cc_major, cc_minor, sm_count, memory_bytes, l2_bytes, memory_clock_khz,
                         bus_width_bits, theoretical_bandwidth_gbs, driver_version, nvrtc_version)
      VALUES (1, 'NVIDIA H100 80GB HBM3', 'GPU-v5', 9, 0, 132, 1, 1, 1, 1, 1, 13000, '13.0');
    INSERT INTO templates (id, family, source_hash, source, created_at) VALUES (1, 'scan', 'h', 's', '2026-11-25');
    INSERT INTO problems (id, family, key, size, dtype, descriptor, match_key)
      VALUES (1, 'scan', 'n=1024,type=int32', 1024, 'int32', '{"n":1024,"type":"int32"}', 'type=int32');
    INSERT INTO runs (id, family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at,
                      finished_at, status)
      VALUES (1, 'scan', 1, 1, 'brute_force', 1, '', '', 'cutune 0.1.0', '2026-11-25', '2026-11-25', 'finished');
    INSERT INTO results (run_id, device_id, template_id, problem_id, config, config_json, status, time_ms_median,
                         samples, compile_s, verify_s, benchmark_s, error, launch_json, created_at, elapsed_s)
      VALUES (1, 1, 1, 1, 'algo=warp', '{}', 'ok', 0.5, 10, 0, 0, 0, '', '[]', '2026-11-25', 1),
             (1, 1, 1, 1, 'algo=blelloch', '{}', 'ok', 0.7, 10, 0, 0, 0, '', '[]', '2026-11-25', 1);
  )sql");
}

}  // namespace

TEST(StoreSchema6, AVersion5DatabaseMigratesAndGetsItsChoices) {
  TempDb t;
  create_version_5_database(t.path);
  Store store(t.path);
  sql::Database& db = store.database();
  EXPECT_EQ(schema_version(db), kSchemaVersion);
  // One choice per size for the device, its name and its compute capability; the family default;
  // the pair's results in compact form; nothing recorded as changed.
  auto choices = db.prepare("SELECT rule, devices, size, config FROM choices ORDER BY rule");
  std::vector<std::string> rows;
  while (choices.step())
    rows.push_back(std::to_string(choices.column_int(0)) + " " + choices.column_text(1) + " " +
                   std::to_string(choices.column_int(2)) + " " + choices.column_text(3));
  EXPECT_EQ(rows, (std::vector<std::string>{"1 GPU-v5 1024 algo=warp", "2 NVIDIA H100 80GB HBM3 1024 algo=warp",
                                            "3 9.0 1024 algo=warp"}));
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM family_defaults WHERE config = 'algo=warp'"), 1);
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM choice_pairs"), 1);
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM choice_sets"), 1);
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM changed_results"), 0);
  EXPECT_EQ(count_of(db, "SELECT value FROM meta WHERE key = 'choices_valid'"), 1);
  // What the migration left works: a new result is recorded as changed.
  store.add_result(result(1, 1, 1, 1, "algo=lookback", "ok", 0.1));
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM changed_results WHERE problem_id = 1 AND device_id = 1"), 1);
}

TEST(StoreSchema6, ReadingAVersion5FileMigratesACopyAndLeavesTheFile) {
  TempDb t;
  create_version_5_database(t.path);
  const std::string before = file_bytes(t.path);
  {
    Store store(t.path, Store::Access::read);
    EXPECT_EQ(schema_version(store.database()), kSchemaVersion);
    EXPECT_EQ(count_of(store.database(), "SELECT COUNT(*) FROM choices"), 3);
    const auto best = store.best("scan");
    ASSERT_EQ(best.size(), 1u);
    EXPECT_EQ(best[0].config, "algo=warp");
  }
  EXPECT_EQ(file_bytes(t.path), before);
  sql::Database raw(t.path, sql::Database::Mode::read_only);
  EXPECT_EQ(schema_version(raw), 5);
}

TEST(StoreSchema7, AVersion6DatabaseMigratesWithNoSourceFieldsAndStoresNewOnes) {
  TempDb t;
  create_version_5_database(t.path);
  {
    sql::Database raw(t.path, sql::Database::Mode::read_write_create);
    migrate_to(raw, 6);
  }
  Store store(t.path);
  sql::Database& db = store.database();
  EXPECT_EQ(schema_version(db), kSchemaVersion);
  // Rows stored before version 7 were cutune's own or imported without their source's fields.
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM results WHERE source_fields = ''"), 2);
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM runs WHERE source_header = ''"), 1);
  auto kept = result(1, 1, 1, 1, "algo=lookback", "ok", 0.1);
  kept.source_fields = R"({"kernel_tuner":{"framework_time":1.5}})";
  store.add_result(kept);
  const auto rows = store.results_of_run(1);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows.back().source_fields, kept.source_fields);
  EXPECT_EQ(rows.front().source_fields, "");
}

TEST(StoreSchema6, ChangesAreRecordedAndRegroupingInvalidatesTheChoicesUntilARefresh) {
  TempDb t;
  Store store(t.path);
  sql::Database& db = store.database();
  const auto valid = [&] { return count_of(db, "SELECT value FROM meta WHERE key = 'choices_valid'"); };
  const auto changed = [&] { return count_of(db, "SELECT COUNT(*) FROM changed_results"); };
  EXPECT_EQ(valid(), 1);  // a new database: computed (empty) by its migration
  const auto device = store.upsert_device(h100());
  const auto tmpl = store.upsert_template("scan", "h", "s");
  const auto problem = store.upsert_problem({0, "scan", "n=1024,type=int32", 1024, "int32", "{}"});
  const auto run = store.begin_run({0, "scan", device, tmpl, "brute_force", 1, "", "", "", "", "", ""});
  store.add_result(result(run, device, tmpl, problem, "a", "ok", 2.0));
  store.add_result(result(run, device, tmpl, problem, "b", "ok", 1.0));
  EXPECT_EQ(changed(), 2);
  store.refresh_family_defaults();
  EXPECT_EQ(changed(), 0);
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM choices WHERE config = 'b'"), 3);
  // Re-measured, failed on a second run, deleted: each recorded; a refresh recomputes and forgets.
  store.add_result(result(run, device, tmpl, problem, "a", "ok", 0.5));
  db.exec("UPDATE results SET status = 'wrong_result' WHERE config = 'b'");
  db.exec("UPDATE results SET elapsed_s = elapsed_s + 1");  // not a column a choice reads
  EXPECT_EQ(changed(), 2);
  db.exec("DELETE FROM results WHERE config = 'a'");
  EXPECT_EQ(changed(), 3);
  EXPECT_EQ(valid(), 1);
  store.refresh_family_defaults();
  EXPECT_EQ(changed(), 0);
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM choices"), 0);
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM choice_pairs"), 0);
  // Storing a problem again as it was keeps the choices; a new size, or a renamed device, regroups
  // pairs: the choices may not be used until the next refresh, which recomputes them all.
  store.upsert_problem({0, "scan", "n=1024,type=int32", 1024, "int32", "{}"});
  store.upsert_device(h100());
  EXPECT_EQ(valid(), 1);
  store.upsert_problem({0, "scan", "n=1024,type=int32", 2048, "int32", "{}"});
  EXPECT_EQ(valid(), 0);
  store.refresh_family_defaults();
  EXPECT_EQ(valid(), 1);
  DeviceRecord renamed = h100();
  renamed.name = "NVIDIA H100 PCIe";
  store.upsert_device(renamed);
  EXPECT_EQ(valid(), 0);
}

// ---- schema version 8: what a result observes besides its time -----------------------------------

namespace {

// A result that observed everything observations.hpp lists, none of it at its unknown value.
Observations every_observation() {
  Observations o;
  o.energy_j = 0.125;
  o.power_w = 612.5;
  o.energy_method = "energy_counter";
  o.energy_runs = 40;
  o.sm_clock_mhz = 1980;
  o.throttled_samples = 3;
  o.throttle_reasons = "sw_power_cap,hw_thermal";
  o.remeasured = true;
  o.registers = 72;
  o.spill_store_bytes = 0;  // known: none spilled
  o.spill_load_bytes = 8;
  o.local_bytes = 16;
  o.static_shared_bytes = 4096;
  o.dynamic_shared_bytes = 16904;
  o.blocks_per_sm = 3;
  o.occupancy = 0.375;
  o.compile_warnings = "warning: variable \"x\" was declared but never referenced";
  return o;
}

}  // namespace

// The field list and the migrations cannot drift apart: after migrate(), every observation is a
// results column of the type its member needs, unknown (NULL, '' or 0) by default.
TEST(StoreSchema8, EveryObservationFieldIsAResultsColumnOfItsType) {
  TempDb t;
  Store store(t.path);
  struct Column {
    std::string type, default_value;
    bool not_null = false;
  };
  std::map<std::string, Column> columns;
  auto s = store.database().prepare("SELECT name, type, \"notnull\", dflt_value FROM pragma_table_info('results')");
  while (s.step()) columns[s.column_text(0)] = {s.column_text(1), s.column_text(3), s.column_int(2) != 0};
  for (const ObservationField& field : kObservationFields) {
    const auto it = columns.find(field.name);
    ASSERT_NE(it, columns.end()) << field.name << " is no results column: add a migration step";
    const Column expected = std::visit(
        [](auto member) -> Column {
          using Value = std::remove_reference_t<decltype(std::declval<Observations>().*member)>;
          if constexpr (std::is_same_v<Value, std::optional<double>>)
            return {"REAL", "", false};
          else if constexpr (std::is_same_v<Value, std::optional<std::int64_t>>)
            return {"INTEGER", "", false};
          else if constexpr (std::is_same_v<Value, std::string>)
            return {"TEXT", "''", true};
          else
            return {"INTEGER", "0", true};
        },
        field.member);
    EXPECT_EQ(it->second.type, expected.type) << field.name;
    EXPECT_EQ(it->second.not_null, expected.not_null) << field.name;
    EXPECT_EQ(it->second.default_value, expected.default_value) << field.name;
  }
  // And the column lists the store reads and writes are made from the same list.
  EXPECT_NE(kResultColumns.find(observation_columns()), std::string::npos);
  EXPECT_EQ(result_columns(kSchemaVersion), kResultColumns);
}

TEST(StoreSchema8, ObservationsRoundTripAndAreReplacedWithTheirResult) {
  TempDb t;
  Store store(t.path);
  const auto device = store.upsert_device(h100());
  const auto tmpl = store.upsert_template("scan", "h", "s");
  const auto problem = store.upsert_problem({0, "scan", "n=1", 1, "int32", "{}"});
  const auto run = store.begin_run({0, "scan", device, tmpl, "brute_force", 1, "", "", "", "", "", ""});
  auto observed = result(run, device, tmpl, problem, "a", "ok", 1.0);
  observed.observations = every_observation();
  observed.created_at = "2026-06-01T00:00:00Z";
  store.add_result(observed);
  store.add_result(result(run, device, tmpl, problem, "b", "ok", 2.0));
  auto rows = store.results_of_run(run);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].observations, every_observation());
  EXPECT_EQ(rows[1].observations, Observations{});
  EXPECT_EQ(store.best_result(device, tmpl, problem)->observations, every_observation());
  // Measured again: the newer row's observations replace the older's, unknown ones included.
  auto again = observed;
  again.created_at = "2026-07-01T00:00:00Z";
  again.observations = {};
  again.observations.energy_j = 0.25;
  store.add_result(again);
  rows = store.results_of_run(run);
  EXPECT_EQ(rows[0].observations, again.observations);
}

// Rows stored before version 8 observed nothing the store knows of: they read back unknown, and
// new rows beside them keep what they observed. Reading such a file (a merge's source) selects
// unknowns in the observations' place.
TEST(StoreSchema8, AVersion7DatabaseMigratesWithUnknownObservationsAndStoresNewOnes) {
  TempDb t;
  create_version_5_database(t.path);
  {
    sql::Database raw(t.path, sql::Database::Mode::read_write_create);
    migrate_to(raw, 7);
    auto s = raw.prepare("SELECT " + result_columns(7) + " FROM results ORDER BY id");
    int rows = 0;
    for (; s.step(); ++rows) EXPECT_EQ(read_result(s).observations, Observations{});
    EXPECT_EQ(rows, 2);
  }
  Store store(t.path);
  sql::Database& db = store.database();
  EXPECT_EQ(schema_version(db), kSchemaVersion);
  EXPECT_EQ(count_of(db,
                     "SELECT COUNT(*) FROM results WHERE energy_j IS NULL AND energy_method = '' AND remeasured = 0 "
                     "AND registers IS NULL AND compile_warnings = ''"),
            2);
  auto observed = result(1, 1, 1, 1, "algo=lookback", "ok", 0.1);
  observed.observations = every_observation();
  store.add_result(observed);
  const auto rows = store.results_of_run(1);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].observations, Observations{});
  EXPECT_EQ(rows[1].observations, Observations{});
  EXPECT_EQ(rows[2].observations, every_observation());
  // What changed an observation only is no change a lookup's precomputed choice must correct.
  store.refresh_family_defaults();
  db.exec("UPDATE results SET energy_j = 1.5, registers = 40");
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM changed_results"), 0);
}

// `tune db best --objective energy`: per (device, problem), the least energy within the window of
// the fastest, else the fastest, saying that no energy was compared.
TEST(StoreSchema8, LowestEnergyBestTakesTheLeastEnergyWithinTheWindow) {
  TempDb t;
  Store store(t.path);
  cutune::testing::ResultsBuilder b(store);
  const auto gpu = b.device("GPU-e", "Energy GPU", 9, 0);
  b.with_energy(gpu, "scan", 1024, "int32", "algo=a", 1.00, 10.0, 500);
  b.with_energy(gpu, "scan", 1024, "int32", "algo=b", 1.04, 7.0, 400);
  b.with_energy(gpu, "scan", 1024, "int32", "algo=c", 1.30, 2.0, 100);  // outside 5 %
  b.with_energy(gpu, "scan", 4096, "int32", "algo=a", 2.00, std::nullopt);
  b.with_energy(gpu, "scan", 4096, "int32", "algo=b", 2.01, std::nullopt);
  const auto rows = store.lowest_energy_best(0.05, "scan");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].chosen.problem_key, "n=1024,type=int32");
  EXPECT_EQ(rows[0].chosen.config, "algo=b");
  EXPECT_TRUE(rows[0].energy_compared);
  EXPECT_DOUBLE_EQ(rows[0].chosen.time_ms, 1.04);
  EXPECT_EQ(rows[0].energy_j, 7.0);
  EXPECT_EQ(rows[0].power_w, 400.0);
  EXPECT_DOUBLE_EQ(rows[0].fastest_ms, 1.0);
  EXPECT_EQ(rows[0].fastest_config, "algo=a");
  EXPECT_EQ(rows[1].chosen.config, "algo=a");
  EXPECT_FALSE(rows[1].energy_compared);
  EXPECT_FALSE(rows[1].energy_j);
  EXPECT_EQ(store.lowest_energy_best(0.5, "scan")[0].chosen.config, "algo=c");
  EXPECT_EQ(store.lowest_energy_best(0, "scan")[0].chosen.config, "algo=a");
  EXPECT_TRUE(store.lowest_energy_best(0.05, "scan", "GPU-other").empty());
  EXPECT_THROW(store.lowest_energy_best(-0.01), std::invalid_argument);
  EXPECT_THROW(store.lowest_energy_best(std::nan("")), std::invalid_argument);
}
