#include "interchange_rows.hpp"

#include "schema.hpp"

#include <array>

namespace cutune::db::interchange {
namespace {

template <class T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

template <class T>
std::optional<T> optional_of(const Json& json) {
  return json.is_null() ? std::nullopt : std::optional<T>(json.get<T>());
}

// A JSON value stored as text: objects and arrays go back as their compact text, a string as is
// (what parse_json_text_column made of text that was not JSON).
std::string json_text(const Json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

// nlohmann's messages start with "[json.exception.type_error.302] "; the rest is what matters.
std::string without_exception_tag(const std::string& message) {
  const auto end = message.find("] ");
  return message.rfind("[json.exception", 0) == 0 && end != std::string::npos ? message.substr(end + 2) : message;
}

std::string stored_list(sql::Database& db, const char* sql) {
  auto s = db.prepare(sql);
  std::string list;
  while (s.step()) list += (list.empty() ? "" : ", ") + s.column_text(0);
  return list.empty() ? "none" : list;
}

constexpr const char* kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

Json parse_json(const std::string& text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InterchangeError("'" + source + "' is not valid JSON: " + without_exception_tag(e.what()));
  }
}

Json parse_json_text_column(const std::string& text) {
  if (text.empty()) return nullptr;
  Json parsed = Json::parse(text, nullptr, false);
  return parsed.is_discarded() ? Json(text) : parsed;
}

Json device_json(const DeviceRecord& d) {
  return {{"uuid", d.uuid},
          {"name", d.name},
          {"cc_major", d.cc_major},
          {"cc_minor", d.cc_minor},
          {"sm_count", d.sm_count},
          {"memory_bytes", d.memory_bytes},
          {"l2_bytes", d.l2_bytes},
          {"memory_clock_khz", d.memory_clock_khz},
          {"bus_width_bits", d.bus_width_bits},
          {"theoretical_bandwidth_gbs", d.theoretical_bandwidth_gbs},
          {"driver_version", d.driver_version},
          {"nvrtc_version", d.nvrtc_version},
          {"copy_bandwidth_gbs", optional_json(d.copy_bandwidth_gbs)},
          {"copy_bandwidth_measured_at", d.copy_bandwidth_measured_at}};
}

DeviceRecord device_from_json(const Json& j) {
  DeviceRecord d;
  d.uuid = j.at("uuid").get<std::string>();
  d.name = j.at("name").get<std::string>();
  if (d.uuid.empty()) throw InterchangeError("a device has an empty uuid");
  d.cc_major = j.value("cc_major", 0);
  d.cc_minor = j.value("cc_minor", 0);
  d.sm_count = j.value("sm_count", 0);
  d.memory_bytes = j.value("memory_bytes", std::int64_t{0});
  d.l2_bytes = j.value("l2_bytes", std::int64_t{0});
  d.memory_clock_khz = j.value("memory_clock_khz", 0);
  d.bus_width_bits = j.value("bus_width_bits", 0);
  d.theoretical_bandwidth_gbs = j.value("theoretical_bandwidth_gbs", 0.0);
  d.driver_version = j.value("driver_version", 0);
  d.nvrtc_version = j.value("nvrtc_version", "");
  if (j.contains("copy_bandwidth_gbs")) d.copy_bandwidth_gbs = optional_of<double>(j.at("copy_bandwidth_gbs"));
  d.copy_bandwidth_measured_at = j.value("copy_bandwidth_measured_at", "");
  return d;
}

Json problem_json(const ProblemRecord& p) {
  return {{"family", p.family},
          {"key", p.key},
          {"size", p.size},
          {"dtype", p.dtype},
          {"descriptor", parse_json_text_column(p.descriptor)}};
}

ProblemRecord problem_from_json(const Json& j) {
  ProblemRecord p;
  p.family = j.at("family").get<std::string>();
  p.key = j.at("key").get<std::string>();
  p.size = j.at("size").get<std::int64_t>();
  p.dtype = j.at("dtype").get<std::string>();
  p.descriptor = j.contains("descriptor") && !j.at("descriptor").is_null() ? json_text(j.at("descriptor")) : "{}";
  return p;
}

Json measurement_json(const ResultRecord& r) {
  return {{"config", r.config},
          {"config_json", parse_json_text_column(r.config_json)},
          {"status", r.status},
          {"time_ms_median", optional_json(r.time_ms_median)},
          {"time_ms_min", optional_json(r.time_ms_min)},
          {"time_ms_max", optional_json(r.time_ms_max)},
          {"time_ms_stdev", optional_json(r.time_ms_stdev)},
          {"samples", r.samples},
          {"compile_s", r.compile_s},
          {"verify_s", r.verify_s},
          {"benchmark_s", r.benchmark_s},
          {"gbs", optional_json(r.gbs)},
          {"gflops", optional_json(r.gflops)},
          {"copy_fraction", optional_json(r.copy_fraction)},
          {"error", r.error},
          {"error_index", optional_json(r.error_index)},
          {"verified", r.verified},
          {"cut_short", r.cut_short},
          {"measured_on", r.measured_on},
          {"launch", parse_json_text_column(r.launch_json)},
          {"created_at", r.created_at},
          {"elapsed_s", r.elapsed_s}};
}

void measurement_from_json(const Json& j, ResultRecord& r) {
  const auto has = [&](const char* key) { return j.contains(key); };
  if (has("config")) r.config = j.at("config").get<std::string>();
  if (has("config_json")) r.config_json = json_text(j.at("config_json"));
  if (has("status")) r.status = j.at("status").get<std::string>();
  if (has("time_ms_median")) r.time_ms_median = optional_of<double>(j.at("time_ms_median"));
  if (has("time_ms_min")) r.time_ms_min = optional_of<double>(j.at("time_ms_min"));
  if (has("time_ms_max")) r.time_ms_max = optional_of<double>(j.at("time_ms_max"));
  if (has("time_ms_stdev")) r.time_ms_stdev = optional_of<double>(j.at("time_ms_stdev"));
  if (has("samples")) r.samples = j.at("samples").get<int>();
  if (has("compile_s")) r.compile_s = j.at("compile_s").get<double>();
  if (has("verify_s")) r.verify_s = j.at("verify_s").get<double>();
  if (has("benchmark_s")) r.benchmark_s = j.at("benchmark_s").get<double>();
  if (has("gbs")) r.gbs = optional_of<double>(j.at("gbs"));
  if (has("gflops")) r.gflops = optional_of<double>(j.at("gflops"));
  if (has("copy_fraction")) r.copy_fraction = optional_of<double>(j.at("copy_fraction"));
  if (has("error")) r.error = j.at("error").get<std::string>();
  if (has("error_index")) r.error_index = optional_of<std::int64_t>(j.at("error_index"));
  if (has("verified")) r.verified = j.at("verified").get<bool>();
  if (has("cut_short")) r.cut_short = j.at("cut_short").get<bool>();
  if (has("measured_on")) r.measured_on = j.at("measured_on").get<std::string>();
  if (has("launch")) r.launch_json = j.at("launch").is_null() ? "[]" : json_text(j.at("launch"));
  if (has("created_at")) r.created_at = j.at("created_at").get<std::string>();
  if (has("elapsed_s")) r.elapsed_s = j.at("elapsed_s").get<double>();
}

std::string base64_encode(const std::vector<unsigned char>& bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t chunk = (bytes[i] << 16) | (i + 1 < bytes.size() ? bytes[i + 1] << 8 : 0) |
                                (i + 2 < bytes.size() ? bytes[i + 2] : 0);
    text += kBase64[(chunk >> 18) & 63];
    text += kBase64[(chunk >> 12) & 63];
    text += i + 1 < bytes.size() ? kBase64[(chunk >> 6) & 63] : '=';
    text += i + 2 < bytes.size() ? kBase64[chunk & 63] : '=';
  }
  return text;
}

std::vector<unsigned char> base64_decode(const std::string& text) {
  std::array<int, 256> value_of{};
  value_of.fill(-1);
  for (int i = 0; i < 64; ++i) value_of[static_cast<unsigned char>(kBase64[i])] = i;
  if (text.size() % 4 != 0) throw InterchangeError("a cubin is not valid base64 (length " + std::to_string(text.size()) + ")");
  std::vector<unsigned char> bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t chunk = 0;
    int padding = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const bool pad = c == '=' && i + 4 == text.size() && k >= 2;
      const int v = pad ? 0 : value_of[static_cast<unsigned char>(c)];
      if (v < 0) throw InterchangeError("a cubin is not valid base64 (character " + std::to_string(i + k) + ")");
      padding += pad;
      chunk = (chunk << 6) | static_cast<std::uint32_t>(v);
    }
    bytes.push_back(static_cast<unsigned char>(chunk >> 16));
    if (padding < 2) bytes.push_back(static_cast<unsigned char>(chunk >> 8));
    if (padding < 1) bytes.push_back(static_cast<unsigned char>(chunk));
  }
  return bytes;
}

std::vector<DeviceRecord> selected_devices(sql::Database& db, const Selection& selection) {
  auto s = db.prepare(std::string("SELECT ") + kDeviceColumns +
                      " FROM devices WHERE ?1 = '' OR uuid = ?1 OR name = ?1 ORDER BY id");
  s.bind(1, selection.device);
  std::vector<DeviceRecord> devices;
  while (s.step()) devices.push_back(read_device(s));
  if (devices.empty() && !selection.device.empty())
    throw InterchangeError("no device '" + selection.device + "' in '" + db.path() + "' (stored: " +
                           stored_list(db, "SELECT uuid || ' (' || name || ')' FROM devices ORDER BY id") + ")");
  return devices;
}

std::vector<ProblemRecord> selected_problems(sql::Database& db, const Selection& selection) {
  if (!selection.family.empty()) {
    auto known = db.prepare("SELECT 1 FROM templates WHERE family = ?1 UNION SELECT 1 FROM problems WHERE family = ?1");
    known.bind(1, selection.family);
    if (!known.step())
      throw InterchangeError(
          "no family '" + selection.family + "' in '" + db.path() + "' (stored: " +
          stored_list(db, "SELECT family FROM templates UNION SELECT family FROM problems ORDER BY 1") + ")");
  }
  auto s = db.prepare(
      "SELECT id, family, key, size, dtype, descriptor FROM problems WHERE (?1 = '' OR family = ?1) "
      "AND (?2 = '' OR key = ?2) ORDER BY family, dtype, size, key");
  s.bind(1, selection.family).bind(2, selection.problem);
  std::vector<ProblemRecord> problems;
  while (s.step())
    problems.push_back({s.column_int(0), s.column_text(1), s.column_text(2), s.column_int(3), s.column_text(4), s.column_text(5)});
  if (problems.empty() && !selection.problem.empty())
    throw InterchangeError("no problem '" + selection.problem + "'" +
                           (selection.family.empty() ? "" : " of family " + selection.family) + " in '" + db.path() +
                           "' (stored: " + stored_list(db, "SELECT DISTINCT key FROM problems ORDER BY key") + ")");
  return problems;
}

std::vector<ResultRecord> selected_results(sql::Database& db, const Selection& selection) {
  auto s = db.prepare(std::string("SELECT ") + result_columns(schema_version(db)) + R"sql( FROM results
    WHERE problem_id IN (SELECT id FROM problems WHERE (?1 = '' OR family = ?1) AND (?2 = '' OR key = ?2))
      AND device_id IN (SELECT id FROM devices WHERE ?3 = '' OR uuid = ?3 OR name = ?3)
    ORDER BY id)sql");
  s.bind(1, selection.family).bind(2, selection.problem).bind(3, selection.device);
  std::vector<ResultRecord> results;
  while (s.step()) results.push_back(read_result(s));
  return results;
}

std::int64_t find_or_insert_run(Store& store, const RunRecord& r) {
  auto& db = store.database();
  auto existing = db.prepare(R"sql(
    SELECT id FROM runs WHERE family = ?1 AND device_id = ?2 AND template_id = ?3 AND strategy = ?4 AND seed = ?5
      AND command = ?6 AND started_at = ?7 ORDER BY id LIMIT 1)sql");
  existing.bind(1, r.family).bind(2, r.device_id).bind(3, r.template_id).bind(4, r.strategy).bind(5, r.seed)
      .bind(6, r.command).bind(7, r.started_at);
  if (existing.step()) return existing.column_int(0);
  auto insert = db.prepare(R"sql(
    INSERT INTO runs (family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at,
                      finished_at, status)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id)sql");
  insert.bind(1, r.family).bind(2, r.device_id).bind(3, r.template_id).bind(4, r.strategy).bind(5, r.seed)
      .bind(6, r.budget).bind(7, r.command).bind(8, r.tool_version).bind(9, r.started_at)
      .bind(10, r.finished_at.empty() ? std::optional<std::string>() : std::optional<std::string>(r.finished_at))
      .bind(11, r.status);
  insert.step();
  return insert.column_int(0);
}

void keep_copy_bandwidth(Store& store, std::int64_t device_id, const DeviceRecord& d) {
  if (!d.copy_bandwidth_gbs) return;
  store.database()
      .prepare("UPDATE devices SET copy_bandwidth_gbs = ?1, copy_bandwidth_measured_at = ?2 "
               "WHERE id = ?3 AND copy_bandwidth_gbs IS NULL")
      .bind(1, *d.copy_bandwidth_gbs)
      .bind(2, d.copy_bandwidth_measured_at)
      .bind(3, device_id)
      .run();
}

ImportSummary import_in_transaction(Store& store, const std::string& source,
                                    const std::function<void(ImportSummary&, std::string& where)>& fill) {
  ImportSummary summary;
  std::string where;
  const auto context = [&] { return "'" + source + "'" + (where.empty() ? "" : " (" + where + ")") + ": "; };
  {
    sql::Transaction transaction(store.database());
    try {
      fill(summary, where);
    } catch (const nlohmann::json::exception& e) {
      throw InterchangeError(context() + without_exception_tag(e.what()));
    } catch (const InterchangeError& e) {
      throw InterchangeError(context() + e.what());
    } catch (const sql::DbError& e) {
      throw InterchangeError(context() + e.what());
    }
    transaction.commit();
  }
  store.refresh_family_defaults();
  return summary;
}

}  // namespace cutune::db::interchange
