#include "report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>

#include "report_assets.hpp"
#include "schema.hpp"

namespace cutune::report {
namespace {

using json = nlohmann::ordered_json;

// Failure messages can be whole NVRTC logs; the report keeps enough to diagnose.
constexpr std::size_t kMessageLimit = 4000;
constexpr std::size_t kMessagesPerGroup = 20;

json optional_number(const sql::Statement& s, int column) {
  return s.is_null(column) ? json(nullptr) : json(s.column_double(column));
}

json device_json(sql::Database& db, std::int64_t device_id) {
  auto s = db.prepare(
      "SELECT name, uuid, cc_major, cc_minor, sm_count, memory_bytes, l2_bytes, memory_clock_khz, bus_width_bits, "
      "theoretical_bandwidth_gbs, driver_version, nvrtc_version, copy_bandwidth_gbs, copy_bandwidth_measured_at "
      "FROM devices WHERE id = ?1");
  s.bind(1, device_id);
  if (!s.step()) throw sql::DbError("no device with id " + std::to_string(device_id));
  return {{"name", s.column_text(0)},
          {"uuid", s.column_text(1)},
          {"compute_capability", fmt::format("{}.{}", s.column_int(2), s.column_int(3))},
          {"sm_count", s.column_int(4)},
          {"memory_bytes", s.column_int(5)},
          {"l2_bytes", s.column_int(6)},
          {"memory_clock_khz", s.column_int(7)},
          {"bus_width_bits", s.column_int(8)},
          {"theoretical_bandwidth_gbs", s.column_double(9)},
          {"driver_version", s.column_int(10)},
          {"nvrtc_version", s.column_text(11)},
          {"copy_bandwidth_gbs", optional_number(s, 12)},
          {"copy_bandwidth_measured_at", s.column_text(13)}};
}

json runs_json(sql::Database& db, const Selection& sel) {
  auto s = db.prepare(
      "SELECT id, strategy, budget, seed, tool_version, started_at, finished_at, status, command FROM runs "
      "WHERE device_id = ?1 AND family = ?2 AND (?3 IS NULL OR id = ?3) ORDER BY id");
  s.bind(1, sel.device_id).bind(2, sel.family).bind(3, sel.run_id);
  json runs = json::array();
  while (s.step())
    runs.push_back({{"id", s.column_int(0)},
                    {"strategy", s.column_text(1)},
                    {"budget", s.column_text(2)},
                    {"seed", s.column_int(3)},
                    {"tool_version", s.column_text(4)},
                    {"started_at", s.column_text(5)},
                    {"finished_at", s.column_text(6)},
                    {"status", s.column_text(7)},
                    {"command", s.column_text(8)}});
  return runs;
}

std::string first_lines(const std::string& text) {
  return text.size() <= kMessageLimit ? text : text.substr(0, kMessageLimit) + "\n… (truncated)";
}

// The latest bench measurement per (problem, library); none in databases older than schema 3.
json baselines_json(sql::Database& db, const Selection& sel) {
  json list = json::array();
  auto exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'baselines'");
  if (!exists.step()) return list;
  auto s = db.prepare(R"sql(
    SELECT problem_key, library, library_ms, cutune_ms, cutune_config, measured_at, commit_id FROM baselines b
    WHERE device_id = ?1 AND family = ?2 AND id = (SELECT MAX(id) FROM baselines
      WHERE device_id = b.device_id AND family = b.family AND problem_key = b.problem_key AND library = b.library)
    ORDER BY problem_key, library)sql");
  s.bind(1, sel.device_id).bind(2, sel.family);
  while (s.step())
    list.push_back({{"problem", s.column_text(0)},
                    {"library", s.column_text(1)},
                    {"library_ms", s.column_double(2)},
                    {"cutune_ms", s.column_double(3)},
                    {"cutune_config", s.column_text(4)},
                    {"measured_at", s.column_text(5) + " @" + s.column_text(6)}});
  return list;
}

}  // namespace

std::vector<Selection> all_selections(sql::Database& db) {
  auto s = db.prepare("SELECT DISTINCT r.device_id, p.family FROM results r JOIN problems p ON p.id = r.problem_id "
                      "ORDER BY r.device_id, p.family");
  std::vector<Selection> selections;
  while (s.step()) selections.push_back({s.column_int(0), s.column_text(1), std::nullopt});
  return selections;
}

json collect(sql::Database& db, const Selection& sel) {
  json data;
  data["family"] = sel.family;
  data["device"] = device_json(db, sel.device_id);
  data["runs"] = runs_json(db, sel);
  data["scope"] = sel.run_id ? fmt::format("run {}", *sel.run_id) : std::string("all runs");

  // Results, columnar: one array per field, configs and problems by index.
  // Reports open databases read-only, unmigrated: columns newer than the file read as their defaults.
  const int version = db::schema_version(db);
  auto s = db.prepare(fmt::format(R"sql(
    SELECT r.id, r.run_id, r.config, r.config_json, p.key, p.size, p.dtype, r.status, r.time_ms_median, r.time_ms_min,
           r.time_ms_max, r.time_ms_stdev, r.samples, r.gbs, r.gflops, r.copy_fraction, r.elapsed_s, r.error,
           r.compile_s + r.verify_s + r.benchmark_s, {}, {}
    FROM results r JOIN problems p ON p.id = r.problem_id
    WHERE r.device_id = ?1 AND p.family = ?2 AND (?3 IS NULL OR r.run_id = ?3)
    ORDER BY r.run_id, r.id)sql",
                                  version >= 4 ? "r.verified" : "1", version >= 5 ? "r.cut_short" : "0"));
  s.bind(1, sel.device_id).bind(2, sel.family).bind(3, sel.run_id);

  std::map<std::string, std::size_t> config_index, problem_index, status_index;
  std::int64_t unverified = 0, cut_short = 0;
  json parameters = json::array(), configs = json::array(), config_keys = json::array();
  json problems = json::array(), statuses = json::array();
  json col_config = json::array(), col_problem = json::array(), col_status = json::array(), col_median = json::array(),
       col_min = json::array(), col_max = json::array(), col_stdev = json::array(), col_samples = json::array(),
       col_gbs = json::array(), col_gflops = json::array(), col_copy = json::array(), col_elapsed = json::array(),
       col_run = json::array(), col_cost = json::array();
  // failures[problem][status] → message → (count, example config)
  std::map<std::size_t, std::map<std::string, std::map<std::string, std::pair<int, std::string>>>> failures;
  std::map<std::size_t, std::map<std::string, int>> failure_counts;
  std::int64_t last_run = -1;
  double run_offset = 0, run_end = 0;

  while (s.step()) {
    const std::string key = s.column_text(2);
    auto [config_it, new_config] = config_index.try_emplace(key, config_index.size());
    if (new_config) {
      const json values = json::parse(s.column_text(3), nullptr, false);
      json row = json::array();
      if (values.is_object()) {
        for (const auto& [name, value] : values.items()) {
          if (std::find(parameters.begin(), parameters.end(), name) == parameters.end()) parameters.push_back(name);
        }
        for (const auto& name : parameters) row.push_back(values.contains(name.get<std::string>()) ? values[name.get<std::string>()] : json(nullptr));
      }
      configs.push_back(row);
      config_keys.push_back(key);
    }
    const std::string problem_key = s.column_text(4);
    auto [problem_it, new_problem] = problem_index.try_emplace(problem_key, problem_index.size());
    if (new_problem) problems.push_back({{"key", problem_key}, {"size", s.column_int(5)}, {"dtype", s.column_text(6)}});
    const std::string status = s.column_text(7);
    auto [status_it, new_status] = status_index.try_emplace(status, status_index.size());
    if (new_status) statuses.push_back(status);

    // Wall time runs on across resumed runs: each run starts where the previous one ended.
    const std::int64_t run = s.column_int(1);
    if (run != last_run) {
      run_offset = run_end;
      last_run = run;
    }
    const double elapsed = run_offset + s.column_double(16);
    run_end = std::max(run_end, elapsed);

    col_config.push_back(config_it->second);
    col_problem.push_back(problem_it->second);
    col_status.push_back(status_it->second);
    col_median.push_back(optional_number(s, 8));
    col_min.push_back(optional_number(s, 9));
    col_max.push_back(optional_number(s, 10));
    col_stdev.push_back(optional_number(s, 11));
    col_samples.push_back(s.column_int(12));
    col_gbs.push_back(optional_number(s, 13));
    col_gflops.push_back(optional_number(s, 14));
    col_copy.push_back(optional_number(s, 15));
    col_elapsed.push_back(std::round(elapsed * 1000) / 1000);
    col_run.push_back(run);
    col_cost.push_back(std::round(s.column_double(18) * 1e4) / 1e4);

    if (status == "ok" && s.column_int(19) == 0) ++unverified;
    if (status == "ok" && s.column_int(20) != 0) ++cut_short;
    if (status != "ok") {
      auto& group = failures[problem_it->second][status];
      ++failure_counts[problem_it->second][status];
      const std::string message = first_lines(s.column_text(17));
      auto it = group.find(message);
      if (it != group.end())
        ++it->second.first;
      else if (group.size() < kMessagesPerGroup)
        group.emplace(message, std::make_pair(1, key));
    }
  }

  json failure_list = json::array();
  for (const auto& [problem, by_status] : failures)
    for (const auto& [status, messages] : by_status) {
      json list = json::array();
      for (const auto& [text, seen] : messages) list.push_back({{"text", text}, {"count", seen.first}, {"example", seen.second}});
      failure_list.push_back(
          {{"problem", problem}, {"status", status}, {"count", failure_counts[problem][status]}, {"messages", list}});
    }

  data["parameters"] = parameters;
  data["configs"] = configs;
  data["config_keys"] = config_keys;
  data["problems"] = problems;
  data["statuses"] = statuses;
  data["results"] = {{"config", col_config}, {"problem", col_problem}, {"status", col_status}, {"median", col_median},
                     {"min", col_min},       {"max", col_max},         {"stdev", col_stdev},   {"samples", col_samples},
                     {"gbs", col_gbs},       {"gflops", col_gflops},   {"copy", col_copy},     {"elapsed", col_elapsed},
                     {"run", col_run},       {"cost", col_cost}};
  data["failures"] = failure_list;
  data["unverified"] = unverified;  // ok results never checked against a reference (a spec without one)
  data["cut_short"] = cut_short;    // ok results whose sampling stopped early: clearly behind the best
  data["baselines"] = baselines_json(db, sel);
  return data;
}

std::string json_for_script(const json& data) {
  // dump() escapes control characters and quotes; <, > and & are escaped here so that no string
  // can close the <script> element or open a comment, whatever the database holds.
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string safe;
  safe.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    switch (c) {
      case '<': safe += "\\u003c"; break;
      case '>': safe += "\\u003e"; break;
      case '&': safe += "\\u0026"; break;
      default: safe += c;
    }
  }
  return safe;
}

static std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_html(const json& data) {
  const std::string title = html_escape(fmt::format("cutune: {} on {}", data.value("family", std::string()),
                                                    data["device"].value("name", std::string())));
  // Markers are replaced in one left-to-right pass over the template, so text that is inserted
  // (the data above all) is never searched for markers itself.
  const std::map<std::string, std::string> values{{"{{TITLE}}", title},
                                                  {"{{STYLE}}", std::string(assets::style_css())},
                                                  {"{{CHART_JS}}", std::string(assets::chart_js())},
                                                  {"{{PAGE_JS}}", std::string(assets::page_js())},
                                                  {"{{DATA}}", json_for_script(data)}};
  const std::string_view page_template = assets::page_html();
  std::string page;
  std::size_t at = 0;
  while (true) {
    const std::size_t open = page_template.find("{{", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = page_template.find("}}", open);
    const auto value = values.find(std::string(page_template.substr(open, close + 2 - open)));
    if (close == std::string_view::npos || value == values.end()) throw std::runtime_error("report template: unknown marker");
    page.append(page_template.substr(at, open - at)).append(value->second);
    at = close + 2;
  }
  page.append(page_template.substr(at));
  return page;
}

std::string file_name(const json& data, const Selection& sel) {
  auto slug = [](std::string text) {
    for (char& c : text)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
    text.erase(std::unique(text.begin(), text.end(), [](char a, char b) { return a == '-' && b == '-'; }), text.end());
    return text;
  };
  const std::string uuid = data["device"].value("uuid", std::string());
  const std::string base = slug(sel.family) + "-" + slug(data["device"].value("name", std::string("device"))) + "-" +
                           slug(uuid.substr(0, std::min<std::size_t>(uuid.size(), 12)));
  return (sel.run_id ? fmt::format("run-{}-", *sel.run_id) : std::string()) + base + ".html";
}

std::string write_report(sql::Database& db, const Selection& selection, const std::string& folder) {
  const json data = collect(db, selection);
  std::filesystem::create_directories(folder);
  const std::filesystem::path path = std::filesystem::path(folder) / file_name(data, selection);
  std::ofstream out(path, std::ios::binary);
  out << render_html(data);
  if (!out)
    throw std::filesystem::filesystem_error("cannot write report", path,
                                            std::error_code(errno ? errno : EIO, std::generic_category()));
  return path.string();
}

}  // namespace cutune::report
