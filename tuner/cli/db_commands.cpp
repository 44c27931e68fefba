#include "db_commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <vector>

#include "catalog.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "integer_options.hpp"
#include "interchange.hpp"
#include "json_output.hpp"
#include "lookup.hpp"
#include "run_lease.hpp"
#include "session.hpp"

namespace cutune {
namespace {

using Json = nlohmann::ordered_json;

// The read-only commands need a database that exists, and never change it.
db::Store existing_store(const std::string& path) {
  if (!std::filesystem::exists(path)) throw no_database_error(path);
  return db::Store(path, db::Store::Access::read);
}

db::Selection selection_of(const DbArgs& args) { return {args.family, args.device, args.problem}; }

void print_import(const db::ImportSummary& s, const std::string& from, const std::string& into) {
  std::cout << fmt::format("imported {} results ({} devices, {} problems, {} runs, {} cubins) from {} into {}\n",
                           s.results, s.devices, s.problems, s.runs, s.cubins, from, into);
}

// Runs an import or merge into the database at `path` with a progress line on stderr
// ("[import-kt cache.json.gz] 4096/11130 rows  ETA 1s"), then prints its summary: stdout holds that
// one line only. The progress line is ended before an error is shown.
int run_import(const DbArgs& args, const std::string& path, const std::string& command,
               const std::function<db::ImportSummary(db::Store&, const db::ImportProgress&)>& import) {
  db::Store store(path);
  // Started at the first row written: reading and checking the whole file comes first, and would
  // make the first rows' rate (and so the ETA) look many times slower than it is.
  std::optional<ProgressLine> line;
  const std::string what = command + " " + std::filesystem::path(args.file).filename().string();
  const auto finish = [&] {
    if (line) line->finish();
  };
  db::ImportSummary summary;
  try {
    summary = import(store, [&](std::size_t done, std::size_t total) {
      if (!line) line.emplace(!args.quiet);
      line->count(what, done, total, "rows");
    });
  } catch (...) {
    finish();
    throw;
  }
  finish();
  print_import(summary, args.file, path);
  return 0;
}

int list_devices(db::Store& store, bool json) {
  const auto rows = db::device_summaries(store.database());
  if (json) {
    Json devices = Json::array();
    for (const auto& [d, results, ok] : rows)
      devices.push_back({{"uuid", d.uuid},
                         {"name", d.name},
                         {"cc_major", d.cc_major},
                         {"cc_minor", d.cc_minor},
                         {"sm_count", d.sm_count},
                         {"memory_bytes", d.memory_bytes},
                         {"l2_bytes", d.l2_bytes},
                         {"memory_clock_khz", d.memory_clock_khz},
                         {"bus_width_bits", d.bus_width_bits},
                         {"theoretical_bandwidth_gbs", d.theoretical_bandwidth_gbs},
                         {"copy_bandwidth_gbs", json_or_null(d.copy_bandwidth_gbs)},
                         {"driver_version", d.driver_version},
                         {"nvrtc_version", d.nvrtc_version},
                         {"results", results},
                         {"ok_results", ok}});
    print_json(std::cout, {{"devices", devices}});
    return 0;
  }
  if (rows.empty()) std::cout << "no devices stored\n";
  for (const auto& [d, results, ok] : rows)
    std::cout << fmt::format("{:<44} {:<28} cc {}.{} {:>4} SMs {:>7} copy GB/s {:>7} results ({} ok)\n", d.uuid, d.name,
                             d.cc_major, d.cc_minor, d.sm_count,
                             d.copy_bandwidth_gbs ? fmt::format("{:.0f}", *d.copy_bandwidth_gbs) : "-", results, ok);
  return 0;
}

// "n (extent), op (sum|min|max, default sum), type (float32|float64, default float32)"
std::string describe_fields(const ProblemSchema& schema) {
  std::string text;
  for (const ProblemField& f : schema.fields()) {
    std::string what = f.kind == FieldKind::extent ? "extent" : f.kind == FieldKind::integer ? "integer" : "";
    for (const auto& c : f.choices) what += (what.empty() ? "" : "|") + c;
    if (f.default_value) what += ", default " + text_of(*f.default_value);
    text += (text.empty() ? "" : ", ") + f.name + " (" + what + ")";
  }
  return text;
}

int list_families(db::Store& store, bool json) {
  const auto rows = db::family_summaries(store.database());
  if (json) {
    Json families = Json::array();
    for (const auto& f : rows) {
      const auto schema = store.problem_schema(f.family);
      families.push_back({{"name", f.family},
                          {"templates", f.templates},
                          {"problems", f.problems},
                          {"devices", f.devices},
                          {"results", f.results},
                          {"ok_results", f.ok_results},
                          {"cubins", f.cubins},
                          {"problem_fields", schema ? problem_fields_json(*schema) : Json()}});
    }
    print_json(std::cout, {{"families", families}});
    return 0;
  }
  if (rows.empty()) std::cout << "no families stored\n";
  for (const auto& f : rows) {
    std::cout << fmt::format("{:<22} {} templates, {} problems, {} devices, {} results ({} ok), {} cubins\n", f.family,
                             f.templates, f.problems, f.devices, f.results, f.ok_results, f.cubins);
    const auto schema = store.problem_schema(f.family);
    std::cout << fmt::format("{:<22} problem fields: {}\n", "",
                             schema ? describe_fields(*schema) : "none stored (matched on size and element type)");
  }
  return 0;
}

// A run's status as it is now. Listing never writes, so a run whose process died (kill -9) still
// says 'running' in the file until the next run records it as interrupted: it is abandoned.
std::string current_status(db::Store& store, const db::RunRecord& run) {
  return run.status == "running" && !db::run_is_live(store.database().path(), run.id) ? "abandoned" : run.status;
}

int list_runs(db::Store& store, const DbArgs& args) {
  const auto rows = db::run_summaries(store.database(), selection_of(args));
  if (args.json) {
    Json runs = Json::array();
    for (const auto& r : rows)
      runs.push_back({{"id", r.run.id},
                      {"family", r.run.family},
                      {"device_name", r.device_name},
                      {"strategy", r.run.strategy},
                      {"seed", r.run.seed},
                      {"budget", r.run.budget},
                      {"started_at", r.run.started_at},
                      {"finished_at", r.run.finished_at},
                      {"status", current_status(store, r.run)},
                      {"results", r.results},
                      {"command", r.run.command},
                      {"tool_version", r.run.tool_version}});
    print_json(std::cout, {{"runs", runs}});
    return 0;
  }
  if (rows.empty()) std::cout << "no runs stored\n";
  for (const auto& r : rows)
    std::cout << fmt::format("run {:<5} {:<12} {:<28} {:<20} {} {:<11} {:>6} results  {}\n", r.run.id, r.run.family,
                             r.device_name, r.run.strategy, r.run.started_at, current_status(store, r.run), r.results,
                             r.run.command);
  return 0;
}

// The objective --objective and --within name: nullopt for time (the fastest); for energy, the
// window as a fraction. UsageError for anything else, before the database is opened.
std::optional<double> energy_window(const DbArgs& args) {
  if (args.objective != "time" && args.objective != "energy")
    throw UsageError("--objective must be time or energy (got '" + args.objective + "')");
  if (args.objective == "time") {
    if (!args.within.empty()) throw UsageError("--within needs --objective energy");
    return std::nullopt;
  }
  if (args.within.empty()) return 0.05;
  std::string text = args.within;
  if (text.back() == '%') text.pop_back();
  char* end = nullptr;
  const double percent = text.empty() ? -1 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(percent) || percent < 0)
    throw UsageError("--within must be a percentage of at least 0, e.g. 5 or 5% (got '" + args.within + "')");
  return percent / 100;
}

std::string optional_number(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : "-";
}

// The energy table: per device, each problem's chosen config with its time, energy and power, and
// how much slower than the fastest it is; "fastest" where no energy was there to compare.
void print_energy_table(std::ostream& out, const std::vector<db::EnergyBestRow>& rows, double within) {
  if (rows.empty()) {
    out << "no successful results stored\n";
    return;
  }
  out << fmt::format("the least energy per run within {:g}% of the fastest time\n", within * 100);
  std::string device;
  for (const auto& row : rows) {
    const db::BestRow& r = row.chosen;
    if (r.device_name + r.device_uuid != device) {
      device = r.device_name + r.device_uuid;
      out << fmt::format("\n{} ({})\n", r.device_name, r.device_uuid);
      out << fmt::format("  {:<8} {:<40} {:>11} {:>9} {:>11} {:>9}  {}\n", "family", "problem", "time (ms)",
                         "vs fastest", "energy (J)", "power (W)", "config");
    }
    const std::string versus =
        row.energy_compared ? fmt::format("+{:.1f}%", 100 * (r.time_ms / row.fastest_ms - 1)) : "no energy";
    out << fmt::format("  {:<8} {:<40} {:>11.4f} {:>10} {:>11} {:>9}  {}\n", r.family, r.problem_key, r.time_ms, versus,
                       optional_number(row.energy_j, "{:.4g}"), optional_number(row.power_w, "{:.1f}"), r.config);
  }
}

Json best_row_json(const db::BestRow& r) {
  return {{"device_uuid", r.device_uuid},
          {"device_name", r.device_name},
          {"family", r.family},
          {"problem_key", r.problem_key},
          {"config", r.config},
          {"time_ms", r.time_ms},
          {"gbs", json_or_null(r.gbs)},
          {"gflops", json_or_null(r.gflops)},
          {"copy_fraction", json_or_null(r.copy_fraction)},
          {"verified", r.verified}};
}

// The best rows as JSON: the fastest's keys, and for the energy objective the chosen result's
// energy and power (null where unmeasured), whether energies were compared, and the fastest.
Json best_json(const std::vector<db::BestRow>& fastest, const std::vector<db::EnergyBestRow>& frugal,
               std::optional<double> within) {
  Json rows = Json::array();
  for (const auto& r : fastest) rows.push_back(best_row_json(r));
  for (const auto& r : frugal) {
    Json row = best_row_json(r.chosen);
    row["energy_j"] = json_or_null(r.energy_j);
    row["power_w"] = json_or_null(r.power_w);
    row["energy_compared"] = r.energy_compared;
    row["fastest_ms"] = r.fastest_ms;
    row["fastest_config"] = r.fastest_config;
    rows.push_back(row);
  }
  return {{"objective", within ? "energy" : "time"}, {"within", json_or_null(within)}, {"best", rows}};
}

// "9.0" → {9, 0}
std::pair<int, int> compute_capability(const std::string& text) {
  int major = 0, minor = 0;
  char dot = 0;
  if (std::sscanf(text.c_str(), "%d%c%d", &major, &dot, &minor) != 3 || dot != '.' || major <= 0 || minor < 0)
    throw UsageError("--cc must look like 9.0 (got '" + text + "')");
  return {major, minor};
}

std::string dim3_text(const std::array<unsigned, 3>& d) { return fmt::format("({},{},{})", d[0], d[1], d[2]); }

Json step_json(const lookup::Step& step) {
  if (const auto* l = std::get_if<lookup::Launch>(&step))
    return {{"kind", "launch"},
            {"kernel", l->kernel},
            {"grid", l->grid},
            {"block", l->block},
            {"dynamic_shared_bytes", l->dynamic_shared_bytes},
            {"fill_device", l->fill_device},
            {"programmatic", l->programmatic}};
  const auto& m = std::get<lookup::Memset>(step);
  return {{"kind", "memset"}, {"buffer", m.buffer},           {"word", m.word},
          {"bytes", m.bytes}, {"byte_offset", m.byte_offset}, {"stream_write", m.stream_write}};
}

// What `db lookup` prints, as one document; "cubin" is null unless --arch asked for one.
Json lookup_json(const lookup::Match& m, std::optional<double> within, const std::optional<lookup::Cubin>& cubin) {
  Json parameters = Json::array(), steps = Json::array();
  for (const auto& p : m.parameters)
    parameters.push_back({{"name", p.name}, {"value", p.value}, {"integer", json_or_null(p.integer)}});
  for (const auto& step : m.steps) steps.push_back(step_json(step));
  Json out{{"level", static_cast<int>(m.level)},
           {"level_name", lookup::to_string(m.level)},
           {"basis", m.basis},
           {"config", m.config},
           {"parameters", parameters},
           {"objective", within ? "energy" : "time"},
           {"within", json_or_null(within)},
           {"chosen_by", lookup::to_string(m.chosen_by)},
           {"objective_note", m.objective_note},
           {"fastest_time_ms", json_or_null(m.fastest_time_ms)},
           {"match_key", m.match_key},
           {"result_id", m.result_id},
           {"verified", m.verified},
           {"matched_problem", m.matched_problem},
           {"matched_size", m.matched_size},
           {"size_distance", finite_or_null(m.size_distance)},
           {"device_uuid", m.device_uuid},
           {"device_name", m.device_name},
           {"time_ms", json_or_null(m.time_ms)},
           {"energy_j", json_or_null(m.energy_j)},
           {"power_w", json_or_null(m.power_w)},
           {"steps", steps},
           {"cubin", nullptr}};
  if (cubin)
    out["cubin"] = {{"arch", cubin->arch},
                    {"bytes", cubin->image.size()},
                    {"exact_arch", cubin->exact_arch},
                    {"reason", cubin->reason}};
  return out;
}

void print_lookup(const lookup::Match& m, std::optional<double> within, const std::optional<lookup::Cubin>& cubin) {
  std::cout << fmt::format("level      {} ({}): {}\n", static_cast<int>(m.level), lookup::to_string(m.level), m.basis);
  std::cout << fmt::format("config     {}\n", m.config);
  if (within)
    std::cout << (m.chosen_by == lookup::Objective::Kind::lowest_energy
                      ? fmt::format("objective  the least energy within {:g}% of the fastest ({:.4f} ms)\n",
                                    *within * 100, *m.fastest_time_ms)
                      : fmt::format("objective  fastest: {}\n", m.objective_note));
  std::cout << fmt::format("matching   {}\n", m.match_key.empty() ? "(size only)" : m.match_key);
  if (m.result_id && !m.verified)
    std::cout << "verified   no: the family has no reference, so this result's outputs were never checked\n";
  if (m.result_id)
    std::cout << fmt::format("measured   {} on {} ({}), {:.4f} ms; size distance {:.3f}\n", m.matched_problem,
                             m.device_name, m.device_uuid, *m.time_ms, m.size_distance);
  if (m.energy_j)
    std::cout << fmt::format("energy     {:.4g} J per run, {} W\n", *m.energy_j, optional_number(m.power_w, "{:.1f}"));
  for (const auto& step : m.steps) {
    if (const auto* l = std::get_if<lookup::Launch>(&step))
      std::cout << fmt::format("launch     {} grid {} block {} shared {} B{}{}\n", l->kernel, dim3_text(l->grid),
                               dim3_text(l->block), l->dynamic_shared_bytes,
                               l->fill_device ? " (fills the device: blocks per SM x SMs)" : "",
                               l->programmatic ? " (programmatic dependent launch)" : "");
    else if (const auto* memset = std::get_if<lookup::Memset>(&step))
      std::cout << fmt::format("memset     {} bytes {}..{} to word 0x{:08x}{}\n", memset->buffer, memset->byte_offset,
                               memset->byte_offset + memset->bytes, memset->word,
                               memset->stream_write ? " (as stream writes)" : "");
  }
  if (cubin)
    std::cout << (*cubin ? fmt::format("cubin      {} bytes for {}{}\n", cubin->image.size(), cubin->arch,
                                       cubin->exact_arch ? "" : " (binary compatible)")
                         : fmt::format("cubin      none: {}\n", cubin->reason));
}

int lookup_config(const std::string& path, const DbArgs& args) {
  if (args.family.empty()) throw UsageError("db lookup needs --family");
  if (args.n && *args.n <= 0) throw UsageError("db lookup needs --n N with N > 0");
  if (!args.n && args.problem.empty())
    throw UsageError("db lookup needs --n N, or the problem's extents in --problem (e.g. m=1024,n=1024,k=1024)");
  const std::optional<double> within = energy_window(args);
  if (!std::filesystem::exists(path)) throw UsageError("no database at '" + path + "'");
  const auto [cc_major, cc_minor] = args.cc.empty() ? std::pair{0, 0} : compute_capability(args.cc);
  std::vector<lookup::Field> fields;
  if (!args.problem.empty())
    for (NamedValue& f : parse_named_values(args.problem)) fields.push_back({std::move(f.name), std::move(f.value)});
  const lookup::Query query{args.family,
                            {args.device_uuid, args.device_name, cc_major, cc_minor},
                            {args.n.value_or(0), args.type, std::move(fields)}};
  const lookup::Objective objective = within ? lookup::Objective::lowest_energy(*within) : lookup::Objective::fastest();
  lookup::Database results(path);
  const auto m = results.find(query, objective);
  std::optional<lookup::Cubin> cubin;
  if (!args.arch.empty()) cubin = results.cubin(query, args.arch, objective);
  if (args.json)
    print_json(std::cout, lookup_json(*m, within, cubin));
  else
    print_lookup(*m, within, cubin);
  return 0;
}

// One `tune db` subcommand: its name, help and examples, its options and what it runs on the
// database path. The one table that builds the subcommands and dispatches to them.
struct DbCommand {
  const char* name;
  const char* summary;
  const char* examples;
  void (*define)(CLI::App& sub, DbArgs& args);
  int (*run)(const std::string& database, const DbArgs& args);
};

void file_argument(CLI::App& sub, DbArgs& args, const char* help) {
  sub.add_option("FILE", args.file, help)->required();
}
void family_option(CLI::App& sub, DbArgs& args, const char* help = "kernel family") {
  sub.add_option("--family,-k", args.family, help);
}
void device_option(CLI::App& sub, DbArgs& args) {
  sub.add_option("--device,-d", args.device, "a device's uuid or name");
}
void problem_option(CLI::App& sub, DbArgs& args) {
  sub.add_option("--problem", args.problem, "a problem key, e.g. n=1048576,type=int32");
}
void objective_options(CLI::App& sub, DbArgs& args) {
  sub.add_option("--objective", args.objective,
                 "time: the fastest config (default); energy: the least energy per run within --within of the fastest");
  sub.add_option("--within", args.within,
                 "with --objective energy: how much slower than the fastest, e.g. 5% (default)");
}
void json_option(CLI::App& sub, DbArgs& args) { sub.add_flag("--json", args.json, json_option_help); }
void quiet_option(CLI::App& sub, DbArgs& args) { sub.add_flag("--quiet,-q", args.quiet, "no progress line"); }

// Read-only commands open an existing database; imports and merges create it.
const std::vector<DbCommand>& db_commands() {
  static const std::vector<DbCommand> all{
      {"devices", "the stored devices, with their result counts",
       "tune db devices\n  tune db devices --json --db results.db",
       [](CLI::App& sub, DbArgs& args) { json_option(sub, args); },
       [](const std::string& path, const DbArgs& args) {
         auto store = existing_store(path);
         return list_devices(store, args.json);
       }},
      {"families", "the stored kernel families, with their counts and problem fields",
       "tune db families\n  tune db families --json", [](CLI::App& sub, DbArgs& args) { json_option(sub, args); },
       [](const std::string& path, const DbArgs& args) {
         auto store = existing_store(path);
         return list_families(store, args.json);
       }},
      {"runs", "the tuning runs and imports, newest first",
       "tune db runs --family scan\n  tune db runs --device \"NVIDIA H100 80GB HBM3\" --json",
       [](CLI::App& sub, DbArgs& args) {
         family_option(sub, args);
         device_option(sub, args);
         json_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         auto store = existing_store(path);
         return list_runs(store, args);
       }},
      {"best", "the best stored config per device and problem",
       "tune db best --family scan --device GPU-5f0e2c3a\n  tune db best --objective energy --within 5% --json",
       [](CLI::App& sub, DbArgs& args) {
         family_option(sub, args);
         device_option(sub, args);
         objective_options(sub, args);
         json_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         const std::optional<double> within = energy_window(args);  // bad options before a missing database
         auto store = existing_store(path);
         db::check_selection(store.database(), selection_of(args));
         print_best(std::cout, store, args.family, args.device, within, args.json);
         return 0;
       }},
      {"lookup", "what an application linking cutune::lookup would get",
       "tune db lookup --family scan --n 3000000 --device-name \"NVIDIA H100 80GB HBM3\" --cc 9.0 --arch sm_90\n"
       "  tune db lookup --family reduce --n 1048576 --problem op=min --json",
       [](CLI::App& sub, DbArgs& args) {
         family_option(sub, args);
         sub.add_option("--n", args.n, "problem size (elements; the product of the family's extents)")
             ->check(int64_text());
         sub.add_option("--type", args.type, "element type (default: the family's)");
         sub.add_option("--problem", args.problem,
                        "the family's other problem fields, e.g. op=min or window=60,op=max (see tune db families)");
         sub.add_option("--device-uuid", args.device_uuid, "the device's uuid");
         sub.add_option("--device-name", args.device_name, "the device's name");
         sub.add_option("--cc", args.cc, "compute capability, e.g. 9.0");
         sub.add_option("--arch", args.arch, "also look for a cubin for this architecture, e.g. sm_90");
         objective_options(sub, args);
         json_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) { return lookup_config(path, args); }},
      {"export", "write the database, or part of it, as cutune JSON (.json or .json.gz)",
       "tune db export all.json.gz\n  tune db export scan.json --family scan --device GPU-5f0e2c3a",
       [](CLI::App& sub, DbArgs& args) {
         file_argument(sub, args, "the file to write");
         family_option(sub, args);
         device_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         auto store = existing_store(path);
         db::export_json(store, selection_of(args), args.file);
         std::cout << fmt::format("exported {} to {}\n", path, args.file);
         return 0;
       }},
      {"export-kt", "write one device's results for one problem as a Kernel Tuner cache file",
       "tune db export-kt scan.json.gz --family scan --device GPU-5f0e2c3a --problem n=1048576,type=int32",
       [](CLI::App& sub, DbArgs& args) {
         file_argument(sub, args, "the file to write");
         family_option(sub, args);
         device_option(sub, args);
         problem_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         auto store = existing_store(path);
         db::export_kernel_tuner(store, selection_of(args), args.file);
         std::cout << fmt::format("exported a Kernel Tuner cache file to {}\n", args.file);
         return 0;
       }},
      {"export-t4", "write one device's results for one problem as a T4 results file",
       "tune db export-t4 scan-t4.json --family scan --device GPU-5f0e2c3a --problem n=1048576,type=int32",
       [](CLI::App& sub, DbArgs& args) {
         file_argument(sub, args, "the file to write");
         family_option(sub, args);
         device_option(sub, args);
         problem_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         auto store = existing_store(path);
         db::export_t4(store, selection_of(args), args.file);
         std::cout << fmt::format("exported T4 results to {}\n", args.file);
         return 0;
       }},
      {"import", "read a cutune JSON export into the database", "tune db import all.json.gz --db merged.db",
       [](CLI::App& sub, DbArgs& args) {
         file_argument(sub, args, "the file to read");
         quiet_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         return run_import(args, path, "import", [&](db::Store& store, const db::ImportProgress& progress) {
           return db::import_json(store, args.file, progress);
         });
       }},
      {"merge", "read another cutune database into this one (duplicates collapse, the newer wins)",
       "tune db merge r1.db --db all.db",
       [](CLI::App& sub, DbArgs& args) {
         file_argument(sub, args, "the other database");
         quiet_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         return run_import(args, path, "merge", [&](db::Store& store, const db::ImportProgress& progress) {
           return db::merge_database(store, args.file, progress);
         });
       }},
      {"import-kt", "read a Kernel Tuner cache file (.json or .json.gz)",
       "tune db import-kt pnpoly_RTX_3090.json.gz\n  tune db import-kt cache.json --family pnpoly",
       [](CLI::App& sub, DbArgs& args) {
         file_argument(sub, args, "the file to read");
         family_option(sub, args, "store under this family instead of the file's kernel_name");
         quiet_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         return run_import(args, path, "import-kt", [&](db::Store& store, const db::ImportProgress& progress) {
           return db::import_kernel_tuner(store, args.file, {args.family, "", 0, args.command_line}, progress);
         });
       }},
      {"import-t4", "read a T4 results file",
       "tune db import-t4 results.json --family stencil --device-name \"NVIDIA A100-SXM4-40GB\" --problem-size 4096",
       [](CLI::App& sub, DbArgs& args) {
         file_argument(sub, args, "the file to read");
         family_option(sub, args, "the kernel family (needed unless the file came from cutune)");
         sub.add_option("--device-name", args.device_name, "the device (needed unless the file came from cutune)");
         sub.add_option("--problem-size", args.problem_size, "the problem size, when the file does not say")
             ->check(int64_text());
         quiet_option(sub, args);
       },
       [](const std::string& path, const DbArgs& args) {
         if (args.problem_size && *args.problem_size <= 0)
           throw UsageError("--problem-size must be a positive number of elements (got " +
                            std::to_string(*args.problem_size) + ")");
         const db::ImportTarget target{args.family, args.device_name, args.problem_size.value_or(0), args.command_line};
         return run_import(args, path, "import-t4", [&](db::Store& store, const db::ImportProgress& progress) {
           return db::import_t4(store, args.file, target, progress);
         });
       }},
  };
  return all;
}

}  // namespace

void add_db_commands(CLI::App& db, DbArgs& args) {
  for (const DbCommand& command : db_commands()) {
    CLI::App* sub = db.add_subcommand(command.name, command.summary);
    command.define(*sub, args);
    sub->add_option("--db", args.database, database_option_help);
    sub->footer(std::string("Examples:\n  ") + command.examples);
  }
}

void print_best(std::ostream& out, db::Store& store, const std::string& family, const std::string& device,
                std::optional<double> within, bool json) {
  const auto other_device = [&](const db::BestRow& r) {
    return !device.empty() && r.device_uuid != device && r.device_name != device;
  };
  std::vector<db::BestRow> fastest;
  std::vector<db::EnergyBestRow> frugal;
  if (within) {
    frugal = store.lowest_energy_best(*within, family);
    std::erase_if(frugal, [&](const db::EnergyBestRow& r) { return other_device(r.chosen); });
  } else {
    fastest = store.best(family);
    std::erase_if(fastest, other_device);
  }
  if (json)
    print_json(out, best_json(fastest, frugal, within));
  else if (within)
    print_energy_table(out, frugal, *within);
  else
    print_best_table(out, fastest);
}

nlohmann::ordered_json problem_fields_json(const ProblemSchema& schema) {
  Json fields = Json::array();
  for (const ProblemField& f : schema.fields()) {
    Json default_value;
    if (f.default_value) default_value = std::visit([](const auto& v) { return Json(v); }, *f.default_value);
    fields.push_back({{"name", f.name},
                      {"kind", to_string(f.kind)},
                      {"choices", f.choices},
                      {"default", default_value},
                      {"min", json_or_null(f.min)},
                      {"max", json_or_null(f.max)},
                      {"help", f.help}});
  }
  return fields;
}

UsageError no_database_error(const std::string& path) {
  // The hint only where the default was looked at: a path given with --db needs none.
  return UsageError("no database at '" + path + "'" +
                    (path == db::default_database_path() ? " (run a tuning first, or pass --db)" : ""));
}

int run_db_command(const CLI::App& db, const DbArgs& args) {
  const auto chosen = db.get_subcommands();
  if (chosen.empty()) {
    std::string names;
    for (const DbCommand& command : db_commands()) names += std::string(names.empty() ? "" : ", ") + command.name;
    throw UsageError("tune db needs a subcommand: " + names + " (tune db --help)");
  }
  const std::string path = args.database.value_or(db::default_database_path());
  const std::string name = chosen.front()->get_name();
  const auto command =
      std::find_if(db_commands().begin(), db_commands().end(), [&](const DbCommand& c) { return c.name == name; });
  try {
    return command->run(path, args);
  } catch (const db::InterchangeError& e) {
    throw UsageError(e.what());
  } catch (const lookup::Error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace cutune
