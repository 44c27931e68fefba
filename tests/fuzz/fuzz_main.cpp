// cutune_fuzz: mutates seed inputs and feeds them to the Kernel Tuner, T4 and cutune JSON
// importers, the --simulate landscape reader and the expression parser. Every input must be
// accepted, or refused the way `tune` turns into exit 2 (one short line, the database as it was).
//
//   cutune_fuzz [--iterations N] [--seed S] [--target NAME]... [--seconds T] [--save DIR]
//               [--tune PATH] [--corpus DIR] [--landscapes DIR] [--quiet]
//   cutune_fuzz --replay FILE... --target NAME [--tune PATH]   (each file must not fail)
//   cutune_fuzz --regressions DIR [--tune PATH]   (every file must be refused; its name's prefix
//                                                   names the target: kernel_tuner-…, t4-…)
//
// Iteration i of seed S is the same input on every run (its generator is seeded from S and i), so
// a failure is replayed with the same --seed and --target, or from the file --save wrote. Exit
// status: 0 when nothing failed, 1 otherwise. ctest runs a few seconds' worth (tests/fuzz/CMakeLists.txt);
// the README's testing section has the longer runs.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "compressed_file.hpp"
#include "targets.hpp"

namespace fs = std::filesystem;
using namespace cutune::fuzz;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- what a crash leaves behind ----------------------------------------------------------------
// A signal handler may only write(2): the line it prints is made before each input runs.
char crash_line[1024] = "cutune_fuzz: crashed before the first input\n";
std::size_t crash_line_length = std::strlen(crash_line);

void on_crash(int signal_number) {
  const char* name = signal_number == SIGSEGV   ? "SIGSEGV"
                     : signal_number == SIGABRT ? "SIGABRT"
                     : signal_number == SIGFPE  ? "SIGFPE"
                     : signal_number == SIGBUS  ? "SIGBUS"
                                                : "a signal";
  (void)!write(2, "cutune_fuzz: ", 13);
  (void)!write(2, name, std::strlen(name));
  (void)!write(2, " ", 1);
  (void)!write(2, crash_line, crash_line_length);
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

void install_crash_handler() {
  static std::vector<char> alternate_stack(1 << 16);  // a stack overflow still gets its line printed
  stack_t stack{};
  stack.ss_sp = alternate_stack.data();
  stack.ss_size = alternate_stack.size();
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = on_crash;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  for (const int s : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) sigaction(s, &action, nullptr);
}

void prepare_crash_line(const std::string& what) {
  const std::string line = what.substr(0, sizeof crash_line - 2) + "\n";
  std::memcpy(crash_line, line.data(), line.size());
  crash_line_length = line.size();
}

// ---- seeds --------------------------------------------------------------------------------------

// The first `entries` entries of a Kernel Tuner cache file: a seed small enough to import quickly.
std::string kernel_tuner_sample(const fs::path& path, std::size_t entries) {
  auto file = nlohmann::ordered_json::parse(cutune::db::read_text_file(path.string()));
  auto& cache = file["cache"];
  nlohmann::ordered_json kept = nlohmann::ordered_json::object();
  for (auto it = cache.begin(); it != cache.end() && kept.size() < entries; ++it) kept[it.key()] = it.value();
  cache = std::move(kept);
  return file.dump(1);
}

struct Seeds {
  std::map<Target, std::vector<std::string>> inputs;
};

Seeds gather_seeds(const fs::path& corpus, const fs::path& landscapes, const fs::path& work,
                   const std::string& base_database) {
  Seeds seeds;
  const Exports exports = export_seeds(base_database, work);
  seeds.inputs[Target::cutune_json].push_back(read_file(exports.cutune_json));
  seeds.inputs[Target::kernel_tuner].push_back(read_file(exports.kernel_tuner));
  seeds.inputs[Target::simulate].push_back(read_file(exports.kernel_tuner));
  seeds.inputs[Target::t4].push_back(read_file(exports.t4));
  std::error_code ec;
  if (fs::is_directory(corpus, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(corpus)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      const std::string name = path.filename().string();
      const std::string text = read_file(path);
      if (name.starts_with("kernel_tuner-")) {
        seeds.inputs[Target::kernel_tuner].push_back(text);
        seeds.inputs[Target::simulate].push_back(text);
      } else if (name.starts_with("t4-")) {
        seeds.inputs[Target::t4].push_back(text);
      } else if (name.starts_with("cutune_json-")) {
        seeds.inputs[Target::cutune_json].push_back(text);
      } else if (name.starts_with("expression")) {
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);)
          if (!line.empty() && line[0] != '#') seeds.inputs[Target::expression].push_back(line);
      }
    }
  }
  const fs::path pnpoly = landscapes / "pnpoly_RTX_3090.json.gz";
  if (fs::exists(pnpoly, ec)) {
    const std::string sample = kernel_tuner_sample(pnpoly, 24);
    seeds.inputs[Target::kernel_tuner].push_back(sample);
    seeds.inputs[Target::simulate].push_back(sample);
  }
  if (seeds.inputs[Target::expression].empty()) seeds.inputs[Target::expression] = {"block * ept <= 8192", "a ? b : n"};
  return seeds;
}

// ---- running ------------------------------------------------------------------------------------

struct Options {
  std::int64_t iterations = 1000;
  std::uint64_t seed = 1;
  std::vector<Target> targets;
  std::optional<double> seconds;
  std::string save, tune, regressions;
  std::vector<std::string> replay;
  fs::path corpus = CUTUNE_FUZZ_CORPUS, landscapes = fs::path(CUTUNE_SHARED_DIR) / "landscapes";
  bool quiet = false;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr
      << "cutune_fuzz: " << why << "\n"
      << "usage: cutune_fuzz [--iterations N] [--seed S] [--target NAME]... [--seconds T] [--save DIR] [--tune PATH]\n"
      << "                   [--corpus DIR] [--landscapes DIR] [--quiet]\n"
      << "       cutune_fuzz --replay FILE... --target NAME [--tune PATH]\n"
      << "       cutune_fuzz --regressions DIR [--tune PATH]\n"
      << "targets: kernel_tuner, t4, cutune_json, simulate, expression (default: all)\n";
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--iterations")
        o.iterations = std::stoll(value());
      else if (a == "--seed")
        o.seed = std::stoull(value());
      else if (a == "--seconds")
        o.seconds = std::stod(value());
      else if (a == "--save")
        o.save = value();
      else if (a == "--tune")
        o.tune = value();
      else if (a == "--corpus")
        o.corpus = value();
      else if (a == "--landscapes")
        o.landscapes = value();
      else if (a == "--regressions")
        o.regressions = value();
      else if (a == "--quiet")
        o.quiet = true;
      else if (a == "--target") {
        const std::string name = value();
        const auto t = target_named(name);
        if (!t) usage("unknown target '" + name + "'");
        o.targets.push_back(*t);
      } else if (a == "--replay") {
        while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) o.replay.push_back(argv[++i]);
        if (o.replay.empty()) usage("--replay needs files");
      } else {
        usage("unknown option '" + a + "'");
      }
    } catch (const std::logic_error&) {
      usage("bad value for " + a);
    }
  }
  if (o.targets.empty()) o.targets.assign(std::begin(kAllTargets), std::end(kAllTargets));
  return o;
}

struct Tally {
  std::int64_t accepted = 0, refused = 0, failed = 0;
};

Outcome run_one(Target target, const std::string& input, const Workspace& workspace, const Options& o, Rng& rng) {
  return o.tune.empty() ? run_in_process(target, input, workspace, rng)
                        : run_binary(target, input, workspace, o.tune, rng);
}

// Files named "<target>-….json" (or .txt for expressions): each must be refused, not accepted,
// and never fail.
int run_regressions(const Options& o, const Workspace& workspace) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(o.regressions)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  int bad = 0, count = 0;
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    const auto target = target_named(name.substr(0, name.find('-')));
    if (!target) continue;
    ++count;
    std::string input = read_file(path);
    if (*target == Target::expression && !input.empty() && input.back() == '\n') input.pop_back();
    prepare_crash_line("on regression input " + path.string());
    Rng rng(0);
    const Outcome outcome = run_one(*target, input, workspace, o, rng);
    if (outcome.kind != Outcome::Kind::refused) {
      ++bad;
      std::cout << "FAIL " << name << ": " << (outcome.kind == Outcome::Kind::accepted ? "accepted" : outcome.detail)
                << "\n";
    } else if (!o.quiet) {
      std::cout << "ok   " << name << ": " << outcome.detail << "\n";
    }
  }
  std::cout << "regressions: " << count - bad << " passed, " << bad << " failed\n";
  return bad == 0 && count > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  install_crash_handler();
  Workspace workspace;
  // In memory where there is a tmpfs: every import commits to SQLite, and syncs to a disk cost most of the time.
  const fs::path scratch =
      access("/dev/shm", W_OK) == 0 && !std::getenv("TMPDIR") ? fs::path("/dev/shm") : fs::temp_directory_path();
  workspace.folder = scratch / ("cutune-fuzz-" + std::to_string(getpid()));
  fs::remove_all(workspace.folder);
  fs::create_directories(workspace.folder);
  workspace.base_database = (workspace.folder / "base.db").string();
  make_base_database(workspace.base_database);
  int status = 0;
  if (!o.tune.empty() && access(o.tune.c_str(), X_OK) != 0) usage("cannot run '" + o.tune + "'");

  workspace.vary_files = o.regressions.empty() && o.replay.empty();  // saved inputs run exactly as they are
  if (!o.regressions.empty()) {
    status = run_regressions(o, workspace);
  } else if (!o.replay.empty()) {
    if (o.targets.size() != 1) usage("--replay needs one --target");
    for (const auto& file : o.replay) {
      Rng rng(0);
      prepare_crash_line("on " + file);
      const Outcome outcome = run_one(o.targets[0], read_file(file), workspace, o, rng);
      const char* kind = outcome.kind == Outcome::Kind::accepted  ? "accepted"
                         : outcome.kind == Outcome::Kind::refused ? "refused"
                                                                  : "FAILED";
      std::cout << file << ": " << kind << (outcome.detail.empty() ? "" : ": " + outcome.detail) << "\n";
      if (outcome.kind == Outcome::Kind::failure) status = 1;
    }
  } else {
    const Seeds seeds = gather_seeds(o.corpus, o.landscapes, workspace.folder, workspace.base_database);
    std::map<Target, Tally> tallies;
    const auto start = std::chrono::steady_clock::now();
    std::int64_t ran = 0;
    for (std::int64_t i = 0; i < o.iterations; ++i, ++ran) {
      if (o.seconds && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > *o.seconds)
        break;
      const Target target = o.targets[static_cast<std::size_t>(i) % o.targets.size()];
      Rng rng(o.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i));
      const auto& pool = seeds.inputs.at(target);
      const std::string& seed_input = pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)];
      const std::string input =
          target == Target::expression ? mutate_expression(seed_input, rng) : mutate_json(seed_input, rng);
      const std::string current = (workspace.folder / "current-input").string();
      { std::ofstream(current, std::ios::binary) << input; }
      prepare_crash_line("at iteration " + std::to_string(i) + " (--seed " + std::to_string(o.seed) + ", target " +
                         name_of(target) + "); the input is kept in " + current);
      const Outcome outcome = run_one(target, input, workspace, o, rng);
      Tally& t = tallies[target];
      if (outcome.kind == Outcome::Kind::accepted)
        ++t.accepted;
      else if (outcome.kind == Outcome::Kind::refused)
        ++t.refused;
      else {
        ++t.failed;
        std::string saved;
        if (!o.save.empty()) {
          fs::create_directories(o.save);
          saved = (fs::path(o.save) / (std::string(name_of(target)) + "-" + std::to_string(o.seed) + "-" +
                                       std::to_string(i) + (target == Target::expression ? ".txt" : ".json")))
                      .string();
          std::ofstream(saved, std::ios::binary) << input;
        }
        std::cout << "FAIL " << name_of(target) << " iteration " << i << ": " << outcome.detail
                  << (saved.empty() ? "" : " (input saved in " + saved + ")") << "\n";
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::int64_t failed = 0;
    for (const Target target : o.targets) {
      const Tally& t = tallies[target];
      failed += t.failed;
      if (!o.quiet || t.failed)
        std::cout << name_of(target) << ": " << t.accepted + t.refused + t.failed << " inputs, " << t.accepted
                  << " accepted, " << t.refused << " refused, " << t.failed << " failed\n";
    }
    std::cout << "fuzz: " << ran << " inputs (seed " << o.seed << ") in " << seconds << " s: " << ran - failed
              << " passed, " << failed << " failed\n";
    status = failed == 0 ? 0 : 1;
  }
  fs::remove_all(workspace.folder);
  return status;
}
