// Runs the real `tune` binary: help, listing, and bad input (one line on stderr, exit 2, and
// nothing already stored is lost).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>
#include <regex>

#include "schema.hpp"
#include "store.hpp"
#include "shared_data.hpp"
#include "temp_folder.hpp"
#include "tune_runner.hpp"

namespace {

using cutune::testing::CommandRun;
using cutune::testing::expect_usage_error;
using cutune::testing::temp_folder;
using cutune::testing::tune;

bool machine_has_cuda_driver() { return tune("--best --device 0 --db /nonexistent/none.db").exit_code != 3; }

std::int64_t count_results(const std::string& path) {
  cutune::sql::Database db(path, cutune::sql::Database::Mode::read_only);
  auto s = db.prepare("SELECT COUNT(*) FROM results");
  s.step();
  return s.column_int(0);
}

// A database holding one result, standing for earlier work that bad input must not harm.
// One scan result (n = 1, int32) for the device GPU-test; its plan is `launch_json`.
std::string seeded_database(const std::filesystem::path& folder, const std::string& launch_json = "[]") {
  const std::string path = (folder / "kept.db").string();
  cutune::db::Store store(path);
  cutune::db::DeviceRecord d;
  d.uuid = "GPU-test";
  d.name = "Test GPU";
  const auto device = store.upsert_device(d);
  const auto tmpl = store.upsert_template("scan", "h", "s");
  const auto problem = store.upsert_problem({0, "scan", "n=1,type=int32", 1, "int32", "{}"});
  const auto run = store.begin_run({0, "scan", device, tmpl, "brute_force", 1, "", "", "", "", "", ""});
  cutune::db::ResultRecord r;
  r.run_id = run;
  r.device_id = device;
  r.template_id = tmpl;
  r.problem_id = problem;
  r.config = "algo=warp";
  r.config_json = "{}";
  r.status = "ok";
  r.time_ms_median = 1.0;
  r.launch_json = launch_json;
  store.add_result(r);
  return path;
}

}  // namespace

TEST(Cli, HelpListsTheMainOptions) {
  const CommandRun run = tune("--help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* option : {"--kernel", "--device", "--compile-only", "--best", "--list", "--db", "--type", "--n",
                             "--simulate", "--trace", "--strategy-bench", "--repeats"})
    EXPECT_NE(run.out.find(option), std::string::npos) << option;
}

TEST(Cli, ListPrintsOneLinePerFamily) {
  const CommandRun run = tune("--list");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out.rfind("scan ", 0), 0u) << run.out;
  for (std::size_t start = 0; start < run.out.size();) {
    const auto end = run.out.find('\n', start);
    ASSERT_NE(end, std::string::npos);
    EXPECT_GT(end - start, 10u);
    start = end + 1;
  }
}

TEST(Cli, BadInputIsOneLineAndExitTwo) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  const std::string with_db = " --db " + db;
  expect_usage_error(tune("--kernel nosuch --device 0" + with_db), "unknown kernel 'nosuch'");
  expect_usage_error(tune("--kernel scan --device 0 --type float16" + with_db), "unknown --type 'float16'");
  expect_usage_error(tune("--kernel scan --device 0 --n 0" + with_db), "--n must be positive");
  expect_usage_error(tune("--kernel scan --device 0 --n -7" + with_db), "--n must be positive");
  expect_usage_error(tune("--kernel scan --device 0 --strategy nosuch" + with_db), "unknown --strategy");
  expect_usage_error(tune("--kernel scan --device 0 --strategy-option nosuch=1" + with_db),
                     "has no such option (known: initial");
  expect_usage_error(tune("--kernel scan --device 0 --strategy-option initial=2,3" + with_db), "takes a whole number");
  expect_usage_error(tune("--kernel scan --device 0 --strategy-option initial" + with_db), "expected name=value");
  expect_usage_error(
      tune("--kernel scan --device 0 --strategy genetic_algorithm --strategy-option population=1" + with_db),
      "population=1: genetic_algorithm takes a whole number from 2");
  expect_usage_error(tune("--kernel scan --device 0 --strategy-option initial=3 --strategy-option initial=4" + with_db),
                     "given twice");
  expect_usage_error(tune("--kernel scan --device 0 --max-evals 0" + with_db), "--max-evals must be positive");
  expect_usage_error(tune("--kernel scan --device 0 --cut-ratio 0.5" + with_db),
                     "--cut-ratio must be 0 (never) or more than 1");
  expect_usage_error(tune("--kernel scan --device 0 --cut-ratio -2" + with_db), "--cut-ratio");
  expect_usage_error(tune("--kernel scan --device 0 --rematch -1" + with_db),
                     "--rematch must be between 0 and 20 rounds");
  expect_usage_error(tune("--kernel scan --device 0 --rematch 21" + with_db), "--rematch must be between 0 and 20");
  expect_usage_error(tune("--kernel scan --device 0 --energy-window 0.5" + with_db), "--energy-window needs --energy");
  expect_usage_error(tune("--kernel scan --device 0 --energy --energy-window 0.01" + with_db),
                     "--energy-window must be between 0.1 and 60 seconds");
  expect_usage_error(tune("--kernel scan --device 0 --devices 0,1" + with_db), "give --device or --devices, not both");
  expect_usage_error(tune("--kernel scan --device 0 --restrict '" + std::string(6800, '(') + "block" +
                          std::string(6800, ')') + "'" + with_db),
                     "nested deeper than 256 levels");
  expect_usage_error(tune("--kernel scan --devices 0,x" + with_db), "--devices: 'x' is not a device ordinal");
  expect_usage_error(tune("--kernel scan --devices 0 --shard 2/2" + with_db), "--shard: shard 2 of 2 does not exist");
  expect_usage_error(tune("--kernel scan --devices 0 --shard auto" + with_db), "--shard auto: no launcher's rank");
  expect_usage_error(tune("--kernel scan --device 0 --n banana" + with_db), "--n");
  expect_usage_error(tune("--kernel scan --compile-only --arch sm_5" + with_db), "unknown --arch");
  expect_usage_error(tune("--kernel scan --compile-only --arch sm_999" + with_db), "--arch sm_999: NVRTC");
  expect_usage_error(tune("--kernel scan --device 0 --seed -1" + with_db), "--seed");
  // 64-bit options: CLI11 alone would clamp these to the largest value.
  expect_usage_error(tune("--kernel scan --device 0 --n 99999999999999999999" + with_db),
                     "--n: '99999999999999999999' is out of range");
  expect_usage_error(tune("--kernel scan --device 0 --seed 99999999999999999999" + with_db),
                     "--seed: '99999999999999999999' is out of range");
  expect_usage_error(tune("--kernel scan --device 0 --max-evals 99999999999999999999" + with_db), "--max-evals");
  expect_usage_error(tune("db lookup --family scan --n 99999999999999999999" + with_db),
                     "--n: '99999999999999999999' is out of range");
  expect_usage_error(tune("report --run 99999999999999999999" + with_db), "--run");
  expect_usage_error(tune("--kernel scan --device -1" + with_db), "--device");
  expect_usage_error(tune("--kernel matmul --device 0 --restrict 'algo == nosuch'" + with_db),
                     "unknown parameter 'nosuch'");
  expect_usage_error(tune("--kernel matmul --device 0 --restrict 'tile >'" + with_db), "--restrict");
  expect_usage_error(tune("--kernel matmul --device 0 --restrict 'tile > 4096'" + with_db), "leaves no config");
  expect_usage_error(tune("--bogus-flag"), "bogus");
  expect_usage_error(tune("--kernel scan"), "--device");
  expect_usage_error(tune("--kernel reduce --device 0 --problem n=10,opp=min" + with_db),
                     "unknown problem field 'opp'");
  expect_usage_error(tune("--kernel reduce --device 0 --problem n=10,op=min,type=float64" + with_db),
                     "float64 takes only sum");
  expect_usage_error(tune("--kernel reduce --device 0 --problem n=10 --n 20" + with_db), "without --n");
  expect_usage_error(tune("--kernel resample --compile-only --problem series=1,points=10" + with_db),
                     "'window' needs a value");
  EXPECT_EQ(count_results(db), 1);  // nothing stored, nothing lost
}

// A spec with mistakes: one line naming the spec and the field, exit 2, the database untouched.
TEST(Cli, BadKernelSpecsAreOneLineAndExitTwo) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  const std::string examples = std::string(CUTUNE_SOURCE_DIR) + "/examples/";
  const auto spec_with = [&](const std::string& from, const std::string& to) {
    std::ifstream in(examples + "specs/copy.toml");
    std::stringstream text;
    text << in.rdbuf();
    std::string spec = text.str();
    spec.replace(spec.find(from), from.size(), to);
    // Relative paths resolve beside the spec: keep it beside the original.
    const std::string path = examples + "specs/.cli-test-" + std::to_string(getpid()) + ".toml";
    std::ofstream(path) << spec;
    return path;
  };
  struct Case {
    std::string from, to, message, command;
  };
  for (const Case& c :
       std::vector<Case>{{"length = \"n\"", "length = \"n * nosuch\"",
                          "buffer 'out': length: expression 'n * nosuch': unknown name 'nosuch'", "--device 0"},
                         {"source = \"../../templates/copy.cu\"", "source = \"../../templates/nosuch.cu\"",
                          "source: no file", "--device 0"},
                         {"grid = [\"ceil_div(n, block * ept)\"]", "grid = [\"n / (block - 128)\"]",
                          "has no value (a division by zero", "--compile-only"},
                         {"launch = \"copy_kernel\"", "launch = \"copy_kernal\"",
                          "kernel 'copy_kernal' is not among 'kernels'", "--compile-only"},
                         {"\"int64 offset\", \"int64 stride\"", "\"int32 offset\", \"int64 stride\"",
                          "argument 1 ('int32 offset'): the spec passes a 4-byte integer (int32), but the kernel's "
                          "parameter 1 is not one",
                          "--compile-only"}}) {
    const std::string spec = spec_with(c.from, c.to);
    expect_usage_error(tune("--kernel-file " + spec + " " + c.command + " --db " + db), c.message);
    std::filesystem::remove(spec);
  }
  expect_usage_error(tune("--kernel-file " + examples + "specs/copy.toml --kernel copy --device 0 --db " + db),
                     "not both");
  EXPECT_EQ(count_results(db), 1);
}

TEST(Cli, RestrictNarrowsTheCompiledSpace) {
  // Compiled: exactly the restricted space, as `tune space` counts it; counted, not compiled: the
  // whole space (compiling it is the nightly tests' job).
  const std::string restrictions = "--restrict 'algo == regtile' --restrict 'tile == 128' --restrict 'splitk == 1'";
  const auto regtile = tune("--kernel matmul --compile-only --arch sm_90 " + restrictions);
  const auto counted = tune("space --kernel matmul --arch sm_90 --json " + restrictions);
  const auto all = tune("space --kernel matmul --arch sm_90 --json");
  ASSERT_EQ(regtile.exit_code, 0) << regtile.err;
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const auto compiled = [](const std::string& text) {
    const auto at = text.find(" compiled");
    return std::stoi(text.substr(text.rfind(' ', at - 1) + 1, at));
  };
  const auto valid = [](const std::string& json) { return nlohmann::json::parse(json).at("valid_configs").get<int>(); };
  // 8 x 8 per thread: pad x vec x minblocks x bk; 4 x 4 per thread (1024 threads): pad x (bk 8
  // with scalar loads, bk 16 with either).
  EXPECT_EQ(compiled(regtile.out + regtile.err), 2 * 2 * 2 * 2 + 2 * 3);
  EXPECT_EQ(compiled(regtile.out + regtile.err), valid(counted.out));
  EXPECT_GT(valid(all.out), valid(counted.out));
}

// CI's compile check: a sample in which every axis value and every pair of values that valid
// configs take occurs, the same for a seed, and only with --compile-only.
TEST(Cli, CoveringSampleCompilesEveryAxisValueAndPairOnce) {
  const auto first = tune("--kernel copy --compile-only --covering-sample --arch sm_90 --seed 3");
  const auto again = tune("--kernel copy --compile-only --covering-sample --arch sm_90 --seed 3");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("a sample covering every axis value and pair of values of the"), std::string::npos)
      << first.out;
  EXPECT_EQ(first.out.substr(0, first.out.find(" (")), again.out.substr(0, again.out.find(" (")));
  const auto stray = tune("--kernel copy --covering-sample --device 0");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("--covering-sample goes with --compile-only"), std::string::npos) << stray.err;
}

// A shard with no problem of its own (copy has three) has nothing to do, before any GPU is needed;
// one with problems goes on to the GPU (here: none, exit 3), its database named by its index.
TEST(Cli, ShardsTakeEveryKthProblem) {
  const auto folder = temp_folder();
  const std::string db = (folder / "r{shard}.db").string();
  const CommandRun empty = tune("--kernel copy --devices 0 --shard 5/8 --db " + db);
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_NE(empty.out.find("shard 5/8: no problem of the 3 is this shard's"), std::string::npos) << empty.out;
  const CommandRun some = tune("--kernel copy --devices 0 --shard 1/8 --db " + db);
  EXPECT_EQ(some.exit_code, 3) << some.err;
  EXPECT_FALSE(std::filesystem::exists(folder / "r1.db")) << "nothing is created before the GPU is found";
}

// Under a real launcher, Open MPI's mpirun: each rank reads its rank and size from the environment
// and takes its own problems, here in compile-only mode (no GPU): reduce's sum, min and max at one
// size are compiled once each, over the two ranks. Skipped where Open MPI is not installed
// (scripts/install-deps.sh installs it).
TEST(Cli, MpirunRanksShareTheProblems) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun on this machine";
  const CommandRun run = tune(
      "--kernel reduce --compile-only --arch sm_90 --n 1024 "
      "--restrict 'block == 256 && ept == 4 && vec == 4 && pass == atomic' --shard auto",
      "mpirun --allow-run-as-root --oversubscribe -n 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* op : {"-DCUTUNE_OP=0)", "-DCUTUNE_OP=1)", "-DCUTUNE_OP=2)"}) {
    std::size_t seen = 0;
    for (std::size_t at = run.out.find(op); at != std::string::npos; at = run.out.find(op, at + 1)) ++seen;
    EXPECT_EQ(seen, 1u) << op << " compiled by " << seen << " ranks:\n" << run.out;
  }
}

TEST(Cli, UnwritableDatabaseIsOneLineAndExitTwo) {
  const auto folder = temp_folder();
  { std::ofstream(folder / "a-file") << "not a folder"; }
  expect_usage_error(tune("--kernel scan --device 0 --n 1024 --db " + (folder / "a-file" / "x.db").string()),
                     "cannot write database");
}

TEST(Cli, BestWithoutADatabaseSaysSo) {
  const auto folder = temp_folder();
  const CommandRun run = tune("--best --db " + (folder / "none.db").string());
  expect_usage_error(run, "no database at '" + (folder / "none.db").string() + "'");
  EXPECT_EQ(run.err.find("pass --db"), std::string::npos) << "it was passed: " << run.err;
}

TEST(Cli, BestPrintsStoredResults) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  const CommandRun run = tune("--best --kernel scan --db " + db);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("algo=warp"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("n=1,type=int32"), std::string::npos) << run.out;
}

TEST(Cli, GpuCommandWithoutDriverOrDeviceIsOneLine) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  if (machine_has_cuda_driver()) {
    expect_usage_error(tune("--kernel scan --device 99 --n 1024 --db " + db), "no CUDA device 99");
  } else {
    const CommandRun run = tune("--kernel scan --device 0 --n 1024 --db " + db);
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_EQ(run.err_lines(), 1) << run.err;
    EXPECT_NE(run.err.find("no CUDA driver"), std::string::npos) << run.err;
  }
  EXPECT_EQ(count_results(db), 1);
}

// ---- simulation and the strategy benchmark (CPU only) -----------------------------------------

namespace {
// Two parameters, three recorded configs, one of them failed; costs in ms.
std::string write_landscape(const std::filesystem::path& folder) {
  const std::string path = (folder / "tiny.json").string();
  std::ofstream(path) << R"({"tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": ["x", "y"]},
    "cache": {
      "1,x": {"a": 1, "b": "x", "time": 2.0, "compile_time": 500, "verification_time": 0, "benchmark_time": 500},
      "1,y": {"a": 1, "b": "y", "time": "CompilationFailedConfig", "compile_time": 250, "verification_time": 0, "benchmark_time": 0},
      "2,y": {"a": 2, "b": "y", "time": 1.5, "compile_time": 500, "verification_time": 100, "benchmark_time": 400}}})";
  return path;
}
}  // namespace

TEST(CliSimulate, ReplaysALandscapeAndWritesTheTrace) {
  const auto folder = temp_folder();
  const std::string landscape = write_landscape(folder), trace = (folder / "trace.csv").string();
  const CommandRun run = tune("--simulate " + landscape + " --strategy random_sampling --seed 3 --trace " + trace);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("simulated random_sampling (seed 3) on tiny: 3 evaluations, 2.2 s recorded time"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("best: 1.5 ms"), std::string::npos) << run.out;
  std::stringstream text;
  text << std::ifstream(trace).rdbuf();
  EXPECT_EQ(text.str().rfind("index,config,cost_s,objective\n", 0), 0u) << text.str();
  EXPECT_NE(text.str().find(",\"1,y\",0.25,\n"), std::string::npos) << text.str();  // failure: no objective
  int lines = 0;
  for (char c : text.str()) lines += c == '\n';
  EXPECT_EQ(lines, 4);
}

TEST(CliSimulate, DefaultStrategyAndBudgets) {
  const auto folder = temp_folder();
  const std::string landscape = write_landscape(folder);
  const CommandRun evals = tune("--simulate " + landscape + " --max-evals 1");
  ASSERT_EQ(evals.exit_code, 0) << evals.err;
  EXPECT_NE(evals.out.find(": 1 evaluations"), std::string::npos) << evals.out;
  EXPECT_NE(evals.out.find("max evals (1) reached"), std::string::npos) << evals.out;
  const CommandRun timed = tune("--simulate " + landscape + " --strategy brute_force --time-limit 0.5");
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  EXPECT_NE(timed.out.find(": 1 evaluations, 1.0 s recorded time"), std::string::npos) << timed.out;
}

TEST(CliSimulate, BadInputIsOneLineAndExitTwo) {
  const auto folder = temp_folder();
  const std::string landscape = write_landscape(folder);
  expect_usage_error(tune("--simulate " + (folder / "missing.json.gz").string()), "no such file");
  { std::ofstream(folder / "broken.json") << "{\"tune_params\": [1, 2"; }
  expect_usage_error(tune("--simulate " + (folder / "broken.json").string()), "is not valid JSON");
  { std::ofstream(folder / "other.json") << "{\"results\": []}"; }
  expect_usage_error(tune("--simulate " + (folder / "other.json").string()), "not a Kernel Tuner cache file");
  expect_usage_error(tune("--simulate " + landscape + " --strategy nosuch"), "unknown --strategy");
  expect_usage_error(tune("--simulate " + landscape + " --restrict '(((('"), "--restrict does not apply to --simulate");
  expect_usage_error(tune("--simulate " + landscape + " --time-limit -1"), "--time-limit must be positive");
  expect_usage_error(tune("--simulate " + landscape + " --trace " + (folder / "no" / "t.csv").string()),
                     "cannot write trace");
  const std::string db = seeded_database(folder);
  expect_usage_error(tune("--simulate " + db), "needs --kernel, one --problem and --device-uuid");
  expect_usage_error(tune("--simulate " + db + " --kernel scan --problem n=2,type=int32 --device-uuid GPU-test"),
                     "no results");
  expect_usage_error(tune("--strategy-bench " + (folder / "none").string()), "not a folder");
  expect_usage_error(tune("--strategy-bench " + folder.string() + " --repeats 0"), "--repeats must be positive");
}

TEST(CliSimulate, ReplaysResultsFromTheDatabase) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  const CommandRun run = tune("--simulate " + db + " --kernel scan --problem n=1,type=int32 --device-uuid GPU-test");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("best: 1 ms"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("algo=warp"), std::string::npos) << run.out;
}

TEST(CliReadOnly, ADatabaseInAFolderTheUserCannotWriteOpensForEveryReadingCommand) {
  // Deployed databases are package data: WAL mode, no -shm beside them, a folder the application
  // may not write. As root, permissions do not bind, so the commands run as nobody.
  const bool root = geteuid() == 0;
  if (root && std::system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "root, and no setpriv";
  const auto folder = temp_folder();
  std::filesystem::create_directories(folder / "pkg");
  const std::string db = seeded_database(folder / "pkg");
  std::set<std::string> written;  // by the writer: the database and its run lock file
  for (const auto& entry : std::filesystem::directory_iterator(folder / "pkg")) written.insert(entry.path().filename());
  std::filesystem::create_directories(folder / "out");
  std::filesystem::permissions(folder.path(), std::filesystem::perms::owner_all | std::filesystem::perms::others_read |
                                                  std::filesystem::perms::others_exec);
  std::filesystem::permissions(folder / "out", std::filesystem::perms::all);
  std::filesystem::permissions(folder / "pkg", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec |
                                                   std::filesystem::perms::others_read |
                                                   std::filesystem::perms::others_exec);
  const std::string as_user = root ? "setpriv --reuid=nobody --regid=nogroup --clear-groups" : "";
  for (const std::string command :
       {"db best", "db devices", "db families", "db runs", "--best", "--best --kernel scan"}) {
    const CommandRun run = tune(command + " --db " + db, as_user);
    EXPECT_EQ(run.exit_code, 0) << command << ": " << run.err;
    EXPECT_EQ(run.err.find("readonly"), std::string::npos) << command << ": " << run.err;
  }
  const CommandRun lookup = tune("db lookup --family scan --n 1 --device-uuid GPU-test --db " + db, as_user);
  EXPECT_EQ(lookup.exit_code, 0) << lookup.err;
  EXPECT_NE(lookup.out.find("level "), std::string::npos) << lookup.out;
  const CommandRun report = tune("report --db " + db + " --out " + (folder / "out").string(), as_user);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  for (const auto& entry : std::filesystem::directory_iterator(folder / "pkg"))
    EXPECT_TRUE(written.count(entry.path().filename())) << "a reader left " << entry.path();
  // Reports into a folder the user cannot write, or cannot create: bad input, one line.
  expect_usage_error(tune("report --db " + db + " --out " + (folder / "pkg").string(), as_user),
                     "cannot write reports into");
  expect_usage_error(tune("report --db " + db + " --out " + (folder / "pkg" / "new").string(), as_user),
                     "Permission denied");
  std::filesystem::permissions(folder / "pkg", std::filesystem::perms::owner_all);
}

TEST(CliReadOnly, ReadingCommandsRefuseAForeignOrNewerDatabaseAndChangeNothing) {
  const auto folder = temp_folder();
  const std::string foreign = (folder / "notes.sqlite").string();
  {
    cutune::sql::Database raw(foreign, cutune::sql::Database::Mode::read_write_create);
    raw.exec("CREATE TABLE notes (text TEXT)");
  }
  const auto size = std::filesystem::file_size(foreign);
  expect_usage_error(tune("db devices --db " + foreign), "is not a cutune database");
  expect_usage_error(tune("report --db " + foreign + " --out " + (folder / "out").string()),
                     "is not a cutune database");
  EXPECT_EQ(std::filesystem::file_size(foreign), size);
  {
    cutune::sql::Database raw(foreign, cutune::sql::Database::Mode::read_only);
    auto tables = raw.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
    tables.step();
    EXPECT_EQ(tables.column_int(0), 1) << "a reader added tables";
  }
  const std::string db = seeded_database(folder);
  {
    cutune::sql::Database raw(db, cutune::sql::Database::Mode::read_write_create);
    raw.exec("PRAGMA user_version=99");
  }
  expect_usage_error(tune("report --db " + db + " --out " + (folder / "out").string()), "newer than this cutune");
  expect_usage_error(tune("db best --db " + db), "newer than this cutune");
}

TEST(CliStrategyBench, PrintsATablePerGroup) {
  const auto folder = temp_folder();
  write_landscape(folder);
  const CommandRun run = tune("--strategy-bench " + folder.string() + " --repeats 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("| tiny | 3 |"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("| random_sampling |"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("| nlopt_direct_l |"), std::string::npos) << run.out;
  const CommandRun one = tune("--strategy-bench " + folder.string() + " --strategy genetic_algorithm");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.find("random_sampling"), std::string::npos) << one.out;

  // An option grid: a row per setting, and the leave-one-out table naming the setting chosen.
  const CommandRun grid = tune("--strategy-bench " + folder.string() +
                               " --strategy genetic_algorithm --strategy-option population=4,8 --leave-one-out");
  ASSERT_EQ(grid.exit_code, 0) << grid.err;
  EXPECT_NE(grid.out.find("| genetic_algorithm population=4 |"), std::string::npos) << grid.out;
  EXPECT_NE(grid.out.find("| genetic_algorithm population=8 |"), std::string::npos) << grid.out;
  EXPECT_NE(grid.out.find("Leave one landscape out"), std::string::npos) << grid.out;
  EXPECT_NE(grid.out.find("- genetic_algorithm without tiny: genetic_algorithm population="), std::string::npos)
      << grid.out;
  expect_usage_error(tune("--strategy-bench " + folder.string() + " --strategy-option population=4"),
                     "needs --strategy");
  expect_usage_error(
      tune("--strategy-bench " + folder.string() + " --strategy genetic_algorithm --strategy-option population=4,"),
      "an empty value");
}

// ---- tune db ------------------------------------------------------------------------------------

TEST(CliDb, BadInputIsOneLineExitTwoAndLosesNothing) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  const std::string with_db = " --db " + db;
  { std::ofstream(folder / "broken.json") << "{\"format\": \"cutune-results\", \"devices\": ["; }
  { std::ofstream(folder / "not-kt.json") << "{\"device_name\": \"x\"}"; }
  const std::string broken = (folder / "broken.json").string(), not_kt = (folder / "not-kt.json").string();
  const std::string out = (folder / "out.json").string();
  expect_usage_error(tune("db import " + (folder / "missing.json").string() + with_db), "cannot read");
  expect_usage_error(tune("db import " + broken + with_db), "not valid JSON");
  expect_usage_error(tune("db import-kt " + broken + with_db), "not valid JSON");
  expect_usage_error(tune("db import-kt " + not_kt + with_db), "not a Kernel Tuner cache file");
  expect_usage_error(tune("db import-t4 " + not_kt + with_db), "not a T4 results file");
  expect_usage_error(tune("db merge " + (folder / "missing.db").string() + with_db), "no database at");
  expect_usage_error(tune("db merge " + db + with_db), "is this database");
  expect_usage_error(tune("db export " + out + " --family nosuch" + with_db), "no family 'nosuch'");
  expect_usage_error(tune("db export " + out + " --device GPU-nosuch" + with_db), "no device 'GPU-nosuch'");
  expect_usage_error(tune("db export-kt " + out + " --problem n=7" + with_db), "no problem 'n=7'");
  expect_usage_error(tune("db export " + (folder / "no-folder" / "x.json").string() + with_db), "cannot write");
  expect_usage_error(tune("db best --family nosuch" + with_db), "no family 'nosuch'");
  expect_usage_error(tune("db runs --device nosuch" + with_db), "no device 'nosuch'");
  expect_usage_error(tune("db lookup --n 10" + with_db), "needs --family");
  expect_usage_error(tune("db lookup --family scan" + with_db), "needs --n");
  expect_usage_error(tune("db lookup --family scan --n 10 --cc nine" + with_db), "--cc must look like 9.0");
  expect_usage_error(tune("db lookup --family nosuch --n 10" + with_db), "no built-in default");
  expect_usage_error(tune("db devices --db " + (folder / "none.db").string()), "no database");
  expect_usage_error(tune("db" + with_db), "subcommand");
  EXPECT_EQ(count_results(db), 1);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// db lookup prints the whole stored plan in order: memsets too, which an application must run.
TEST(CliDb, LookupPrintsThePlansMemsets) {
  const auto folder = temp_folder();
  const std::string db =
      seeded_database(folder, R"([{"memset":"out","word":0,"bytes":4,"byte_offset":0},)"
                              R"({"kernel":"scan_warp","grid":[3,1,1],"block":[128,1,1],"dynamic_shared_bytes":0}])");
  const CommandRun run = tune("db lookup --family scan --n 1 --type int32 --device-uuid GPU-test --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto memset = run.out.find("memset     out bytes 0..4 to word 0x00000000");
  const auto launch = run.out.find("launch     scan_warp grid (3,1,1) block (128,1,1)");
  ASSERT_NE(memset, std::string::npos) << run.out;
  ASSERT_NE(launch, std::string::npos) << run.out;
  EXPECT_LT(memset, launch) << run.out;
}

// A reduce database with a sum and a min at the same size, the min's config faster.
std::string reduce_database(const std::filesystem::path& folder) {
  const std::string path = (folder / "reduce.db").string();
  cutune::db::Store store(path);
  store.put_problem_schema("reduce", cutune::ProblemSchema::from_json(
                                         nlohmann::json::parse(cutune::db::frozen_v3_problem_schema("reduce"))));
  cutune::db::DeviceRecord d;
  d.uuid = "GPU-test";
  d.name = "Test GPU";
  const auto device = store.upsert_device(d);
  const auto tmpl = store.upsert_template("reduce", "h", "s");
  const auto run = store.begin_run({0, "reduce", device, tmpl, "brute_force", 1, "", "", "", "", "", ""});
  for (const auto& [op, config, ms, word] :
       {std::tuple{"sum", "pass=twopass", 2.0, "0"}, {"min", "pass=atomic", 1.0, "2139095040"}}) {
    const std::string descriptor = std::string(R"({"n":1024,"op":")") + op + R"("})";
    cutune::db::ResultRecord r;
    r.run_id = run;
    r.device_id = device;
    r.template_id = tmpl;
    r.problem_id = store.upsert_problem({0, "reduce", "", 0, "", descriptor, ""});
    r.config = config;
    r.config_json = "{}";
    r.status = "ok";
    r.time_ms_median = ms;
    r.launch_json = std::string(R"([{"memset":"out","word":)") + word + R"(,"bytes":4,"byte_offset":0}])";
    store.add_result(r);
  }
  return path;
}

// A lookup names the problem's fields; answers come only from problems with the same fields.
TEST(CliDb, LookupMatchesTheProblemsFields) {
  const auto folder = temp_folder();
  const std::string db = " --db " + reduce_database(folder);
  const CommandRun sum = tune("db lookup --family reduce --n 1024 --problem op=sum --device-uuid GPU-test" + db);
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  EXPECT_NE(sum.out.find("config     pass=twopass"), std::string::npos) << sum.out;
  EXPECT_NE(sum.out.find("matching   op=sum,type=float32"), std::string::npos) << sum.out;
  EXPECT_NE(sum.out.find("to word 0x00000000"), std::string::npos) << sum.out;
  const CommandRun min = tune("db lookup --family reduce --problem n=1024,op=min --device-uuid GPU-test" + db);
  ASSERT_EQ(min.exit_code, 0) << min.err;
  EXPECT_NE(min.out.find("config     pass=atomic"), std::string::npos) << min.out;
  EXPECT_NE(min.out.find("to word 0x7f800000"), std::string::npos) << min.out;
  expect_usage_error(tune("db lookup --family reduce --n 1024 --problem opp=min" + db), "unknown problem field 'opp'");
  expect_usage_error(tune("db lookup --family reduce --n 1024 --problem op=avg" + db), "takes one of sum, min, max");
  const CommandRun families = tune("db families" + db);
  ASSERT_EQ(families.exit_code, 0) << families.err;
  EXPECT_NE(families.out.find("problem fields: n (extent), op (sum|min|max, default sum), type (float32|float64, "
                              "default float32)"),
            std::string::npos)
      << families.out;
}

// A scan database of GPU-test at n = 4096: the fastest (1.0 ms, 10 J), one 3 % slower at 6 J and
// 400 W, one 40 % slower at 1 J; at n = 8192 nothing has an energy.
std::string energy_database(const std::filesystem::path& folder) {
  const std::string path = (folder / "energy.db").string();
  cutune::db::Store store(path);
  cutune::db::DeviceRecord d;
  d.uuid = "GPU-test";
  d.name = "Test GPU";
  d.cc_major = 9;
  const auto device = store.upsert_device(d);
  const auto tmpl = store.upsert_template("scan", "h", "s");
  const auto run = store.begin_run({0, "scan", device, tmpl, "brute_force", 1, "", "", "", "", "", ""});
  for (const auto& [n, config, ms, energy] : {std::tuple{4096, "algo=a", 1.0, std::optional(10.0)},
                                              {4096, "algo=b", 1.03, std::optional(6.0)},
                                              {4096, "algo=c", 1.4, std::optional(1.0)},
                                              {8192, "algo=a", 2.0, std::optional<double>()},
                                              {8192, "algo=b", 2.01, std::optional<double>()}}) {
    cutune::db::ResultRecord r;
    r.run_id = run;
    r.device_id = device;
    r.template_id = tmpl;
    r.problem_id = store.upsert_problem({0, "scan", "n=" + std::to_string(n) + ",type=int32", n, "int32", "{}"});
    r.config = config;
    r.config_json = "{}";
    r.status = "ok";
    r.time_ms_median = ms;
    r.launch_json = "[]";
    r.observations.energy_j = energy;
    if (energy) r.observations.power_w = 2400 / *energy;
    store.add_result(r);
  }
  store.refresh_family_defaults();
  return path;
}

std::string file_bytes(const std::string& path) {
  std::stringstream bytes;
  bytes << std::ifstream(path, std::ios::binary).rdbuf();
  return bytes.str();
}

// --objective energy: per (device, problem) the least energy within --within (5 %) of the fastest;
// the fastest, saying so, where no energy was measured. Bad values: one line, exit 2, nothing changed.
TEST(CliDb, BestAndLookupTakeTheLeastEnergyWithinAWindow) {
  const auto folder = temp_folder();
  const std::string path = energy_database(folder), db = " --db " + path;
  const std::string before = file_bytes(path);
  CommandRun run = tune("db best --objective energy" + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("the least energy per run within 5% of the fastest time"), std::string::npos) << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(n=4096,type=int32 +1\.0300 +\+3\.0% +6 +400\.0  algo=b\n)")))
      << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(n=8192,type=int32 +2\.0000 +no energy +- +-  algo=a\n)")))
      << run.out;
  for (const char* within : {" --within 50%", " --within 50", " --within=50.0%"}) {
    run = tune(std::string("db best --objective energy") + within + db);
    ASSERT_EQ(run.exit_code, 0) << within << ": " << run.err;
    EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(n=4096,type=int32 +1\.4000 +\+40\.0% +1 +2400\.0  algo=c\n)")))
        << within << ": " << run.out;
  }
  run = tune("db best --objective time" + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(n=4096,type=int32 +1\.0000 .*algo=a\n)"))) << run.out;
  EXPECT_EQ(run.out, tune("db best" + db).out) << "time is the default";

  const std::string lookup = "db lookup --family scan --type int32 --device-uuid GPU-test";
  run = tune(lookup + " --n 4096 --objective energy" + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("config     algo=b\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("objective  the least energy within 5% of the fastest (1.0000 ms)\n"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("energy     6 J per run, 400.0 W\n"), std::string::npos) << run.out;
  run = tune(lookup + " --n 4096" + db);
  EXPECT_NE(run.out.find("config     algo=a\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("energy     10 J per run, 240.0 W\n"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("objective"), std::string::npos) << run.out;
  run = tune(lookup + " --n 8192 --objective energy --within 1%" + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("config     algo=a\n"), std::string::npos) << run.out;
  EXPECT_NE(
      run.out.find("objective  fastest: no result of n=8192,type=int32 on GPU-test within 1 % of the fastest has a "
                   "measured energy"),
      std::string::npos)
      << run.out;

  expect_usage_error(tune("db best --objective foo" + db), "--objective must be time or energy (got 'foo')");
  expect_usage_error(tune("db best --objective energy --within -3" + db),
                     "--within must be a percentage of at least 0, e.g. 5 or 5% (got '-3')");
  expect_usage_error(tune("db best --objective energy --within five" + db), "--within must be a percentage");
  expect_usage_error(tune("db best --objective energy --within nan" + db), "--within must be a percentage");
  expect_usage_error(tune("db best --within 5" + db), "--within needs --objective energy");
  expect_usage_error(tune(lookup + " --n 4096 --objective watts" + db), "--objective must be time or energy");
  expect_usage_error(tune("db best --objective foo --db " + (folder / "none.db").string()), "--objective must be");
  EXPECT_FALSE(std::filesystem::exists(folder / "none.db"));
  EXPECT_EQ(file_bytes(path), before) << "a reading command changed the database";
}

TEST(CliDb, ImportListExportLookupAndMerge) {
  const auto folder = temp_folder();
  const std::string db = (folder / "a.db").string(), other = (folder / "b.db").string();
  CUTUNE_ASSERT_LANDSCAPES();
  const std::string landscape = (cutune::testing::landscapes_folder() / "pnpoly_RTX_3090.json.gz").string();
  CommandRun run = tune("db import-kt " + landscape + " --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("imported 4092 results"), std::string::npos) << run.out;

  run = tune("db devices --db " + db);
  EXPECT_NE(run.out.find("NVIDIA GeForce RTX 3090"), std::string::npos) << run.out;
  run = tune("db families --db " + db);
  EXPECT_NE(run.out.find("cn_pnpoly"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("4092 results"), std::string::npos) << run.out;
  run = tune("db runs --db " + db);
  EXPECT_NE(run.out.find("kernel_tuner_import"), std::string::npos) << run.out;
  run = tune("db best --device 'NVIDIA GeForce RTX 3090' --db " + db);
  EXPECT_NE(run.out.find("between_method=0,block_size_x=256,tile_size=20,use_method=2"), std::string::npos) << run.out;
  run = tune(
      "db lookup --family cn_pnpoly --n 20000000 --type '' --device-name 'NVIDIA GeForce RTX 3090' --arch sm_86 --db " +
      db);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("exact_device"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cubin      none"), std::string::npos) << run.out;

  const std::string exported = (folder / "all.json.gz").string();
  ASSERT_EQ(tune("db export " + exported + " --db " + db).exit_code, 0);
  run = tune("db import " + exported + " --db " + other);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(count_results(other), 4092);
  run = tune("db merge " + db + " --db " + other);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(count_results(other), 4092);
  for (const char* format : {"export-kt", "export-t4"}) {
    const std::string file = (folder / (std::string(format) + ".json")).string();
    run = tune(std::string("db ") + format + " " + file + " --db " + db);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_TRUE(std::filesystem::exists(file)) << format;
  }
}

TEST(CliDb, RunsListsARunWhoseProcessDiedAsAbandonedWithoutWriting) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  // The same run begun by a process that is then killed with -9.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cutune::db::Store store(db);
    store.begin_run({0, "scan", 1, 1, "random_sampling", 1, "", "", "", "", "", ""});
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const auto before = std::filesystem::last_write_time(db);
  const CommandRun run = tune("db runs --db " + db);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto line = run.out.find("random_sampling");
  ASSERT_NE(line, std::string::npos) << run.out;
  EXPECT_NE(run.out.substr(line, run.out.find('\n', line) - line).find(" abandoned "), std::string::npos) << run.out;
  EXPECT_EQ(std::filesystem::last_write_time(db), before);
}

// ---- fuzzed input (issue 17, items 9, 10 and 12; tests/fuzz has the harness and every saved input) ----

namespace {

// Every row of every table of the database at `path`, as text.
std::string database_rows(const std::string& path) {
  cutune::sql::Database db(path, cutune::sql::Database::Mode::read_only);
  std::vector<std::string> tables;
  auto names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  while (names.step()) tables.push_back(names.column_text(0));
  std::string rows;
  for (const auto& table : tables) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db.handle(), ("SELECT * FROM \"" + table + "\" ORDER BY 1").c_str(), -1, &s, nullptr);
    rows += table + ":";
    while (sqlite3_step(s) == SQLITE_ROW)
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const auto* bytes = static_cast<const char*>(sqlite3_column_blob(s, c));
        rows.append(bytes ? bytes : "<null>", bytes ? static_cast<std::size_t>(sqlite3_column_bytes(s, c)) : 6) += '|';
      }
    sqlite3_finalize(s);
  }
  return rows;
}

// Exit 2, one `tune: error:` line of at most 300 characters holding `message`.
void expect_short_usage_error(const CommandRun& run, const std::string& message) {
  expect_usage_error(run, message);
  std::size_t characters = 0;
  for (const char c : run.err) characters += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  EXPECT_LE(characters, 301u) << run.err;  // the line and its newline
}

}  // namespace

TEST(CliFuzzedInput, KernelTunerFilesThatOnceExitedOneAreRefusedAndChangeNothing) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  const std::string before = database_rows(db);
  const auto import_kt = [&](const std::string& name, const std::string& text) {
    std::ofstream(folder / name) << text;
    return tune("db import-kt " + (folder / name).string() + " --db " + db);
  };
  const std::string header =
      R"({"device_name": "GPU", "kernel_name": "k", "problem_size": 64, "tune_params": {"a": [1, 2], "b": [3, 4]}, )";
  // The issue's two triggers: an extra tune_params_keys entry (basic_string::substr, exit 1) and an empty key.
  expect_short_usage_error(
      import_kt("extra.json",
                header + R"("tune_params_keys": ["a", "b", "c"], "cache": {"1,3": {"a": 1, "b": 3, "time": 1.5}}})"),
      "cache entry '1,3': it lacks parameter 'c'");
  expect_short_usage_error(
      import_kt("empty.json", header + R"("tune_params_keys": ["a", "b"], "cache": {"": {"time": 1.5}}})"),
      "a cache entry has an empty key");
  // Values that make no sense.
  expect_short_usage_error(
      import_kt("time.json", header + R"("tune_params_keys": ["a", "b"], "cache": {"1,3": {"time": -1.5}}})"),
      "\"time\" is -1.5, not a positive number");
  expect_short_usage_error(
      import_kt(
          "name.json",
          R"({"device_name": "GPU", "kernel_name": "", "tune_params_keys": ["a"], "cache": {"1": {"time": 1.5}}})"),
      "\"kernel_name\" is '', not a non-empty string");
  expect_short_usage_error(
      import_kt(
          "big.json",
          R"({"device_name": "GPU", "kernel_name": "k", "problem_size": "big", "tune_params_keys": ["a"], "cache": {"1": {"time": 1.5}}})"),
      "\"problem_size\" is 'big'");
  expect_short_usage_error(
      import_kt(
          "negative.json",
          R"({"device_name": "GPU", "kernel_name": "k", "problem_size": [0, -1], "tune_params_keys": ["a"], "cache": {"1": {"time": 1.5}}})"),
      "\"problem_size\" is [0,-1]");
  expect_short_usage_error(
      import_kt("huge.json", header + R"("tune_params_keys": ["a", "b"], "cache": {"1,3": {"time": 1e999}}})"),
      "number overflow");
  // A segmentation fault before: 100 000 nested arrays.
  expect_short_usage_error(
      import_kt("deep.json", header + R"("tune_params_keys": ["a", "b"], "cache": {"1,3": {"time": 1.5, "times": )" +
                                 std::string(100000, '[') + std::string(100000, ']') + "}}}"),
      "deeper than 64 levels");
  EXPECT_EQ(database_rows(db), before);
}

TEST(CliFuzzedInput, CutuneDocumentsAndT4FilesThatMakeNoSenseAreRefused) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  const std::string before = database_rows(db);
  const auto import = [&](const std::string& command, const std::string& name, const std::string& text,
                          const std::string& options = "") {
    std::ofstream(folder / name) << text;
    return tune("db " + command + " " + (folder / name).string() + " --db " + db + options);
  };
  const std::string document = R"({"format": "cutune-results", "format_version": 1,
    "devices": [{"uuid": "GPU-x", "name": "X", "copy_bandwidth_gbs": BANDWIDTH}],
    "templates": [{"family": "stencil", "source_hash": "h"}],
    "problems": [{"family": "stencil", "key": "n=1", "size": 1, "dtype": ""}],
    "runs": [{"id": 1, "family": "stencil", "device_uuid": "GPU-x", "template_hash": "h", "strategy": "s", "started_at": ""}],
    "results": [{"run": 1, "device_uuid": "GPU-x", "family": "stencil", "template_hash": "h", "problem_key": "n=1",
                 "config": "a=1", "status": "STATUS", "time_ms_median": 1.5}], "cubins": [CUBINS]})";
  const auto with = [&](std::string bandwidth, std::string status, std::string cubins = "") {
    std::string text = document;
    text.replace(text.find("BANDWIDTH"), 9, bandwidth);
    text.replace(text.find("STATUS"), 6, status);
    text.replace(text.find("CUBINS"), 6, cubins);
    return text;
  };
  expect_short_usage_error(import("import", "status.json", with("100", "bogus")), "unknown status 'bogus'");
  expect_short_usage_error(import("import", "bandwidth.json", with("-5", "ok")),
                           "\"copy_bandwidth_gbs\" is -5, not a positive number");
  // Observations (issue 20): a member of the wrong type, named with the entry it is in.
  std::string observed = with("100", "ok");
  observed.replace(observed.find("\"time_ms_median\""), 0, R"("observations": {"energy_j": "lots"}, )");
  expect_short_usage_error(import("import", "observed.json", observed),
                           "observed.json' (results[0]): \"observations\": observation 'energy_j' must be a number");
  // A file cut short inside a long base64 string printed 9 743 characters.
  const std::string cut = with("100", "ok",
                               R"({"family": "stencil", "template_hash": "h", "problem_key": "n=1", "arch": "sm_90",
      "config": "a=1", "cubin_base64": ")" +
                                   std::string(20000, 'Q') + "\"}");
  expect_short_usage_error(import("import", "cut.json", cut.substr(0, cut.size() - 5000)), "is not valid JSON");
  const std::string t4 =
      R"({"results": [{"configuration": {"a": 1}, "invalidity": "correct", "measurements": [{"name": "time", "value": 0}]}]})";
  expect_short_usage_error(import("import-t4", "t4.json", t4, " --family stencil --device-name GPU"),
                           "\"time\" is 0, not a positive number");
  expect_short_usage_error(import("import-t4", "t4.json", t4, " --family stencil --device-name GPU --problem-size 0"),
                           "--problem-size must be a positive number");
  EXPECT_EQ(database_rows(db), before);
}

TEST(CliFuzzedInput, SimulatedLandscapesThatOnceExitedOneAreRefused) {
  const auto folder = temp_folder();
  const auto simulate = [&](const std::string& name, const std::string& text) {
    std::ofstream(folder / name) << text;
    return tune("--simulate " + (folder / name).string());
  };
  const std::string params = R"("tune_params": {"a": [1, 2], "b": [3, 4]}, )";
  // Was: [json.exception.type_error.302] type must be string, but is number (exit 1).
  expect_short_usage_error(
      simulate("key.json",
               "{" + params + R"("tune_params_keys": ["a", 7], "cache": {"1,3": {"a": 1, "b": 3, "time": 1.5}}})"),
      "\"tune_params_keys\" is 7");
  // A negative time would have been replayed as the best.
  expect_short_usage_error(
      simulate(
          "time.json",
          "{" + params +
              R"("tune_params_keys": ["a", "b"], "cache": {"1,3": {"a": 1, "b": 3, "time": 1.5}, "2,4": {"a": 2, "b": 4, "time": -3}}})"),
      "cache entry '2,4': \"time\" is -3, not a positive number");
}

TEST(CliSpace, PrintsAxesValuesConstraintsAndCounts) {
  CommandRun run = tune("space --kernel reduce --arch sm_90");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("reduce on sm_90: 1728 raw configs, ", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("   ept "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("4, 16, 64"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("atomic, lastblock, twopass"), std::string::npos) << run.out;  // labels, not numbers
  EXPECT_NE(run.out.find("  *preset"), std::string::npos) << run.out;                   // plan-only axis
  EXPECT_NE(run.out.find("\n  ept % vec == 0\n"), std::string::npos) << run.out;

  run = tune("space --kernel reduce --restrict 'ept == 16 && pass == twopass' --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["family"], "reduce");
  EXPECT_EQ(json["raw_configs"], 1728);
  const std::int64_t restricted = json["valid_configs"];
  EXPECT_GT(restricted, 0);
  EXPECT_EQ(json["restrictions"], nlohmann::json::array({"ept == 16 && pass == twopass"}));
  EXPECT_EQ(json["axes"][1]["name"], "ept");
  EXPECT_EQ(json["axes"][1]["values"], nlohmann::json::array({4, 16, 64}));
  EXPECT_EQ(json["axes"][6]["labels"], nlohmann::json::array({"atomic", "lastblock", "twopass"}));
  const auto unrestricted = nlohmann::json::parse(tune("space --kernel reduce --json").out);
  EXPECT_GT(unrestricted["valid_configs"].get<std::int64_t>(), restricted);

  expect_usage_error(tune("space"), "tune space needs --kernel");
  expect_usage_error(tune("space --kernel nosuch"), "unknown kernel 'nosuch'");
}

TEST(CliSpace, ARestrictionThatLeavesNothingNamesTheValuesThere) {
  const auto folder = temp_folder();
  const std::string db = seeded_database(folder);
  // ept has no value 8 in reduce: the error says which values there are.
  expect_usage_error(tune("--kernel reduce --device 0 --restrict 'ept == 8' --db " + db),
                     "--restrict leaves no config of reduce on ");
  const CommandRun run = tune("space --kernel reduce --restrict 'ept == 8 && block >= 128'");
  expect_usage_error(run, "in its valid configs block is 128, 256, 512, 1024; ept is 4, 16, 64");
  EXPECT_EQ(count_results(db), 1);
}

TEST(CliProgress, LongCommandsPrintProgressLinesInAPipe) {
  // On a pipe the line comes every few seconds, and always once at the end.
  const auto folder = temp_folder();
  write_landscape(folder);
  CommandRun run = tune("--strategy-bench " + folder.string() + " --strategy random_sampling --repeats 3");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("[strategy bench] 3/3 simulations  ETA 0s\n"), std::string::npos) << run.err;
  run = tune("--kernel scan --compile-only --arch sm_90 --no-cache --restrict 'block == 256 && ept == 4 && vec == 4'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("[scan sm_90 int32] "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(" compiled  ETA 0s\n"), std::string::npos) << run.err;
  run = tune("--kernel scan --compile-only --arch sm_90 --quiet --restrict 'block == 256 && ept == 4 && vec == 4'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
}

TEST(CliProgress, ImportsAndMergesPrintProgressLinesOnStderrAndLeaveStdoutAlone) {
  // Every import and the merge: stdout holds the one summary line it always held, stderr the
  // progress line (in a pipe: every few seconds and once at the end, naming the command and file).
  const auto folder = temp_folder();
  CUTUNE_ASSERT_LANDSCAPES();
  const std::string landscape = (cutune::testing::landscapes_folder() / "pnpoly_RTX_3090.json.gz").string();
  const std::string db = (folder / "a.db").string();
  const auto expect_import = [](const CommandRun& run, const std::string& from, const std::string& into,
                                const std::string& progress) {
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out,
              "imported 4092 results (1 devices, 1 problems, 1 runs, 0 cubins) from " + from + " into " + into + "\n");
    EXPECT_NE(run.err.find(progress + " 4092/4092 rows  ETA 0s\n"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find('\r'), std::string::npos) << "a pipe gets whole lines";
  };
  expect_import(tune("db import-kt " + landscape + " --db " + db), landscape, db,
                "[import-kt pnpoly_RTX_3090.json.gz]");

  const std::string json = (folder / "all.json.gz").string(), t4 = (folder / "t4.json").string();
  ASSERT_EQ(tune("db export " + json + " --db " + db).exit_code, 0);
  ASSERT_EQ(tune("db export-t4 " + t4 + " --db " + db).exit_code, 0);
  const std::string b = (folder / "b.db").string(), c = (folder / "c.db").string(), d = (folder / "d.db").string();
  expect_import(tune("db import " + json + " --db " + b), json, b, "[import all.json.gz]");
  expect_import(tune("db import-t4 " + t4 + " --db " + c), t4, c, "[import-t4 t4.json]");
  expect_import(tune("db merge " + db + " --db " + d), db, d, "[merge a.db]");

  const CommandRun quiet = tune("db merge " + db + " --db " + d + " --quiet");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

TEST(CliDb, KernelTunerAndT4FilesExportedFromTheirImportKeepEveryField) {
  // The fuzzers' seeds: a Kernel Tuner file with samples, metrics and failures; a T4 file with
  // runtimes, units, a compile failure and a wrong result. Every member of the source comes back.
  const auto folder = temp_folder();
  const std::string corpus = std::string(CUTUNE_SOURCE_DIR) + "/tests/fuzz/corpus/";
  const auto read = [](const std::string& path) { return nlohmann::json::parse(std::ifstream(path)); };
  const auto expect_kept = [](const nlohmann::json& source, const nlohmann::json& written, const std::string& where) {
    for (const auto& [name, value] : source.items()) {
      ASSERT_TRUE(written.contains(name)) << where << ": " << name << " was lost";
      EXPECT_EQ(written.at(name), value) << where << ": " << name;
    }
  };
  const std::string kt_db = (folder / "kt.db").string(), kt_out = (folder / "kt.json").string();
  ASSERT_EQ(tune("db import-kt " + corpus + "kernel_tuner-tiny.json --quiet --db " + kt_db).exit_code, 0);
  const CommandRun kt = tune("db export-kt " + kt_out + " --db " + kt_db);
  ASSERT_EQ(kt.exit_code, 0) << kt.err;
  const auto kt_source = read(corpus + "kernel_tuner-tiny.json"), kt_written = read(kt_out);
  for (const auto& [name, value] : kt_source.items())
    if (name != "cache") expect_kept(nlohmann::json{{name, value}}, kt_written, "header");
  ASSERT_EQ(kt_written.at("cache").size(), kt_source.at("cache").size());
  for (const auto& [key, entry] : kt_source.at("cache").items())
    expect_kept(entry, kt_written.at("cache").at(key), key);

  const std::string t4_db = (folder / "t4.db").string(), t4_out = (folder / "t4.json").string();
  ASSERT_EQ(tune("db import-t4 " + corpus + "t4-plain.json --family stencil --device-name GPU --quiet --db " + t4_db)
                .exit_code,
            0);
  ASSERT_EQ(tune("db export-t4 " + t4_out + " --db " + t4_db).exit_code, 0);
  const auto t4_source = read(corpus + "t4-plain.json"), t4_written = read(t4_out);
  ASSERT_EQ(t4_written.at("results").size(), t4_source.at("results").size());
  for (std::size_t i = 0; i < t4_source.at("results").size(); ++i)
    expect_kept(t4_source.at("results")[i], t4_written.at("results")[i], "results[" + std::to_string(i) + "]");
}

// ---- tune report: the index and --compare (issue 21) ----------------------------------------------

namespace {

struct TwoDevices {
  std::string path;
  std::int64_t run_a = 0, run_b = 0;
};

// The scan problem n = 1024 on two devices, GPU-report-a and GPU-report-b, a run each.
TwoDevices two_device_database(const std::filesystem::path& folder) {
  TwoDevices made{(folder / "two.db").string()};
  cutune::db::Store store(made.path);
  const auto tmpl = store.upsert_template("scan", "h", "s");
  const auto problem = store.upsert_problem({0, "scan", "n=1024,type=int32", 1024, "int32", "{}"});
  for (const char* uuid : {"GPU-report-a", "GPU-report-b"}) {
    cutune::db::DeviceRecord d;
    d.uuid = uuid;
    d.name = std::string("Report GPU ") + uuid[11];
    const auto device = store.upsert_device(d);
    const auto run = store.begin_run({0, "scan", device, tmpl, "brute_force", 1, "", "tune", "", "", "", ""});
    (uuid[11] == 'a' ? made.run_a : made.run_b) = run;
    for (int block : {128, 256}) {
      cutune::db::ResultRecord r;
      r.run_id = run;
      r.device_id = device;
      r.template_id = tmpl;
      r.problem_id = problem;
      r.config = "algo=warp,block=" + std::to_string(block);
      r.config_json = R"({"algo":"warp","block":)" + std::to_string(block) + "}";
      r.status = "ok";
      r.time_ms_median = block == (uuid[11] == 'a' ? 128 : 256) ? 1.0 : 2.0;
      r.launch_json = "[]";
      store.add_result(r);
    }
    store.finish_run(run, "finished");
  }
  return made;
}

}  // namespace

TEST(CliReport, WritesAnIndexBesideTheReports) {
  const auto folder = temp_folder();
  const auto db = two_device_database(folder.path());
  const std::string out = (folder / "out").string();
  const CommandRun run = tune("report --db " + db.path + " --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find(out + "/index.html\n"), std::string::npos) << run.out;
  int pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out)) pages += entry.path().extension() == ".html";
  EXPECT_EQ(pages, 3);  // a report per device, and the index
  // A filtered selection gets an index of what it wrote; one run gets no index.
  const std::string single = (folder / "single").string();
  EXPECT_EQ(tune("report --db " + db.path + " --out " + single + " --run " + std::to_string(db.run_a)).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(single) / "index.html"));
}

TEST(CliReport, CompareWritesOnePageForTwoRunsOrTwoDevices) {
  const auto folder = temp_folder();
  const auto db = two_device_database(folder.path());
  const std::string out = (folder / "out").string();
  for (const std::string& sides : std::vector<std::string>{"GPU-report-a GPU-report-b", "'Report GPU a' GPU-report-b",
                                                           std::to_string(db.run_a) + " " + std::to_string(db.run_b)}) {
    const CommandRun run = tune("report --db " + db.path + " --out " + out + " --compare " + sides);
    ASSERT_EQ(run.exit_code, 0) << sides << ": " << run.err;
    const std::string path = run.out.substr(0, run.out.find('\n'));
    EXPECT_TRUE(std::filesystem::exists(path)) << run.out;
    EXPECT_EQ(std::filesystem::path(path).filename().string().rfind("compare-", 0), 0u) << path;
  }
}

TEST(CliReport, CompareBadInputIsOneLineAndExitTwo) {
  const auto folder = temp_folder();
  const auto db = two_device_database(folder.path());
  const std::string out = (folder / "out").string();
  const std::string with = " --db " + db.path + " --out " + out;
  const std::string a = std::to_string(db.run_a), b = std::to_string(db.run_b);
  expect_usage_error(tune("report --compare " + a + with), "--compare");
  expect_usage_error(tune("report --compare " + a + " " + b + " 3" + with), "3");
  expect_usage_error(tune("report --compare " + a + " 99" + with), "--compare: no run 99 in the database");
  expect_usage_error(tune("report --compare 99999999999999999999 " + a + with), "no run 99999999999999999999");
  expect_usage_error(tune("report --compare GPU-report-a GPU-nosuch" + with), "no run or device 'GPU-nosuch'");
  expect_usage_error(tune("report --compare GPU-report GPU-report-a" + with), "matches 2 devices");
  expect_usage_error(tune("report --compare " + a + " GPU-report-b" + with), "compare two runs or two devices");
  expect_usage_error(tune("report --compare " + a + " " + a + with), "the same run twice");
  expect_usage_error(tune("report --compare GPU-report-a GPU-report-a" + with), "the same device twice");
  expect_usage_error(tune("report --compare GPU-report-a GPU-report-b --kernel reduce" + with), "share no problem");
  expect_usage_error(tune("report --compare " + a + " " + b + " --run " + a + with),
                     "give --run or --compare, not both");
  expect_usage_error(tune("report --compare GPU-report-a GPU-report-b --device-uuid GPU-report-a" + with),
                     "--device-uuid");
  EXPECT_FALSE(std::filesystem::exists(out)) << "bad input wrote pages";
}

// The version names the project's version and the commit the binary was built from.
TEST(Cli, VersionNamesTheProjectVersionAndTheCommit) {
  const auto run = tune("--version");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(
      std::regex_search(run.out, std::regex(R"(^cutune [0-9]+\.[0-9]+\.[0-9]+ \(([0-9a-f]{7,}(\+dirty)?|unknown)\))")))
      << run.out;
}

// ---- subcommands, the old mode flags, --json (issue 18, section 3) ------------------------------

namespace {

// One JSON document on stdout and nothing on stderr, or a failure naming the command.
nlohmann::json json_of(const std::string& arguments) {
  const CommandRun run = tune(arguments);
  EXPECT_EQ(run.exit_code, 0) << arguments << ": " << run.err;
  EXPECT_EQ(run.err, "") << arguments;
  try {
    return nlohmann::json::parse(run.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << arguments << ": not one JSON document (" << e.what() << "):\n" << run.out;
    return nlohmann::json::object();
  }
}

// What differs between two runs of one command: "(0.4 s)" and a table's last column (ms/eval).
std::string without_timings(const std::string& text) {
  return std::regex_replace(std::regex_replace(text, std::regex(R"(\([0-9.]+ s\))"), "(s)"),
                            std::regex(R"(\| [0-9.]+ \|\n)"), "| t |\n");
}

}  // namespace

TEST(CliSubcommands, OldModeFlagsPrintWhatTheirSubcommandsPrint) {
  const auto folder = temp_folder();
  std::filesystem::create_directories(folder / "landscapes");
  const std::string landscapes = (folder / "landscapes").string(), landscape = write_landscape(landscapes);
  const std::string path = seeded_database(folder), db = " --db " + path;

  EXPECT_EQ(tune("--list").out, tune("families").out);
  EXPECT_EQ(tune("--list --json").out, tune("families --json").out);
  const std::string restricted = " --arch sm_90 --quiet --restrict 'block == 256 && ept == 4 && vec == 4'";
  const CommandRun compile = tune("compile --kernel scan" + restricted);
  ASSERT_EQ(compile.exit_code, 0) << compile.err;
  EXPECT_EQ(without_timings(tune("--kernel scan --compile-only" + restricted).out), without_timings(compile.out));
  const CommandRun simulate = tune("simulate " + landscape + " --seed 3 --strategy greedy_ils");
  ASSERT_EQ(simulate.exit_code, 0) << simulate.err;
  EXPECT_EQ(tune("--simulate " + landscape + " --seed 3 --strategy greedy_ils").out, simulate.out);
  const std::string bench = landscapes + " --strategy random_sampling --repeats 2 --quiet";
  const CommandRun scored = tune("strategies " + bench);
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  EXPECT_NE(scored.out.find("| random_sampling |"), std::string::npos) << scored.out;
  EXPECT_EQ(without_timings(tune("--strategy-bench " + bench).out), without_timings(scored.out));
  const CommandRun best = tune("db best --family scan" + db);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(tune("--best --kernel scan" + db).out, best.out);
  EXPECT_EQ(tune("--best --json" + db).out, tune("db best --json" + db).out);
  // The short form is tune run: here both stop at the GPU (none, or no device 99) the same way.
  const CommandRun run = tune("run --kernel scan --device 99 --n 1024" + db);
  const CommandRun short_form = tune("--kernel scan --device 99 --n 1024" + db);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(short_form.exit_code, run.exit_code);
  EXPECT_EQ(short_form.err, run.err);
  EXPECT_EQ(count_results(path), 1);
}

TEST(CliSubcommands, BadInputIsOneLineAndExitTwo) {
  const auto folder = temp_folder();
  const std::string path = seeded_database(folder), db = " --db " + path;
  const std::string landscape = write_landscape(folder);
  expect_usage_error(tune("bogus"), "unknown subcommand 'bogus' (tune --help lists them)");
  expect_usage_error(tune("db bogus" + db), "unknown subcommand 'bogus' (tune db --help lists them)");
  expect_usage_error(tune("db --json" + db), "tune db needs a subcommand before --json");
  expect_usage_error(tune("compile --kernel scan --device 0"),
                     "tune compile has no option --device; it is an option of tune run, tune db runs");
  expect_usage_error(tune("run --kernel scan --device 0 --covering-sample" + db),
                     "tune run has no option --covering-sample; it is an option of tune compile");
  expect_usage_error(
      tune("simulate " + landscape + " --restrict 'a == 1'"),
      "tune simulate has no option --restrict; it is an option of tune run, tune compile and tune space");
  expect_usage_error(tune("space --kernel scan --nosuch"),
                     "tune space has no option --nosuch (tune space --help lists");
  expect_usage_error(
      tune("db best --objective=energy --within=5 --device-name x" + db),
      "tune db best has no option --device-name; it is an option of tune db lookup and tune db import-t4");
  expect_usage_error(tune("--db " + path + " db best"), "--db is given before the subcommand 'db'");
  expect_usage_error(tune("run compile"), "tune run does not take 'compile'");
  expect_usage_error(tune("families extra"), "tune families does not take 'extra'");
  expect_usage_error(tune("simulate"), "tune simulate needs a LANDSCAPE");
  expect_usage_error(tune("simulate " + landscape + " " + landscape), "tune simulate does not take '");
  expect_usage_error(tune("compile --arch sm_90"), "tune compile needs --kernel NAME (see tune families)");
  expect_usage_error(tune("run --kernel scan" + db), "tuning needs --device N");
  expect_usage_error(tune("run --kernel nosuch --device 0" + db), "unknown kernel 'nosuch'");
  expect_usage_error(tune("run --kernel scan --device 0 --n 0" + db), "--n must be positive");
  expect_usage_error(tune("strategies --repeats 3"), "--repeats goes with a FOLDER of landscapes");
  expect_usage_error(tune("strategies --strategy nosuch"), "unknown --strategy");
  expect_usage_error(tune("strategies " + folder.string() + " --json"), "--json lists the strategies");
  expect_usage_error(tune("--kernel scan --device 0 --json" + db), "--json goes with --list or --best");
  expect_usage_error(tune("db best --json --objective watts" + db), "--objective must be time or energy");
  EXPECT_EQ(count_results(path), 1);
}

TEST(CliJson, FamiliesAndStrategiesAsJson) {
  const nlohmann::json families = json_of("families --json").at("families");
  std::string names;
  for (const auto& f : families) {
    for (const char* key : {"name", "summary", "template", "problem_fields"}) EXPECT_TRUE(f.contains(key)) << key << f;
    names += f.at("name").get<std::string>() + " ";
  }
  std::string listed;  // the text listing's first words
  std::istringstream text(tune("families").out);
  for (std::string line; std::getline(text, line);) listed += line.substr(0, line.find(' ')) + " ";
  EXPECT_EQ(names, listed);
  EXPECT_EQ(families.at(0).at("problem_fields").at(0).at("name"), "n");
  EXPECT_EQ(families.at(0).at("problem_fields").at(0).at("kind"), "extent");

  const nlohmann::json strategies = json_of("strategies --json").at("strategies");
  int defaults = 0;
  bool bayes_opt_initial = false;
  for (const auto& s : strategies) {
    defaults += s.at("default").get<bool>();
    for (const auto& o : s.at("options")) {
      for (const char* key : {"name", "default", "allowed", "help"}) EXPECT_TRUE(o.contains(key)) << key << o;
      bayes_opt_initial |= s.at("name") == "bayes_opt" && o.at("name") == "initial";
    }
  }
  EXPECT_EQ(defaults, 1);
  EXPECT_TRUE(bayes_opt_initial) << strategies;
  EXPECT_EQ(json_of("strategies --strategy greedy_ils --json").at("strategies").size(), 1u);
  const CommandRun listed_text = tune("strategies");
  EXPECT_EQ(listed_text.exit_code, 0) << listed_text.err;
  EXPECT_NE(listed_text.out.find("bayes_opt (the default"), std::string::npos) << listed_text.out;
}

TEST(CliJson, DatabaseListingsAndLookupAsJson) {
  const auto folder = temp_folder();
  const std::string path =
      seeded_database(folder, R"([{"memset":"out","word":0,"bytes":4,"byte_offset":0},)"
                              R"({"kernel":"scan_warp","grid":[3,1,1],"block":[128,1,1],"dynamic_shared_bytes":0}])");
  const std::string db = " --db " + path;
  const nlohmann::json devices = json_of("db devices --json" + db).at("devices");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].at("uuid"), "GPU-test");
  EXPECT_EQ(devices[0].at("name"), "Test GPU");
  EXPECT_EQ(devices[0].at("results"), 1);
  EXPECT_EQ(devices[0].at("ok_results"), 1);
  EXPECT_TRUE(devices[0].at("copy_bandwidth_gbs").is_null());

  const nlohmann::json families = json_of("db families --json" + db).at("families");
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].at("name"), "scan");
  EXPECT_EQ(families[0].at("results"), 1);
  EXPECT_TRUE(families[0].contains("problem_fields"));

  const nlohmann::json runs = json_of("db runs --json" + db).at("runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].at("family"), "scan");
  EXPECT_EQ(runs[0].at("strategy"), "brute_force");
  EXPECT_EQ(runs[0].at("results"), 1);
  const std::string status = runs[0].at("status");
  EXPECT_NE(tune("db runs" + db).out.find(" " + status + " "), std::string::npos)
      << "the text says the same: " << status;
  EXPECT_EQ(json_of("db runs --family scan --device 'Test GPU' --json" + db).at("runs").size(), 1u);

  const nlohmann::json best = json_of("db best --json" + db);
  EXPECT_EQ(best.at("objective"), "time");
  EXPECT_TRUE(best.at("within").is_null());
  ASSERT_EQ(best.at("best").size(), 1u);
  const nlohmann::json& row = best.at("best")[0];
  EXPECT_EQ(row.at("device_uuid"), "GPU-test");
  EXPECT_EQ(row.at("family"), "scan");
  EXPECT_EQ(row.at("problem_key"), "n=1,type=int32");
  EXPECT_EQ(row.at("config"), "algo=warp");
  EXPECT_EQ(row.at("time_ms"), 1.0);
  EXPECT_TRUE(row.at("gbs").is_null());
  expect_usage_error(tune("db best --device GPU-other --json" + db), "no device 'GPU-other'");  // not an empty list

  const std::string lookup = "db lookup --family scan --n 1 --type int32 --device-uuid GPU-test --json" + db;
  nlohmann::json match = json_of(lookup);
  EXPECT_EQ(match.at("config"), "algo=warp");
  EXPECT_EQ(match.at("objective"), "time");
  EXPECT_EQ(match.at("device_uuid"), "GPU-test");
  EXPECT_EQ(match.at("time_ms"), 1.0);
  ASSERT_EQ(match.at("steps").size(), 2u);
  EXPECT_EQ(match.at("steps")[0].at("kind"), "memset");
  EXPECT_EQ(match.at("steps")[0].at("buffer"), "out");
  EXPECT_EQ(match.at("steps")[1].at("kind"), "launch");
  EXPECT_EQ(match.at("steps")[1].at("grid"), nlohmann::json::array({3, 1, 1}));
  EXPECT_TRUE(match.at("cubin").is_null());
  match = json_of(lookup + " --arch sm_90");
  EXPECT_EQ(match.at("cubin").at("bytes"), 0);
  EXPECT_NE(match.at("cubin").at("reason"), "");

  // An empty database: empty lists, not text.
  const std::string empty = (folder / "empty.db").string();
  { cutune::db::Store created(empty); }
  EXPECT_EQ(json_of("db devices --json --db " + empty), nlohmann::json::parse(R"({"devices": []})"));
  EXPECT_EQ(json_of("db runs --json --db " + empty), nlohmann::json::parse(R"({"runs": []})"));
  EXPECT_EQ(json_of("db best --json --db " + empty).at("best"), nlohmann::json::array());
}

TEST(CliJson, BestAndLookupWithTheEnergyObjective) {
  const auto folder = temp_folder();
  const std::string db = " --db " + energy_database(folder);
  const nlohmann::json best = json_of("db best --objective energy --json" + db);
  EXPECT_EQ(best.at("objective"), "energy");
  EXPECT_EQ(best.at("within"), 0.05);
  ASSERT_EQ(best.at("best").size(), 2u);
  for (const auto& row : best.at("best")) {
    if (row.at("problem_key") == "n=4096,type=int32") {
      EXPECT_EQ(row.at("config"), "algo=b");
      EXPECT_EQ(row.at("energy_j"), 6.0);
      EXPECT_EQ(row.at("power_w"), 400.0);
      EXPECT_EQ(row.at("energy_compared"), true);
      EXPECT_EQ(row.at("fastest_ms"), 1.0);
      EXPECT_EQ(row.at("fastest_config"), "algo=a");
    } else {
      EXPECT_EQ(row.at("config"), "algo=a");
      EXPECT_TRUE(row.at("energy_j").is_null());
      EXPECT_EQ(row.at("energy_compared"), false);
    }
  }
  const nlohmann::json match =
      json_of("db lookup --family scan --type int32 --device-uuid GPU-test --n 4096 --objective energy --json" + db);
  EXPECT_EQ(match.at("config"), "algo=b");
  EXPECT_EQ(match.at("objective"), "energy");
  EXPECT_EQ(match.at("chosen_by"), "lowest_energy");
  EXPECT_EQ(match.at("energy_j"), 6.0);
  EXPECT_EQ(match.at("fastest_time_ms"), 1.0);
}
