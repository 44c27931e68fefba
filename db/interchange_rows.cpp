#include "interchange_rows.hpp"

#include "schema.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <utility>

#include "choice_tables.hpp"
#include "core/status.hpp"
#include "field_text.hpp"

namespace cutune::db::interchange {
namespace {

template <class T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

std::string stored_list(sql::Database& db, const char* sql) {
  auto s = db.prepare(sql);
  std::string list;
  while (s.step()) list += (list.empty() ? "" : ", ") + s.column_text(0);
  return list.empty() ? "none" : list;
}

constexpr const char* kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

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
  if (!j.is_object()) throw InterchangeError("a device is " + shown(j) + ", not an object");
  DeviceRecord d;
  d.uuid = text_at(j, "uuid", Text::name);
  d.name = text_at(j, "name", Text::label);
  d.cc_major = static_cast<int>(integer_or(j, "cc_major", 0, 0, 99));
  d.cc_minor = static_cast<int>(integer_or(j, "cc_minor", 0, 0, 99));
  d.sm_count = static_cast<int>(integer_or(j, "sm_count", 0, 0, INT32_MAX));
  d.memory_bytes = integer_or(j, "memory_bytes", 0);
  d.l2_bytes = integer_or(j, "l2_bytes", 0);
  d.memory_clock_khz = static_cast<int>(integer_or(j, "memory_clock_khz", 0, 0, INT32_MAX));
  d.bus_width_bits = static_cast<int>(integer_or(j, "bus_width_bits", 0, 0, INT32_MAX));
  d.theoretical_bandwidth_gbs = number_or(j, "theoretical_bandwidth_gbs", 0, Sign::non_negative);
  d.driver_version = static_cast<int>(integer_or(j, "driver_version", 0, 0, INT32_MAX));
  d.nvrtc_version = text_or(j, "nvrtc_version", "", Text::label);
  d.copy_bandwidth_gbs = optional_number(j, "copy_bandwidth_gbs", Sign::positive);
  d.copy_bandwidth_measured_at = text_or(j, "copy_bandwidth_measured_at", "", Text::label);
  check_device(d);
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
  if (!j.is_object()) throw InterchangeError("a problem is " + shown(j) + ", not an object");
  ProblemRecord p;
  p.family = text_at(j, "family", Text::name);
  p.key = text_at(j, "key", Text::name);
  p.size = integer_at(j, "size", 0);
  p.dtype = text_at(j, "dtype", Text::label);
  const Json* descriptor = member(j, "descriptor");
  if (descriptor && !descriptor->is_object()) refuse_member("descriptor", *descriptor, "an object");
  p.descriptor = descriptor ? descriptor->dump() : "{}";
  check_problem(p);
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
          {"elapsed_s", r.elapsed_s},
          {"source_fields", parse_json_text_column(r.source_fields)},
          {"observations", observations_json(r.observations)}};
}

Json observations_json(const Observations& observations) {
  const nlohmann::json known = to_json(observations);  // keyed in name order
  Json ordered = Json::object();
  for (const ObservationField& field : kObservationFields)  // in the list's order, as the columns are
    if (const auto it = known.find(field.name); it != known.end()) ordered[field.name] = *it;
  return ordered;
}

Observations observations_of(const Json& object) {
  if (!object.is_object()) refuse_member("observations", object, "an object");
  try {
    return observations_from_json(nlohmann::json(object));
  } catch (const std::invalid_argument& e) {  // names the member and what it must be
    throw InterchangeError(std::string("\"observations\": ") + e.what());
  }
}

std::string source_object_text(const Json& json, const char* key) {
  const Json* value = member(json, key);
  if (value && !value->is_object()) refuse_member(key, *value, "an object");
  return value ? value->dump() : "";
}

void measurement_from_json(const Json& j, ResultRecord& r) {
  if (!j.is_object()) throw InterchangeError("a result is " + shown(j) + ", not an object");
  const auto has = [&](const char* key) { return j.contains(key); };
  // Present but null: the field is unknown (a failure's times, say).
  const auto optional = [&](const char* key, std::optional<double>& field, Sign sign) {
    if (has(key)) field = optional_number(j, key, sign);
  };
  if (has("config")) r.config = text_at(j, "config", Text::name);
  if (has("config_json")) {
    const Json* config = member(j, "config_json");
    if (config && !config->is_object()) refuse_member("config_json", *config, "an object");
    r.config_json = config ? config->dump() : "";
  }
  if (has("status")) r.status = text_at(j, "status");
  optional("time_ms_median", r.time_ms_median, Sign::positive);
  optional("time_ms_min", r.time_ms_min, Sign::positive);
  optional("time_ms_max", r.time_ms_max, Sign::positive);
  optional("time_ms_stdev", r.time_ms_stdev, Sign::non_negative);
  if (has("samples")) r.samples = static_cast<int>(integer_at(j, "samples", 0, INT32_MAX));
  if (has("compile_s")) r.compile_s = number_value("compile_s", j.at("compile_s"), Sign::non_negative);
  if (has("verify_s")) r.verify_s = number_value("verify_s", j.at("verify_s"), Sign::non_negative);
  if (has("benchmark_s")) r.benchmark_s = number_value("benchmark_s", j.at("benchmark_s"), Sign::non_negative);
  optional("gbs", r.gbs, Sign::non_negative);
  optional("gflops", r.gflops, Sign::non_negative);
  optional("copy_fraction", r.copy_fraction, Sign::non_negative);
  if (has("error")) r.error = text_or(j, "error", "");
  if (has("error_index"))
    r.error_index = member(j, "error_index") ? std::optional(integer_at(j, "error_index", 0)) : std::nullopt;
  if (has("verified")) r.verified = boolean_or(j, "verified", true);
  if (has("cut_short")) r.cut_short = boolean_or(j, "cut_short", false);
  if (has("measured_on")) r.measured_on = text_or(j, "measured_on", "", Text::label);
  if (has("launch")) {
    const Json* launch = member(j, "launch");
    if (launch) check_launch_plan(*launch);
    r.launch_json = launch ? launch->dump() : "[]";
  }
  if (has("created_at")) r.created_at = text_at(j, "created_at", Text::label);
  if (has("elapsed_s")) r.elapsed_s = number_value("elapsed_s", j.at("elapsed_s"), Sign::non_negative);
  if (has("source_fields")) r.source_fields = source_object_text(j, "source_fields");
  if (const Json* observations = member(j, "observations")) r.observations = observations_of(*observations);
}

std::string source_text(const char* format, const Json& json, const std::function<bool(const std::string&)>& held) {
  Json kept = Json::object();
  for (const auto& [name, value] : json.items())
    if (!held(name)) kept[name] = value;
  return kept.empty() ? std::string() : Json{{format, std::move(kept)}}.dump();
}

Json kept_source(const std::string& stored, const char* format) {
  const Json all = parse_json_text_column(stored);
  const Json* kept = all.is_object() ? member(all, format) : nullptr;
  return kept && kept->is_object() ? *kept : Json::object();
}

Json source_header_of_runs(sql::Database& db, const std::vector<ResultRecord>& results, const char* format) {
  auto s = db.prepare("SELECT source_header FROM runs WHERE id = ?1");
  std::set<std::int64_t> seen;
  for (const auto& r : results) {
    if (!seen.insert(r.run_id).second) continue;
    s.bind(1, r.run_id);
    Json header = s.step() ? kept_source(s.column_text(0), format) : Json::object();
    s.reset();
    if (!header.empty()) return header;
  }
  return Json::object();
}

void check_launch_plan(const Json& plan) {
  if (!plan.is_array()) refuse_member("launch", plan, "a list of launch steps");
  constexpr std::int64_t kU32 = UINT32_MAX;
  for (const auto& step : plan) {
    if (!step.is_object()) refuse_member("launch", step, "a launch step (an object)");
    if (member(step, "memset")) {  // kernels/family.cpp: stored_step
      text_at(step, "memset", Text::name);
      integer_or(step, "word", 0, 0, kU32);
      integer_or(step, "bytes", 0);
      integer_or(step, "byte_offset", 0);
      boolean_or(step, "stream_write", false);
      continue;
    }
    text_or(step, "kernel", "", Text::label);
    for (const char* dims : {"grid", "block"}) {
      const Json* d = member(step, dims);
      if (!d) continue;
      if (!d->is_array() || d->empty() || d->size() > 3) refuse_member(dims, *d, "a list of 1 to 3 sizes");
      for (const auto& size : *d) integer_value(dims, size, 0, kU32);
    }
    integer_or(step, "dynamic_shared_bytes", 0, 0, kU32);
  }
}

bool is_result_status(std::string_view status) { return status_named(status).has_value(); }

void check_device(const DeviceRecord& d) {
  if (d.uuid.empty()) throw InterchangeError("a device has an empty uuid");
  if (d.copy_bandwidth_gbs && !(std::isfinite(*d.copy_bandwidth_gbs) && *d.copy_bandwidth_gbs > 0))
    throw InterchangeError("device " + in_quotes(d.uuid) + " has a copy bandwidth of " +
                           std::to_string(*d.copy_bandwidth_gbs) + " GB/s, not a positive number");
}

void check_problem(const ProblemRecord& p) {
  if (p.family.empty()) throw InterchangeError("a problem has an empty family");
  if (p.key.empty()) throw InterchangeError("a problem of " + in_quotes(p.family) + " has an empty key");
  if (p.size < 0) throw InterchangeError("problem " + in_quotes(p.key) + " has a negative size");
}

void check_result(const ResultRecord& r) {
  const auto refuse = [&](const std::string& why) {
    throw InterchangeError("result " + in_quotes(r.config) + ": " + why);
  };
  if (r.config.empty()) throw InterchangeError("a result has an empty config");
  for (const char c : r.config)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) refuse("its config holds a control character");
  try {
    parse_named_values(r.config);
  } catch (const std::exception& e) {
    refuse("its config is not name=value text (" + shortened(e.what(), 80) + ")");
  }
  if (!is_result_status(r.status))
    refuse("unknown status " + in_quotes(r.status) +
           " (known: ok, compile_error, load_error, launch_error, runtime_fault, timeout, wrong_result)");
  if (r.status == "ok" && !r.time_ms_median) refuse("status ok without a time");
  const auto positive = [&](const std::optional<double>& v, const char* what) {
    if (v && !(std::isfinite(*v) && *v > 0))
      refuse(std::string(what) + " is " + std::to_string(*v) + ", not a positive number");
  };
  const auto non_negative = [&](std::optional<double> v, const char* what) {
    if (v && !(std::isfinite(*v) && *v >= 0))
      refuse(std::string(what) + " is " + std::to_string(*v) + ", not a number of at least 0");
  };
  positive(r.time_ms_median, "its time");
  positive(r.time_ms_min, "its fastest sample");
  positive(r.time_ms_max, "its slowest sample");
  non_negative(r.time_ms_stdev, "its standard deviation");
  non_negative(r.compile_s, "its compile time");
  non_negative(r.verify_s, "its verification time");
  non_negative(r.benchmark_s, "its benchmark time");
  non_negative(r.elapsed_s, "its elapsed time");
  non_negative(r.gbs, "its GB/s");
  non_negative(r.gflops, "its GFLOP/s");
  non_negative(r.copy_fraction, "its copy fraction");
  if (r.samples < 0) refuse("a negative sample count");
  if (r.error_index && *r.error_index < 0) refuse("a negative error index");
  check_observations(r.observations, refuse);
}

void check_observations(const Observations& o, const std::function<void(const std::string&)>& refuse) {
  const auto named = [](const char* name) { return std::string("observation ") + name; };
  const auto non_negative = [&](const std::optional<double>& v, const char* name) {
    if (v && !(std::isfinite(*v) && *v >= 0))
      refuse(named(name) + " is " + std::to_string(*v) + ", not a number of at least 0");
  };
  const auto count = [&](const std::optional<std::int64_t>& v, const char* name) {
    if (v && *v < 0) refuse(named(name) + " is " + std::to_string(*v) + ", not an integer of at least 0");
  };
  const auto one_line = [&](const std::string& text, const char* name) {
    for (const char c : text)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) refuse(named(name) + " holds a control character");
  };
  non_negative(o.energy_j, "energy_j");
  non_negative(o.power_w, "power_w");
  non_negative(o.sm_clock_mhz, "sm_clock_mhz");
  non_negative(o.occupancy, "occupancy");
  if (o.occupancy && *o.occupancy > 1)
    refuse(named("occupancy") + " is " + std::to_string(*o.occupancy) + ", more than 1");
  for (const auto& [value, name] : {std::pair{o.energy_runs, "energy_runs"},
                                    {o.throttled_samples, "throttled_samples"},
                                    {o.registers, "registers"},
                                    {o.spill_store_bytes, "spill_store_bytes"},
                                    {o.spill_load_bytes, "spill_load_bytes"},
                                    {o.local_bytes, "local_bytes"},
                                    {o.static_shared_bytes, "static_shared_bytes"},
                                    {o.dynamic_shared_bytes, "dynamic_shared_bytes"},
                                    {o.blocks_per_sm, "blocks_per_sm"}})
    count(value, name);
  one_line(o.energy_method, "energy_method");
  one_line(o.throttle_reasons, "throttle_reasons");
}

std::string base64_encode(const std::vector<unsigned char>& bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t chunk =
        (bytes[i] << 16) | (i + 1 < bytes.size() ? bytes[i + 1] << 8 : 0) | (i + 2 < bytes.size() ? bytes[i + 2] : 0);
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
  if (text.size() % 4 != 0)
    throw InterchangeError("a cubin is not valid base64 (length " + std::to_string(text.size()) + ")");
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
    problems.push_back(
        {s.column_int(0), s.column_text(1), s.column_text(2), s.column_int(3), s.column_text(4), s.column_text(5)});
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
  existing.bind(1, r.family)
      .bind(2, r.device_id)
      .bind(3, r.template_id)
      .bind(4, r.strategy)
      .bind(5, r.seed)
      .bind(6, r.command)
      .bind(7, r.started_at);
  if (existing.step()) return existing.column_int(0);
  auto insert = db.prepare(R"sql(
    INSERT INTO runs (family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at,
                      finished_at, status, source_header)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id)sql");
  insert.bind(1, r.family)
      .bind(2, r.device_id)
      .bind(3, r.template_id)
      .bind(4, r.strategy)
      .bind(5, r.seed)
      .bind(6, r.budget)
      .bind(7, r.command)
      .bind(8, r.tool_version)
      .bind(9, r.started_at)
      .bind(10, r.finished_at.empty() ? std::optional<std::string>() : std::optional<std::string>(r.finished_at))
      .bind(11, r.status)
      .bind(12, r.source_header);
  insert.step();
  return insert.column_int(0);
}

void keep_copy_bandwidth(Store& store, std::int64_t device_id, const DeviceRecord& d) {
  if (!d.copy_bandwidth_gbs) return;
  store.database()
      .prepare(
          "UPDATE devices SET copy_bandwidth_gbs = ?1, copy_bandwidth_measured_at = ?2 "
          "WHERE id = ?3 AND copy_bandwidth_gbs IS NULL")
      .bind(1, *d.copy_bandwidth_gbs)
      .bind(2, d.copy_bandwidth_measured_at)
      .bind(3, device_id)
      .run();
}

void report_progress(const ImportProgress& progress, std::size_t done, std::size_t total) {
  if (progress && (done % 64 == 0 || done == total)) progress(done, total);
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
    } catch (const UsageError& e) {  // a problem that its family's stored schema refuses
      throw InterchangeError(context() + e.what());
    }
    // The lookup's precomputed choices commit with the rows: an import killed at any point leaves
    // either nothing of it or everything, choices included, never rows a lookup must score itself.
    compute_choices(store.database(), false);
    transaction.commit();
  }
  return summary;
}

}  // namespace cutune::db::interchange
