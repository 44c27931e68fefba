#include "commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <limits>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "core/phase_trace.hpp"
#include "core/progress.hpp"
#include "db_commands.hpp"
#include "device.hpp"
#include "family.hpp"
#include "json_output.hpp"
#include "report.hpp"
#include "scale_out.hpp"
#include "simulator.hpp"
#include "store.hpp"
#include "spec_check.hpp"
#include "spec_family.hpp"
#include "strategy_bench.hpp"

namespace cutune {
namespace {

// The family a command works on: a built-in one (--kernel), or one read from a spec file
// (--kernel-file), which this object owns.
class ChosenFamily {
 public:
  ChosenFamily(const TuneArgs& args, const char* command) {
    if (args.kernel && args.kernel_file) throw UsageError("give --kernel or --kernel-file, not both");
    if (args.kernel_file) {
      spec_ = load_spec_family(*args.kernel_file);
      family_ = spec_.get();
    } else if (args.kernel) {
      family_ = &family_named(*args.kernel);
    } else {
      throw UsageError(std::string(command) + " needs --kernel NAME (see tune families) or --kernel-file SPEC");
    }
  }
  const Family& operator*() const { return *family_; }
  const Family* operator->() const { return family_; }
  // Set for a spec family, whose plans and kernel arguments are checked before anything runs.
  const SpecFamily* spec() const { return spec_.get(); }

 private:
  std::unique_ptr<SpecFamily> spec_;
  const Family* family_ = nullptr;
};

// --problem TEXT (each parsed by the family's schema), else the family's defaults for --type and --n.
std::vector<Problem> requested_problems(const Family& family, const TuneArgs& args) {
  for (std::int64_t n : args.sizes)
    if (n <= 0) throw UsageError("--n must be positive (got " + std::to_string(n) + ")");
  if (args.problems.empty()) return family.problems(ProblemRequest{args.type, args.sizes});
  if (!args.sizes.empty() || args.type)
    throw UsageError("--problem names whole problems: give it without --n and --type");
  std::vector<Problem> list;
  for (const std::string& text : args.problems) list.push_back(family.parse_problem(text));
  return list;
}

int default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

Budget requested_budget(const TuneArgs& args) {
  if (args.max_evals && *args.max_evals <= 0) throw UsageError("--max-evals must be positive");
  if (args.time_limit && *args.time_limit <= 0) throw UsageError("--time-limit must be positive");
  return {args.max_evals, args.time_limit};
}

StrategySpec requested_strategy(const TuneArgs& args) {
  StrategySpec spec{args.strategy.value_or(default_strategy_name()), {}};
  check_strategy_name(spec.name);
  for (const std::string& text : args.strategy_options) {
    const auto [name, value] = parse_strategy_option(text);
    if (!spec.options.emplace(name, value).second) throw UsageError("--strategy-option " + name + " is given twice");
  }
  check_strategy(spec);
  return spec;
}

bool is_sqlite_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char header[16] = {};
  return file.read(header, sizeof header) && std::string(header, sizeof header) == std::string("SQLite format 3\0", 16);
}

Landscape load_landscape(const TuneArgs& args) {
  const std::string& path = *args.simulate;
  if (!is_sqlite_file(path)) return read_kernel_tuner_cache(path);
  if (!args.kernel || args.problems.size() != 1 || !args.device_uuid)
    throw UsageError("simulating a database needs --kernel, one --problem and --device-uuid to pick its results");
  db::Store store(path, db::Store::Access::read);
  // The stored key of the problem the text names (fields in any order, defaults left out), where
  // the family's schema is stored; else the text as it is.
  std::string key = args.problems.front();
  if (const auto schema = store.problem_schema(*args.kernel)) key = schema->parse(key).key();
  const std::string name = *args.kernel + " " + key + " on " + *args.device_uuid;
  const auto results = store.problem_results(*args.device_uuid, *args.kernel, key);
  if (results.empty()) throw UsageError("no results in '" + path + "' for " + name);
  return landscape_from_results(name, results);
}

std::string database_path(const TuneArgs& args) { return args.db ? *args.db : db::default_database_path(); }

// Fails early, before the GPU is touched or anything is created, when the database could not
// be written: its nearest existing ancestor must be a writable folder (or it a writable file).
void check_database_writable(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path probe = fs::absolute(path, ec);
  if (fs::exists(probe, ec)) {
    if (fs::is_directory(probe, ec) || access(probe.c_str(), W_OK) != 0)
      throw UsageError("cannot write database '" + path + "': not a writable file");
    return;
  }
  for (probe = probe.parent_path(); !probe.empty() && !fs::exists(probe, ec); probe = probe.parent_path()) {
  }
  if (probe.empty() || !fs::is_directory(probe, ec) || access(probe.c_str(), W_OK | X_OK) != 0)
    throw UsageError("cannot write database '" + path + "': '" + probe.string() + "' is not a writable folder");
}

}  // namespace

int run_command(const TuneArgs& args) {
  if (args.json && !args.list && !args.best)
    throw UsageError(
        "--json goes with --list or --best here (and with the listings: tune families, tune space, "
        "tune strategies, tune db …)");
  if (args.list) return list_families(args);
  if (args.best) return print_best(args);
  if (args.covering_sample && !args.compile_only) throw UsageError("--covering-sample goes with --compile-only");
  if (args.compile_only) return compile_only(args);
  if (args.simulate) return simulate_landscape(args);
  if (args.strategy_bench) return strategies(args);
  if (!args.kernel && !args.kernel_file && !args.device)
    throw UsageError("nothing to do: give --kernel NAME --device N, or see tune --help");
  return tune(args);
}

namespace {

std::optional<Shard> requested_shard(const TuneArgs& args) {
  if (!args.shard) return std::nullopt;
  return parse_shard(*args.shard, [](const char* name) { return std::getenv(name); });
}

// Narrows `problems` to the shard's; false (after saying so) when none is left for it.
bool keep_shards_problems(const std::optional<Shard>& shard, std::vector<Problem>& problems) {
  if (!shard) return true;
  std::vector<Problem> kept;
  for (const std::size_t p : shard_problems(problems.size(), *shard)) kept.push_back(problems[p]);
  if (kept.empty()) {
    std::cout << fmt::format("shard {}/{}: no problem of the {} is this shard's; nothing to do\n", shard->index,
                             shard->count, problems.size());
    return false;
  }
  problems = std::move(kept);
  return true;
}

}  // namespace

int list_families(const TuneArgs& args) {
  if (!args.json) {
    for (const auto& f : families()) std::cout << fmt::format("{:<10} {}\n", f->name(), f->summary());
    return 0;
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& f : families())
    list.push_back({{"name", f->name()},
                    {"summary", f->summary()},
                    {"template", f->template_file()},
                    {"problem_fields", problem_fields_json(f->problem_schema())}});
  print_json(std::cout, {{"families", list}});
  return 0;
}

int print_best(const TuneArgs& args) {
  // A built-in family, and a device by ordinal: the GPU is asked for its uuid (exit 3 without a
  // driver, which scripts use to probe for one).
  std::string family;
  if (args.kernel) family = family_named(*args.kernel).name();
  std::string uuid;
  if (args.device) uuid = Device(*args.device).fingerprint().uuid;
  const std::string path = database_path(args);
  if (!std::filesystem::exists(path)) throw no_database_error(path);
  db::Store store(path, db::Store::Access::read);
  print_best(std::cout, store, family, uuid, std::nullopt, args.json);
  return 0;
}

int compile_only(const TuneArgs& args) {
  const ChosenFamily chosen(args, "tune compile");
  const Family& family = *chosen;
  const DeviceLimits limits = limits_for_arch(args.arch.value_or("sm_90"));
  check_nvrtc_supports(args.arch.value_or("sm_90"));
  auto problems = requested_problems(family, args);
  if (!keep_shards_problems(requested_shard(args), problems)) return 0;
  const Space space = tuning_space(family, limits, args.restrictions);
  if (chosen.spec()) check_spec_family(*chosen.spec(), space, problems, limits.arch());
  std::vector<Config> configs = space.enumerate();
  const std::size_t valid = configs.size();
  if (args.covering_sample) configs = covering_sample(space, std::move(configs), args.seed);
  const auto raw = static_cast<std::int64_t>(space.raw_size());

  // A private cache folder: every config is compiled afresh, yet in parallel worker processes.
  const auto folder = std::filesystem::temp_directory_path() / fmt::format("cutune-compile-only-{}", getpid());
  const CompileCache cache(folder.string());
  const std::string source = family.source();
  int failures = 0;
  // One compile per distinct set of problem definitions (element type, operator, …), not per size.
  std::set<std::vector<std::string>> compiled;
  for (const auto& problem : problems) {
    const auto definitions = family.problem_definitions(problem);
    if (!compiled.insert(definitions).second) continue;
    std::vector<CompileRequest> requests;
    for (const auto& config : configs)
      requests.push_back(compile_request(family, source, space, config, problem, limits.arch()));
    const auto started = std::chrono::steady_clock::now();
    ProgressLine progress(!args.quiet);
    const std::string what = fmt::format("{} {} {}", family.name(), limits.arch(), problem.dtype());
    const auto results =
        cache.compile_all(requests, args.jobs.value_or(default_jobs()),
                          [&](std::size_t done, std::size_t total) { progress.count(what, done, total, "compiled"); });
    progress.finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    int ok = 0, failed = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (results[i].ok) {
        ++ok;
        continue;
      }
      ++failed;
      std::cerr << fmt::format("FAILED {}:\n{}\n", space.key(configs[i]), results[i].log);
    }
    failures += failed;
    std::string described;
    for (const auto& d : definitions) described += (described.empty() ? "" : " ") + d;
    std::cout << fmt::format(
        "{} {} {} ({}): {} raw configs, {} rejected by constraints, {}{} compiled, {} failed ({:.1f} s)\n",
        family.name(), limits.arch(), problem.dtype(), described, raw, raw - static_cast<std::int64_t>(valid),
        args.covering_sample
            ? fmt::format("a sample covering every axis value and pair of values of the {} valid: ", valid)
            : std::string(),
        ok, failed, seconds);
  }
  std::error_code ec;
  std::filesystem::remove_all(folder, ec);
  return failures ? 1 : 0;
}

int describe_space(const TuneArgs& args) {
  const ChosenFamily chosen(args, "tune space");
  const Family& family = *chosen;
  const std::string arch = args.arch.value_or("sm_90");
  const DeviceLimits limits = limits_for_arch(arch);
  const Space unrestricted = family.space(limits);
  const Space space = tuning_space(family, limits, args.restrictions);
  // Which declared values occur in some valid config: a value that never does is worth knowing
  // before writing a --restrict around it.
  std::vector<std::set<std::int64_t>> occurring(space.axes().size());
  std::int64_t valid = 0;
  space.for_each_valid([&](const Config& c) {
    ++valid;
    for (std::size_t a = 0; a < c.values.size(); ++a) occurring[a].insert(c.values[a]);
  });
  const std::size_t family_constraints = unrestricted.constraints().size();

  if (args.json) {
    nlohmann::ordered_json out;
    out["family"] = family.name();
    out["arch"] = limits.arch();
    const double raw = space.raw_size();  // a double: products of many axes outgrow 64 bits
    out["raw_configs"] =
        raw < 9e15 ? nlohmann::ordered_json(static_cast<std::int64_t>(raw)) : nlohmann::ordered_json(raw);
    out["valid_configs"] = valid;
    out["axes"] = nlohmann::ordered_json::array();
    for (std::size_t a = 0; a < space.axes().size(); ++a) {
      const Axis& axis = space.axes()[a];
      nlohmann::ordered_json entry{{"name", axis.name}, {"values", axis.values}};
      if (!axis.labels.empty()) entry["labels"] = axis.labels;
      entry["help"] = axis.help;
      entry["plan_only"] = axis.plan_only;
      nlohmann::ordered_json never = nlohmann::ordered_json::array();
      for (std::int64_t v : axis.values)
        if (!occurring[a].count(v)) never.push_back(v);
      entry["values_in_no_valid_config"] = never;
      out["axes"].push_back(entry);
    }
    out["constraints"] = nlohmann::ordered_json::array();
    out["restrictions"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < space.constraints().size(); ++i)
      out[i < family_constraints ? "constraints" : "restrictions"].push_back(space.constraints()[i].description);
    print_json(std::cout, out);
    return 0;
  }

  std::cout << fmt::format("{} on {}: {} raw configs, {} valid{}\n", family.name(), limits.arch(),
                           static_cast<std::int64_t>(space.raw_size()), valid,
                           args.restrictions.empty() ? "" : " with the restrictions below");
  std::vector<std::string> values(space.axes().size()), never(space.axes().size());
  std::size_t name_width = 4, values_width = 6;
  for (std::size_t a = 0; a < space.axes().size(); ++a) {
    const Axis& axis = space.axes()[a];
    for (std::int64_t v : axis.values) {
      values[a] += (values[a].empty() ? "" : ", ") + axis.text_of(v);
      if (!occurring[a].count(v)) never[a] += (never[a].empty() ? "" : ", ") + axis.text_of(v);
    }
    name_width = std::max(name_width, axis.name.size());
    values_width = std::max(values_width, values[a].size());
  }
  std::cout << "axes (* plan-only: shapes the launch plan, not the compiled kernel)\n";
  for (std::size_t a = 0; a < space.axes().size(); ++a) {
    const Axis& axis = space.axes()[a];
    std::cout << fmt::format("  {}{:<{}}  {:<{}}  {}{}\n", axis.plan_only ? "*" : " ", axis.name, name_width, values[a],
                             values_width, axis.help,
                             never[a].empty() ? "" : " (in no valid config: " + never[a] + ")");
  }
  std::cout << "constraints\n";
  for (std::size_t i = 0; i < space.constraints().size(); ++i) {
    if (i == family_constraints) std::cout << "restrictions (--restrict)\n";
    std::cout << "  " << space.constraints()[i].description << "\n";
  }
  return 0;
}

// Where the GPUs had nothing queued: under what the session's thread did meanwhile, and in which
// problem's search. Says whether they wait for the strategy, for the writer, or between problems.
void print_starvation(std::ostream& out, const SessionOptions& options, const SessionResult& result) {
  if (result.starved_seconds < 0.1) return;
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < session_activity_count; ++a)
    if (result.starved_by_activity[a] >= 0.05)
      parts.push_back(fmt::format("{} {:.1f}", session_activity_name(static_cast<SessionActivity>(a)),
                                  result.starved_by_activity[a]));
  out << fmt::format("nothing queued, {:.1f} GPU-s in all, while the session's thread was: {}\n",
                     result.starved_seconds,
                     parts.empty() ? std::string("-") : fmt::format("{}", fmt::join(parts, ", ")));
  parts.clear();
  for (std::size_t p = 0; p < result.starved_by_problem.size() && p < options.problems.size(); ++p)
    if (result.starved_by_problem[p] >= 0.05)
      parts.push_back(fmt::format("{} {:.1f}", options.problems[p].key(), result.starved_by_problem[p]));
  if (!parts.empty())
    out << fmt::format("nothing queued during each problem's search (GPU-s): {}\n", fmt::join(parts, ", "));
}

// What a finished run prints: its counts, the best table, where the time went, and the report.
void report_run(std::ostream& out, const Family& family, const Device& device, db::Store& store,
                const SessionOptions& options, const SessionResult& result) {
  std::set<std::string> keys;
  for (const auto& p : options.problems) keys.insert(p.key());
  std::vector<db::BestRow> rows;
  for (auto& row : store.best(family.name(), device.fingerprint().uuid))
    if (keys.count(row.problem_key)) rows.push_back(row);
  const auto stored = store.device_by_uuid(device.fingerprint().uuid);
  out << fmt::format("run {}: {} evaluated, {} already stored{}; measured copy bandwidth {:.0f} GB/s\n", result.run_id,
                     result.evaluated, result.skipped,
                     result.stop_reason.empty() ? "" : " (stopped early: " + result.stop_reason + ")",
                     stored && stored->copy_bandwidth_gbs ? *stored->copy_bandwidth_gbs : 0.0);
  print_best_table(out, rows);
  // Where the wall time went, in GPU-seconds over the run's GPUs. A GPU is busy while verifying and
  // measuring; the rest of the time it idles: waiting for a compile, while a problem is set up,
  // between configs (module loads, launches of the verified run, storing results) and at the end.
  const double gpu_seconds = result.wall_seconds * result.gpus;
  const double gpu_busy = result.verify_seconds + result.benchmark_seconds;
  const double choosing = result.strategy_seconds * result.gpus;
  const double before_work = result.before_work_seconds * result.gpus;
  const double rematching = result.rematch_seconds * result.gpus;
  const double other = gpu_seconds - gpu_busy - result.compile_wait_seconds - result.setup_seconds -
                       result.finishing_seconds * result.gpus - choosing - before_work - rematching;
  out << fmt::format(
      "time: {:.1f} s in all{}; on the GPU{} {:.1f} s verifying and {:.1f} s measuring, idle {:.1f} s: "
      "{:.1f} s before the run gave them work (copy bandwidth, compile queue), {:.1f} s waiting for compiles, "
      "{:.1f} s setting problems up ({:.1f} s of the workers' on inputs and CPU references, {:.1f} s on the GPU's "
      "buffers), {:.1f} s for the "
      "strategy to choose configs, {:.1f} s rematching near-tied leaders, {:.1f} s storing cubins and defaults, {:.1f} "
      "s "
      "between configs (loading "
      "modules, launching, storing results; {:.1f} s of it with no config queued)\n",
      result.wall_seconds, result.gpus > 1 ? fmt::format(" on {} GPUs", result.gpus) : std::string(),
      result.gpus > 1 ? "s (GPU-seconds)" : "", result.verify_seconds, result.benchmark_seconds, gpu_seconds - gpu_busy,
      before_work, result.compile_wait_seconds, result.setup_seconds, result.setup_host_seconds,
      result.setup_device_seconds, choosing, rematching, result.finishing_seconds * result.gpus, other,
      std::clamp(result.starved_seconds - choosing, 0.0, std::max(other, 0.0)));
  if (result.rematch_problems > 0)
    out << fmt::format(
        "rematch: {} more evaluations of the leaders within {:.0f} % of the best, {} problem(s), {:.1f} s; the best "
        "config changed for {}\n",
        result.rematch_evaluations, 100 * options.rematch.within, result.rematch_problems, rematching,
        result.rematch_changed);
  print_starvation(out, options, result);
  out << fmt::format(
      "session thread: {:.1f} s proposing (model fits included), {:.1f} s taking results in, {:.1f} s storing "
      "results, of {:.1f} s\n",
      result.proposing_seconds, result.observing_seconds, result.storing_seconds, result.wall_seconds);
  out << fmt::format(
      "compiles: {} fresh (cache misses), {:.1f} s of NVRTC time over {} processes ({:.0f}% of "
      "their capacity during the run)\n",
      result.compiles, result.compile_seconds, result.compile_jobs,
      result.wall_seconds > 0 && result.compile_jobs > 0
          ? 100 * result.compile_seconds / (result.wall_seconds * result.compile_jobs)
          : 0.0);

  // The report covers every run of this family on this device, so a resumed tuning shows whole.
  const std::string folder = (std::filesystem::path(store.database().path()).parent_path() / "reports").string();
  try {
    sql::Database reader(store.database().path(), sql::Database::Mode::read_only);
    const std::string path = report::write_report(reader, {stored->id, family.name(), std::nullopt}, folder, true);
    // The index beside it links this report and every other one already in the folder.
    report::write_index(reader, report::selections_with_reports(reader, folder),
                        std::filesystem::path(store.database().path()).filename().string(), folder);
    out << "report: " << path << "\nindex: " << (std::filesystem::path(folder) / "index.html").string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "tune: warning: no report written: " << e.what() << "\n";  // the results are stored either way
  }
}

int tune(const TuneArgs& args) {
  const auto command_started = std::chrono::steady_clock::now();
  trace_phase("tune: start");
  // Validate everything before the GPU or the database is touched: bad input stores nothing.
  const ChosenFamily chosen(args, "tuning");
  const Family& family = *chosen;
  if (!args.device && !args.devices) throw UsageError("tuning needs --device N (or --devices LIST)");
  SessionOptions options;
  options.problems = requested_problems(family, args);
  options.restrictions = args.restrictions;
  // A restriction that does not parse, or names no parameter, fails here, before the GPU is
  // touched; the session applies them again with the device's own limits.
  if (!options.restrictions.empty()) tuning_space(family, limits_for_arch("sm_90"), options.restrictions);
  options.strategy = requested_strategy(args);
  options.warm_start = !args.no_warm_start;
  options.budget = requested_budget(args);
  if (args.jobs && *args.jobs <= 0) throw UsageError("--jobs must be positive");
  options.seed = args.seed;
  options.compile_jobs = args.jobs.value_or(default_jobs());
  options.cache_folder = args.no_cache ? std::string() : CompileCache::default_folder();
  options.command = args.command_line;
  options.progress = !args.quiet;
  if (args.samples) {
    if (*args.samples <= 0) throw UsageError("--samples must be positive");
    options.measure.min_samples = options.measure.max_samples = *args.samples;
    options.measure.max_sample_seconds = std::numeric_limits<double>::infinity();  // all N, however long
  }

  if (args.cut_ratio) {
    if (!(*args.cut_ratio == 0 || *args.cut_ratio > 1))
      throw UsageError("--cut-ratio must be 0 (never) or more than 1");
    options.measure.cut_ratio = *args.cut_ratio;
  }
  if (args.rematch) {
    if (*args.rematch < 0 || *args.rematch > 20) throw UsageError("--rematch must be between 0 and 20 rounds");
    options.rematch.rounds = static_cast<std::size_t>(*args.rematch);
  }
  if (args.energy_window && !args.energy) throw UsageError("--energy-window needs --energy");
  if (args.energy_window && !(*args.energy_window >= 0.1 && *args.energy_window <= 60))
    throw UsageError("--energy-window must be between 0.1 and 60 seconds");
  if (args.energy) options.measure.energy_seconds = args.energy_window.value_or(0.2);
  // The GPUs: --device N, or --devices LIST; grouped by model, one tuning run per model.
  if (args.device && args.devices) throw UsageError("give --device or --devices, not both");
  if (args.device && *args.device < 0) throw UsageError("--device must be 0 or more");
  if (args.devices) parse_devices(*args.devices, std::numeric_limits<int>::max());  // its form, before the GPU
  const std::optional<Shard> shard = requested_shard(args);
  if (!keep_shards_problems(shard, options.problems)) return 0;
  const std::string db_path = shard ? shard_database_path(database_path(args), *shard) : database_path(args);
  check_database_writable(db_path);
  trace_phase("tune: before device_count");
  const int available = device_count();
  trace_phase("tune: device_count done");
  std::vector<int> ordinals;
  if (args.devices) {
    ordinals = parse_devices(*args.devices, available);
  } else {
    if (*args.device >= available)
      throw UsageError(fmt::format("no CUDA device {} (this machine has {})", *args.device, available));
    ordinals = {*args.device};
  }
  std::map<int, std::unique_ptr<Device>> opened;
  std::vector<std::vector<Device*>> models;  // GPUs of one model (name and architecture), in the order given
  for (const int ordinal : ordinals) {
    auto& device = opened[ordinal];
    // No context here: the workers make their own, and copy bandwidth makes one when measured.
    if (!device) device = std::make_unique<Device>(ordinal, Device::Context::when_needed);
    auto same = std::find_if(models.begin(), models.end(), [&](const auto& group) {
      return group[0]->fingerprint().name == device->fingerprint().name &&
             group[0]->limits().arch() == device->limits().arch();
    });
    if (same == models.end())
      models.push_back({device.get()});
    else
      same->push_back(device.get());
  }
  // A spec's plans and kernel arguments are checked for each model before the database is opened.
  if (chosen.spec())
    for (const auto& group : models)
      check_spec_family(*chosen.spec(), tuning_space(family, group[0]->limits(), options.restrictions),
                        options.problems, group[0]->limits().arch());
  trace_phase("tune: devices done");
  db::Store store(db_path);
  trace_phase("tune: store open");

  // Models one after another: each run keeps every GPU of its model busy.
  for (const auto& group : models) {
    const Device& device = *group[0];
    std::string gpus;
    for (const Device* d : group) gpus += (gpus.empty() ? "" : ",") + std::to_string(d->ordinal());
    std::cerr << fmt::format("tuning {} on {} ({}, GPU {}), {} problem(s){}, strategy {}, database {}\n", family.name(),
                             device.fingerprint().name, device.limits().arch(), gpus, options.problems.size(),
                             shard ? fmt::format(" (shard {}/{})", shard->index, shard->count) : std::string(),
                             label_of(options.strategy), store.database().path());
    Session session(family, group, store, options);
    const auto session_started = std::chrono::steady_clock::now();
    const SessionResult result = session.run();
    trace_phase("tune: run returned");
    report_run(std::cout, family, device, store, options, result);
    trace_phase("tune: report done");
    const auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
    std::cout << fmt::format(
        "around the run: {:.2f} s before it (driver, devices, database), {:.2f} s after it "
        "(best table, report)\n",
        seconds(command_started, session_started),
        seconds(session_started, std::chrono::steady_clock::now()) - result.wall_seconds);
  }
  return 0;
}

int write_reports(const ReportArgs& args) {
  const std::string path = args.db ? *args.db : db::default_database_path();
  if (!std::filesystem::exists(path)) throw UsageError("no database at '" + path + "'");
  if (!args.compare.empty() && args.run) throw UsageError("give --run or --compare, not both");
  if (!args.compare.empty() && args.device_uuid)
    throw UsageError("--device-uuid does not apply to --compare: name the devices in --compare itself");
  sql::Database db = db::open_for_reading(path);
  // Where the reports cannot go is bad input (the --out folder), said in one line.
  const auto unwritable = [&](const std::string& why) {
    return UsageError("cannot write reports into '" + args.out + "': " + why);
  };
  if (!args.compare.empty()) {
    try {
      report::Comparison comparison{report::resolve_side(db, args.compare.at(0)),
                                    report::resolve_side(db, args.compare.at(1)), args.kernel};
      std::cout << report::write_comparison(db, comparison, args.out) << "\n";
    } catch (const report::BadSelection& e) {
      throw UsageError(std::string("--compare: ") + e.what());
    } catch (const std::filesystem::filesystem_error& e) {
      throw unwritable(e.code().message());
    }
    return 0;
  }
  std::vector<report::Selection> selections;
  if (args.run) {
    const std::optional<db::RunRecord> run = db::run_by_id(db, *args.run);
    if (!run) throw UsageError("no run " + std::to_string(*args.run) + " in '" + path + "'");
    selections.push_back({run->device_id, run->family, *args.run});
  } else {
    for (auto& selection : report::all_selections(db)) {
      if (args.kernel && selection.family != *args.kernel) continue;
      if (args.device_uuid) {
        const std::optional<db::DeviceRecord> device = db::device_by_id(db, selection.device_id);
        if (!device || device->uuid != *args.device_uuid) continue;
      }
      selections.push_back(selection);
    }
    if (selections.empty()) throw UsageError("no results in '" + path + "' match the selection");
  }
  try {
    for (const auto& selection : selections)
      std::cout << report::write_report(db, selection, args.out, !args.run) << "\n";
    // The index links the reports just written: every (device, family) of the selection.
    if (!args.run)
      std::cout << report::write_index(db, selections, std::filesystem::path(path).filename().string(), args.out)
                << "\n";
  } catch (const std::filesystem::filesystem_error& e) {
    throw unwritable(e.code().message());
  }
  return 0;
}

int simulate_landscape(const TuneArgs& args) {
  // A landscape is what was measured, not a space that constraints could narrow.
  if (!args.restrictions.empty())
    throw UsageError("--restrict does not apply to --simulate: a landscape replays the configs it recorded");
  const StrategySpec strategy_spec = requested_strategy(args);
  const std::string strategy_name = label_of(strategy_spec);
  SimulationOptions options;
  options.budget = requested_budget(args);
  const Landscape landscape = load_landscape(args);
  const auto strategy = make_strategy(strategy_spec, landscape.space(), args.seed);
  const SimulationResult result = simulate(landscape, *strategy, options);
  if (args.trace) write_trace_file(*args.trace, result);

  std::cout << fmt::format("simulated {} (seed {}) on {}: {} evaluations, {:.1f} s recorded time, {} revisits; {}\n",
                           strategy_name, args.seed, landscape.name(), result.evaluations.size(),
                           result.elapsed_seconds(), result.revisits, result.stop_reason);
  if (result.best) {
    const auto& best = result.evaluations[*result.best];
    std::cout << fmt::format("best: {} ms at evaluation {} ({:.1f} s): {}\n", *best.objective, *result.best,
                             best.elapsed_seconds, best.config);
  } else {
    std::cout << "best: none (every evaluated config failed)\n";
  }
  return 0;
}

namespace {

// Every strategy (or --strategy's) with its options, their defaults, ranges and help.
int list_strategies(const TuneArgs& args) {
  // What only scoring reads would be ignored here: say so instead.
  for (const auto& [given, name] : {std::pair{args.repeats.has_value(), "--repeats"},
                                    {args.leave_one_out, "--leave-one-out"},
                                    {args.warm_pairs, "--warm-pairs"},
                                    {!args.strategy_options.empty(), "--strategy-option"},
                                    {args.quiet, "--quiet"}})
    if (given)
      throw UsageError(std::string(name) +
                       " goes with a FOLDER of landscapes to score the strategies on "
                       "(tune strategies FOLDER " +
                       name + " …)");
  std::vector<std::string> names = strategy_names();
  if (args.strategy) {
    check_strategy_name(*args.strategy);
    names = {*args.strategy};
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const std::string& name : names) {
    const bool is_default = name == default_strategy_name(), warm = strategy_uses_warm_start(name);
    const std::vector<StrategyOptionInfo> options = strategy_options(name);
    if (args.json) {
      nlohmann::ordered_json described = nlohmann::ordered_json::array();
      for (const auto& o : options)
        described.push_back({{"name", o.name}, {"default", o.default_text}, {"allowed", o.allowed}, {"help", o.help}});
      list.push_back({{"name", name}, {"default", is_default}, {"warm_start", warm}, {"options", described}});
      continue;
    }
    std::string notes = std::string(is_default ? "the default" : "") + (is_default && warm ? ", " : "") +
                        (warm ? "warm-starts from the family's other results" : "");
    std::cout << name << (notes.empty() ? "" : " (" + notes + ")") << (options.empty() ? ": no options" : "") << "\n";
    for (const auto& o : options)
      std::cout << fmt::format("  {:<20} {:<10} {:<24} {}\n", o.name, o.default_text, o.allowed, o.help);
  }
  if (args.json) print_json(std::cout, {{"strategies", list}});
  return 0;
}

int strategy_bench(const TuneArgs& args) {
  if (args.json)
    throw UsageError("--json lists the strategies (tune strategies --json); their scores come as Markdown tables");
  StrategyBenchOptions options;
  options.folder = *args.strategy_bench;
  options.repeats = args.repeats.value_or(5);
  if (args.strategy)
    options.strategies = strategy_variants(*args.strategy, args.strategy_options);
  else if (!args.strategy_options.empty())
    throw UsageError("--strategy-option needs --strategy: options belong to one strategy");
  options.threads = default_jobs();
  options.leave_one_out = args.leave_one_out;
  options.warm_start = args.warm_pairs;
  options.progress = !args.quiet;
  print_strategy_bench(std::cout, run_strategy_bench(options), options);
  return 0;
}

}  // namespace

int strategies(const TuneArgs& args) { return args.strategy_bench ? strategy_bench(args) : list_strategies(args); }

}  // namespace cutune
