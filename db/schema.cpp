#include "schema.hpp"

#include <iterator>

#include "sqlite.hpp"

namespace cutune::db {

const char* const kSchemaV1 = R"sql(
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL,
  sm_count INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL,
  memory_clock_khz INTEGER NOT NULL,
  bus_width_bits INTEGER NOT NULL,
  theoretical_bandwidth_gbs REAL NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL,
  copy_bandwidth_gbs REAL,
  copy_bandwidth_measured_at TEXT
);
CREATE TABLE templates (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  source TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (family, source_hash)
);
CREATE TABLE problems (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  key TEXT NOT NULL,
  size INTEGER NOT NULL,
  dtype TEXT NOT NULL,
  descriptor TEXT NOT NULL,
  UNIQUE (family, key)
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  template_id INTEGER NOT NULL REFERENCES templates(id),
  strategy TEXT NOT NULL,
  seed INTEGER NOT NULL,
  budget TEXT NOT NULL,
  command TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL
);
CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  template_id INTEGER NOT NULL REFERENCES templates(id),
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config TEXT NOT NULL,
  config_json TEXT NOT NULL,
  status TEXT NOT NULL,
  time_ms_median REAL, time_ms_min REAL, time_ms_max REAL, time_ms_stdev REAL,
  samples INTEGER NOT NULL,
  compile_s REAL NOT NULL, verify_s REAL NOT NULL, benchmark_s REAL NOT NULL,
  gbs REAL, gflops REAL, copy_fraction REAL,
  error TEXT NOT NULL,
  error_index INTEGER,
  launch_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  elapsed_s REAL NOT NULL,
  UNIQUE (device_id, template_id, problem_id, config)
);
CREATE INDEX results_by_problem ON results (device_id, problem_id, status, time_ms_median);
CREATE INDEX results_by_run ON results (run_id);
)sql";

namespace {

// Version 1 → 2. A cubin belongs to the template it was compiled from and the problem whose best
// config it is; the architecture is part of its identity because the same config gets one cubin
// per architecture. family_defaults holds the lookup's third level, precomputed by the writer
// (scoring every stored result is too slow for an application's first lookup); the triggers bump
// meta.results_version on every change of results, so a reader knows when the table is stale.
// The indexes serve the lookup library: problems by (family, dtype, size) for the nearest size,
// devices by name and compute capability for the fallbacks, and successful results by problem
// and by config.
constexpr const char* kSchemaV1ToV2 = R"sql(
CREATE TABLE cubins (
  id INTEGER PRIMARY KEY,
  arch TEXT NOT NULL,
  template_id INTEGER NOT NULL REFERENCES templates(id),
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config TEXT NOT NULL,
  cubin BLOB NOT NULL,
  launch_json TEXT NOT NULL,
  compile_options TEXT NOT NULL,
  nvrtc_version TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (problem_id, config, template_id, arch)
);
CREATE INDEX problems_by_size ON problems (family, dtype, size);
CREATE INDEX devices_by_name ON devices (name);
CREATE INDEX devices_by_cc ON devices (cc_major, cc_minor);
CREATE INDEX results_ok_by_problem ON results (problem_id, device_id, time_ms_median) WHERE status = 'ok';
CREATE INDEX results_ok_by_config ON results (config, problem_id) WHERE status = 'ok';
CREATE TABLE family_defaults (
  family TEXT NOT NULL,
  dtype TEXT NOT NULL,
  config TEXT NOT NULL,
  pairs INTEGER NOT NULL,
  geomean_ratio REAL NOT NULL,
  PRIMARY KEY (family, dtype)
);
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta (key, value) VALUES ('results_version', 0), ('family_defaults_version', -1);
CREATE TRIGGER results_inserted AFTER INSERT ON results
  BEGIN UPDATE meta SET value = value + 1 WHERE key = 'results_version'; END;
CREATE TRIGGER results_updated AFTER UPDATE ON results
  BEGIN UPDATE meta SET value = value + 1 WHERE key = 'results_version'; END;
CREATE TRIGGER results_deleted AFTER DELETE ON results
  BEGIN UPDATE meta SET value = value + 1 WHERE key = 'results_version'; END;
)sql";

// Version 2 → 3. What bench/ measured against a library doing the same job (CUB, cuBLAS, a copy)
// on the same GPU in the same run, so that reports can show it next to the tuning results.
constexpr const char* kSchemaV2ToV3 = R"sql(
CREATE TABLE baselines (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  family TEXT NOT NULL,
  problem_key TEXT NOT NULL,
  library TEXT NOT NULL,
  library_ms REAL NOT NULL,
  cutune_ms REAL NOT NULL,
  cutune_config TEXT NOT NULL,
  measured_at TEXT NOT NULL,
  commit_id TEXT NOT NULL
);
CREATE INDEX baselines_by_family ON baselines (device_id, family, problem_key);
)sql";

// steps[v] takes a database from version v to v + 1.
constexpr const char* kSteps[] = {kSchemaV1, kSchemaV1ToV2, kSchemaV2ToV3};
static_assert(std::size(kSteps) == kSchemaVersion, "one migration step per schema version");

}  // namespace

int schema_version(sql::Database& db) {
  auto statement = db.prepare("PRAGMA user_version");
  statement.step();
  return static_cast<int>(statement.column_int(0));
}

void migrate(sql::Database& db) {
  const auto newer_error = [&db](int version) {
    return sql::DbError("database '" + db.path() + "' has schema version " + std::to_string(version) +
                        ", newer than this cutune understands (" + std::to_string(kSchemaVersion) +
                        "); use a newer cutune");
  };
  if (const int version = schema_version(db); version > kSchemaVersion) throw newer_error(version);
  else if (version == kSchemaVersion) return;

  sql::Transaction transaction(db);
  // Read again under the write lock: another process may have migrated it meanwhile.
  const int version = schema_version(db);
  if (version > kSchemaVersion) throw newer_error(version);
  for (int step = version; step < kSchemaVersion; ++step) db.exec(kSteps[step]);
  db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  transaction.commit();
}

}  // namespace cutune::db
