#pragma once
// The results database's schema, its version (SQLite's user_version) and the migrations between
// versions. Readers (the lookup library) include this header for the version only.
#include <string>

namespace cutune::sql {
class Database;
}

namespace cutune::db {

// 1: devices, templates, problems, runs, results.
// 2: cubins (ready-to-launch best configs per architecture), precomputed family defaults, and the
//    indexes lookups need.
// 3: baselines (bench/ results against libraries, shown in reports).
// 4: problem identity: problem_schemas (each family's typed problem fields), problems.match_key
//    (the fields a lookup must match exactly), family defaults per match key instead of per
//    element type; results.verified (0 where a kernel spec had no reference to check against).
//    Existing problems of the seven built-in families get their schemas as they
//    stood at version 3, and match keys and sizes derived from their descriptors.
// 5: results.cut_short (1 where sampling stopped early, the config clearly behind the best) and
//    results.measured_on (the uuid of the GPU that measured a result stored under another
//    device of the same model by a multi-GPU run; '' for the device itself).
// 6: lookups from memory (choice_tables.hpp): the writer precomputes the chosen config per
//    (family, match key, device uuid / name / compute capability, size) in `choices`, keeps each
//    (problem, device) pair's successful results in compact form (`choice_pairs`) with the config
//    dictionary and scores per match key (`choice_sets`), and triggers on results record what
//    changed since (`changed_results`, per (problem, device); they replace the results_version
//    triggers), so that a reader corrects only what changed. meta.choices_valid says whether the
//    tables may be used. An index on results (problem_id, device_id, status, config, time).
//    The migration computes the tables.
// 7: what an imported file held that no column holds, so that an export gives it back:
//    results.source_fields (the source entry's other fields, a JSON object keyed by the format,
//    e.g. {"kernel_tuner": {"times": [...], "framework_time": 3.2, "timestamp": "..."}}) and
//    runs.source_header (the file's header the same way: Kernel Tuner's tune_params, objective,
//    ...). '' for results and runs that were not imported from Kernel Tuner or T4 files.
// 8: what a result observes besides its time (observations.hpp): one results column per field of
//    kObservationFields (energy and power, the energy's method and runs, the SM clock and throttling
//    during the timed samples, registers, spills, local and shared memory, occupancy, compile
//    warnings). Rows stored before have NULL, '' or 0: unknown. A lookup for the lowest energy on a
//    database older than this finds no energy and answers with the fastest config, saying so.
inline constexpr int kSchemaVersion = 8;
// The version whose results hold the observations: readers of older files read them as unknown.
inline constexpr int kObservationsSchemaVersion = 8;
// The oldest version the lookup library reads. Versions 4 and 5 have no precomputed choices but the
// family defaults: the library then scores each level from the results on the spot, one size at
// a time as asked (slower: milliseconds per size on large databases). Versions before 8 hold no
// energy.
inline constexpr int kOldestSchemaVersionForLookups = 4;

// The version 1 DDL exactly as cutune 0.1 created it; kept so that tests can build an old
// database and check that opening it migrates it.
extern const char* const kSchemaV1;

// Brings an open database up to kSchemaVersion in one transaction; a new file gets every step.
// Throws sql::DbError naming the file when its version is newer than this code understands.
void migrate(sql::Database& db);
// The same up to `version` only: tests build databases as older cutunes left them.
void migrate_to(sql::Database& db, int version);

// The database's user_version.
int schema_version(sql::Database& db);

// The match key of a problem of a family without a stored problem schema (imported Kernel Tuner
// and T4 files): its element type alone, "type=float32", or "" without one.
std::string untyped_match_key(const std::string& dtype);

// The problem schemas (identity/problem.hpp, as JSON) of the built-in families as they stood at
// schema version 3, by family; what the migration to version 4 stores for databases that hold
// their problems. A frozen record, like kSchemaV1: tests check it against today's families.
const char* frozen_v3_problem_schema(const std::string& family);

}  // namespace cutune::db
