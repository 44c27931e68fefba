#pragma once
// The database's half of problem identity (identity/problem.hpp): families' problem schemas are
// stored with their problems, and the derived columns of a problem — key, size, dtype and the match
// key that lookups compare — are computed here from its descriptor and its family's schema, never
// taken on trust from the writer. The writer (Store), the migration to schema version 4 and the
// lookup library (which canonicalises queries with the stored schema) all go through here.
#include <optional>
#include <string>

#include "problem.hpp"
#include "records.hpp"

namespace cutune::sql {
class Database;
}

namespace cutune::db {

// The stored schema of a family, if any. UsageError when the stored JSON is malformed.
std::optional<ProblemSchema> stored_problem_schema(sql::Database& db, const std::string& family);

// Stores (or replaces) a family's schema and, when it changed, derives every stored problem of the
// family again from its descriptor. Problems whose descriptors the new schema refuses keep their
// columns. Call inside a transaction for atomicity with other writes.
void store_problem_schema(sql::Database& db, const std::string& family, const ProblemSchema& schema);

// The record with its derived columns filled in: from its descriptor through the family's stored
// schema (UsageError naming the problem when the descriptor does not fit), else the given key,
// size and dtype and untyped_match_key(dtype).
ProblemRecord derive_problem(sql::Database& db, ProblemRecord record);

}  // namespace cutune::db
