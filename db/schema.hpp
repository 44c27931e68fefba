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
inline constexpr int kSchemaVersion = 3;

// The version 1 DDL exactly as cutune 0.1 created it; kept so that tests can build an old
// database and check that opening it migrates it.
extern const char* const kSchemaV1;

// Brings an open database up to kSchemaVersion in one transaction; a new file gets every step.
// Throws sql::DbError naming the file when its version is newer than this code understands.
void migrate(sql::Database& db);

// The database's user_version.
int schema_version(sql::Database& db);

}  // namespace cutune::db
