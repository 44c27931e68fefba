#pragma once
// Self-contained HTML tuning reports: one file per (device, family) or per tuning run, with the
// data, the charting library (Chart.js, pinned in reports/package.json and embedded at build
// time), our page script and styles all inlined. The page makes no network requests.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sqlite.hpp"

namespace cutune::report {

// What one report covers: every run of a family on a device, or a single run.
struct Selection {
  std::int64_t device_id = 0;
  std::string family;
  std::optional<std::int64_t> run_id;
};

// Every (device, family) pair that has results, in a stable order.
std::vector<Selection> all_selections(sql::Database& db);

// The report's data, as the page script reads it (see reports/report.js for the fields).
nlohmann::ordered_json collect(sql::Database& db, const Selection& selection);

// The complete HTML page for the data. Every string from the database is escaped: the data
// travels as JSON with <, > and & written as \u escapes, and the page sets text, never HTML.
std::string render_html(const nlohmann::ordered_json& data);

// A file name for the selection: "<family>-<device>-<uuid prefix>.html" or "run-<id>-….html".
std::string file_name(const nlohmann::ordered_json& data, const Selection& selection);

// Writes the report of `selection` into `folder` (created if needed); returns the file's path.
std::string write_report(sql::Database& db, const Selection& selection, const std::string& folder);

// JSON text safe to place inside a <script> element.
std::string json_for_script(const nlohmann::ordered_json& data);

}  // namespace cutune::report
