#include "catalog.hpp"

#include "interchange_rows.hpp"

namespace cutune::db {

void check_selection(sql::Database& db, const Selection& selection) {
  interchange::selected_devices(db, selection);
  interchange::selected_problems(db, selection);
}

std::vector<DeviceSummary> device_summaries(sql::Database& db) {
  auto s = db.prepare(std::string("SELECT ") + kDeviceColumns + R"sql(,
      (SELECT COUNT(*) FROM results r WHERE r.device_id = devices.id),
      (SELECT COUNT(*) FROM results r WHERE r.device_id = devices.id AND r.status = 'ok')
    FROM devices ORDER BY name, uuid)sql");
  std::vector<DeviceSummary> rows;
  while (s.step()) rows.push_back({read_device(s), s.column_int(15), s.column_int(16)});
  return rows;
}

std::vector<FamilySummary> family_summaries(sql::Database& db) {
  auto s = db.prepare(R"sql(
    WITH families AS (SELECT family FROM templates UNION SELECT family FROM problems)
    SELECT f.family,
      (SELECT COUNT(*) FROM templates t WHERE t.family = f.family),
      (SELECT COUNT(*) FROM problems p WHERE p.family = f.family),
      (SELECT COUNT(DISTINCT r.device_id) FROM results r JOIN problems p ON p.id = r.problem_id WHERE p.family = f.family),
      (SELECT COUNT(*) FROM results r JOIN problems p ON p.id = r.problem_id WHERE p.family = f.family),
      (SELECT COUNT(*) FROM results r JOIN problems p ON p.id = r.problem_id WHERE p.family = f.family AND r.status = 'ok'),
      (SELECT COUNT(*) FROM cubins c JOIN problems p ON p.id = c.problem_id WHERE p.family = f.family)
    FROM families f ORDER BY f.family)sql");
  std::vector<FamilySummary> rows;
  while (s.step())
    rows.push_back({s.column_text(0), s.column_int(1), s.column_int(2), s.column_int(3), s.column_int(4),
                    s.column_int(5), s.column_int(6)});
  return rows;
}

std::vector<RunSummary> run_summaries(sql::Database& db, const Selection& selection) {
  check_selection(db, selection);
  auto s =
      db.prepare("SELECT " + run_columns("r.") + R"sql(, d.name, (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id)
    FROM runs r JOIN devices d ON d.id = r.device_id
    WHERE (?1 = '' OR r.family = ?1) AND (?2 = '' OR d.uuid = ?2 OR d.name = ?2)
    ORDER BY r.started_at DESC, r.id DESC)sql");
  s.bind(1, selection.family).bind(2, selection.device);
  std::vector<RunSummary> rows;
  while (s.step()) rows.push_back({read_run(s), s.column_text(kRunColumnCount), s.column_int(kRunColumnCount + 1)});
  return rows;
}

}  // namespace cutune::db
