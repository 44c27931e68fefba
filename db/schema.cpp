#include "schema.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

#include <nlohmann/json.hpp>

#include "choice_tables.hpp"
#include "problem_identity.hpp"
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

// Version 3 → 4. The SQL half; backfill_problem_identity below derives the new columns.
constexpr const char* kSchemaV3ToV4 = R"sql(
CREATE TABLE problem_schemas (
  family TEXT PRIMARY KEY,
  fields TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
ALTER TABLE problems ADD COLUMN match_key TEXT NOT NULL DEFAULT '';
DROP INDEX problems_by_size;
CREATE INDEX problems_by_match ON problems (family, match_key, size);
DROP TABLE family_defaults;
CREATE TABLE family_defaults (
  family TEXT NOT NULL,
  match_key TEXT NOT NULL,
  config TEXT NOT NULL,
  pairs INTEGER NOT NULL,
  geomean_ratio REAL NOT NULL,
  PRIMARY KEY (family, match_key)
);
UPDATE meta SET value = -1 WHERE key = 'family_defaults_version';
ALTER TABLE results ADD COLUMN verified INTEGER NOT NULL DEFAULT 1;
)sql";

// Version 4 → 5.
constexpr const char* kSchemaV4ToV5 = R"sql(
ALTER TABLE results ADD COLUMN cut_short INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN measured_on TEXT NOT NULL DEFAULT '';
)sql";

// Version 5 → 6. The lookup library's choices precomputed per size and device set, and what a
// reader needs to correct them for results stored since (choice_tables.hpp): triggers record the
// changed results and their (problem, device) pairs instead of bumping one version number, so
// only what changed is scored again. A change to a problem's size or match key or to a device's
// name or compute capability regroups pairs: it marks every choice for recomputation. (The
// triggers test for existing rows instead of INSERT OR IGNORE, because the conflict policy of
// the statement that fires a trigger overrides the trigger's own, and the store's upserts have
// one.) The index
// reads one pair's successful results in config order without touching the table.
constexpr const char* kSchemaV5ToV6 = R"sql(
CREATE INDEX results_by_pair ON results (problem_id, device_id, status, config, time_ms_median);
CREATE TABLE choices (
  family TEXT NOT NULL,
  match_key TEXT NOT NULL,
  rule INTEGER NOT NULL,
  devices TEXT NOT NULL,
  size INTEGER NOT NULL,
  config TEXT NOT NULL,
  result_id INTEGER NOT NULL,
  pairs INTEGER NOT NULL,
  geomean_ratio REAL NOT NULL,
  PRIMARY KEY (family, match_key, rule, devices, size)
) WITHOUT ROWID;
CREATE TABLE choice_sets (
  family TEXT NOT NULL,
  match_key TEXT NOT NULL,
  configs BLOB NOT NULL,
  totals BLOB NOT NULL,
  PRIMARY KEY (family, match_key)
);
CREATE TABLE choice_pairs (
  problem_id INTEGER NOT NULL,
  device_id INTEGER NOT NULL,
  measurements BLOB NOT NULL,
  PRIMARY KEY (problem_id, device_id)
);
CREATE TABLE changed_results (
  problem_id INTEGER NOT NULL,
  device_id INTEGER NOT NULL,
  result_id INTEGER NOT NULL
);
CREATE INDEX changed_results_by_pair ON changed_results (problem_id, device_id);
INSERT INTO meta (key, value) VALUES ('choices_valid', 0);
DROP TRIGGER results_inserted;
DROP TRIGGER results_updated;
DROP TRIGGER results_deleted;
CREATE TRIGGER results_inserted AFTER INSERT ON results
  BEGIN INSERT INTO changed_results VALUES (NEW.problem_id, NEW.device_id, NEW.id); END;
CREATE TRIGGER results_updated AFTER UPDATE OF problem_id, device_id, config, status, time_ms_median ON results BEGIN
  INSERT INTO changed_results SELECT OLD.problem_id, OLD.device_id, OLD.id
    WHERE OLD.problem_id IS NOT NEW.problem_id OR OLD.device_id IS NOT NEW.device_id;
  INSERT INTO changed_results VALUES (NEW.problem_id, NEW.device_id, NEW.id);
END;
CREATE TRIGGER results_deleted AFTER DELETE ON results
  BEGIN INSERT INTO changed_results VALUES (OLD.problem_id, OLD.device_id, OLD.id); END;
CREATE TRIGGER problems_regrouped AFTER UPDATE OF family, match_key, size ON problems
  WHEN OLD.family IS NOT NEW.family OR OLD.match_key IS NOT NEW.match_key OR OLD.size IS NOT NEW.size
  BEGIN UPDATE meta SET value = 0 WHERE key = 'choices_valid'; END;
CREATE TRIGGER problems_deleted AFTER DELETE ON problems
  BEGIN UPDATE meta SET value = 0 WHERE key = 'choices_valid'; END;
CREATE TRIGGER devices_regrouped AFTER UPDATE OF uuid, name, cc_major, cc_minor ON devices
  WHEN OLD.uuid IS NOT NEW.uuid OR OLD.name IS NOT NEW.name OR OLD.cc_major IS NOT NEW.cc_major
    OR OLD.cc_minor IS NOT NEW.cc_minor
  BEGIN UPDATE meta SET value = 0 WHERE key = 'choices_valid'; END;
CREATE TRIGGER devices_deleted AFTER DELETE ON devices
  BEGIN UPDATE meta SET value = 0 WHERE key = 'choices_valid'; END;
)sql";

// Version 6 → 7. Existing rows were stored without their source's other fields: ''.
constexpr const char* kSchemaV6ToV7 = R"sql(
ALTER TABLE results ADD COLUMN source_fields TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN source_header TEXT NOT NULL DEFAULT '';
)sql";

// Version 7 → 8. One column per observation (observations.hpp, kObservationFields, in its order):
// an optional number is NULL when unknown, a text '' and a flag 0, which is what every existing row
// gets. Frozen like every step: a field added to the list later gets a step of its own, and a unit
// test checks that every listed field is a column after migrate(). No index: the lowest-energy
// lookup reads a pair's results through results_ok_by_problem (problem, device, time), stopping at
// the end of its time window.
constexpr const char* kSchemaV7ToV8 = R"sql(
ALTER TABLE results ADD COLUMN energy_j REAL;
ALTER TABLE results ADD COLUMN power_w REAL;
ALTER TABLE results ADD COLUMN energy_method TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN energy_runs INTEGER;
ALTER TABLE results ADD COLUMN sm_clock_mhz REAL;
ALTER TABLE results ADD COLUMN throttled_samples INTEGER;
ALTER TABLE results ADD COLUMN throttle_reasons TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN remeasured INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN registers INTEGER;
ALTER TABLE results ADD COLUMN spill_store_bytes INTEGER;
ALTER TABLE results ADD COLUMN spill_load_bytes INTEGER;
ALTER TABLE results ADD COLUMN local_bytes INTEGER;
ALTER TABLE results ADD COLUMN static_shared_bytes INTEGER;
ALTER TABLE results ADD COLUMN dynamic_shared_bytes INTEGER;
ALTER TABLE results ADD COLUMN blocks_per_sm INTEGER;
ALTER TABLE results ADD COLUMN occupancy REAL;
ALTER TABLE results ADD COLUMN compile_warnings TEXT NOT NULL DEFAULT '';
)sql";

void compute_all_choices(sql::Database& db) { compute_choices(db, true); }

// Problems stored before version 4: the built-in families' get their version-3 schemas, and
// every problem its derived columns (match key; sizes where the schema says otherwise than the
// hand-written code did: powersum's size is now w * a); the others match on their element type.
void backfill_problem_identity(sql::Database& db) {
  db.exec("UPDATE problems SET match_key = CASE WHEN dtype = '' THEN '' ELSE 'type=' || dtype END");
  auto families = db.prepare("SELECT DISTINCT family FROM problems ORDER BY family");
  std::vector<std::string> names;
  while (families.step()) names.push_back(families.column_text(0));
  for (const std::string& family : names)
    if (const char* frozen = frozen_v3_problem_schema(family))
      store_problem_schema(db, family, ProblemSchema::from_json(nlohmann::json::parse(frozen)));
}

// steps[v] takes a database from version v to v + 1: its SQL, then what SQL alone cannot derive.
struct Step {
  const char* sql;
  void (*derive)(sql::Database&);
};
const Step kSteps[] = {{kSchemaV1, nullptr},     {kSchemaV1ToV2, nullptr},
                       {kSchemaV2ToV3, nullptr}, {kSchemaV3ToV4, backfill_problem_identity},
                       {kSchemaV4ToV5, nullptr}, {kSchemaV5ToV6, compute_all_choices},
                       {kSchemaV6ToV7, nullptr}, {kSchemaV7ToV8, nullptr}};
static_assert(std::size(kSteps) == kSchemaVersion, "one migration step per schema version");

}  // namespace

int schema_version(sql::Database& db) {
  auto statement = db.prepare("PRAGMA user_version");
  statement.step();
  return static_cast<int>(statement.column_int(0));
}

void migrate(sql::Database& db) { migrate_to(db, kSchemaVersion); }

void migrate_to(sql::Database& db, int target) {
  const auto newer_error = [&db](int version) {
    return sql::DbError("database '" + db.path() + "' has schema version " + std::to_string(version) +
                        ", newer than this cutune understands (" + std::to_string(kSchemaVersion) +
                        "); use a newer cutune");
  };
  if (const int version = schema_version(db); version > kSchemaVersion)
    throw newer_error(version);
  else if (version >= target)
    return;

  sql::Transaction transaction(db);
  // Read again under the write lock: another process may have migrated it meanwhile.
  const int version = schema_version(db);
  if (version > kSchemaVersion) throw newer_error(version);
  for (int step = version; step < target; ++step) {
    db.exec(kSteps[step].sql);
    if (kSteps[step].derive) kSteps[step].derive(db);
  }
  db.exec("PRAGMA user_version=" + std::to_string(std::max(version, target)));
  transaction.commit();
}

std::string untyped_match_key(const std::string& dtype) { return dtype.empty() ? std::string() : "type=" + dtype; }

const char* frozen_v3_problem_schema(const std::string& family) {
  // Generated from the families' problem_schema() when version 4 was made; never edited since.
  static const std::pair<const char*, const char*>
      frozen[] =
          {
              {"scan",
               R"json({"fields":[{"help":"lists","kind":"extent","min":1,"name":"n"},{"choices":["int32","uint32","int64"],"default":"int32","kind":"element_type","name":"type"},{"default":0,"help":"elements of starts before the first list","keyed_at_default":false,"kind":"integer","min":0,"name":"starts_offset"},{"default":0,"help":"elements of stops before the first list","keyed_at_default":false,"kind":"integer","min":0,"name":"stops_offset"}]})json"},
              {"reduce",
               R"json({"fields":[{"help":"elements to reduce","kind":"extent","min":1,"name":"n"},{"choices":["sum","min","max"],"default":"sum","help":"the operator","kind":"enumeration","name":"op"},{"choices":["float32","float64"],"default":"float32","kind":"element_type","name":"type"}]})json"},
              {"resample",
               R"json({"fields":[{"help":"time series","kind":"extent","min":1,"name":"series"},{"help":"points per series","kind":"extent","min":1,"name":"points"},{"help":"points per window","kind":"integer","min":1,"name":"window"},{"choices":["sum","mean","min","max"],"default":"mean","help":"what a window computes","kind":"enumeration","name":"op"},{"choices":["float32"],"default":"float32","kind":"element_type","name":"type"}]})json"},
              {"copy",
               R"json({"fields":[{"help":"elements copied","kind":"extent","min":1,"name":"n"},{"choices":["float32"],"default":"float32","kind":"element_type","name":"type"},{"default":0,"help":"first element read","keyed_at_default":false,"kind":"integer","min":0,"name":"offset"},{"default":1,"help":"elements between reads","keyed_at_default":false,"kind":"integer","min":1,"name":"stride"}]})json"},
              {"powersum",
               R"json({"fields":[{"help":"points in the window","kind":"extent","max":6144,"min":1,"name":"w"},{"help":"candidate exponents","kind":"extent","max":65535,"min":1,"name":"a"},{"choices":["grid","random"],"default":"grid","help":"exponents evenly spaced over [1.5, 3.5], or sorted uniform draws","kind":"enumeration","name":"alphas"},{"choices":["float64"],"default":"float64","kind":"element_type","name":"type"}]})json"},
              {"avgmatvec",
               R"json({"fields":[{"help":"sets","kind":"extent","min":1,"name":"n"},{"help":"vectors per set","kind":"extent","min":1,"name":"m"},{"help":"vector length (and the matrix's order)","kind":"extent","max":12288,"min":1,"name":"l"},{"choices":["float32"],"default":"float32","kind":"element_type","name":"type"}]})json"},
              {"matmul",
               R"json({"fields":[{"help":"rows of A and C","kind":"extent","max":32768,"min":1,"name":"m"},{"help":"columns of B and C","kind":"extent","max":32768,"min":1,"name":"n"},{"help":"columns of A, rows of B","kind":"extent","max":32768,"min":1,"name":"k"},{"choices":["float32"],"default":"float32","kind":"element_type","name":"type"}]})json"},
          };
  for (const auto& [name, json] : frozen)
    if (family == name) return json;
  return nullptr;
}

}  // namespace cutune::db
