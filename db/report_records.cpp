#include "report_records.hpp"

#include <map>

#include "schema.hpp"
#include "store.hpp"

namespace cutune::db {
namespace {

// time_outside_samples as SQL, over the results columns. The relative margin lets a time equal to
// a bound pass however the source rounded it.
constexpr const char* kOutsideSamples =
    "(status = 'ok' AND time_ms_median IS NOT NULL AND time_ms_min IS NOT NULL AND time_ms_max IS NOT NULL AND "
    "(time_ms_median < time_ms_min * (1 - 1e-9) OR time_ms_median > time_ms_max * (1 + 1e-9)))";

// A ResultFilter over `results r JOIN problems p`, bound to parameters 1 to 3 (bind_filter).
constexpr const char* kFilter =
    "(?1 IS NULL OR r.device_id = ?1) AND (?2 IS NULL OR r.run_id = ?2) AND (?3 IS NULL OR p.family = ?3)";

void bind_filter(sql::Statement& statement, const ResultFilter& filter) {
  statement.bind(1, filter.device_id).bind(2, filter.run_id).bind(3, filter.family);
}

// Every row of a statement, each made into a record by `read`.
template <class Read>
auto rows_of(sql::Statement& statement, Read read) {
  std::vector<decltype(read(statement))> rows;
  while (statement.step()) rows.push_back(read(statement));
  return rows;
}

bool has_table(sql::Database& db, const char* name) {
  auto exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  exists.bind(1, name);
  return exists.step();
}

}  // namespace

bool time_outside_samples(const ResultRecord& r) {
  const auto& median = r.time_ms_median;
  return r.status == "ok" && median && r.time_ms_min && r.time_ms_max &&
         (*median < *r.time_ms_min * (1 - 1e-9) || *median > *r.time_ms_max * (1 + 1e-9));
}

std::vector<RunQuality> run_qualities(sql::Database& db, const ResultFilter& filter, std::size_t examples) {
  auto s = db.prepare("SELECT " + run_columns("r.") +
                      ", d.uuid FROM runs r JOIN devices d ON d.id = r.device_id "
                      "WHERE (?1 IS NULL OR r.device_id = ?1) AND (?2 IS NULL OR r.id = ?2) AND "
                      "(?3 IS NULL OR r.family = ?3) ORDER BY r.id");
  bind_filter(s, filter);
  auto counts =
      db.prepare(std::string("SELECT COUNT(*), COALESCE(SUM(status = 'ok'), 0), COALESCE(SUM(") + kOutsideSamples +
                 "), 0), COALESCE(SUM(status = 'ok' AND samples = 0), 0) FROM results WHERE run_id = ?1");
  auto outside = db.prepare(std::string("SELECT config, time_ms_median, time_ms_min, time_ms_max FROM results ") +
                            "WHERE run_id = ?1 AND " + kOutsideSamples + " ORDER BY id LIMIT ?2");
  std::vector<RunQuality> runs;
  while (s.step()) {
    RunQuality q{read_run(s), s.column_text(kRunColumnCount)};
    counts.reset();
    counts.bind(1, q.run.id);
    counts.step();
    q.results = counts.column_int(0);
    q.ok = counts.column_int(1);
    q.outside_samples = counts.column_int(2);
    q.ok_without_samples = counts.column_int(3);
    if (q.outside_samples > 0) {
      outside.reset();
      outside.bind(1, q.run.id).bind(2, static_cast<std::int64_t>(examples));
      while (outside.step())
        q.outside_examples.push_back(
            {outside.column_text(0), outside.column_double(1), outside.column_double(2), outside.column_double(3)});
    }
    runs.push_back(std::move(q));
  }
  return runs;
}

std::vector<DeviceFamily> device_families_with_results(sql::Database& db) {
  auto s = db.prepare(
      "SELECT DISTINCT r.device_id, p.family FROM results r JOIN problems p ON p.id = r.problem_id "
      "ORDER BY r.device_id, p.family");
  return rows_of(s, [](const sql::Statement& row) { return DeviceFamily{row.column_int(0), row.column_text(1)}; });
}

std::vector<DeviceFamilyCounts> device_family_counts(sql::Database& db) {
  auto s = db.prepare(std::string(R"sql(
    SELECT r.device_id, p.family, COUNT(*), SUM(r.status = 'ok'), COUNT(DISTINCT r.problem_id), COUNT(DISTINCT r.run_id),
           SUM()sql") +
                      kOutsideSamples + R"sql()
    FROM results r JOIN problems p ON p.id = r.problem_id GROUP BY r.device_id, p.family
    ORDER BY r.device_id, p.family)sql");
  return rows_of(s, [](const sql::Statement& row) {
    return DeviceFamilyCounts{{row.column_int(0), row.column_text(1)},
                              row.column_int(2),
                              row.column_int(3),
                              row.column_int(4),
                              row.column_int(5),
                              row.column_int(6)};
  });
}

std::vector<RunSource> run_sources(sql::Database& db) {
  auto s = db.prepare(
      "SELECT DISTINCT r.device_id, r.family, r.strategy, d.uuid FROM runs r JOIN devices d ON d.id = r.device_id "
      "ORDER BY r.device_id, r.family, r.strategy");
  return rows_of(s, [](const sql::Statement& row) {
    return RunSource{row.column_int(0), row.column_text(1), row.column_text(2), row.column_text(3)};
  });
}

std::vector<ProblemBest> best_per_problem(sql::Database& db, const ResultFilter& filter) {
  // SQLite reads the bare columns beside MIN() from the row that has the minimum.
  auto s = db.prepare(std::string(R"sql(
    SELECT r.device_id, r.problem_id, r.run_id, p.family, p.key, p.size, MIN(r.time_ms_median), r.config, r.config_json,
           r.gbs, r.gflops, r.copy_fraction
    FROM results r JOIN problems p ON p.id = r.problem_id
    WHERE r.status = 'ok' AND r.time_ms_median IS NOT NULL AND )sql") +
                      kFilter + R"sql(
    GROUP BY r.device_id, r.problem_id ORDER BY p.family, p.size, p.key, r.device_id)sql");
  bind_filter(s, filter);
  return rows_of(s, [](const sql::Statement& row) {
    return ProblemBest{row.column_int(0),
                       row.column_int(1),
                       row.column_int(2),
                       row.column_text(3),
                       row.column_text(4),
                       row.column_int(5),
                       row.column_double(6),
                       row.column_text(7),
                       row.column_text(8),
                       row.column_optional_double(9),
                       row.column_optional_double(10),
                       row.column_optional_double(11)};
  });
}

std::vector<ProblemCounts> problem_counts(sql::Database& db, const ResultFilter& filter) {
  auto s = db.prepare(std::string(R"sql(
    SELECT p.id, p.family, p.key, p.size, COUNT(*), SUM(r.status = 'ok') FROM results r JOIN problems p ON p.id = r.problem_id
    WHERE )sql") + kFilter +
                      " GROUP BY p.id ORDER BY p.id");
  bind_filter(s, filter);
  return rows_of(s, [](const sql::Statement& row) {
    return ProblemCounts{row.column_int(0), row.column_text(1), row.column_text(2),
                         row.column_int(3), row.column_int(4),  row.column_int(5)};
  });
}

std::optional<double> fastest_time_of_config(sql::Database& db, const ResultFilter& filter, std::int64_t problem_id,
                                             const std::string& config) {
  auto s = db.prepare(std::string(R"sql(
    SELECT MIN(r.time_ms_median) FROM results r JOIN problems p ON p.id = r.problem_id
    WHERE r.problem_id = ?4 AND r.config = ?5 AND r.status = 'ok' AND r.time_ms_median IS NOT NULL AND )sql") +
                      kFilter);
  bind_filter(s, filter);
  s.bind(4, problem_id).bind(5, config);
  return s.step() ? s.column_optional_double(0) : std::nullopt;
}

void for_each_result(sql::Database& db, const ResultFilter& filter,
                     const std::function<void(const ResultRecord&, const ProblemRecord&)>& visit) {
  // Columns newer than the file read as their defaults: readers may open a database unmigrated.
  const int version = schema_version(db);
  // Each problem read once, when its first result comes: a writer may add problems meanwhile.
  std::map<std::int64_t, ProblemRecord> problems;
  auto problem = db.prepare(std::string("SELECT id, family, key, size, dtype, descriptor, ") +
                            (version >= 4 ? "match_key" : "''") + " FROM problems WHERE id = ?1");
  const auto problem_of = [&](std::int64_t id) -> const ProblemRecord& {
    if (const auto known = problems.find(id); known != problems.end()) return known->second;
    problem.reset();
    problem.bind(1, id);
    if (!problem.step()) throw sql::DbError("result of problem " + std::to_string(id) + ", which is not stored");
    return problems
        .emplace(id, ProblemRecord{problem.column_int(0), problem.column_text(1), problem.column_text(2),
                                   problem.column_int(3), problem.column_text(4), problem.column_text(5),
                                   problem.column_text(6)})
        .first->second;
  };
  // Only results's own columns are named unqualified here (result_columns has no prefix).
  auto s = db.prepare("SELECT " + result_columns(version) +
                      " FROM results r WHERE (?1 IS NULL OR r.device_id = ?1) AND (?2 IS NULL OR r.run_id = ?2) AND "
                      "r.problem_id IN (SELECT p.id FROM problems p WHERE ?3 IS NULL OR p.family = ?3) "
                      "ORDER BY r.run_id, r.id");
  bind_filter(s, filter);
  while (s.step()) {
    const ResultRecord result = read_result(s);
    visit(result, problem_of(result.problem_id));
  }
}

std::vector<BaselineRecord> latest_baselines(sql::Database& db, const std::string& family,
                                             std::optional<std::int64_t> device_id) {
  if (!has_table(db, "baselines")) return {};
  auto s = db.prepare(R"sql(
    SELECT device_id, family, problem_key, library, library_ms, cutune_ms, cutune_config, measured_at, commit_id
    FROM baselines b
    WHERE (?1 IS NULL OR device_id = ?1) AND family = ?2 AND id = (SELECT MAX(id) FROM baselines
      WHERE device_id = b.device_id AND family = b.family AND problem_key = b.problem_key AND library = b.library)
    ORDER BY problem_key, library, device_id)sql");
  s.bind(1, device_id).bind(2, family);
  return rows_of(s, [](const sql::Statement& row) {
    return BaselineRecord{row.column_int(0),  row.column_text(1),   row.column_text(2),
                          row.column_text(3), row.column_double(4), row.column_double(5),
                          row.column_text(6), row.column_text(7),   row.column_text(8)};
  });
}

}  // namespace cutune::db
