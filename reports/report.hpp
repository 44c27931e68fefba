#pragma once
// Self-contained HTML tuning reports: one file per (device, family) or per tuning run, an index of
// a database's reports, and comparisons of two runs or two devices. Each page holds its data, the
// charting library (Chart.js, pinned in reports/package.json and embedded at build time), our page
// script and styles, all inlined. No page makes a network request.
#include <cstdint>
#include <optional>
#include <stdexcept>
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

// Bad input from the command line: a run or device the database does not hold, two sides with
// nothing in common. The message is one line, meant for the user.
struct BadSelection : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every (device, family) pair that has results, in a stable order.
std::vector<Selection> all_selections(sql::Database& db);
// Of all_selections, those whose (device, family) report is in `folder` already: what an index
// written there can link to.
std::vector<Selection> selections_with_reports(sql::Database& db, const std::string& folder);

// The report's data, as the page script reads it (see reports/assets/report.js for the fields).
// Per-result numbers travel as base64 typed arrays (little-endian), each column in the shortest
// of its forms (float32 values, distinct values with an index per result, or either for only the
// results that have a value), so that 100 000 results stay a few megabytes and parse in
// milliseconds. The observations (db/observations.hpp) travel under their fields' names, where
// some result has them; the throttled and remeasured counts and the SM clock range with them.
nlohmann::ordered_json collect(sql::Database& db, const Selection& selection);

// The complete HTML page for the data of a report, an index or a comparison (data["kind"]). Every
// string from the database is escaped: the data travels as JSON with <, > and & written as \u
// escapes, and the page sets text, never HTML.
std::string render_html(const nlohmann::ordered_json& data);

// A file name for the selection: "<family>-<device>-<uuid prefix>.html" or "run-<id>-….html".
std::string file_name(const nlohmann::ordered_json& data, const Selection& selection);

// Writes the report of `selection` into `folder` (created if needed); returns the file's path.
// link_index: the page links back to the index.html written beside it.
std::string write_report(sql::Database& db, const Selection& selection, const std::string& folder,
                         bool link_index = false);

// The index of a database: every selection's report (linked by file name), the devices, and per
// family the best config of each problem on each device side by side, with the fraction of copy
// bandwidth, the ratio to the fastest device and the bench baselines. `database` names the file.
nlohmann::ordered_json collect_index(sql::Database& db, const std::vector<Selection>& selections,
                                     const std::string& database);
// Writes "index.html" into `folder`; returns its path.
std::string write_index(sql::Database& db, const std::vector<Selection>& selections, const std::string& database,
                        const std::string& folder);

// One side of a comparison: a run, or every run on a device.
struct Side {
  std::int64_t device_id = 0;
  std::optional<std::int64_t> run_id;
};
// "12" is run 12; anything else names a device: its uuid, a prefix of exactly one uuid, or the
// name of exactly one device. Throws BadSelection when nothing or several things match.
Side resolve_side(sql::Database& db, const std::string& text);

struct Comparison {
  Side a, b;
  std::optional<std::string> family;  // only this family
};
// The problems both sides measured, side by side: best times and configs, their ratio, which
// parameters changed, and each side's best config as the other side measured it. Throws
// BadSelection for a run compared with a device, a side compared with itself, or sides that share
// no problem.
nlohmann::ordered_json collect_comparison(sql::Database& db, const Comparison& comparison);
// Writes "compare-<a>-<b>.html" into `folder`; returns its path.
std::string write_comparison(sql::Database& db, const Comparison& comparison, const std::string& folder);

// JSON text safe to place inside a <script> element.
std::string json_for_script(const nlohmann::ordered_json& data);

}  // namespace cutune::report
