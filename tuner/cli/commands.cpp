#include "commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "device.hpp"
#include "family.hpp"
#include "store.hpp"

namespace cutune {
namespace {

const Family& required_family(const TuneArgs& args, const char* command) {
  if (!args.kernel) throw UsageError(std::string(command) + " needs --kernel NAME (see tune --list)");
  return family_named(*args.kernel);
}

std::vector<Problem> requested_problems(const Family& family, const TuneArgs& args) {
  for (std::int64_t n : args.sizes)
    if (n <= 0) throw UsageError("--n must be positive (got " + std::to_string(n) + ")");
  return family.problems(ProblemRequest{args.type, args.sizes});
}

int default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

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
  if (args.list) return list_families();
  if (args.best) return print_best(args);
  if (args.compile_only) return compile_only(args);
  if (!args.kernel && !args.device) throw UsageError("nothing to do: give --kernel NAME --device N, or see tune --help");
  return tune(args);
}

int list_families() {
  for (const auto& f : families()) std::cout << fmt::format("{:<10} {}\n", f->name(), f->summary());
  return 0;
}

int print_best(const TuneArgs& args) {
  std::string family;
  if (args.kernel) family = family_named(*args.kernel).name();
  std::string uuid;
  if (args.device) uuid = Device(*args.device).fingerprint().uuid;
  const std::string path = database_path(args);
  if (!std::filesystem::exists(path)) throw UsageError("no database at '" + path + "' (run a tuning first, or pass --db)");
  db::Store store(path);
  print_best_table(std::cout, store.best(family, uuid));
  return 0;
}

int compile_only(const TuneArgs& args) {
  const Family& family = required_family(args, "--compile-only");
  const DeviceLimits limits = limits_for_arch(args.arch.value_or("sm_90"));
  const auto problems = requested_problems(family, args);
  const Space space = family.space(limits);
  const auto configs = space.enumerate();
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
    for (const auto& config : configs) {
      auto options = config_definitions(space, config);
      for (const auto& d : definitions) options.push_back(d);
      requests.push_back({family.template_file(), source, std::move(options), limits.arch()});
    }
    const auto started = std::chrono::steady_clock::now();
    const auto results = cache.compile_all(requests, args.jobs.value_or(default_jobs()));
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
    std::cout << fmt::format("{} {} {} ({}): {} raw configs, {} rejected by constraints, {} compiled, {} failed ({:.1f} s)\n",
                             family.name(), limits.arch(), problem.dtype, described, raw,
                             raw - static_cast<std::int64_t>(configs.size()), ok, failed, seconds);
  }
  std::error_code ec;
  std::filesystem::remove_all(folder, ec);
  return failures ? 1 : 0;
}

int tune(const TuneArgs& args) {
  // Validate everything before the GPU or the database is touched: bad input stores nothing.
  const Family& family = required_family(args, "tuning");
  if (!args.device) throw UsageError("tuning needs --device N");
  SessionOptions options;
  options.problems = requested_problems(family, args);
  options.strategy = args.strategy.value_or(default_strategy_name());
  check_strategy_name(options.strategy);
  if (args.max_evals && *args.max_evals <= 0) throw UsageError("--max-evals must be positive");
  if (args.time_limit && *args.time_limit <= 0) throw UsageError("--time-limit must be positive");
  if (args.jobs && *args.jobs <= 0) throw UsageError("--jobs must be positive");
  options.seed = args.seed;
  options.budget = {args.max_evals, args.time_limit};
  options.compile_jobs = args.jobs.value_or(default_jobs());
  options.cache_folder = args.no_cache ? std::string() : CompileCache::default_folder();
  options.command = args.command_line;
  options.progress = !args.quiet;

  if (*args.device < 0) throw UsageError("--device must be 0 or more");
  check_database_writable(database_path(args));
  if (*args.device >= device_count())
    throw UsageError(fmt::format("no CUDA device {} (this machine has {})", *args.device, device_count()));
  Device device(*args.device);
  db::Store store(database_path(args));

  std::cerr << fmt::format("tuning {} on {} ({}), {} problem(s), strategy {}, database {}\n", family.name(),
                           device.fingerprint().name, device.limits().arch(), options.problems.size(), options.strategy,
                           store.database().path());
  Session session(family, device, store, options);
  const SessionResult result = session.run();

  std::set<std::string> keys;
  for (const auto& p : options.problems) keys.insert(p.key);
  std::vector<db::BestRow> rows;
  for (auto& row : store.best(family.name(), device.fingerprint().uuid))
    if (keys.count(row.problem_key)) rows.push_back(row);
  const auto stored = store.device_by_uuid(device.fingerprint().uuid);
  std::cout << fmt::format("run {}: {} evaluated, {} already stored{}; measured copy bandwidth {:.0f} GB/s\n",
                           result.run_id, result.evaluated, result.skipped,
                           result.interrupted ? " (stopped early: " + result.stop_reason + ")" : "",
                           stored && stored->copy_bandwidth_gbs ? *stored->copy_bandwidth_gbs : 0.0);
  print_best_table(std::cout, rows);
  return 0;
}

}  // namespace cutune
