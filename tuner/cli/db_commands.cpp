#include "db_commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include "catalog.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "integer_options.hpp"
#include "run_lease.hpp"
#include "interchange.hpp"
#include "lookup.hpp"
#include "session.hpp"

namespace cutune {
namespace {

// The read-only commands need a database that exists, and never change it.
db::Store existing_store(const std::string& path) {
  if (!std::filesystem::exists(path)) throw no_database_error(path);
  return db::Store(path, db::Store::Access::read);
}

db::Selection selection_of(const DbArgs& args) { return {args.family, args.device, args.problem}; }

void print_import(const db::ImportSummary& s, const std::string& from, const std::string& into) {
  std::cout << fmt::format("imported {} results ({} devices, {} problems, {} runs, {} cubins) from {} into {}\n", s.results,
                           s.devices, s.problems, s.runs, s.cubins, from, into);
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
      if (!line) line.emplace(args.progress);
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

int list_devices(db::Store& store) {
  const auto rows = db::device_summaries(store.database());
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

int list_families(db::Store& store) {
  const auto rows = db::family_summaries(store.database());
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

int list_runs(db::Store& store, const DbArgs& args) {
  const auto rows = db::run_summaries(store.database(), selection_of(args));
  if (rows.empty()) std::cout << "no runs stored\n";
  for (const auto& r : rows) {
    // Listing never writes, so a run whose process died (kill -9) still says 'running' in the file
    // until the next run records it as interrupted; show what it is now.
    const bool abandoned = r.run.status == "running" && !db::run_is_live(store.database().path(), r.run.id);
    std::cout << fmt::format("run {:<5} {:<12} {:<28} {:<20} {} {:<11} {:>6} results  {}\n", r.run.id, r.run.family,
                             r.device_name, r.run.strategy, r.run.started_at, abandoned ? "abandoned" : r.run.status,
                             r.results, r.run.command);
  }
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
      out << fmt::format("  {:<8} {:<40} {:>11} {:>9} {:>11} {:>9}  {}\n", "family", "problem", "time (ms)", "vs fastest",
                         "energy (J)", "power (W)", "config");
    }
    const std::string versus =
        row.energy_compared ? fmt::format("+{:.1f}%", 100 * (r.time_ms / row.fastest_ms - 1)) : "no energy";
    out << fmt::format("  {:<8} {:<40} {:>11.4f} {:>10} {:>11} {:>9}  {}\n", r.family, r.problem_key, r.time_ms, versus,
                       optional_number(row.energy_j, "{:.4g}"), optional_number(row.power_w, "{:.1f}"), r.config);
  }
}

int print_best(db::Store& store, const DbArgs& args, std::optional<double> within) {
  db::check_selection(store.database(), selection_of(args));
  const auto other_device = [&](const db::BestRow& r) {
    return !args.device.empty() && r.device_uuid != args.device && r.device_name != args.device;
  };
  if (within) {
    auto rows = store.lowest_energy_best(*within, args.family);
    std::erase_if(rows, [&](const db::EnergyBestRow& r) { return other_device(r.chosen); });
    print_energy_table(std::cout, rows, *within);
    return 0;
  }
  auto rows = store.best(args.family);
  std::erase_if(rows, other_device);
  print_best_table(std::cout, rows);
  return 0;
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
  const lookup::Query query{args.family, {args.device_uuid, args.device_name, cc_major, cc_minor},
                            {args.n.value_or(0), args.type, std::move(fields)}};
  const lookup::Objective objective = within ? lookup::Objective::lowest_energy(*within) : lookup::Objective::fastest();
  lookup::Database results(path);
  const auto m = results.find(query, objective);
  std::cout << fmt::format("level      {} ({}): {}\n", static_cast<int>(m->level), lookup::to_string(m->level), m->basis);
  std::cout << fmt::format("config     {}\n", m->config);
  if (within)
    std::cout << (m->chosen_by == lookup::Objective::Kind::lowest_energy
                      ? fmt::format("objective  the least energy within {:g}% of the fastest ({:.4f} ms)\n", *within * 100,
                                    *m->fastest_time_ms)
                      : fmt::format("objective  fastest: {}\n", m->objective_note));
  std::cout << fmt::format("matching   {}\n", m->match_key.empty() ? "(size only)" : m->match_key);
  if (m->result_id && !m->verified)
    std::cout << "verified   no: the family has no reference, so this result's outputs were never checked\n";
  if (m->result_id)
    std::cout << fmt::format("measured   {} on {} ({}), {:.4f} ms; size distance {:.3f}\n", m->matched_problem,
                             m->device_name, m->device_uuid, *m->time_ms, m->size_distance);
  if (m->energy_j)
    std::cout << fmt::format("energy     {:.4g} J per run, {} W\n", *m->energy_j, optional_number(m->power_w, "{:.1f}"));
  for (const auto& step : m->steps) {
    if (const auto* l = std::get_if<lookup::Launch>(&step))
      std::cout << fmt::format("launch     {} grid {} block {} shared {} B\n", l->kernel, dim3_text(l->grid),
                               dim3_text(l->block), l->dynamic_shared_bytes);
    else if (const auto* memset = std::get_if<lookup::Memset>(&step))
      std::cout << fmt::format("memset     {} bytes {}..{} to word 0x{:08x}{}\n", memset->buffer, memset->byte_offset,
                               memset->byte_offset + memset->bytes, memset->word,
                               memset->stream_write ? " (as stream writes)" : "");
  }
  if (!args.arch.empty()) {
    const auto cubin = results.cubin(query, args.arch, objective);
    std::cout << (cubin ? fmt::format("cubin      {} bytes for {}{}\n", cubin.image.size(), cubin.arch,
                                      cubin.exact_arch ? "" : " (binary compatible)")
                        : fmt::format("cubin      none: {}\n", cubin.reason));
  }
  return 0;
}

using Action = std::function<int(const std::string& database, const DbArgs& args, const std::string& command_line)>;

// Each subcommand with what it runs. Read-only ones open an existing database; imports create it.
const std::map<std::string, Action>& actions() {
  static const std::map<std::string, Action> all{
      {"devices", [](const std::string& path, const DbArgs&, const std::string&) {
         auto store = existing_store(path);
         return list_devices(store);
       }},
      {"families", [](const std::string& path, const DbArgs&, const std::string&) {
         auto store = existing_store(path);
         return list_families(store);
       }},
      {"runs", [](const std::string& path, const DbArgs& args, const std::string&) {
         auto store = existing_store(path);
         return list_runs(store, args);
       }},
      {"best", [](const std::string& path, const DbArgs& args, const std::string&) {
         const std::optional<double> within = energy_window(args);  // bad options before a missing database
         auto store = existing_store(path);
         return print_best(store, args, within);
       }},
      {"lookup", [](const std::string& path, const DbArgs& args, const std::string&) { return lookup_config(path, args); }},
      {"export", [](const std::string& path, const DbArgs& args, const std::string&) {
         auto store = existing_store(path);
         db::export_json(store, selection_of(args), args.file);
         std::cout << fmt::format("exported {} to {}\n", path, args.file);
         return 0;
       }},
      {"export-kt", [](const std::string& path, const DbArgs& args, const std::string&) {
         auto store = existing_store(path);
         db::export_kernel_tuner(store, selection_of(args), args.file);
         std::cout << fmt::format("exported a Kernel Tuner cache file to {}\n", args.file);
         return 0;
       }},
      {"export-t4", [](const std::string& path, const DbArgs& args, const std::string&) {
         auto store = existing_store(path);
         db::export_t4(store, selection_of(args), args.file);
         std::cout << fmt::format("exported T4 results to {}\n", args.file);
         return 0;
       }},
      {"import", [](const std::string& path, const DbArgs& args, const std::string&) {
         return run_import(args, path, "import", [&](db::Store& store, const db::ImportProgress& progress) {
           return db::import_json(store, args.file, progress);
         });
       }},
      {"merge", [](const std::string& path, const DbArgs& args, const std::string&) {
         return run_import(args, path, "merge", [&](db::Store& store, const db::ImportProgress& progress) {
           return db::merge_database(store, args.file, progress);
         });
       }},
      {"import-kt", [](const std::string& path, const DbArgs& args, const std::string& command_line) {
         return run_import(args, path, "import-kt", [&](db::Store& store, const db::ImportProgress& progress) {
           return db::import_kernel_tuner(store, args.file, {args.family, "", 0, command_line}, progress);
         });
       }},
      {"import-t4", [](const std::string& path, const DbArgs& args, const std::string& command_line) {
         if (args.problem_size && *args.problem_size <= 0)
           throw UsageError("--problem-size must be a positive number of elements (got " + std::to_string(*args.problem_size) + ")");
         const db::ImportTarget target{args.family, args.device_name, args.problem_size.value_or(0), command_line};
         return run_import(args, path, "import-t4", [&](db::Store& store, const db::ImportProgress& progress) {
           return db::import_t4(store, args.file, target, progress);
         });
       }},
  };
  return all;
}

}  // namespace

CLI::App* add_db_commands(CLI::App& app, DbArgs& args) {
  CLI::App* db = app.add_subcommand("db", "inspect the results database, look up configs, import, export and merge");
  db->require_subcommand(1);
  const auto command = [&](const char* name, const char* help) {
    CLI::App* sub = db->add_subcommand(name, help);
    sub->fallthrough();  // --db and the other top-level options may follow the subcommand
    return sub;
  };
  const auto file = [&](CLI::App* sub, const char* help) { sub->add_option("file", args.file, help)->required(); };
  const auto family = [&](CLI::App* sub) { sub->add_option("--family,-k", args.family, "kernel family"); };
  const auto device = [&](CLI::App* sub) { sub->add_option("--device,-d", args.device, "a device's uuid or name"); };
  const auto problem = [&](CLI::App* sub) { sub->add_option("--problem", args.problem, "a problem key, e.g. n=1048576,type=int32"); };
  db->fallthrough();

  command("devices", "the stored devices, with their result counts");
  command("families", "the stored kernel families, with their counts");
  CLI::App* runs = command("runs", "the tuning runs and imports, newest first");
  family(runs);
  device(runs);
  const auto objective = [&](CLI::App* sub) {
    sub->add_option("--objective", args.objective,
                    "time: the fastest config (default); energy: the least energy per run within --within of the fastest");
    sub->add_option("--within", args.within, "with --objective energy: how much slower than the fastest, e.g. 5% (default)");
  };
  CLI::App* best = command("best", "the best stored config per device and problem");
  family(best);
  device(best);
  objective(best);

  CLI::App* lookup = command("lookup", "what an application linking cutune::lookup would get");
  family(lookup);
  lookup->add_option("--n", args.n, "problem size (elements; the product of the family's extents)")
      ->check(int64_text());
  lookup->add_option("--type", args.type, "element type (default: the family's)");
  lookup->add_option("--problem", args.problem,
                     "the family's other problem fields, e.g. op=min or window=60,op=max (see tune db families)");
  lookup->add_option("--device-uuid", args.device_uuid, "the device's uuid");
  lookup->add_option("--device-name", args.device_name, "the device's name");
  lookup->add_option("--cc", args.cc, "compute capability, e.g. 9.0");
  lookup->add_option("--arch", args.arch, "also look for a cubin for this architecture, e.g. sm_90");
  objective(lookup);

  for (const auto& [name, help] : std::vector<std::pair<const char*, const char*>>{
           {"export", "write the database, or part of it, as cutune JSON (.json or .json.gz)"},
           {"export-kt", "write one device's results for one problem as a Kernel Tuner cache file"},
           {"export-t4", "write one device's results for one problem as a T4 results file"}}) {
    CLI::App* sub = command(name, help);
    file(sub, "the file to write");
    family(sub);
    device(sub);
    if (name != std::string("export")) problem(sub);
  }
  file(command("import", "read a cutune JSON export into the database"), "the file to read");
  file(command("merge", "read another cutune database into this one (duplicates collapse, the newer wins)"),
       "the other database");
  CLI::App* import_kt = command("import-kt", "read a Kernel Tuner cache file (.json or .json.gz)");
  file(import_kt, "the file to read");
  import_kt->add_option("--family,-k", args.family, "store under this family instead of the file's kernel_name");
  CLI::App* import_t4 = command("import-t4", "read a T4 results file");
  file(import_t4, "the file to read");
  import_t4->add_option("--family,-k", args.family, "the kernel family (needed unless the file came from cutune)");
  import_t4->add_option("--device-name", args.device_name, "the device (needed unless the file came from cutune)");
  import_t4->add_option("--problem-size", args.problem_size, "the problem size, when the file does not say")
      ->check(int64_text());
  return db;
}

UsageError no_database_error(const std::string& path) {
  // The hint only where the default was looked at: a path given with --db needs none.
  return UsageError("no database at '" + path + "'" +
                    (path == db::default_database_path() ? " (run a tuning first, or pass --db)" : ""));
}

int run_db_command(const CLI::App& db_command, const DbArgs& args, const std::optional<std::string>& database,
                   const std::string& command_line) {
  const std::string path = database.value_or(db::default_database_path());
  const std::string name = db_command.get_subcommands().at(0)->get_name();
  try {
    return actions().at(name)(path, args, command_line);
  } catch (const db::InterchangeError& e) {
    throw UsageError(e.what());
  } catch (const lookup::Error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace cutune
