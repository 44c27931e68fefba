#include "report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <variant>

#include "core/overloaded.hpp"
#include "observations.hpp"
#include "report_assets.hpp"
#include "report_records.hpp"
#include "store.hpp"

namespace cutune::report {
namespace {

using json = nlohmann::ordered_json;

static_assert(std::endian::native == std::endian::little, "packed report columns are written little-endian");

// Failure messages can be whole NVRTC logs; the report keeps enough to diagnose.
constexpr std::size_t kMessageLimit = 4000;
constexpr std::size_t kMessagesPerGroup = 20;
constexpr std::size_t kAnomalyExamples = 3;

json optional_number(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

std::string first_lines(const std::string& text) {
  return text.size() <= kMessageLimit ? text : text.substr(0, kMessageLimit) + "\n… (truncated)";
}

std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const auto byte = [&](std::size_t k) { return k < bytes.size() ? static_cast<unsigned char>(bytes[k]) : 0u; };
    const unsigned triple = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += kDigits[triple >> 18 & 63];
    out += kDigits[triple >> 12 & 63];
    out += i + 1 < bytes.size() ? kDigits[triple >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[triple & 63] : '=';
  }
  return out;
}

class IntColumn {
 public:
  void push(std::int64_t value) {
    values_.push_back(value);
    low_ = std::min(low_, value);
    high_ = std::max(high_, value);
  }
  json packed() const {
    std::string bytes;
    const auto append = [&bytes](auto v) {
      char raw[sizeof v];
      std::memcpy(raw, &v, sizeof v);
      bytes.append(raw, sizeof v);
    };
    const char* type = low_ >= 0 && high_ < 256 ? "u8" : low_ >= 0 && high_ < 65536 ? "u16" : "i32";
    for (const std::int64_t v : values_) {
      if (type[1] == '8')
        append(static_cast<std::uint8_t>(v));
      else if (type[1] == '1')
        append(static_cast<std::uint16_t>(v));
      else
        append(static_cast<std::int32_t>(std::clamp<std::int64_t>(v, INT32_MIN, INT32_MAX)));
    }
    return {{"type", type}, {"data", base64(bytes)}};
  }

 private:
  std::vector<std::int64_t> values_;
  std::int64_t low_ = 0, high_ = 0;
};

// A column of numbers for the page (NaN for none), in whichever form is shortest:
//  - float32 values;
//  - where few distinct values recur (registers, occupancies, clocks), the distinct values once
//    ("values") and per result 1 + its value's index, 0 for none (u8 or u16);
//  - where most results have none (energy measured in one run of several), either of those for
//    the results that have a value only, and their indices ("at").
class FloatColumn {
 public:
  void push(std::optional<double> value) {
    values_.push_back(value ? static_cast<float>(*value) : std::numeric_limits<float>::quiet_NaN());
    any_ = any_ || value.has_value();
  }
  bool any() const { return any_; }
  json packed() const {
    std::vector<json> forms = {dense(values_)};
    if (auto few = dictionary(values_)) forms.push_back(std::move(*few));
    std::vector<float> known;
    IntColumn at;
    for (std::size_t i = 0; i < values_.size(); ++i)
      if (!std::isnan(values_[i])) {
        known.push_back(values_[i]);
        at.push(static_cast<std::int64_t>(i));
      }
    if (known.size() < values_.size()) {
      const json at_packed = at.packed();
      const auto only_known = [&at_packed](json form) {
        form["at"] = at_packed;
        return form;
      };
      forms.push_back(only_known(dense(known)));
      if (auto few = dictionary(known)) forms.push_back(only_known(std::move(*few)));
    }
    return *std::min_element(forms.begin(), forms.end(),
                             [](const json& a, const json& b) { return a.dump().size() < b.dump().size(); });
  }

 private:
  static json dense(const std::vector<float>& values) {
    std::string bytes(values.size() * sizeof(float), '\0');
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return {{"type", "f32"}, {"data", base64(bytes)}};
  }
  // None where the values are too many for a u16 index.
  static std::optional<json> dictionary(const std::vector<float>& values) {
    std::map<std::uint32_t, std::int64_t> index;  // a value's bits → 1 + its place, in order of appearance
    json distinct = json::array();
    IntColumn column;
    for (const float f : values) {
      if (std::isnan(f)) {
        column.push(0);
        continue;
      }
      const auto [it, added] =
          index.try_emplace(std::bit_cast<std::uint32_t>(f), static_cast<std::int64_t>(index.size()) + 1);
      if (added) distinct.push_back(static_cast<double>(f));
      if (index.size() > 65535) return std::nullopt;
      column.push(it->second);
    }
    json packed = column.packed();
    packed["values"] = std::move(distinct);
    return packed;
  }
  std::vector<float> values_;
  bool any_ = false;
};

// Text per result, from few distinct texts (energy methods, throttle reasons, compiler warnings),
// sparse: each distinct text once, and for the results that have one their index and the text's
// (two packed columns), so that a report where few results have any text stays small.
class TextColumn {
 public:
  void push(std::size_t result, const std::string& text) {
    if (text.empty()) return;
    auto [it, added] = text_index_.try_emplace(text, texts_.size());
    if (added && texts_.size() >= kMaxTexts) {
      // Warnings that differ per config could fill the page: past the limit they share one entry.
      text_index_.erase(it);
      it = text_index_.try_emplace(kTooMany, texts_.size()).first;
      if (it->second == texts_.size()) texts_.push_back(kTooMany);
    } else if (added) {
      texts_.push_back(first_lines(text));
    }
    results_.push(static_cast<std::int64_t>(result));
    which_.push(static_cast<std::int64_t>(it->second));
  }
  bool any() const { return !texts_.empty(); }
  json packed() const { return {{"texts", texts_}, {"result", results_.packed()}, {"text", which_.packed()}}; }

 private:
  static constexpr std::size_t kMaxTexts = 200;
  static constexpr const char* kTooMany = "(not kept: over 200 different texts in this report)";
  std::map<std::string, std::size_t> text_index_;
  json texts_ = json::array();
  IntColumn results_, which_;
};

constexpr int flag_fields() {
  int n = 0;
  for (const db::ObservationField& field : db::kObservationFields)
    n += std::holds_alternative<bool db::Observations::*>(field.member) ? 1 : 0;
  return n;
}
static_assert(flag_fields() == 1, "the report carries one observation flag (remeasured) in the flags column");

// Bit of the flags column for a result whose samples were taken a second time (throttled).
constexpr int kRemeasuredFlag = 8;

// The observations of every result, a column per field, made from the field list so that a new
// field reaches the page's data without a change here. Numbers travel as float32 (the counts and
// byte sizes observed stay below 2^24, where float32 is exact), texts sparse, the flag as
// kRemeasuredFlag in the flags column.
class ObservationColumns {
 public:
  ObservationColumns() : columns_(db::kObservationFields.size()) {
    for (std::size_t k = 0; k < columns_.size(); ++k)
      if (std::holds_alternative<std::string db::Observations::*>(db::kObservationFields[k].member))
        columns_[k] = TextColumn();
  }
  // Returns the result's flag bits.
  int push(std::size_t result, const db::Observations& o) {
    int flags = 0;
    for (std::size_t k = 0; k < columns_.size(); ++k)
      std::visit(
          Overloaded{[&](std::optional<double> db::Observations::*m) { std::get<FloatColumn>(columns_[k]).push(o.*m); },
                     [&](std::optional<std::int64_t> db::Observations::*m) {
                       const auto& v = o.*m;
                       std::get<FloatColumn>(columns_[k])
                           .push(v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt);
                     },
                     [&](std::string db::Observations::*m) { std::get<TextColumn>(columns_[k]).push(result, o.*m); },
                     [&](bool db::Observations::*m) { flags |= o.*m ? kRemeasuredFlag : 0; }},
          db::kObservationFields[k].member);
    return flags;
  }
  // Adds the columns some result has to the page's results, under the fields' names.
  void add_to(json& results) const {
    for (std::size_t k = 0; k < columns_.size(); ++k)
      std::visit(
          [&](const auto& column) {
            if (column.any()) results[db::kObservationFields[k].name] = column.packed();
          },
          columns_[k]);
  }

 private:
  std::vector<std::variant<FloatColumn, TextColumn>> columns_;
};

bool imported_by_name(const std::string& uuid) { return uuid.rfind("kernel-tuner-", 0) == 0; }

// A device's name for titles; an import may have stored none.
std::string display_name(const json& device) {
  const std::string name = device.value("name", std::string());
  return name.empty() ? "(unnamed device)" : name;
}

json device_json(sql::Database& db, std::int64_t device_id) {
  const std::optional<db::DeviceRecord> found = db::device_by_id(db, device_id);
  if (!found) throw sql::DbError("no device with id " + std::to_string(device_id));
  const db::DeviceRecord& d = *found;
  // A device imported from a file that names it only (Kernel Tuner, T4) has zeros for everything
  // else: the page shows those as unknown, never as measured zeros.
  const auto positive = [](auto value) { return value > 0 ? json(value) : json(nullptr); };
  const auto text = [](const std::string& value) { return value.empty() ? json(nullptr) : json(value); };
  return {{"id", device_id},
          {"name", d.name},
          {"uuid", d.uuid},
          {"known_by_name_only", imported_by_name(d.uuid)},
          {"compute_capability", d.cc_major > 0 ? json(fmt::format("{}.{}", d.cc_major, d.cc_minor)) : json(nullptr)},
          {"sm_count", positive(d.sm_count)},
          {"memory_bytes", positive(d.memory_bytes)},
          {"l2_bytes", positive(d.l2_bytes)},
          {"memory_clock_khz", positive(d.memory_clock_khz)},
          {"bus_width_bits", positive(d.bus_width_bits)},
          {"theoretical_bandwidth_gbs", positive(d.theoretical_bandwidth_gbs)},
          {"driver_version", positive(d.driver_version)},
          {"nvrtc_version", text(d.nvrtc_version)},
          {"copy_bandwidth_gbs", optional_number(d.copy_bandwidth_gbs)},
          {"copy_bandwidth_measured_at", text(d.copy_bandwidth_measured_at)}};
}

// How a run's results were measured, from what created the run (db/interchange_kernel_tuner.cpp
// names imported runs by their strategy) and whether its device is real or known by name only (a
// file that cutune exported carries the real device and cutune's own measurements).
json provenance(const std::string& strategy, bool device_by_name) {
  const bool kernel_tuner = strategy == "kernel_tuner_import", t4 = strategy == "t4_import";
  if (kernel_tuner && device_by_name)
    return {{"source", "kernel_tuner"},
            {"label", "imported from Kernel Tuner"},
            {"method",
             "Imported from a Kernel Tuner cache file. Each time is the file's objective \"time\": Kernel Tuner's own "
             "measurement, by default the mean of the samples it recorded in \"times\" (CUDA events; whether the L2 "
             "cache was flushed between samples is up to the tuning script, and the file does not say). Min, max and "
             "spread are of those samples; GB/s and GFLOP/s are the file's own metrics where it has them; failures "
             "keep Kernel Tuner's names. Outputs were checked only if the tuning script gave Kernel Tuner an answer. "
             "The device is known by its name only."}};
  if (t4 && device_by_name)
    return {{"source", "t4"},
            {"label", "imported from T4"},
            {"method",
             "Imported from a T4 results file. Each time is the file's \"time\" measurement, as the tool that wrote "
             "the file measured it; min, max and spread are of its \"runtimes\" samples. The file names neither device "
             "nor kernel: both were given on import, and the device is known by that name only."}};
  const std::string cutune =
      "Each time is cutune's own measurement: the median of CUDA-event samples, the L2 cache overwritten before "
      "every sample, after two untimed warm-up runs; 10 to 200 samples per config, until the mean is known to "
      "0.5 % (or exactly the count given with --samples), and configs far behind the best cut short after 3. "
      "Outputs are checked against the family's reference before timing. GB/s and GFLOP/s follow the family's "
      "byte and operation model; 'copy' is the fraction of the device's measured copy bandwidth.";
  if (kernel_tuner || t4)
    return {{"source", "cutune"},
            {"label", kernel_tuner ? "cutune, via a Kernel Tuner file" : "cutune, via a T4 file"},
            {"method", std::string("Imported from a ") + (kernel_tuner ? "Kernel Tuner" : "T4") +
                           " file that cutune wrote, with cutune's own fields. " + cutune}};
  return {{"source", "cutune"}, {"label", "measured by cutune"}, {"method", cutune}};
}

// The runs of a device (one family, or one run, where given), each with how its results were
// measured and the anomalies of its source: results whose time lies outside their samples' range,
// and ok results without samples.
json runs_json(sql::Database& db, std::int64_t device_id, const std::optional<std::string>& family,
               std::optional<std::int64_t> run_id) {
  json runs = json::array();
  for (const db::RunQuality& q : db::run_qualities(db, {device_id, run_id, family}, kAnomalyExamples)) {
    const db::RunRecord& r = q.run;
    json run = {{"id", r.id},
                {"family", r.family},
                {"strategy", r.strategy},
                {"budget", r.budget},
                {"seed", r.seed},
                {"tool_version", r.tool_version},
                {"started_at", r.started_at},
                {"finished_at", r.finished_at},
                {"status", r.status},
                {"command", r.command}};
    run["provenance"] = provenance(r.strategy, imported_by_name(q.device_uuid));
    run["results"] = q.results;
    run["ok"] = q.ok;
    json anomalies = json::array();
    if (q.outside_samples > 0) {
      json list = json::array();
      for (const db::TimeOutsideSamples& e : q.outside_examples)
        list.push_back({{"config", e.config}, {"time_ms", e.time_ms}, {"min_ms", e.min_ms}, {"max_ms", e.max_ms}});
      anomalies.push_back({{"kind", "time_outside_range"}, {"count", q.outside_samples}, {"examples", list}});
    }
    if (q.ok_without_samples > 0)
      anomalies.push_back({{"kind", "no_samples"}, {"count", q.ok_without_samples}, {"examples", json::array()}});
    run["anomalies"] = anomalies;
    runs.push_back(std::move(run));
  }
  return runs;
}

// The latest bench measurement per (problem, library) of a family, of one device or every one;
// each names its device by id.
json baselines_json(sql::Database& db, std::optional<std::int64_t> device_id, const std::string& family) {
  json list = json::array();
  for (const db::BaselineRecord& b : db::latest_baselines(db, family, device_id))
    list.push_back({{"problem", b.problem_key},
                    {"library", b.library},
                    {"library_ms", b.library_ms},
                    {"cutune_ms", b.cutune_ms},
                    {"cutune_config", b.cutune_config},
                    {"measured_at", b.measured_at + " @" + b.commit},
                    {"device_id", b.device_id}});
  return list;
}

// The text a page rebuilds from a config's values: "name=value,…" over the parameters it has, in
// the report's parameter order. Only strings, booleans and integers a double holds exactly
// print the same in C++ and JavaScript; a config with other values keeps its stored text.
std::optional<std::string> rebuilt_key(const json& parameters, const json& row) {
  std::string text;
  for (std::size_t p = 0; p < row.size(); ++p) {
    const json& v = row[p];
    if (v.is_null()) continue;
    std::string value;
    if (v.is_string())
      value = v.get<std::string>();
    else if (v.is_boolean())
      value = v.get<bool>() ? "true" : "false";
    else if (v.is_number_integer() && std::llabs(v.get<std::int64_t>()) < (std::int64_t{1} << 53))
      value = v.dump();
    else
      return std::nullopt;
    if (!text.empty()) text += ',';
    text += parameters[p].get<std::string>() + "=" + value;
  }
  return text;
}

std::string slug(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  text.erase(std::unique(text.begin(), text.end(), [](char a, char b) { return a == '-' && b == '-'; }), text.end());
  return text;
}

std::string device_slug(const std::string& name, const std::string& uuid) {
  return slug(name) + "-" + slug(uuid.substr(0, std::min<std::size_t>(uuid.size(), 12)));
}

std::string report_file_name(const std::string& family, const std::string& device_name, const std::string& uuid,
                             std::optional<std::int64_t> run) {
  return (run ? fmt::format("run-{}-", *run) : std::string()) + slug(family) + "-" + device_slug(device_name, uuid) +
         ".html";
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string write_page(const json& data, const std::string& folder, const std::string& name) {
  const std::string page = render_html(data);
  std::filesystem::create_directories(folder);
  const std::filesystem::path path = std::filesystem::path(folder) / name;
  std::ofstream out(path, std::ios::binary);
  out << page;
  if (!out)
    throw std::filesystem::filesystem_error("cannot write report", path,
                                            std::error_code(errno ? errno : EIO, std::generic_category()));
  return path.string();
}

}  // namespace

std::vector<Selection> all_selections(sql::Database& db) {
  std::vector<Selection> selections;
  for (const db::DeviceFamily& pair : db::device_families_with_results(db))
    selections.push_back({pair.device_id, pair.family, std::nullopt});
  return selections;
}

std::vector<Selection> selections_with_reports(sql::Database& db, const std::string& folder) {
  std::vector<Selection> found;
  for (const Selection& sel : all_selections(db)) {
    const json device = device_json(db, sel.device_id);
    const std::string name = report_file_name(sel.family, device["name"].get<std::string>(),
                                              device["uuid"].get<std::string>(), std::nullopt);
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(folder) / name, ec)) found.push_back(sel);
  }
  return found;
}

json collect(sql::Database& db, const Selection& sel) {
  json data;
  data["kind"] = "report";
  data["family"] = sel.family;
  data["device"] = device_json(db, sel.device_id);
  data["runs"] = runs_json(db, sel.device_id, sel.family, sel.run_id);
  data["scope"] = sel.run_id ? fmt::format("run {}", *sel.run_id) : std::string("all runs");
  data["title"] = fmt::format("cutune: {} on {}", sel.family, display_name(data["device"]));

  // Results, columnar: one packed array per field, configs, problems, statuses and runs by index.
  std::map<std::string, std::size_t> config_index, problem_index, status_index;
  std::map<std::int64_t, std::size_t> run_index;
  for (const auto& run : data["runs"]) run_index.emplace(run["id"].get<std::int64_t>(), run_index.size());
  std::int64_t unverified = 0, cut_short = 0, count = 0;
  std::int64_t throttled = 0, remeasured = 0;  // results whose timed samples the GPU slowed down
  std::optional<double> lowest_clock, highest_clock;
  ObservationColumns observations;
  json parameters = json::array(), problems = json::array(), statuses = json::array();
  std::vector<std::map<std::string, std::size_t>> value_index;  // per parameter: value's JSON → index
  json parameter_values = json::array();
  std::vector<IntColumn> config_values;  // per parameter, per config: 1 + the value's index, 0 for none
  json config_keys = json::object();     // configs whose text the page cannot rebuild from their values
  FloatColumn col_median, col_min, col_max, col_stdev, col_gbs, col_gflops, col_copy, col_elapsed;
  IntColumn col_config, col_problem, col_status, col_samples, col_run, col_flags;
  // failures[problem][status] → message → (count, example config)
  std::map<std::size_t, std::map<std::string, std::map<std::string, std::pair<int, std::string>>>> failures;
  std::map<std::size_t, std::map<std::string, int>> failure_counts;
  std::int64_t last_run = -1;
  double run_offset = 0, run_end = 0;

  const auto add_result = [&](const db::ResultRecord& r, const db::ProblemRecord& problem) {
    ++count;
    const std::string& key = r.config;
    auto [config_it, new_config] = config_index.try_emplace(key, config_index.size());
    if (new_config) {
      const json values = json::parse(r.config_json, nullptr, false);
      json row = json::array();
      if (values.is_object()) {
        for (const auto& [name, value] : values.items()) {
          if (std::find(parameters.begin(), parameters.end(), name) == parameters.end()) {
            parameters.push_back(name);
            parameter_values.push_back(json::array());
            value_index.emplace_back();
            config_values.emplace_back();
            for (std::size_t c = 0; c + 1 < config_index.size(); ++c) config_values.back().push(0);  // earlier configs
          }
        }
        for (const auto& name : parameters) {
          const std::string n = name.get<std::string>();
          row.push_back(values.contains(n) ? values[n] : json(nullptr));
        }
      }
      for (std::size_t p = 0; p < parameters.size(); ++p) {
        const json v = p < row.size() ? row[p] : json(nullptr);
        if (v.is_null()) {
          config_values[p].push(0);
          continue;
        }
        auto [value_it, new_value] = value_index[p].try_emplace(v.dump(), value_index[p].size());
        if (new_value) parameter_values[p].push_back(v);
        config_values[p].push(static_cast<std::int64_t>(value_it->second) + 1);
      }
      const auto rebuilt = rebuilt_key(parameters, row);
      if (!rebuilt || *rebuilt != key) config_keys[std::to_string(config_it->second)] = key;
    }
    auto [problem_it, new_problem] = problem_index.try_emplace(problem.key, problem_index.size());
    if (new_problem) problems.push_back({{"key", problem.key}, {"size", problem.size}, {"dtype", problem.dtype}});
    const std::string& status = r.status;
    auto [status_it, new_status] = status_index.try_emplace(status, status_index.size());
    if (new_status) statuses.push_back(status);

    // Wall time runs on across resumed runs: each run starts where the previous one ended.
    const std::int64_t run = r.run_id;
    if (run != last_run) {
      run_offset = run_end;
      last_run = run;
    }
    const double elapsed = run_offset + r.elapsed_s;
    run_end = std::max(run_end, elapsed);

    const bool ok = status == "ok";
    int flags = 0;
    if (ok && !r.verified) flags |= 1, ++unverified;
    if (ok && r.cut_short) flags |= 2, ++cut_short;
    if (db::time_outside_samples(r)) flags |= 4;
    const db::Observations& observed = r.observations;
    flags |= observations.push(static_cast<std::size_t>(count - 1), observed);
    if (observed.throttled_samples.value_or(0) > 0) ++throttled;
    if (observed.remeasured) ++remeasured;
    if (const auto clock = observed.sm_clock_mhz) {
      lowest_clock = std::min(lowest_clock.value_or(*clock), *clock);
      highest_clock = std::max(highest_clock.value_or(*clock), *clock);
    }

    col_config.push(static_cast<std::int64_t>(config_it->second));
    col_problem.push(static_cast<std::int64_t>(problem_it->second));
    col_status.push(static_cast<std::int64_t>(status_it->second));
    col_median.push(r.time_ms_median);
    col_min.push(r.time_ms_min);
    col_max.push(r.time_ms_max);
    col_stdev.push(r.time_ms_stdev);
    col_samples.push(std::min<std::int64_t>(r.samples, 65535));
    col_gbs.push(r.gbs);
    col_gflops.push(r.gflops);
    col_copy.push(r.copy_fraction);
    col_elapsed.push(elapsed);
    col_run.push(run_index.count(run) ? static_cast<std::int64_t>(run_index.at(run)) : 0);
    col_flags.push(flags);

    if (!ok) {
      auto& group = failures[problem_it->second][status];
      ++failure_counts[problem_it->second][status];
      const std::string message = first_lines(r.error);
      auto it = group.find(message);
      if (it != group.end())
        ++it->second.first;
      else if (group.size() < kMessagesPerGroup)
        group.emplace(message, std::make_pair(1, key));
    }
  };
  db::for_each_result(db, {sel.device_id, sel.run_id, sel.family}, add_result);

  json failure_list = json::array();
  for (const auto& [problem, by_status] : failures)
    for (const auto& [status, messages] : by_status) {
      json list = json::array();
      for (const auto& [text, seen] : messages)
        list.push_back({{"text", text}, {"count", seen.first}, {"example", seen.second}});
      failure_list.push_back(
          {{"problem", problem}, {"status", status}, {"count", failure_counts[problem][status]}, {"messages", list}});
    }

  json packed_values = json::array();
  for (const auto& column : config_values) packed_values.push_back(column.packed());
  data["parameters"] = parameters;
  data["parameter_values"] = parameter_values;
  data["configs"] = {{"count", config_index.size()}, {"values", packed_values}, {"keys", config_keys}};
  data["problems"] = problems;
  data["statuses"] = statuses;
  json results = {{"count", count},
                  {"config", col_config.packed()},
                  {"problem", col_problem.packed()},
                  {"status", col_status.packed()},
                  {"run", col_run.packed()},
                  {"samples", col_samples.packed()},
                  {"flags", col_flags.packed()},
                  {"median", col_median.packed()},
                  {"min", col_min.packed()},
                  {"max", col_max.packed()},
                  {"stdev", col_stdev.packed()},
                  {"elapsed", col_elapsed.packed()}};
  // Metrics no result has stay out: the page reads a missing column as none everywhere.
  if (col_gbs.any()) results["gbs"] = col_gbs.packed();
  if (col_gflops.any()) results["gflops"] = col_gflops.packed();
  if (col_copy.any()) results["copy"] = col_copy.packed();
  observations.add_to(results);
  data["results"] = results;
  data["failures"] = failure_list;
  data["unverified"] = unverified;  // ok results never checked against a reference (a spec without one)
  data["cut_short"] = cut_short;    // ok results whose sampling stopped early: clearly behind the best
  data["throttled"] = throttled;    // results with a slowdown reason named during their timed samples
  data["remeasured"] = remeasured;  // results sampled again because most of their first samples were throttled
  data["sm_clock_mhz"] = lowest_clock ? json{{"min", *lowest_clock}, {"max", *highest_clock}} : json(nullptr);
  data["baselines"] = baselines_json(db, sel.device_id, sel.family);
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
      case '<':
        safe += "\\u003c";
        break;
      case '>':
        safe += "\\u003e";
        break;
      case '&':
        safe += "\\u0026";
        break;
      default:
        safe += c;
    }
  }
  return safe;
}

std::string render_html(const json& data) {
  const std::string kind = data.value("kind", std::string("report"));
  std::string_view page_template, page_js;
  if (kind == "index") {
    page_template = assets::index_html();
    page_js = assets::index_js();
  } else if (kind == "compare") {
    page_template = assets::compare_html();
    page_js = assets::compare_js();
  } else {
    page_template = assets::page_html();
    page_js = assets::page_js();
  }
  const std::string title = html_escape(data.value("title", std::string("cutune report")));
  // Markers are replaced in one left-to-right pass over the template, so text that is inserted
  // (the data above all) is never searched for markers itself.
  const std::map<std::string, std::string> values{
      {"{{TITLE}}", title},
      {"{{STYLE}}", std::string(assets::style_css())},
      {"{{CHART_JS}}", std::string(assets::chart_js())},
      {"{{PAGE_JS}}", std::string(assets::common_js()) + "\n" + std::string(page_js)},
      {"{{DATA}}", json_for_script(data)}};
  std::string page;
  std::size_t at = 0;
  while (true) {
    const std::size_t open = page_template.find("{{", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = page_template.find("}}", open);
    if (close == std::string_view::npos) throw std::runtime_error("report template: unclosed marker");
    const auto value = values.find(std::string(page_template.substr(open, close + 2 - open)));
    if (value == values.end()) throw std::runtime_error("report template: unknown marker");
    page.append(page_template.substr(at, open - at)).append(value->second);
    at = close + 2;
  }
  page.append(page_template.substr(at));
  return page;
}

std::string file_name(const json& data, const Selection& sel) {
  return report_file_name(sel.family, data["device"].value("name", std::string("device")),
                          data["device"].value("uuid", std::string()), sel.run_id);
}

std::string write_report(sql::Database& db, const Selection& selection, const std::string& folder, bool link_index) {
  json data = collect(db, selection);
  if (link_index) data["index_file"] = "index.html";
  return write_page(data, folder, file_name(data, selection));
}

// ---- the index --------------------------------------------------------------------------------

json collect_index(sql::Database& db, const std::vector<Selection>& selections, const std::string& database) {
  json data;
  data["kind"] = "index";
  data["database"] = database;
  data["title"] = "cutune: " + database;

  std::map<std::int64_t, std::size_t> device_index;
  json devices = json::array();
  std::set<std::pair<std::int64_t, std::string>> selected;
  std::vector<std::string> families;
  for (const auto& sel : selections) {
    if (device_index.try_emplace(sel.device_id, device_index.size()).second)
      devices.push_back(device_json(db, sel.device_id));
    selected.emplace(sel.device_id, sel.family);
    if (std::find(families.begin(), families.end(), sel.family) == families.end()) families.push_back(sel.family);
  }
  std::sort(families.begin(), families.end());

  // Per (device, family): counts, and how its runs were measured.
  std::map<std::pair<std::int64_t, std::string>, json> stats;
  for (const db::DeviceFamilyCounts& c : db::device_family_counts(db))
    stats[{c.pair.device_id, c.pair.family}] = {{"results", c.results},
                                                {"ok", c.ok},
                                                {"problems", c.problems},
                                                {"runs", c.runs},
                                                {"anomalies", c.outside_samples}};
  std::map<std::pair<std::int64_t, std::string>, std::set<std::string>> sources;
  for (const db::RunSource& run : db::run_sources(db))
    sources[{run.device_id, run.family}].insert(
        provenance(run.strategy, imported_by_name(run.device_uuid))["label"].get<std::string>());

  json reports = json::array();
  for (const auto& sel : selections) {
    const json& device = devices[device_index.at(sel.device_id)];
    json entry = {{"device", device_index.at(sel.device_id)},
                  {"family", sel.family},
                  {"file", report_file_name(sel.family, device["name"].get<std::string>(),
                                            device["uuid"].get<std::string>(), std::nullopt)}};
    const auto it = stats.find({sel.device_id, sel.family});
    for (const char* field : {"results", "ok", "problems", "runs", "anomalies"})
      entry[field] = it == stats.end() ? json(0) : it->second[field];
    entry["sources"] = json::array();
    for (const auto& label : sources[{sel.device_id, sel.family}]) entry["sources"].push_back(label);
    reports.push_back(std::move(entry));
  }

  // The best result per (device, problem), for the families and devices selected.
  std::map<std::string, json> family_problems;  // family → problems in size order, each with its bests
  std::map<std::string, std::map<std::string, std::size_t>> problem_at;
  for (const db::ProblemBest& best : db::best_per_problem(db, {})) {
    if (!selected.count({best.device_id, best.family})) continue;
    json& list = family_problems.try_emplace(best.family, json::array()).first->second;
    auto [at, added] = problem_at[best.family].try_emplace(best.problem_key, list.size());
    if (added) list.push_back({{"key", best.problem_key}, {"size", best.problem_size}, {"best", json::array()}});
    list[at->second]["best"].push_back({{"device", device_index.at(best.device_id)},
                                        {"ms", best.time_ms},
                                        {"config", best.config},
                                        {"gbs", optional_number(best.gbs)},
                                        {"gflops", optional_number(best.gflops)},
                                        {"copy", optional_number(best.copy_fraction)},
                                        {"run", best.run_id}});
  }
  json family_list = json::array();
  for (const auto& family : families) {
    json devices_of = json::array();
    for (const auto& sel : selections)
      if (sel.family == family) devices_of.push_back(device_index.at(sel.device_id));
    json baselines = json::array();
    for (auto b : baselines_json(db, std::nullopt, family)) {
      const auto device = b["device_id"].get<std::int64_t>();
      if (!selected.count({device, family})) continue;
      b["device"] = device_index.at(device);
      b.erase("device_id");
      baselines.push_back(std::move(b));
    }
    family_list.push_back({{"name", family},
                           {"devices", devices_of},
                           {"problems", family_problems.count(family) ? family_problems[family] : json::array()},
                           {"baselines", baselines}});
  }
  data["devices"] = devices;
  data["reports"] = reports;
  data["families"] = family_list;
  return data;
}

std::string write_index(sql::Database& db, const std::vector<Selection>& selections, const std::string& database,
                        const std::string& folder) {
  return write_page(collect_index(db, selections, database), folder, "index.html");
}

// ---- comparisons ------------------------------------------------------------------------------

Side resolve_side(sql::Database& db, const std::string& text) {
  if (!text.empty() &&
      std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    std::int64_t id = 0;
    try {
      id = std::stoll(text);
    } catch (const std::out_of_range&) {
      throw BadSelection("no run " + text + " in the database");
    }
    const std::optional<db::RunRecord> run = db::run_by_id(db, id);
    if (!run) throw BadSelection("no run " + text + " in the database");
    return {run->device_id, id};
  }
  // A device: its uuid, a prefix of one uuid, or the name of one device.
  std::vector<std::pair<std::int64_t, std::string>> exact, prefixed, named, all;
  for (const db::DeviceRecord& d : db::all_devices(db)) {
    const std::pair<std::int64_t, std::string> device{d.id, d.uuid + " (" + d.name + ")"};
    all.push_back(device);
    if (d.uuid == text) exact.push_back(device);
    if (!text.empty() && d.uuid.rfind(text, 0) == 0) prefixed.push_back(device);
    if (d.name == text) named.push_back(device);
  }
  const auto listing = [](const std::vector<std::pair<std::int64_t, std::string>>& devices) {
    std::string list;
    for (const auto& d : devices) list += (list.empty() ? "" : ", ") + d.second;
    return list.empty() ? std::string("none") : list;
  };
  if (exact.size() == 1) return {exact[0].first, std::nullopt};
  for (const auto* matches : {&prefixed, &named}) {
    if (matches->size() == 1) return {(*matches)[0].first, std::nullopt};
    if (matches->size() > 1)
      throw BadSelection("'" + text + "' matches " + std::to_string(matches->size()) + " devices (" +
                         listing(*matches) + "): give more of the uuid");
  }
  throw BadSelection("no run or device '" + text + "' in the database (a run is its id; devices: " + listing(all) +
                     ")");
}

namespace {

struct SideBest {
  std::string family, key;
  std::int64_t size = 0;
  std::int64_t results = 0, ok = 0;
  std::optional<double> ms;
  std::string config;
  json config_values, gbs, gflops, copy;
};

// Per problem id: what a side measured and its best.
std::map<std::int64_t, SideBest> side_problems(sql::Database& db, const Side& side,
                                               const std::optional<std::string>& family) {
  std::map<std::int64_t, SideBest> problems;
  const db::ResultFilter filter{side.device_id, side.run_id, family};
  for (const db::ProblemCounts& counts : db::problem_counts(db, filter)) {
    SideBest& b = problems[counts.problem_id];
    b.family = counts.family;
    b.key = counts.problem_key;
    b.size = counts.problem_size;
    b.results = counts.results;
    b.ok = counts.ok;
  }
  for (const db::ProblemBest& best : db::best_per_problem(db, filter)) {
    SideBest& b = problems[best.problem_id];
    b.ms = best.time_ms;
    b.config = best.config;
    b.config_values = json::parse(best.config_json, nullptr, false);
    if (!b.config_values.is_object()) b.config_values = json::object();
    b.gbs = optional_number(best.gbs);
    b.gflops = optional_number(best.gflops);
    b.copy = optional_number(best.copy_fraction);
  }
  return problems;
}

std::string side_name(const Side& side, const json& device) {
  return side.run_id ? fmt::format("run {}", *side.run_id) : display_name(device);
}

}  // namespace

json collect_comparison(sql::Database& db, const Comparison& c) {
  if (c.a.run_id.has_value() != c.b.run_id.has_value())
    throw BadSelection("compare two runs or two devices, not a run with a device");
  if (c.a.run_id ? *c.a.run_id == *c.b.run_id : c.a.device_id == c.b.device_id)
    throw BadSelection(c.a.run_id ? "that is the same run twice: compare two different runs"
                                  : "that is the same device twice: compare two different devices");
  json data;
  data["kind"] = "compare";
  data["family_filter"] = c.family ? json(*c.family) : json(nullptr);
  const Side* sides[] = {&c.a, &c.b};
  std::map<std::int64_t, SideBest> measured[2];
  json side_list = json::array();
  for (int k = 0; k < 2; ++k) {
    const Side& side = *sides[k];
    json device = device_json(db, side.device_id);
    std::optional<std::string> family = c.family;
    if (side.run_id && !family)
      if (const std::optional<db::RunRecord> run = db::run_by_id(db, *side.run_id)) family = run->family;
    measured[k] = side_problems(db, side, c.family);
    std::int64_t results = 0;
    for (const auto& [id, b] : measured[k]) results += b.results;
    json entry = {{"name", side_name(side, device)},
                  {"kind", side.run_id ? "run" : "device"},
                  {"run", side.run_id ? json(*side.run_id) : json(nullptr)},
                  {"device", device},
                  {"results", results},
                  {"runs", runs_json(db, side.device_id, family, side.run_id)}};
    side_list.push_back(std::move(entry));
  }
  const std::string a_name = side_list[0]["name"], b_name = side_list[1]["name"];
  data["title"] = "cutune: " + a_name + " vs " + b_name;
  data["sides"] = side_list;

  // Each side's best config as the other side measured it (the best of its results for it).
  const auto measured_by = [&](const Side& side, std::int64_t problem, const std::string& config) {
    return optional_number(db::fastest_time_of_config(db, {side.device_id, side.run_id, {}}, problem, config));
  };
  const auto best_json = [](const SideBest& b) {
    return json{{"results", b.results},
                {"ok", b.ok},
                {"ms", b.ms ? json(*b.ms) : json(nullptr)},
                {"config", b.config},
                {"values", b.config_values},
                {"gbs", b.gbs},
                {"gflops", b.gflops},
                {"copy", b.copy}};
  };
  std::map<std::string, json> families;
  json only[2] = {json::array(), json::array()};
  for (int k = 0; k < 2; ++k)
    for (const auto& [id, b] : measured[k])
      if (!measured[1 - k].count(id)) only[k].push_back({{"family", b.family}, {"key", b.key}, {"results", b.results}});
  std::int64_t shared = 0;
  for (const auto& [id, a] : measured[0]) {
    const auto it = measured[1].find(id);
    if (it == measured[1].end()) continue;
    const SideBest& b = it->second;
    ++shared;
    json row = {{"key", a.key}, {"size", a.size}, {"a", best_json(a)}, {"b", best_json(b)}};
    row["a_config_on_b"] = a.ms ? measured_by(c.b, id, a.config) : json(nullptr);
    row["b_config_on_a"] = b.ms ? measured_by(c.a, id, b.config) : json(nullptr);
    families.try_emplace(a.family, json::array()).first->second.push_back(std::move(row));
  }
  if (shared == 0) {
    std::set<std::string> names[2];
    for (int k = 0; k < 2; ++k)
      for (const auto& [id, b] : measured[k]) names[k].insert(b.family);
    const auto list = [](const std::set<std::string>& set) {
      std::string text;
      for (const auto& n : set) text += (text.empty() ? "" : ", ") + n;
      return text.empty() ? std::string("no results") : text;
    };
    throw BadSelection(fmt::format("{} and {} share no problem{} ({}: {}; {}: {})", a_name, b_name,
                                   c.family ? " of " + *c.family : std::string(), a_name, list(names[0]), b_name,
                                   list(names[1])));
  }
  json family_list = json::array();
  for (auto& [family, problems] : families) {
    std::vector<json> rows(problems.begin(), problems.end());
    std::stable_sort(rows.begin(), rows.end(), [](const json& x, const json& y) {
      return x["size"].get<std::int64_t>() < y["size"].get<std::int64_t>();
    });
    family_list.push_back({{"name", family}, {"problems", rows}});
  }
  data["families"] = family_list;
  data["only_a"] = only[0];
  data["only_b"] = only[1];
  return data;
}

std::string write_comparison(sql::Database& db, const Comparison& comparison, const std::string& folder) {
  const json data = collect_comparison(db, comparison);
  const auto part = [&](const Side& side, const json& device) {
    return side.run_id ? fmt::format("run-{}", *side.run_id)
                       : device_slug(device["name"].get<std::string>(), device["uuid"].get<std::string>());
  };
  std::string name = "compare-" + part(comparison.a, data["sides"][0]["device"]) + "-vs-" +
                     part(comparison.b, data["sides"][1]["device"]);
  if (comparison.family) name += "-" + slug(*comparison.family);
  return write_page(data, folder, name + ".html");
}

}  // namespace cutune::report
