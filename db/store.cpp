#include "store.hpp"

#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <variant>

#include "core/overloaded.hpp"
#include "choice_tables.hpp"
#include "config_choice.hpp"
#include "problem_identity.hpp"
#include "run_lease.hpp"

namespace cutune::db {

std::string default_database_path() {
  if (const char* env = std::getenv("CUTUNE_DB"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/cutune/cutune.db";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.local/share/cutune/cutune.db";
  return "cutune.db";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

static std::string open_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::exists(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec)
      throw sql::DbError("cannot create folder '" + parent.string() + "' for database '" + path + "': " + ec.message());
  }
  return path;
}

sql::Database open_for_reading(const std::string& path) {
  sql::Database db(path, sql::Database::Mode::read_only);
  const int version = schema_version(db);
  if (version == 0) {
    auto tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'results'");
    tables.step();
    if (tables.column_int(0) == 0)
      throw sql::DbError("'" + path + "' is not a cutune database (it has no cutune tables)");
  }
  if (version >= kSchemaVersion) {
    migrate(db);  // refuses a newer schema with its message; the current one needs nothing
    return db;
  }
  // An older schema: migrate a copy in memory, so that reading never changes the file.
  sql::Database copy(":memory:", sql::Database::Mode::read_write_create);
  sqlite3_backup* backup = sqlite3_backup_init(copy.handle(), "main", db.handle(), "main");
  if (!backup) throw sql::DbError("cannot read database '" + path + "': " + sqlite3_errmsg(copy.handle()));
  sqlite3_backup_step(backup, -1);
  if (sqlite3_backup_finish(backup) != SQLITE_OK)
    throw sql::DbError("cannot read database '" + path + "': " + sqlite3_errmsg(copy.handle()));
  migrate(copy);
  return copy;
}

static sql::Database open_store(const std::string& path, Store::Access access) {
  if (access == Store::Access::read) return open_for_reading(path);
  sql::Database db(open_path(path), sql::Database::Mode::read_write_create);
  // WAL lets applications and reports read while a tuner writes; NORMAL sync is durable per
  // transaction in WAL mode except on power loss, which costs one result at most.
  db.exec("PRAGMA journal_mode=WAL");
  db.exec("PRAGMA synchronous=NORMAL");
  db.exec("PRAGMA foreign_keys=ON");
  migrate(db);
  return db;
}

Store::Store(const std::string& path, Access access) : db_(open_store(path, access)) {}

std::int64_t Store::upsert_device(const DeviceFingerprint& d) {
  auto statement = db_.prepare(R"sql(
    INSERT INTO devices (uuid, name, cc_major, cc_minor, sm_count, memory_bytes, l2_bytes, memory_clock_khz,
                         bus_width_bits, theoretical_bandwidth_gbs, driver_version, nvrtc_version)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
    ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, driver_version = excluded.driver_version,
      nvrtc_version = excluded.nvrtc_version, memory_clock_khz = excluded.memory_clock_khz,
      theoretical_bandwidth_gbs = excluded.theoretical_bandwidth_gbs
    RETURNING id)sql");
  statement.bind(1, d.uuid)
      .bind(2, d.name)
      .bind(3, d.cc_major)
      .bind(4, d.cc_minor)
      .bind(5, d.sm_count)
      .bind(6, d.memory_bytes)
      .bind(7, d.l2_bytes)
      .bind(8, d.memory_clock_khz)
      .bind(9, d.bus_width_bits)
      .bind(10, d.theoretical_bandwidth_gbs)
      .bind(11, d.driver_version)
      .bind(12, d.nvrtc_version);
  statement.step();
  return statement.column_int(0);
}

DeviceRecord read_device(const sql::Statement& s) {
  DeviceRecord d;
  d.id = s.column_int(0);
  d.uuid = s.column_text(1);
  d.name = s.column_text(2);
  d.cc_major = static_cast<int>(s.column_int(3));
  d.cc_minor = static_cast<int>(s.column_int(4));
  d.sm_count = static_cast<int>(s.column_int(5));
  d.memory_bytes = s.column_int(6);
  d.l2_bytes = s.column_int(7);
  d.memory_clock_khz = static_cast<int>(s.column_int(8));
  d.bus_width_bits = static_cast<int>(s.column_int(9));
  d.theoretical_bandwidth_gbs = s.column_double(10);
  d.driver_version = static_cast<int>(s.column_int(11));
  d.nvrtc_version = s.column_text(12);
  d.copy_bandwidth_gbs = s.column_optional_double(13);
  d.copy_bandwidth_measured_at = s.column_text(14);
  return d;
}

const char* const kDeviceColumns =
    "id, uuid, name, cc_major, cc_minor, sm_count, memory_bytes, l2_bytes, memory_clock_khz, bus_width_bits, "
    "theoretical_bandwidth_gbs, driver_version, nvrtc_version, copy_bandwidth_gbs, copy_bandwidth_measured_at";

std::optional<DeviceRecord> Store::device_by_uuid(const std::string& uuid) {
  auto s = db_.prepare(std::string("SELECT ") + kDeviceColumns + " FROM devices WHERE uuid = ?1");
  s.bind(1, uuid);
  if (!s.step()) return std::nullopt;
  return read_device(s);
}

std::optional<DeviceRecord> device_by_id(sql::Database& db, std::int64_t id) {
  auto s = db.prepare(std::string("SELECT ") + kDeviceColumns + " FROM devices WHERE id = ?1");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_device(s);
}

std::vector<DeviceRecord> all_devices(sql::Database& db) {
  auto s = db.prepare(std::string("SELECT ") + kDeviceColumns + " FROM devices ORDER BY id");
  std::vector<DeviceRecord> all;
  while (s.step()) all.push_back(read_device(s));
  return all;
}

std::vector<DeviceRecord> Store::devices() { return all_devices(db_); }

std::string run_columns(const std::string& table_prefix) {
  static constexpr std::array<const char*, kRunColumnCount> kNames = {
      "id",     "family",  "device_id",    "template_id", "strategy",    "seed",
      "budget", "command", "tool_version", "started_at",  "finished_at", "status"};
  std::string columns;
  for (const char* column : kNames) columns += (columns.empty() ? "" : ", ") + table_prefix + column;
  return columns;
}

RunRecord read_run(const sql::Statement& s, int first_column) {
  const int c = first_column;
  RunRecord r;
  r.id = s.column_int(c);
  r.family = s.column_text(c + 1);
  r.device_id = s.column_int(c + 2);
  r.template_id = s.column_int(c + 3);
  r.strategy = s.column_text(c + 4);
  r.seed = s.column_int(c + 5);
  r.budget = s.column_text(c + 6);
  r.command = s.column_text(c + 7);
  r.tool_version = s.column_text(c + 8);
  r.started_at = s.column_text(c + 9);
  r.finished_at = s.column_text(c + 10);  // NULL while running: read as ''
  r.status = s.column_text(c + 11);
  return r;
}

std::optional<RunRecord> run_by_id(sql::Database& db, std::int64_t id) {
  auto s = db.prepare("SELECT " + run_columns() + " FROM runs WHERE id = ?1");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

void Store::set_copy_bandwidth(std::int64_t device_id, double gbs) {
  db_.prepare("UPDATE devices SET copy_bandwidth_gbs = ?1, copy_bandwidth_measured_at = ?2 WHERE id = ?3")
      .bind(1, gbs)
      .bind(2, utc_now())
      .bind(3, device_id)
      .run();
}

std::int64_t Store::upsert_template(const std::string& family, const std::string& source_hash,
                                    const std::string& source) {
  auto s = db_.prepare(R"sql(
    INSERT INTO templates (family, source_hash, source, created_at) VALUES (?1, ?2, ?3, ?4)
    ON CONFLICT (family, source_hash) DO UPDATE SET family = excluded.family
    RETURNING id)sql");
  s.bind(1, family).bind(2, source_hash).bind(3, source).bind(4, utc_now());
  s.step();
  return s.column_int(0);
}

std::int64_t Store::upsert_problem(const ProblemRecord& given) {
  const ProblemRecord p = derive_problem(db_, given);
  auto s = db_.prepare(R"sql(
    INSERT INTO problems (family, key, size, dtype, descriptor, match_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
    ON CONFLICT (family, key) DO UPDATE SET descriptor = excluded.descriptor, size = excluded.size,
      dtype = excluded.dtype, match_key = excluded.match_key
    RETURNING id)sql");
  s.bind(1, p.family).bind(2, p.key).bind(3, p.size).bind(4, p.dtype).bind(5, p.descriptor).bind(6, p.match_key);
  s.step();
  return s.column_int(0);
}

void Store::put_problem_schema(const std::string& family, const ProblemSchema& schema) {
  sql::Transaction transaction(db_);
  store_problem_schema(db_, family, schema);
  transaction.commit();
}

std::optional<ProblemSchema> Store::problem_schema(const std::string& family) {
  return stored_problem_schema(db_, family);
}

// A database held in memory has no file beside which to lock runs, and no other process to see them.
static bool has_file(const sql::Database& db) { return !db.path().empty() && db.path() != ":memory:"; }

int Store::mark_abandoned_runs() {
  if (!has_file(db_)) return 0;
  sql::Transaction transaction(db_);
  const int marked = mark_abandoned_runs_in_transaction();
  transaction.commit();
  return marked;
}

int Store::mark_abandoned_runs_in_transaction() {
  std::vector<std::int64_t> abandoned;
  auto running = db_.prepare("SELECT id FROM runs WHERE status = 'running'");
  while (running.step())
    if (!run_is_live(db_.path(), running.column_int(0))) abandoned.push_back(running.column_int(0));
  // It ended after its last stored result; a run killed before storing any ended when it started.
  auto mark = db_.prepare(R"sql(
    UPDATE runs SET status = 'interrupted',
      finished_at = COALESCE((SELECT MAX(created_at) FROM results WHERE run_id = ?1), started_at)
    WHERE id = ?1)sql");
  for (std::int64_t id : abandoned) mark.bind(1, id).run();
  return static_cast<int>(abandoned.size());
}

std::int64_t Store::begin_run(const RunRecord& r) {
  // One write transaction from the check to the lock: another process's check cannot fall between
  // this run's row and its lock and take the new run for an abandoned one.
  sql::Transaction transaction(db_);
  if (has_file(db_)) mark_abandoned_runs_in_transaction();
  auto s = db_.prepare(R"sql(
    INSERT INTO runs (family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at, status)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'running') RETURNING id)sql");
  s.bind(1, r.family)
      .bind(2, r.device_id)
      .bind(3, r.template_id)
      .bind(4, r.strategy)
      .bind(5, r.seed)
      .bind(6, r.budget)
      .bind(7, r.command)
      .bind(8, r.tool_version)
      .bind(9, r.started_at.empty() ? utc_now() : r.started_at);
  s.step();
  const std::int64_t id = s.column_int(0);
  s.reset();
  if (has_file(db_)) leases_.emplace(id, RunLease(db_.path(), id));
  transaction.commit();
  return id;
}

void Store::finish_run(std::int64_t run_id, const std::string& status) {
  db_.prepare("UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3")
      .bind(1, status)
      .bind(2, utc_now())
      .bind(3, run_id)
      .run();
  leases_.erase(run_id);  // only now: until its end is stored, the run is live
}

namespace {

// The results columns before version 8, in the order read_result reads them; the observations follow.
constexpr const char* kMeasurementColumns =
    "id, run_id, device_id, template_id, problem_id, config, config_json, status, time_ms_median, time_ms_min, "
    "time_ms_max, time_ms_stdev, samples, compile_s, verify_s, benchmark_s, gbs, gflops, copy_fraction, error, "
    "error_index, launch_json, created_at, elapsed_s, verified, cut_short, measured_on, source_fields";
constexpr int kFirstObservationColumn = 28;
// insert_result binds the measurement to parameters 1 to 27 (no id), then the observations.
constexpr int kFirstObservationParameter = 28;

// What an observation's column reads as in a row stored before it existed: unknown.
const char* unknown_observation(const ObservationField& field) {
  return std::visit(
      Overloaded{[](std::optional<double> Observations::*) { return "NULL"; },
                 [](std::optional<std::int64_t> Observations::*) { return "NULL"; },
                 [](std::string Observations::*) { return "''"; }, [](bool Observations::*) { return "0"; }},
      field.member);
}

// The INSERT of insert_result: parameters 1 to 27 as bound there, then one per observation in
// kObservationFields order; a conflict replaces every column but the natural key, unless the
// stored row is newer.
const std::string& insert_result_sql() {
  static const std::string sql = [] {
    std::string columns = R"sql(run_id, device_id, template_id, problem_id, config, config_json, status,
      time_ms_median, time_ms_min, time_ms_max, time_ms_stdev, samples, compile_s, verify_s, benchmark_s,
      gbs, gflops, copy_fraction, error, error_index, launch_json, created_at, elapsed_s, verified, cut_short,
      measured_on, source_fields)sql";
    std::string values, updates = R"sql(
      run_id = excluded.run_id, status = excluded.status, time_ms_median = excluded.time_ms_median,
      time_ms_min = excluded.time_ms_min, time_ms_max = excluded.time_ms_max, time_ms_stdev = excluded.time_ms_stdev,
      samples = excluded.samples, compile_s = excluded.compile_s, verify_s = excluded.verify_s,
      benchmark_s = excluded.benchmark_s, gbs = excluded.gbs, gflops = excluded.gflops,
      copy_fraction = excluded.copy_fraction, error = excluded.error, error_index = excluded.error_index,
      launch_json = excluded.launch_json, created_at = excluded.created_at, elapsed_s = excluded.elapsed_s,
      verified = excluded.verified, cut_short = excluded.cut_short, measured_on = excluded.measured_on,
      source_fields = excluded.source_fields)sql";
    for (int i = 1; i < kFirstObservationParameter; ++i) values += (i > 1 ? ", ?" : "?") + std::to_string(i);
    int parameter = kFirstObservationParameter;
    for (const ObservationField& field : kObservationFields) {
      const std::string name = field.name;
      columns += ", " + name;
      values += ", ?" + std::to_string(parameter++);
      updates += ", " + name + " = excluded." + name;
    }
    return "INSERT INTO results (" + columns + ") VALUES (" + values +
           ") ON CONFLICT (device_id, template_id, problem_id, config) DO UPDATE SET" + updates +
           " WHERE excluded.created_at >= results.created_at";
  }();
  return sql;
}

}  // namespace

void Store::add_result(const ResultRecord& r) { add_results(std::span<const ResultRecord>(&r, 1)); }

void Store::add_results(std::span<const ResultRecord> results) {
  sql::Transaction transaction(db_);
  for (const ResultRecord& r : results) insert_result(r);
  transaction.commit();
}

void Store::insert_result(const ResultRecord& r) {
  if (insert_result_statement_)
    insert_result_statement_->reset();  // after a failed step too: the next row starts clean
  else
    insert_result_statement_ = std::make_unique<sql::Statement>(db_.prepare(insert_result_sql()));
  sql::Statement& s = *insert_result_statement_;
  s.bind(1, r.run_id)
      .bind(2, r.device_id)
      .bind(3, r.template_id)
      .bind(4, r.problem_id)
      .bind(5, r.config)
      .bind(6, r.config_json)
      .bind(7, r.status)
      .bind(8, r.time_ms_median)
      .bind(9, r.time_ms_min)
      .bind(10, r.time_ms_max)
      .bind(11, r.time_ms_stdev)
      .bind(12, r.samples)
      .bind(13, r.compile_s)
      .bind(14, r.verify_s)
      .bind(15, r.benchmark_s)
      .bind(16, r.gbs)
      .bind(17, r.gflops)
      .bind(18, r.copy_fraction)
      .bind(19, r.error)
      .bind(20, r.error_index)
      .bind(21, r.launch_json)
      .bind(22, r.created_at.empty() ? utc_now() : r.created_at)
      .bind(23, r.elapsed_s)
      .bind(24, r.verified ? 1 : 0)
      .bind(25, r.cut_short ? 1 : 0)
      .bind(26, r.measured_on)
      .bind(27, r.source_fields);
  bind_observations(s, kFirstObservationParameter, r.observations);
  s.run();
}

std::map<std::string, std::optional<double>> Store::measured_configs(std::int64_t device_id, std::int64_t template_id,
                                                                     std::int64_t problem_id) {
  auto s = db_.prepare(
      "SELECT config, CASE WHEN status = 'ok' THEN time_ms_median END FROM results "
      "WHERE device_id = ?1 AND template_id = ?2 AND problem_id = ?3");
  s.bind(1, device_id).bind(2, template_id).bind(3, problem_id);
  std::map<std::string, std::optional<double>> configs;
  while (s.step()) configs.emplace(s.column_text(0), s.column_optional_double(1));
  return configs;
}

const std::string kResultColumns = std::string(kMeasurementColumns) + ", " + observation_columns();

std::string result_columns(int schema_version) {
  std::string columns = kMeasurementColumns;
  // Before version 7 nothing kept its source's other fields.
  if (schema_version < 7) columns.replace(columns.rfind("source_fields"), 13, "''");
  // Before version 5 no result was cut short; before version 4 every one had been verified.
  if (schema_version < 5) {
    columns.replace(columns.rfind("measured_on"), 11, "''");
    columns.replace(columns.rfind("cut_short"), 9, "0");
  }
  if (schema_version < 4) columns.replace(columns.rfind("verified"), 8, "1");
  return columns + ", " + observation_select(schema_version);
}

std::string observation_select(int schema_version, const std::string& table_prefix) {
  std::string columns;
  for (const ObservationField& field : kObservationFields) {
    if (!columns.empty()) columns += ", ";
    columns += schema_version >= kObservationsSchemaVersion ? table_prefix + field.name
                                                            : std::string(unknown_observation(field));
  }
  return columns;
}

Observations read_observations(const sql::Statement& s, int first_column) {
  Observations o;
  int column = first_column;
  for (const ObservationField& field : kObservationFields) {
    std::visit(Overloaded{[&](std::optional<double> Observations::*m) { o.*m = s.column_optional_double(column); },
                          [&](std::optional<std::int64_t> Observations::*m) { o.*m = s.column_optional_int(column); },
                          [&](std::string Observations::*m) { o.*m = s.column_text(column); },
                          [&](bool Observations::*m) { o.*m = s.column_int(column) != 0; }},
               field.member);
    ++column;
  }
  return o;
}

void bind_observations(sql::Statement& s, int first_parameter, const Observations& o) {
  int parameter = first_parameter;
  for (const ObservationField& field : kObservationFields) {
    std::visit(Overloaded{[&](std::optional<double> Observations::*m) { s.bind(parameter, o.*m); },
                          [&](std::optional<std::int64_t> Observations::*m) { s.bind(parameter, o.*m); },
                          [&](std::string Observations::*m) { s.bind(parameter, o.*m); },
                          [&](bool Observations::*m) { s.bind(parameter, o.*m ? 1 : 0); }},
               field.member);
    ++parameter;
  }
}

ResultRecord read_result(const sql::Statement& s) {
  ResultRecord r;
  r.id = s.column_int(0);
  r.run_id = s.column_int(1);
  r.device_id = s.column_int(2);
  r.template_id = s.column_int(3);
  r.problem_id = s.column_int(4);
  r.config = s.column_text(5);
  r.config_json = s.column_text(6);
  r.status = s.column_text(7);
  r.time_ms_median = s.column_optional_double(8);
  r.time_ms_min = s.column_optional_double(9);
  r.time_ms_max = s.column_optional_double(10);
  r.time_ms_stdev = s.column_optional_double(11);
  r.samples = static_cast<int>(s.column_int(12));
  r.compile_s = s.column_double(13);
  r.verify_s = s.column_double(14);
  r.benchmark_s = s.column_double(15);
  r.gbs = s.column_optional_double(16);
  r.gflops = s.column_optional_double(17);
  r.copy_fraction = s.column_optional_double(18);
  r.error = s.column_text(19);
  r.error_index = s.column_optional_int(20);
  r.launch_json = s.column_text(21);
  r.verified = s.column_int(24) != 0;
  r.cut_short = s.column_int(25) != 0;
  r.measured_on = s.column_text(26);
  r.source_fields = s.column_text(27);
  r.created_at = s.column_text(22);
  r.elapsed_s = s.column_double(23);
  r.observations = read_observations(s, kFirstObservationColumn);
  return r;
}

std::vector<ResultRecord> Store::results_of_run(std::int64_t run_id) {
  auto s = db_.prepare(std::string("SELECT ") + kResultColumns + " FROM results WHERE run_id = ?1 ORDER BY id");
  s.bind(1, run_id);
  std::vector<ResultRecord> rows;
  while (s.step()) rows.push_back(read_result(s));
  return rows;
}

std::vector<ProblemResult> Store::problem_results(const std::string& device_uuid, const std::string& family,
                                                  const std::string& problem_key) {
  auto s = db_.prepare(R"sql(
    SELECT r.config, r.status, r.time_ms_median, r.compile_s, r.verify_s, r.benchmark_s
    FROM results r JOIN devices d ON d.id = r.device_id JOIN problems p ON p.id = r.problem_id
    WHERE d.uuid = ?1 AND p.family = ?2 AND p.key = ?3
      AND r.template_id = (SELECT MAX(template_id) FROM results
                           WHERE device_id = r.device_id AND problem_id = r.problem_id)
    ORDER BY r.id)sql");
  s.bind(1, device_uuid).bind(2, family).bind(3, problem_key);
  std::vector<ProblemResult> rows;
  while (s.step())
    rows.push_back({s.column_text(0), s.column_text(1), s.column_optional_double(2), s.column_double(3),
                    s.column_double(4), s.column_double(5)});
  return rows;
}

std::vector<SourceResults> Store::family_results_by_source(const std::string& family) {
  auto s = db_.prepare(R"sql(
    SELECT d.uuid, d.name, p.key, r.config, r.status, r.time_ms_median, r.compile_s, r.verify_s, r.benchmark_s
    FROM results r JOIN devices d ON d.id = r.device_id JOIN problems p ON p.id = r.problem_id
    WHERE p.family = ?1
    ORDER BY r.device_id, r.problem_id, r.id)sql");
  s.bind(1, family);
  std::vector<SourceResults> sources;
  while (s.step()) {
    std::string uuid = s.column_text(0), key = s.column_text(2);
    if (sources.empty() || sources.back().device_uuid != uuid || sources.back().problem_key != key)
      sources.push_back({std::move(uuid), s.column_text(1), std::move(key), {}});
    sources.back().results.push_back({s.column_text(3), s.column_text(4), s.column_optional_double(5),
                                      s.column_double(6), s.column_double(7), s.column_double(8)});
  }
  return sources;
}

std::optional<ResultRecord> Store::best_result(std::int64_t device_id, std::int64_t template_id,
                                               std::int64_t problem_id) {
  auto s = db_.prepare(std::string("SELECT ") + kResultColumns +
                       " FROM results WHERE device_id = ?1 AND template_id = ?2 AND problem_id = ?3 AND status = 'ok'"
                       // Ties (event times are quantised) go to the smaller config text, as in
                       // choose_config: the cubin stored for the best is the one lookups answer with.
                       " AND time_ms_median IS NOT NULL ORDER BY time_ms_median, config LIMIT 1");
  s.bind(1, device_id).bind(2, template_id).bind(3, problem_id);
  if (!s.step()) return std::nullopt;
  return read_result(s);
}

std::vector<ResultRecord> Store::ranked_results(std::int64_t device_id, std::int64_t template_id,
                                                std::int64_t problem_id) {
  auto s = db_.prepare(std::string("SELECT ") + kResultColumns +
                       " FROM results WHERE device_id = ?1 AND template_id = ?2 AND problem_id = ?3 AND status = 'ok'"
                       " AND time_ms_median > 0 ORDER BY time_ms_median, config");
  s.bind(1, device_id).bind(2, template_id).bind(3, problem_id);
  std::vector<ResultRecord> results;
  while (s.step()) results.push_back(read_result(s));
  return results;
}

std::vector<ResultRecord> Store::energy_front(std::int64_t device_id, std::int64_t template_id,
                                              std::int64_t problem_id) {
  const std::vector<ResultRecord> results = ranked_results(device_id, template_id, problem_id);
  std::vector<EnergyCandidate> candidates;
  for (const ResultRecord& r : results)
    candidates.push_back({r.id, *r.time_ms_median, r.observations.energy_j, r.config});
  std::vector<ResultRecord> front;
  for (const EnergyCandidate* c : db::energy_front(candidates))
    front.push_back(results[static_cast<std::size_t>(c - candidates.data())]);
  return front;
}

void Store::put_cubin(const CubinRecord& c) {
  auto s = db_.prepare(R"sql(
    INSERT INTO cubins (arch, template_id, problem_id, config, cubin, launch_json, compile_options, nvrtc_version,
                        created_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
    ON CONFLICT (problem_id, config, template_id, arch) DO UPDATE SET cubin = excluded.cubin,
      launch_json = excluded.launch_json, compile_options = excluded.compile_options,
      nvrtc_version = excluded.nvrtc_version, created_at = excluded.created_at)sql");
  s.bind(1, c.arch)
      .bind(2, c.template_id)
      .bind(3, c.problem_id)
      .bind(4, c.config)
      .bind_blob(5, c.cubin.data(), c.cubin.size())
      .bind(6, c.launch_json)
      .bind(7, c.compile_options)
      .bind(8, c.nvrtc_version)
      .bind(9, c.created_at.empty() ? utc_now() : c.created_at);
  s.run();
}

void Store::refresh_family_defaults() { db::refresh_family_defaults(db_); }

std::int64_t Store::result_count() {
  auto s = db_.prepare("SELECT COUNT(*) FROM results");
  s.step();
  return s.column_int(0);
}

namespace {

// What read_best_row reads, in order, of a result `r` with its device `d` and problem `p`; then
// the result's id, energy and power.
constexpr const char* kBestRowColumns =
    "d.name, d.uuid, p.family, p.key, p.size, p.dtype, r.config, r.launch_json, r.time_ms_median, r.gbs, r.gflops, "
    "r.copy_fraction, p.match_key, r.verified, r.id, r.energy_j, r.power_w";

BestRow read_best_row(const sql::Statement& s) {
  BestRow b;
  b.device_name = s.column_text(0);
  b.device_uuid = s.column_text(1);
  b.family = s.column_text(2);
  b.problem_key = s.column_text(3);
  b.problem_size = s.column_int(4);
  b.dtype = s.column_text(5);
  b.config = s.column_text(6);
  b.launch_json = s.column_text(7);
  b.time_ms = s.column_double(8);
  b.gbs = s.column_optional_double(9);
  b.gflops = s.column_optional_double(10);
  b.copy_fraction = s.column_optional_double(11);
  b.match_key = s.column_text(12);
  b.verified = s.column_int(13) != 0;
  return b;
}

}  // namespace

struct Store::RankedBest {
  BestRow row;
  std::int64_t result_id = 0, device_id = 0, problem_id = 0;
  std::optional<double> energy_j, power_w;
};

std::vector<Store::RankedBest> Store::fastest_per_pair(const std::string& family, const std::string& device_uuid) {
  // The fastest ok result of each (device, problem); ties go to the smaller config text (choose_config's rule).
  auto s = db_.prepare(std::string(R"sql(
    WITH ranked AS (
      SELECT r.*, ROW_NUMBER() OVER (PARTITION BY r.device_id, r.problem_id ORDER BY r.time_ms_median, r.config) AS rank
      FROM results r WHERE r.status = 'ok' AND r.time_ms_median IS NOT NULL)
    SELECT )sql") + kBestRowColumns +
                       R"sql(, r.device_id, r.problem_id
    FROM ranked r JOIN devices d ON d.id = r.device_id JOIN problems p ON p.id = r.problem_id
    WHERE r.rank = 1 AND (?1 = '' OR p.family = ?1) AND (?2 = '' OR d.uuid = ?2)
    ORDER BY d.name, p.family, p.dtype, p.size)sql");
  s.bind(1, family).bind(2, device_uuid);
  std::vector<RankedBest> rows;
  while (s.step())
    rows.push_back({read_best_row(s), s.column_int(14), s.column_int(17), s.column_int(18),
                    s.column_optional_double(15), s.column_optional_double(16)});
  return rows;
}

std::vector<BestRow> Store::best(const std::string& family, const std::string& device_uuid) {
  std::vector<BestRow> rows;
  for (RankedBest& ranked : fastest_per_pair(family, device_uuid)) rows.push_back(std::move(ranked.row));
  return rows;
}

std::vector<EnergyBestRow> Store::lowest_energy_best(double within_fraction, const std::string& family,
                                                     const std::string& device_uuid) {
  if (!valid_within_fraction(within_fraction))
    throw std::invalid_argument("the time window must be a fraction of at least 0 (got " +
                                std::to_string(within_fraction) + ")");
  sql::Transaction snapshot(db_, sql::Transaction::Kind::read);
  auto by_id = db_.prepare(std::string("SELECT ") + kBestRowColumns +
                           " FROM results r JOIN devices d ON d.id = r.device_id JOIN problems p ON p.id = r.problem_id"
                           " WHERE r.id = ?1");
  std::vector<EnergyBestRow> rows;
  for (RankedBest& fastest : fastest_per_pair(family, device_uuid)) {
    EnergyBestRow& row = rows.emplace_back();
    row.fastest_ms = fastest.row.time_ms;
    row.fastest_config = fastest.row.config;
    const auto choice = lowest_energy_choice(db_, fastest.problem_id, fastest.device_id, within_fraction);
    row.energy_compared = choice && choice->result_id != 0;
    if (row.energy_compared && choice->result_id != fastest.result_id) {
      by_id.bind(1, choice->result_id);
      if (!by_id.step())
        throw sql::DbError("result " + std::to_string(choice->result_id) + " went away while it was read");
      row.chosen = read_best_row(by_id);
      row.energy_j = by_id.column_optional_double(15);
      row.power_w = by_id.column_optional_double(16);
      by_id.reset();
      continue;
    }
    row.chosen = std::move(fastest.row);
    row.energy_j = fastest.energy_j;
    row.power_w = fastest.power_w;
  }
  snapshot.commit();
  return rows;
}

void Store::add_baseline(const BaselineRecord& b) {
  db_.prepare(R"sql(
    INSERT INTO baselines (device_id, family, problem_key, library, library_ms, cutune_ms, cutune_config, measured_at,
                           commit_id)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9))sql")
      .bind(1, b.device_id)
      .bind(2, b.family)
      .bind(3, b.problem_key)
      .bind(4, b.library)
      .bind(5, b.library_ms)
      .bind(6, b.cutune_ms)
      .bind(7, b.cutune_config)
      .bind(8, b.measured_at.empty() ? utc_now() : b.measured_at)
      .bind(9, b.commit)
      .run();
}

}  // namespace cutune::db
