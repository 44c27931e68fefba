#include "problem_identity.hpp"

#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "schema.hpp"
#include "sqlite.hpp"

namespace cutune::db {
namespace {

// The derived columns from a descriptor, or nullopt when the schema refuses it.
std::optional<Problem> problem_of(const ProblemSchema& schema, const std::string& descriptor, std::string* why) {
  const auto json = nlohmann::json::parse(descriptor, nullptr, false);
  try {
    if (json.is_discarded()) throw UsageError("the descriptor is not JSON");
    return schema.from_descriptor(json);
  } catch (const UsageError& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

std::string utc_now_text(sql::Database& db) {
  auto s = db.prepare("SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now')");
  s.step();
  return s.column_text(0);
}

}  // namespace

std::optional<ProblemSchema> stored_problem_schema(sql::Database& db, const std::string& family) {
  auto s = db.prepare("SELECT fields FROM problem_schemas WHERE family = ?1");
  s.bind(1, family);
  if (!s.step()) return std::nullopt;
  const auto json = nlohmann::json::parse(s.column_text(0), nullptr, false);
  if (json.is_discarded()) throw UsageError("the stored problem schema of family '" + family + "' is not JSON");
  return ProblemSchema::from_json(json);
}

void store_problem_schema(sql::Database& db, const std::string& family, const ProblemSchema& schema) {
  const std::string text = schema.to_json().dump();
  {
    auto current = db.prepare("SELECT fields FROM problem_schemas WHERE family = ?1");
    current.bind(1, family);
    if (current.step() && current.column_text(0) == text) return;  // unchanged: nothing to derive again
  }
  db.prepare(R"sql(
    INSERT INTO problem_schemas (family, fields, updated_at) VALUES (?1, ?2, ?3)
    ON CONFLICT (family) DO UPDATE SET fields = excluded.fields, updated_at = excluded.updated_at)sql")
      .bind(1, family)
      .bind(2, text)
      .bind(3, utc_now_text(db))
      .run();

  struct Row {
    std::int64_t id;
    std::string descriptor;
  };
  std::vector<Row> rows;
  auto select = db.prepare("SELECT id, descriptor FROM problems WHERE family = ?1");
  select.bind(1, family);
  while (select.step()) rows.push_back({select.column_int(0), select.column_text(1)});
  // A key that another problem of the family already has stays as it was (OR IGNORE): two stored
  // problems that the schema says are one keep their rows and results apart rather than collide.
  auto update =
      db.prepare("UPDATE OR IGNORE problems SET key = ?2, size = ?3, dtype = ?4, match_key = ?5 WHERE id = ?1");
  auto update_derived = db.prepare("UPDATE problems SET size = ?2, dtype = ?3, match_key = ?4 WHERE id = ?1");
  for (const Row& row : rows) {
    const auto problem = problem_of(schema, row.descriptor, nullptr);
    if (!problem) continue;
    update.bind(1, row.id)
        .bind(2, problem->key())
        .bind(3, problem->size())
        .bind(4, problem->dtype())
        .bind(5, problem->match_key());
    update.run();
    update_derived.bind(1, row.id).bind(2, problem->size()).bind(3, problem->dtype()).bind(4, problem->match_key());
    update_derived.run();
  }
}

ProblemRecord derive_problem(sql::Database& db, ProblemRecord record) {
  const auto schema = stored_problem_schema(db, record.family);
  if (!schema) {
    record.match_key = untyped_match_key(record.dtype);
    return record;
  }
  std::string why;
  const auto problem = problem_of(*schema, record.descriptor, &why);
  if (!problem)
    throw UsageError("problem '" + record.key + "' of family " + record.family +
                     " does not fit the family's stored problem schema: " + why);
  record.key = problem->key();
  record.size = problem->size();
  record.dtype = problem->dtype();
  record.match_key = problem->match_key();
  return record;
}

}  // namespace cutune::db
