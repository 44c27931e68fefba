#include "targets.hpp"

#include <cxxabi.h>
#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <typeinfo>

#include <nlohmann/json.hpp>

#include "compressed_file.hpp"
#include "core/error.hpp"
#include "core/expression.hpp"
#include "interchange.hpp"
#if CUTUNE_FUZZ_SIMULATE  // the simulator needs the engine (libFuzzer builds go without: clang 14 cannot build it)
#include "landscape.hpp"
#include "simulator.hpp"
#include "strategies/strategy.hpp"
#endif

extern char** environ;

namespace cutune::fuzz {
namespace {

// What `tune` prints before a message: the whole line must stay within 300 characters.
constexpr std::size_t kMessageLimit = 300 - std::string_view("tune: error: ").size();

std::size_t below(Rng& rng, std::size_t n) {
  return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}
bool chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

std::string type_name(const std::exception& e) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && name ? name.get() : typeid(e).name();
}

std::string first_chars(const std::string& text, std::size_t n = 200) {
  return text.size() <= n ? text : text.substr(0, n) + "…";
}

Outcome failure(std::string what) { return {Outcome::Kind::failure, std::move(what)}; }

// Every row of every table, hashed per table: equal fingerprints, equal databases.
std::string fingerprint(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return "(cannot open)";
  }
  std::vector<std::string> tables;
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &s, nullptr);
  while (sqlite3_step(s) == SQLITE_ROW) tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
  sqlite3_finalize(s);
  std::string print;
  for (const auto& table : tables) {
    std::string rows;
    std::int64_t count = 0;
    sqlite3_prepare_v2(db, ("SELECT * FROM \"" + table + "\" ORDER BY 1").c_str(), -1, &s, nullptr);
    while (sqlite3_step(s) == SQLITE_ROW) {
      ++count;
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const auto* text = sqlite3_column_blob(s, c);
        rows.append(text ? static_cast<const char*>(text) : "<null>",
                    text ? static_cast<std::size_t>(sqlite3_column_bytes(s, c)) : 6);
        rows += '\x1f';
      }
      rows += '\x1e';
    }
    sqlite3_finalize(s);
    print += table + ":" + std::to_string(count) + ":" + std::to_string(std::hash<std::string>{}(rows)) + " ";
  }
  sqlite3_close(db);
  return print;
}

// Rows that no import may store, whatever its input: a description of the first kind found.
std::optional<std::string> nonsense_stored(const std::string& path) {
  static const std::vector<std::pair<const char*, const char*>> checks = {
      {"a result with an unknown status",
       "SELECT COUNT(*) FROM results WHERE status NOT IN ('ok', 'compile_error', 'load_error', 'launch_error', "
       "'runtime_fault', 'timeout', 'wrong_result')"},
      {"an ok result without a positive time",
       "SELECT COUNT(*) FROM results WHERE status = 'ok' AND (time_ms_median IS NULL OR NOT time_ms_median > 0)"},
      {"a time that is not positive and finite",
       "SELECT COUNT(*) FROM results WHERE time_ms_median <= 0 OR time_ms_min <= 0 OR time_ms_max <= 0 OR "
       "time_ms_stdev < 0 OR abs(time_ms_median) > 1e308 OR abs(time_ms_min) > 1e308 OR abs(time_ms_max) > 1e308 OR "
       "abs(time_ms_stdev) > 1e308"},
      {"a negative or infinite cost, rate or count",
       "SELECT COUNT(*) FROM results WHERE compile_s < 0 OR verify_s < 0 OR benchmark_s < 0 OR elapsed_s < 0 OR "
       "samples < 0 OR gbs < 0 OR gflops < 0 OR copy_fraction < 0 OR abs(compile_s) > 1e308 OR "
       "abs(verify_s) > 1e308 OR abs(benchmark_s) > 1e308 OR abs(gbs) > 1e308 OR abs(gflops) > 1e308"},
      {"a result without a config", "SELECT COUNT(*) FROM results WHERE config = ''"},
      {"a device without a uuid, or with a copy bandwidth that is not positive",
       "SELECT COUNT(*) FROM devices WHERE uuid = '' OR copy_bandwidth_gbs <= 0 OR abs(copy_bandwidth_gbs) > 1e308"},
      {"a problem without a family or key, or with a negative size",
       "SELECT COUNT(*) FROM problems WHERE family = '' OR key = '' OR size < 0"},
      {"a template without a family", "SELECT COUNT(*) FROM templates WHERE family = '' OR source_hash = ''"},
  };
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return "a database that cannot be opened";
  }
  std::optional<std::string> found;
  for (const auto& [what, sql] : checks) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
      found = std::string("(check failed to prepare: ") + sqlite3_errmsg(db) + ")";
    } else if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0) {
      found = what;
    }
    sqlite3_finalize(s);
    if (found) break;
  }
  sqlite3_close(db);
  return found;
}

// A refusal is good when its message is short and nothing stored changed.
Outcome refused(const std::string& message, const std::string& database, const std::string& before) {
  if (message.size() > kMessageLimit)
    return failure("a message of " + std::to_string(message.size()) + " characters: " + first_chars(message));
  if (!database.empty() && fingerprint(database) != before)
    return failure("refused, but the database changed: " + message);
  return {Outcome::Kind::refused, message};
}

std::string fresh_database(const Workspace& workspace) {
  const auto path = workspace.folder / "fuzz.db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path.string() + suffix);
  std::filesystem::copy_file(workspace.base_database, path);
  return path.string();
}

std::string input_file(const Workspace& workspace, const std::string& input, Rng& rng) {
  const bool gzip = workspace.vary_files && chance(rng, 0.2);
  const std::string path = write_input(workspace, input, gzip);
  if (gzip && chance(rng, 0.3)) std::filesystem::resize_file(path, below(rng, std::filesystem::file_size(path) + 1));
  return path;
}

db::ImportTarget import_target(Target target, Rng& rng) {
  db::ImportTarget t;
  if (target == Target::kernel_tuner) {
    if (chance(rng, 0.2)) t.family = chance(rng, 0.5) ? "scan" : "stencil";
  } else if (target == Target::t4 && chance(rng, 0.7)) {
    t.family = chance(rng, 0.2) ? "scan" : "stencil";
    t.device_name = "Lab GPU";
    t.problem_size = chance(rng, 0.8) ? 1000 : (chance(rng, 0.5) ? 0 : -5);
  }
  return t;
}

Outcome run_import(Target target, const std::string& input, const Workspace& workspace, Rng& rng) {
  const std::string path = input_file(workspace, input, rng);
  const std::string database = fresh_database(workspace);
  const std::string before = fingerprint(database);
  const db::ImportTarget options = import_target(target, rng);
  try {
    {
      db::Store store(database);
      if (target == Target::kernel_tuner)
        db::import_kernel_tuner(store, path, options);
      else if (target == Target::t4)
        db::import_t4(store, path, options);
      else
        db::import_json(store, path);
    }
    if (const auto broken = nonsense_stored(database)) return failure("accepted, but stored " + *broken);
    return {};
  } catch (const db::InterchangeError& e) {
    return refused(e.what(), database, before);
  } catch (const UsageError& e) {
    return refused(e.what(), database, before);
  } catch (const std::exception& e) {
    return failure("unexpected " + type_name(e) + ": " + first_chars(e.what()));
  }
}

Outcome run_simulate(const std::string& input, const Workspace& workspace, Rng& rng) {
#if !CUTUNE_FUZZ_SIMULATE
  (void)input, (void)workspace, (void)rng;
  return failure("this build has no simulate target (CUTUNE_FUZZ_SIMULATE)");
#else
  const std::string path = input_file(workspace, input, rng);
  try {
    const Landscape landscape = read_kernel_tuner_cache(path);
    for (const auto& record : landscape.records())
      if (record.objective && !(std::isfinite(*record.objective) && *record.objective > 0))
        return failure("accepted an objective of " + std::to_string(*record.objective) + " (" + record.key + ")");
    const auto names = strategy_names();
    const auto strategy = make_strategy(names[below(rng, names.size())], landscape.space(), rng());
    SimulationOptions options;
    options.budget.max_evals = 12;
    const SimulationResult result = simulate(landscape, *strategy, options);
    if (result.best && !(*result.evaluations[*result.best].objective > 0))
      return failure("the best objective is not positive");
    return {};
  } catch (const UsageError& e) {
    return refused(e.what(), "", "");
  } catch (const std::exception& e) {
    return failure("unexpected " + type_name(e) + ": " + first_chars(e.what()));
  }
#endif
}

Outcome run_expression(const std::string& input, Rng& rng) {
  static const std::vector<std::string> names = {"a", "b", "n", "block", "ept", "vec", "pad", "tile", "sizeof(type)"};
  const Expression::Resolver resolve = [](std::string_view name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    return std::nullopt;
  };
  const Expression::ConstantResolver constant = [](std::string_view name) -> std::optional<std::int64_t> {
    if (name == "regtile") return 7;
    if (name == "warp") return 1;
    return std::nullopt;
  };
  try {
    const Expression e = Expression::parse(input, resolve, constant, chance(rng, 0.5) ? "constraint" : "expression");
    static const std::array<std::int64_t, 8> extremes = {0, 1, -1, 2, 64, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    std::vector<std::int64_t> values(names.size());
    for (int round = 0; round < 6; ++round) {
      for (auto& v : values)
        v = chance(rng, 0.5) ? extremes[below(rng, extremes.size())] : static_cast<std::int64_t>(below(rng, 1024));
      (void)e.evaluate(values);
    }
    return {};
  } catch (const UsageError& e) {
    return refused(e.what(), "", "");
  } catch (const std::exception& e) {
    return failure("unexpected " + type_name(e) + ": " + first_chars(e.what()));
  }
}

struct Ran {
  int exit_code = -1, signal = 0;
  std::string err;
};

Ran run_command(const std::vector<std::string>& arguments, const std::filesystem::path& folder) {
  const std::string err_path = (folder / "stderr").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const auto& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  Ran ran;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    ran.err = "cannot start " + arguments[0];
    return ran;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) ran.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) ran.signal = WTERMSIG(status);
  std::stringstream err;
  err << std::ifstream(err_path).rdbuf();
  ran.err = err.str();
  return ran;
}

std::size_t characters(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

const char* name_of(Target target) {
  switch (target) {
    case Target::kernel_tuner:
      return "kernel_tuner";
    case Target::t4:
      return "t4";
    case Target::cutune_json:
      return "cutune_json";
    case Target::simulate:
      return "simulate";
    case Target::expression:
      return "expression";
  }
  return "?";
}

std::optional<Target> target_named(std::string_view name) {
  for (const Target t : kAllTargets)
    if (name == name_of(t)) return t;
  return std::nullopt;
}

std::string write_input(const Workspace& workspace, const std::string& input, bool gzip) {
  const std::string path = (workspace.folder / (gzip ? "input.json.gz" : "input.json")).string();
  db::write_text_file(path, input);
  return path;
}

void make_base_database(const std::string& path) {
  db::Store store(path);
  db::DeviceRecord d;
  d.uuid = "GPU-h100";
  d.name = "NVIDIA H100";
  d.cc_major = 9;
  d.sm_count = 132;
  d.nvrtc_version = "13.0";
  const auto h100 = store.upsert_device(d);
  store.set_copy_bandwidth(h100, 2900.5);
  d.uuid = "GPU-a100";
  d.name = "NVIDIA A100";
  d.cc_major = 8;
  const auto a100 = store.upsert_device(d);
  const auto tmpl = store.upsert_template("scan", "template-1", "// scan source");
  int minute = 0;
  for (const std::int64_t n : {4096, 1 << 20}) {
    const std::string key = "n=" + std::to_string(n) + ",type=int32";
    const auto problem =
        store.upsert_problem({0, "scan", key, n, "int32", R"({"n":)" + std::to_string(n) + R"(,"type":"int32"})"});
    for (const auto device : {h100, a100}) {
      const auto run = store.begin_run({0, "scan", device, tmpl, "brute_force", 1, "max_evals=3", "tune --kernel scan",
                                        "cutune 0.1.0", "2026-01-01T00:00:00Z", "", ""});
      const std::vector<std::tuple<std::string, std::optional<double>, std::string>> rows = {
          {"algo=lookback,block=256,ept=8,vec=4,pad=1", 0.0123456789, "ok"},
          {"algo=warp,block=128,ept=4,vec=4,pad=0", 0.02, "ok"},
          {"algo=blelloch,block=1024,ept=16,vec=4,pad=1", std::nullopt, "compile_error"},
          {"algo=warp,block=64,ept=1,vec=1,pad=0", std::nullopt, "wrong_result"}};
      for (const auto& [config, ms, status] : rows) {
        db::ResultRecord r;
        r.run_id = run;
        r.device_id = device;
        r.template_id = tmpl;
        r.problem_id = problem;
        r.config = config;
        r.config_json = "{}";
        r.status = status;
        r.time_ms_median = ms;
        if (ms) {
          r.time_ms_min = *ms * 0.95;
          r.time_ms_max = *ms * 1.1;
          r.time_ms_stdev = *ms * 0.01;
          r.samples = 20;
          r.gbs = 1200.5;
          r.copy_fraction = 0.4;
        } else {
          r.error = status == "wrong_result" ? "out[17]: expected 3, got 4" : "nvrtc: error";
          if (status == "wrong_result") r.error_index = 17;
        }
        r.compile_s = 0.5;
        r.verify_s = 0.01;
        r.benchmark_s = 0.2;
        r.launch_json =
            R"([{"kernel":"scan_lookback","grid":[2,1,1],"block":[256,1,1],"dynamic_shared_bytes":16904,"registers":32}])";
        r.created_at = "2026-01-01T00:" + std::string(minute < 10 ? "0" : "") + std::to_string(minute) + ":00Z";
        ++minute;
        store.add_result(r);
      }
      store.finish_run(run, "finished");
    }
    store.put_cubin({0,
                     "sm_90",
                     tmpl,
                     problem,
                     "algo=lookback,block=256,ept=8,vec=4,pad=1",
                     {0x7f, 'E', 'L', 'F', 0, 255, 3},
                     "[]",
                     R"(["-DCUTUNE_BLOCK=256"])",
                     "13.0",
                     "2026-01-01T00:00:00Z"});
  }
}

Exports export_seeds(const std::string& database, const std::filesystem::path& folder) {
  db::Store store(database, db::Store::Access::read);
  Exports e{(folder / "seed-cutune.json").string(), (folder / "seed-kt.json").string(),
            (folder / "seed-t4.json").string()};
  db::export_json(store, {}, e.cutune_json);
  const db::Selection one{"scan", "GPU-h100", "n=4096,type=int32"};
  db::export_kernel_tuner(store, one, e.kernel_tuner);
  db::export_t4(store, one, e.t4);
  // The export's own timestamp would make each run's seed, and so its mutations, differ.
  auto document = nlohmann::ordered_json::parse(db::read_text_file(e.cutune_json));
  document["exported_at"] = "2026-01-01T00:00:00Z";
  db::write_text_file(e.cutune_json, document.dump(1));
  return e;
}

Outcome run_in_process(Target target, const std::string& input, const Workspace& workspace, Rng& rng) {
  switch (target) {
    case Target::expression:
      return run_expression(input, rng);
    case Target::simulate:
      return run_simulate(input, workspace, rng);
    default:
      return run_import(target, input, workspace, rng);
  }
}

Outcome run_binary(Target target, const std::string& input, const Workspace& workspace, const std::string& tune,
                   Rng& rng) {
  if (target == Target::expression) return run_expression(input, rng);
  const std::string path = input_file(workspace, input, rng);
  std::vector<std::string> arguments{tune};
  std::string database, before;
  if (target == Target::simulate) {
    static const std::vector<std::string> names = {"brute_force",       "random_sampling",     "greedy_ils",
                                                   "genetic_algorithm", "simulated_annealing", "bayes_opt"};
    arguments.insert(arguments.end(), {"--simulate", path, "--strategy", names[below(rng, names.size())], "--max-evals",
                                       "12", "--quiet", "--seed", std::to_string(below(rng, 1000))});
  } else {
    database = fresh_database(workspace);
    before = fingerprint(database);
    const db::ImportTarget options = import_target(target, rng);
    arguments.insert(arguments.end(), {"db",
                                       target == Target::kernel_tuner ? "import-kt"
                                       : target == Target::t4         ? "import-t4"
                                                                      : "import",
                                       path, "--db", database});
    if (!options.family.empty()) arguments.insert(arguments.end(), {"--family", options.family});
    if (!options.device_name.empty()) arguments.insert(arguments.end(), {"--device-name", options.device_name});
    if (options.problem_size != 0)
      arguments.insert(arguments.end(), {"--problem-size", std::to_string(options.problem_size)});
  }
  const Ran ran = run_command(arguments, workspace.folder);
  if (ran.signal) return failure("signal " + std::to_string(ran.signal) + ": " + first_chars(ran.err));
  if (ran.exit_code == 0) {
    if (!database.empty())
      if (const auto broken = nonsense_stored(database)) return failure("exit 0, but stored " + *broken);
    return {};
  }
  if (ran.exit_code != 2) return failure("exit " + std::to_string(ran.exit_code) + ": " + first_chars(ran.err));
  const auto newline = ran.err.find('\n');
  if (ran.err.rfind("tune: error: ", 0) != 0 || newline + 1 != ran.err.size())
    return failure("exit 2 without one 'tune: error:' line: " + first_chars(ran.err));
  if (characters(ran.err) - 1 > 300)
    return failure("a line of " + std::to_string(characters(ran.err) - 1) + " characters: " + first_chars(ran.err));
  if (!database.empty() && fingerprint(database) != before)
    return failure("exit 2, but the database changed: " + ran.err);
  return {Outcome::Kind::refused, ran.err.substr(0, newline)};
}

}  // namespace cutune::fuzz
