// Kernel Tuner cache files and T4 results files, in and out.
//
// A Kernel Tuner cache file holds one device (by name), one kernel and one problem size: a header
// and `cache`, one entry per config keyed by its comma-joined values, with `time` (ms, the
// objective: a number, or the name of a failure), `times` (the samples) and what evaluating it
// cost (`compile_time`, `verification_time`, `benchmark_time`, ms). A T4 results file is a list of
// {configuration, times, invalidity, measurements}, with neither device nor kernel nor problem.
//
// Mapping to result rows: `time` → time_ms_median (Kernel Tuner's objective, usually a mean);
// the samples → min, max, stdev (n − 1) and count; costs ms → s; a failure name → a status, the
// name kept as the error text; the device a synthetic uuid (synthetic_device_uuid); the template
// "kernel-tuner-" + a hash of kernel name and parameter names; the problem "problem_size=AxB",
// its size the product, no element type. Exports write the reverse plus a "cutune" object with
// what the formats have no field for.
//
// What a file holds that no column does (the samples, framework and strategy time, costs in ms as
// written, timestamps to the microsecond, T4's runtimes and measurement units; the header's
// tune_params with every value tuned over, its objective) is kept with each result
// (results.source_fields) and with the import's run (runs.source_header), and an export to the
// same format writes it back as it was read (interchange_rows.hpp).
#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "compressed_file.hpp"
#include "field_text.hpp"
#include "tool_version.hpp"
#include "core/hash.hpp"
#include "interchange_kernel_tuner.hpp"
#include "interchange_rows.hpp"

namespace cutune::db {
namespace {

using interchange::Json;

constexpr int kExtensionVersion = 1;

// Our statuses and the two formats' failure names. Exports take the first row of a status;
// imports the first row of a name. Kernel Tuner's runtime failures are mostly launches refused
// for resources, hence launch_error; its InvalidConfig (ruled out by restrictions) was never run.
struct FailureName {
  std::string_view status, kernel_tuner, t4;
};
constexpr FailureName kFailureNames[] = {
    {"compile_error", "CompilationFailedConfig", "compile"}, {"launch_error", "RuntimeFailedConfig", "runtime"},
    {"load_error", "RuntimeFailedConfig", "runtime"},        {"runtime_fault", "RuntimeFailedConfig", "runtime"},
    {"timeout", "RuntimeFailedConfig", "timeout"},           {"wrong_result", "RuntimeFailedConfig", "correctness"},
    {"launch_error", "InvalidConfig", "constraints"},
};

template <class Field>
std::string_view status_named(std::string_view name, Field field) {
  for (const auto& f : kFailureNames)
    if (f.*field == name) return f.status;
  return "runtime_fault";  // a failure this code does not know; its name stays in the error text
}

template <class Field>
std::string_view name_of_status(std::string_view status, Field field) {
  for (const auto& f : kFailureNames)
    if (f.status == status) return f.*field;
  return kFailureNames[1].*field;
}

// Kernel Tuner's own name when the result came from it (kept in the error text, whatever the name:
// an import from a Kernel Tuner file keeps its source fields), else by status.
std::string kernel_tuner_failure(const ResultRecord& r, bool from_kernel_tuner) {
  if (from_kernel_tuner && !r.error.empty()) return r.error;
  for (const auto& f : kFailureNames)
    if (f.kernel_tuner == r.error) return r.error;
  return std::string(name_of_status(r.status, &FailureName::kernel_tuner));
}

// T4's invalidity: the source's own word when the result came from a T4 file (kept in the error
// text as "T4 invalidity: compile"), else by status.
constexpr std::string_view kT4InvalidityPrefix = "T4 invalidity: ";
std::string t4_invalidity(const ResultRecord& r) {
  if (r.error.starts_with(kT4InvalidityPrefix)) return r.error.substr(kT4InvalidityPrefix.size());
  return r.status == "ok" && r.time_ms_median ? std::string("correct")
                                              : std::string(name_of_status(r.status, &FailureName::t4));
}

std::string value_text(const Json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

// "name=value,…" in the object's order, as Space::key writes it (one codec: field_text.hpp).
std::string config_text(const Json& config) {
  std::vector<NamedValue> items;
  for (const auto& [name, value] : config.items()) items.push_back({name, value_text(value)});
  try {
    return format_named_values(items);
  } catch (const std::exception& e) {
    throw InterchangeError(std::string("a parameter cannot be stored as name=value text: ") + e.what());
  }
}

// A result's parameters as an ordered object: its stored JSON, or parsed from its text.
Json config_object(const ResultRecord& r) {
  Json config = interchange::parse_json_text_column(r.config_json);
  if (config.is_object() && !config.empty()) return config;
  config = Json::object();
  for (const NamedValue& item : parse_named_values(r.config)) config[item.name] = item.value;
  return config;
}

// "2023-01-26 01:05:09.730633+00:00" or "2026-11-22T02:00:00Z" → seconds since the epoch; nullopt
// for any other text, or a date out of the years 1 to 9999.
std::optional<double> parse_timestamp(const std::string& text) {
  std::tm t{};
  int consumed = 0;
  if (text.size() > 64 ||
      std::sscanf(text.c_str(), "%4d-%2d-%2d%*1[ T]%2d:%2d:%2d%n", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour,
                  &t.tm_min, &t.tm_sec, &consumed) < 6 ||
      t.tm_year < 1 || t.tm_mon < 1 || t.tm_mon > 12 || t.tm_mday < 1 || t.tm_mday > 31 || t.tm_hour > 23 ||
      t.tm_min > 59 || t.tm_sec > 60 || t.tm_hour < 0 || t.tm_min < 0 || t.tm_sec < 0)
    return std::nullopt;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  double seconds = static_cast<double>(timegm(&t));
  std::size_t at = static_cast<std::size_t>(consumed);
  if (at < text.size() && text[at] == '.') {
    const std::size_t end = std::min(text.find_first_not_of("0123456789", at + 1), text.size());
    seconds += std::strtod(("0" + text.substr(at, std::min<std::size_t>(end - at, 12))).c_str(), nullptr);
    at = end;
  }
  int offset_hours = 0, offset_minutes = 0;
  if (at < text.size() && (text[at] == '+' || text[at] == '-') &&
      std::sscanf(text.c_str() + at + 1, "%2d:%2d", &offset_hours, &offset_minutes) == 2)
    seconds -= (text[at] == '-' ? -1 : 1) * (offset_hours * 3600.0 + offset_minutes * 60.0);
  return seconds;
}

std::string iso_timestamp(double seconds) {
  const auto whole = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// `values` are positive and finite (the readers check): min, max, their stdev (n - 1) and count.
void set_sample_statistics(ResultRecord& r, const std::vector<double>& values) {
  if (values.empty()) return;
  const double largest = *std::max_element(values.begin(), values.end());
  const auto stdev_of = [&](double scale) {  // of values / scale, times scale
    if (values.size() < 2) return 0.0;
    double sum = 0, squares = 0;
    for (double v : values) sum += v / scale;
    const double mean = sum / static_cast<double>(values.size());
    for (double v : values) squares += (v / scale - mean) * (v / scale - mean);
    return scale * std::sqrt(squares / static_cast<double>(values.size() - 1));
  };
  double stdev = stdev_of(1.0);
  if (!std::isfinite(stdev)) stdev = stdev_of(largest);  // samples near DBL_MAX overflow the plain sums
  if (!std::isfinite(stdev)) throw InterchangeError("its samples spread wider than a double holds");
  r.samples = static_cast<int>(std::min<std::size_t>(values.size(), INT32_MAX));
  r.time_ms_min = *std::min_element(values.begin(), values.end());
  r.time_ms_max = largest;
  r.time_ms_stdev = stdev;
}

// ---- where imported results belong --------------------------------------------------------------

struct Origin {
  DeviceRecord device;
  std::string family;
  std::string template_hash, template_source;
  ProblemRecord problem;
};

Json extension_of(const Origin& o) {
  return {{"format_version", kExtensionVersion},
          {"family", o.family},
          {"device", interchange::device_json(o.device)},
          {"template", {{"hash", o.template_hash}, {"source", o.template_source}}},
          {"problem", interchange::problem_json(o.problem)}};
}

Origin origin_from_extension(const Json& ext) {
  using namespace interchange;
  if (!ext.is_object()) refuse_member("cutune", ext, "an object");
  if (integer_or(ext, "format_version", 0) > kExtensionVersion)
    throw InterchangeError("its cutune section has format version " + ext.at("format_version").dump() +
                           ", newer than this cutune reads");
  Origin o;
  o.device = device_from_json(required(ext, "device"));
  o.family = text_at(ext, "family", Text::name);
  const Json& tmpl = object_at(ext, "template");
  o.template_hash = text_at(tmpl, "hash", Text::name);
  o.template_source = text_or(tmpl, "source", "");
  o.problem = problem_from_json(required(ext, "problem"));
  return o;
}

// A problem known only by its size: "problem_size=4096x4096", size 4096², no element type.
// `problem_size` is null (unknown), a positive integer or a list of them (checked by the reader).
ProblemRecord problem_of_size(const std::string& family, const Json& problem_size, std::int64_t elements) {
  ProblemRecord p;
  p.family = family;
  std::string dims;
  if (problem_size.is_array()) {
    for (const auto& d : problem_size) dims += (dims.empty() ? "" : "x") + d.dump();
  } else {
    dims = problem_size.is_null() ? "unknown" : problem_size.dump();
  }
  p.size = elements;
  p.key = "problem_size=" + dims;
  p.descriptor = Json{{"problem_size", problem_size}}.dump();
  return p;
}

struct OriginRows {
  std::int64_t device_id, template_id, problem_id, run_id;
};

OriginRows store_origin(Store& store, const Origin& o, const std::string& strategy, const std::string& command,
                        const std::string& started_at, const std::string& source_header) {
  OriginRows ids;
  ids.device_id = store.upsert_device(o.device);
  interchange::keep_copy_bandwidth(store, ids.device_id, o.device);
  ids.template_id = store.upsert_template(o.family, o.template_hash, o.template_source);
  ProblemRecord problem = o.problem;
  problem.family = o.family;
  ids.problem_id = store.upsert_problem(problem);
  RunRecord run;
  run.family = o.family;
  run.device_id = ids.device_id;
  run.template_id = ids.template_id;
  run.strategy = strategy;
  run.command = command;
  run.tool_version = tool_version();
  run.started_at = started_at;
  run.finished_at = started_at;
  run.status = "finished";
  run.source_header = source_header;
  ids.run_id = interchange::find_or_insert_run(store, run);
  return ids;
}

ResultRecord result_at(const OriginRows& ids) {
  ResultRecord r;
  r.run_id = ids.run_id;
  r.device_id = ids.device_id;
  r.template_id = ids.template_id;
  r.problem_id = ids.problem_id;
  r.launch_json = "[]";
  return r;
}

// Seconds since the first timestamp, per entry: when each config finished, as elapsed_s wants it.
struct Timeline {
  std::optional<double> first;
  void see(const Json& entry, const char* key) {
    if (!entry.is_object() || !entry.contains(key) || !entry.at(key).is_string()) return;
    if (auto t = parse_timestamp(entry.at(key).get<std::string>())) first = first ? std::min(*first, *t) : *t;
  }
  std::string started_at() const { return first ? iso_timestamp(*first) : "1970-01-01T00:00:00Z"; }
  void stamp(ResultRecord& r, const Json& entry, const char* key) const {
    const auto t = entry.contains(key) && entry.at(key).is_string() ? parse_timestamp(entry.at(key).get<std::string>())
                                                                    : std::nullopt;
    r.created_at = t ? iso_timestamp(*t) : started_at();
    r.elapsed_s = t && first ? *t - *first : 0.0;
  }
};

std::string default_command(const std::string& what, const std::string& path, const ImportTarget& target) {
  return target.command.empty() ? what + " " + std::filesystem::path(path).filename().string() : target.command;
}

// What a result row holds beyond the formats' own fields: exports put it in each entry's
// "cutune" object, imports lay it over what they derived.
Json result_extension(const ResultRecord& r) {
  Json ext = interchange::measurement_json(r);
  for (const char* derived : {"config", "config_json", "time_ms_median", "compile_s", "verify_s", "benchmark_s", "gbs",
                              "gflops", "source_fields"})  // the source fields are the entry's own members
    ext.erase(derived);
  return ext;
}

// When the result was measured, for an export: the source's timestamp as it was written, else ours.
Json timestamp_of(const ResultRecord& r) {
  for (const char* format : {interchange::kKernelTunerSource, interchange::kT4Source})
    if (const Json kept = interchange::kept_source(r.source_fields, format); kept.contains("timestamp"))
      return kept.at("timestamp");
  return r.created_at;
}

// The samples (ms) a Kernel Tuner or T4 source held for the result; none for cutune's own, which
// keeps their statistics only.
Json samples_of(const ResultRecord& r) {
  if (const Json kt = interchange::kept_source(r.source_fields, interchange::kKernelTunerSource); kt.contains("times"))
    return kt.at("times");
  const Json t4 = interchange::kept_source(r.source_fields, interchange::kT4Source);
  if (t4.contains("times") && t4.at("times").is_object() && t4.at("times").contains("runtimes"))
    return t4.at("times").at("runtimes");
  return Json::array();
}

// A Kernel Tuner file's header as the run keeps it: everything but the entries and our section.
std::string kernel_tuner_header(const Json& file) {
  return interchange::source_text(interchange::kKernelTunerSource, file,
                                  [](const std::string& name) { return name == "cache" || name == "cutune"; });
}

// "tune_params_keys" and "tune_params" of an export: the source header's (every value the source
// tuned over, measured or not), then the names and values only the results hold, sorted.
std::pair<Json, Json> parameters_of(const Json& header, const std::vector<Json>& configs) {
  Json names = header.contains("tune_params_keys") && header.at("tune_params_keys").is_array()
                   ? header.at("tune_params_keys")
                   : Json::array();
  Json values = header.contains("tune_params") && header.at("tune_params").is_object() ? header.at("tune_params")
                                                                                       : Json::object();
  std::map<std::string, std::set<std::string>> listed;  // by name: the values' JSON text
  for (auto& [name, list] : values.items()) {
    if (!list.is_array()) list = Json::array();
    for (const auto& v : list) listed[name].insert(v.dump());
  }
  std::map<std::string, std::set<Json>> unlisted;
  for (const Json& config : configs)
    for (const auto& [name, value] : config.items()) {
      if (std::find(names.begin(), names.end(), Json(name)) == names.end()) names.push_back(name);
      if (!listed[name].count(value.dump())) unlisted[name].insert(value);
    }
  for (const auto& [name, extra] : unlisted) {
    if (!values.contains(name)) values[name] = Json::array();
    for (const auto& v : extra) values[name].push_back(v);
  }
  return {names, values};
}

// ---- exports: one (device, problem) of one family, its newest template ----------------------------

struct Slice {
  Origin origin;
  Json problem_size;
  std::vector<ResultRecord> results;
};

std::string listing(const std::set<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

Slice one_slice(sql::Database& db, Selection selection) {
  if (selection.family.empty()) {
    std::set<std::string> families;
    auto s = db.prepare("SELECT DISTINCT family FROM problems");
    while (s.step()) families.insert(s.column_text(0));
    if (families.size() != 1)
      throw InterchangeError("this format holds one kernel: pass --family (stored: " + listing(families) + ")");
    selection.family = *families.begin();
  }
  const auto devices = interchange::selected_devices(db, selection);
  const auto problems = interchange::selected_problems(db, selection);
  auto results = interchange::selected_results(db, selection);
  std::set<std::string> device_names, problem_keys;
  for (const auto& d : devices)
    for (const auto& r : results)
      if (r.device_id == d.id) device_names.insert(d.uuid + " (" + d.name + ")");
  for (const auto& p : problems)
    for (const auto& r : results)
      if (r.problem_id == p.id) problem_keys.insert(p.key);
  if (results.empty()) throw InterchangeError("no results of " + selection.family + " match the selection");
  if (device_names.size() > 1)
    throw InterchangeError("this format holds one device: pass --device (one of: " + listing(device_names) + ")");
  if (problem_keys.size() > 1)
    throw InterchangeError("this format holds one problem: pass --problem (one of: " + listing(problem_keys) + ")");

  Slice slice;
  std::int64_t newest_template = 0;
  for (const auto& r : results) newest_template = std::max(newest_template, r.template_id);
  std::erase_if(results, [&](const ResultRecord& r) { return r.template_id != newest_template; });
  for (const auto& d : devices)
    if (d.id == results.front().device_id) slice.origin.device = d;
  for (const auto& p : problems)
    if (p.id == results.front().problem_id) slice.origin.problem = p;
  auto t = db.prepare("SELECT source_hash, source FROM templates WHERE id = ?1");
  t.bind(1, newest_template);
  t.step();
  slice.origin.family = selection.family;
  slice.origin.template_hash = t.column_text(0);
  slice.origin.template_source = t.column_text(1);
  const Json descriptor = interchange::parse_json_text_column(slice.origin.problem.descriptor);
  slice.problem_size = descriptor.is_object() && descriptor.contains("problem_size") ? descriptor.at("problem_size")
                                                                                     : Json(slice.origin.problem.size);
  slice.results = std::move(results);
  return slice;
}

template <class F>
void write_export(const std::string& path, F&& make_document) {
  try {
    write_text_file(path, make_document().dump(1) + "\n");
  } catch (const FileError& e) {
    throw InterchangeError(e.what());
  }
}

Json read_document(const std::string& path) {
  try {
    return interchange::parse_json(read_text_file(path), path);
  } catch (const FileError& e) {
    throw InterchangeError(e.what());
  }
}

}  // namespace

std::string synthetic_device_uuid(const std::string& device_name) {
  return "kernel-tuner-" + content_hash(device_name);
}

// ---- Kernel Tuner ---------------------------------------------------------------------------------

ImportSummary import_kernel_tuner(Store& store, const std::string& path, const ImportTarget& target,
                                  const ImportProgress& progress) {
  using namespace interchange;
  const Json file = read_document(path);
  // The whole file is judged before anything is written (interchange_kernel_tuner.hpp).
  const kernel_tuner::CacheFile cache = kernel_tuner::read_cache_file(file, path);
  Origin origin;
  try {
    if (member(file, "cutune")) {
      origin = origin_from_extension(file.at("cutune"));
    } else {
      if (!cache.kernel_name) missing_member("kernel_name");
      if (!cache.device_name) missing_member("device_name");
      origin.device.name = *cache.device_name;
      origin.device.uuid = synthetic_device_uuid(origin.device.name);
      origin.family = *cache.kernel_name;
      origin.template_hash = "kernel-tuner-" + content_hash(*cache.kernel_name + Json(cache.parameters).dump());
      origin.template_source = "(imported from a Kernel Tuner cache file, which does not hold the source)";
      origin.problem = problem_of_size(origin.family, cache.problem_size, cache.problem_elements);
    }
  } catch (const InterchangeError& e) {
    throw InterchangeError(in_quotes(path, 120) + ": " + e.what());
  }
  if (!target.family.empty()) origin.family = text_value("--family", Json(target.family), Text::name);
  return import_in_transaction(store, path, [&](ImportSummary& summary, std::string& where) {
    where = "header";
    Timeline timeline;
    for (const auto& entry : cache.entries) timeline.see(*entry.json, "timestamp");
    const OriginRows ids =
        store_origin(store, origin, "kernel_tuner_import", default_command("import-kt", path, target),
                     timeline.started_at(), kernel_tuner_header(file));
    const std::set<std::string> parameters(cache.parameters.begin(), cache.parameters.end());
    ++summary.devices;
    ++summary.problems;
    ++summary.runs;

    for (const auto& entry : cache.entries) {
      where = "cache entry " + in_quotes(entry.key);
      Json config = Json::object();
      for (std::size_t p = 0; p < cache.parameters.size(); ++p) config[cache.parameters[p]] = entry.values[p];
      ResultRecord r = result_at(ids);
      r.config = config_text(config);
      r.config_json = config.dump();
      if (entry.time_ms) {
        r.status = "ok";
        r.time_ms_median = entry.time_ms;
        set_sample_statistics(r, entry.samples);
      } else {
        r.error = entry.failure;
        r.status = status_named(r.error, &FailureName::kernel_tuner);
      }
      r.compile_s = entry.compile_ms / 1e3;
      r.verify_s = entry.verification_ms / 1e3;
      r.benchmark_s = entry.benchmark_ms / 1e3;
      r.gbs = entry.gbs;
      r.gflops = entry.gflops;
      timeline.stamp(r, *entry.json, "timestamp");
      // The row holds the values, the time (or failure name) and the metrics exactly; everything
      // else (samples, costs in ms, framework and strategy time, the timestamp) is kept as written.
      r.source_fields = source_text(kKernelTunerSource, *entry.json, [&](const std::string& name) {
        return parameters.count(name) || name == "time" || name == "cutune" ||
               ((name == "GB/s" || name == "GFLOP/s") && entry.json->at(name).is_number());
      });
      if (const Json* extension = member(*entry.json, "cutune")) measurement_from_json(*extension, r);
      check_result(r);
      store.insert_result(r);
      report_progress(progress, static_cast<std::size_t>(++summary.results), cache.entries.size());
    }
  });
}

void export_kernel_tuner(Store& store, const Selection& selection, const std::string& path) {
  using namespace interchange;
  const Slice slice = one_slice(store.database(), selection);
  const Json header = source_header_of_runs(store.database(), slice.results, kKernelTunerSource);
  write_export(path, [&] {
    std::vector<Json> configs;
    configs.reserve(slice.results.size());
    for (const auto& r : slice.results) configs.push_back(config_object(r));
    const auto [names, values] = parameters_of(header, configs);
    Json cache = Json::object();
    for (std::size_t i = 0; i < slice.results.size(); ++i) {
      const ResultRecord& r = slice.results[i];
      const Json source = kept_source(r.source_fields, kKernelTunerSource);
      std::string key;
      for (const auto& [name, value] : configs[i].items()) key += (key.empty() ? "" : ",") + value_text(value);
      Json entry = configs[i];
      if (r.status == "ok" && r.time_ms_median)
        entry["time"] = *r.time_ms_median;
      else
        entry["time"] = kernel_tuner_failure(r, !source.empty());
      if (Json samples = samples_of(r); !samples.empty()) entry["times"] = std::move(samples);
      entry["compile_time"] = r.compile_s * 1e3;
      entry["verification_time"] = r.verify_s * 1e3;
      entry["benchmark_time"] = r.benchmark_s * 1e3;
      entry["strategy_time"] = 0;
      entry["framework_time"] = 0;
      entry["timestamp"] = timestamp_of(r);
      if (r.gbs) entry["GB/s"] = *r.gbs;
      if (r.gflops) entry["GFLOP/s"] = *r.gflops;
      entry.update(source);  // the source's own members as it wrote them (costs in ms exactly, ...)
      entry["cutune"] = result_extension(r);
      cache[key] = std::move(entry);
    }
    Json document{{"schema_version", "1.1.0"},          {"device_name", slice.origin.device.name},
                  {"kernel_name", slice.origin.family}, {"problem_size", slice.problem_size},
                  {"tune_params_keys", names},          {"tune_params", values},
                  {"objective", Json::array({"time"})}};
    for (const auto& [name, value] : header.items())  // what the source said (its kernel name, its objective, ...)
      if (name != "tune_params_keys" && name != "tune_params") document[name] = value;
    document["cache"] = std::move(cache);
    document["cutune"] = extension_of(slice.origin);
    return document;
  });
}

// ---- T4 -------------------------------------------------------------------------------------------

namespace {

// ---- T4 results files: what one must hold ------------------------------------------------------
// A "results" list (at least one) of objects, each with a "configuration" object of parameter
// values (strings, finite numbers, booleans; the same names in every result), "invalidity" (a
// name: "correct" for a measured config), optionally "times" (ms, at least 0: "compilation",
// "validation", "benchmark", and "runtimes", the samples, each above 0), "measurements" (a list of
// {name, value}: "time" a positive number or a failure's name, "GB/s" and "GFLOP/s" at least 0)
// and "timestamp".

struct T4Result {
  const Json* json = nullptr;
  Json configuration;
  std::string invalidity;
  std::optional<double> time_ms, gbs, gflops;
  std::vector<double> samples;
  double compile_ms = 0, validation_ms = 0, benchmark_ms = 0;
};

std::vector<T4Result> read_t4_results(const Json& file, const std::string& source) {
  using namespace interchange;
  if (!file.is_object() || !member(file, "results") || !file.at("results").is_array())
    throw InterchangeError(in_quotes(source, 120) + " is not a T4 results file (it needs a \"results\" list)");
  const Json& results = file.at("results");
  if (results.empty()) throw InterchangeError(in_quotes(source, 120) + ": its \"results\" list is empty");
  std::vector<T4Result> read;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < results.size(); ++i) {
    try {
      const Json& entry = results[i];
      if (!entry.is_object()) throw InterchangeError("it is " + shown(entry) + ", not an object");
      T4Result r;
      r.json = &entry;
      r.configuration = object_at(entry, "configuration");
      if (r.configuration.empty()) throw InterchangeError("its \"configuration\" names no parameters");
      std::vector<std::string> these;
      for (const auto& [name, value] : r.configuration.items()) {
        if (name.empty() || name.find_first_of(",=") != std::string::npos)
          throw InterchangeError("parameter name " + in_quotes(name) + " is empty or holds ',' or '='");
        if (!is_parameter_value(value)) refuse_member(name, value, "a parameter value (a string, number or boolean)");
        these.push_back(name);
      }
      if (i == 0)
        names = these;
      else if (these != names)
        throw InterchangeError("its configuration names other parameters than results[0]'s");
      r.invalidity = text_at(entry, "invalidity", Text::name);
      if (const Json* times = member(entry, "times")) {
        if (!times->is_object()) refuse_member("times", *times, "an object");
        r.compile_ms = number_or(*times, "compilation", 0, Sign::non_negative);
        r.validation_ms = number_or(*times, "validation", 0, Sign::non_negative);
        r.benchmark_ms = number_or(*times, "benchmark", 0, Sign::non_negative);
        if (const Json* runtimes = member(*times, "runtimes")) {
          if (!runtimes->is_array()) refuse_member("runtimes", *runtimes, "a list of positive numbers");
          for (const auto& t : *runtimes) r.samples.push_back(number_value("runtimes", t, Sign::positive));
        }
      }
      if (const Json* measurements = member(entry, "measurements")) {
        if (!measurements->is_array()) refuse_member("measurements", *measurements, "a list");
        for (const auto& m : *measurements) {
          if (!m.is_object()) refuse_member("measurements", m, "a measurement (an object)");
          const std::string name = text_or(m, "name", "");
          const Json* value = member(m, "value");
          if (!value || !value->is_number()) continue;  // a failure's name where the time would be
          if (name == "time")
            r.time_ms = number_value("time", *value, Sign::positive);
          else if (name == "GB/s")
            r.gbs = number_value("GB/s", *value, Sign::non_negative);
          else if (name == "GFLOP/s")
            r.gflops = number_value("GFLOP/s", *value, Sign::non_negative);
        }
      }
      read.push_back(std::move(r));
    } catch (const InterchangeError& e) {
      throw InterchangeError(in_quotes(source, 120) + ": results[" + std::to_string(i) + "]: " + e.what());
    }
  }
  return read;
}

}  // namespace

ImportSummary import_t4(Store& store, const std::string& path, const ImportTarget& target,
                        const ImportProgress& progress) {
  using namespace interchange;
  const Json file = read_document(path);
  const std::vector<T4Result> results = read_t4_results(file, path);
  Origin origin;
  try {
    if (member(file, "cutune")) {
      origin = origin_from_extension(file.at("cutune"));
    } else {
      if (target.family.empty() || target.device_name.empty())
        throw InterchangeError(
            "the file does not say which device and kernel its results are for (no cutune section): "
            "pass --family and --device-name");
      if (target.problem_size < 0)
        throw InterchangeError("the problem size " + std::to_string(target.problem_size) + " is not a positive number");
      origin.device.name = text_value("--device-name", Json(target.device_name), Text::name);
      origin.device.uuid = synthetic_device_uuid(target.device_name);
      Json names = Json::array();
      for (const auto& [name, value] : results.front().configuration.items()) names.push_back(name);
      origin.template_hash = "t4-" + content_hash(target.family + names.dump());
      origin.template_source = "(imported from a T4 results file, which does not hold the source)";
      const Json size = target.problem_size > 0 ? Json(target.problem_size) : Json();
      origin.problem = problem_of_size(target.family, size, target.problem_size);
    }
  } catch (const InterchangeError& e) {
    throw InterchangeError(in_quotes(path, 120) + ": " + e.what());
  }
  if (!target.family.empty()) origin.family = text_value("--family", Json(target.family), Text::name);
  return import_in_transaction(store, path, [&](ImportSummary& summary, std::string& where) {
    where = "header";
    Timeline timeline;
    for (const auto& entry : results) timeline.see(*entry.json, "timestamp");
    const OriginRows ids = store_origin(
        store, origin, "t4_import", default_command("import-t4", path, target), timeline.started_at(),
        source_text(kT4Source, file, [](const std::string& name) { return name == "results" || name == "cutune"; }));
    ++summary.devices;
    ++summary.problems;
    ++summary.runs;

    for (std::size_t i = 0; i < results.size(); ++i) {
      where = "results[" + std::to_string(i) + "]";
      const T4Result& entry = results[i];
      ResultRecord r = result_at(ids);
      r.config = config_text(entry.configuration);
      r.config_json = entry.configuration.dump();
      if (entry.invalidity == "correct" && entry.time_ms) {
        r.status = "ok";
        r.time_ms_median = entry.time_ms;
        set_sample_statistics(r, entry.samples);
      } else {
        r.status = entry.invalidity == "correct" ? "runtime_fault"
                                                 : std::string(status_named(entry.invalidity, &FailureName::t4));
        r.error = std::string(kT4InvalidityPrefix) + entry.invalidity;
      }
      r.gbs = entry.gbs;
      r.gflops = entry.gflops;
      r.compile_s = entry.compile_ms / 1e3;
      r.verify_s = entry.validation_ms / 1e3;
      r.benchmark_s = entry.benchmark_ms / 1e3;
      timeline.stamp(r, *entry.json, "timestamp");
      // The row holds the configuration and the invalidity (in the error text); the rest (times
      // with the runtimes, measurements with their units, the timestamp) is kept as written.
      r.source_fields = source_text(kT4Source, *entry.json, [](const std::string& name) {
        return name == "configuration" || name == "invalidity" || name == "cutune";
      });
      if (const Json* extension = member(*entry.json, "cutune")) measurement_from_json(*extension, r);
      check_result(r);
      store.insert_result(r);
      report_progress(progress, static_cast<std::size_t>(++summary.results), results.size());
    }
  });
}

void export_t4(Store& store, const Selection& selection, const std::string& path) {
  using namespace interchange;
  const Slice slice = one_slice(store.database(), selection);
  const Json header = source_header_of_runs(store.database(), slice.results, kT4Source);
  write_export(path, [&] {
    Json results = Json::array();
    for (const auto& r : slice.results) {
      const bool ok = r.status == "ok" && r.time_ms_median;
      Json measurements = Json::array();
      measurements.push_back({{"name", "time"},
                              {"value", ok ? Json(*r.time_ms_median) : Json(kernel_tuner_failure(r, false))},
                              {"unit", "ms"}});
      if (r.gbs) measurements.push_back({{"name", "GB/s"}, {"value", *r.gbs}, {"unit", "GB/s"}});
      if (r.gflops) measurements.push_back({{"name", "GFLOP/s"}, {"value", *r.gflops}, {"unit", "GFLOP/s"}});
      Json result{{"timestamp", timestamp_of(r)},
                  {"configuration", config_object(r)},
                  {"objectives", {"time"}},
                  {"times",
                   {{"compilation", r.compile_s * 1e3},
                    {"benchmark", r.benchmark_s * 1e3},
                    {"framework", 0},
                    {"search_algorithm", 0},
                    {"validation", r.verify_s * 1e3},
                    {"runtimes", samples_of(r)}}},
                  {"invalidity", t4_invalidity(r)},
                  {"correctness", r.status == "wrong_result" ? 0 : 1},
                  {"measurements", measurements}};
      result.update(kept_source(r.source_fields, kT4Source));  // the source's own members as it wrote them
      result["cutune"] = result_extension(r);
      results.push_back(std::move(result));
    }
    Json document{{"schema_version", "1.0.0"}};
    document.update(header);  // what the source's header said besides its results
    document["results"] = std::move(results);
    document["cutune"] = extension_of(slice.origin);
    return document;
  });
}

}  // namespace cutune::db
