#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "session.hpp"
#include "strategies/strategy.hpp"

namespace cutune {

// What tune run, compile, simulate, strategies, space and families read, and the old mode flags
// (--list, --best, --compile-only, --simulate, --strategy-bench) that the short form still takes.
// tune_options.hpp defines the option that fills each field.
struct TuneArgs {
  bool list = false, best = false, compile_only = false, no_cache = false, quiet = false;
  bool covering_sample = false;  // compile: a sample covering every axis value, not the whole space
  bool json = false;             // listings: one JSON document on stdout instead of text
  std::optional<std::string> kernel;
  std::optional<std::string> kernel_file;  // a kernel spec (docs/kernel-spec.md) instead of --kernel
  std::optional<int> samples;              // exactly this many timed samples per config
  std::optional<double> cut_ratio;         // stop sampling a config this many times behind the best; 0: never
  std::optional<int> rematch;              // rounds of each problem's near-tied leaders timed again; 0: none
  bool energy = false;                     // --energy: an energy window per config (observers.hpp)
  std::optional<double> energy_window;     // its least span of busy time, seconds
  std::optional<int> device;
  std::optional<std::string> devices;  // --devices 0,2,3 or all: GPUs of this host sharing the run
  std::optional<std::string> shard;    // --shard I/K or auto: this process's share of the problems
  std::optional<std::string> type;
  std::vector<std::int64_t> sizes;
  std::vector<std::string> restrictions;  // --restrict EXPR, each a constraint on the space
  std::optional<std::string> arch;
  std::optional<std::string> strategy;
  std::vector<std::string> strategy_options;  // --strategy-option name=value (a list of values in the strategy bench)
  bool no_warm_start = false;                 // do not warm-start the search from other results of the family
  std::uint64_t seed = 1;
  std::optional<std::int64_t> max_evals;
  std::optional<double> time_limit;
  std::optional<std::string> db;
  std::optional<int> jobs;
  std::optional<std::string> simulate;        // a landscape (tune simulate FILE): Kernel Tuner cache file or database
  std::optional<std::string> trace;           // CSV of a simulation's evaluations
  std::vector<std::string> problems;          // --problem TEXT: problems to tune; of a database landscape, the one
  std::optional<std::string> device_uuid;     // device, for a database landscape
  std::optional<std::string> strategy_bench;  // folder of landscapes (tune strategies FOLDER)
  std::optional<int> repeats;
  bool leave_one_out = false;  // scoring strategies: the leave-one-landscape-out table
  bool warm_pairs = false;     // scoring strategies: score warm starts between landscapes
  std::string command_line;
};

struct ReportArgs {
  std::optional<std::string> db;
  std::optional<std::int64_t> run;
  std::optional<std::string> kernel;
  std::optional<std::string> device_uuid;
  std::vector<std::string> compare;  // two runs or two devices: one comparison page
  std::string out = "cutune-reports";
};

// Each command throws UsageError for bad input, EnvironmentError when the GPU side is missing,
// sql::DbError for database trouble.

// `tune` without a subcommand: the old mode flags (--list, --best, --compile-only, --simulate,
// --strategy-bench) run what their subcommands run; without one, `tune run`.
int run_command(const TuneArgs& args);

// `tune families` (--list): the built-in kernel families, one line each, or as JSON with --json.
int list_families(const TuneArgs& args);
// `tune --best`: `tune db best` for a built-in family (--kernel) and a GPU of this host (--device N).
int print_best(const TuneArgs& args);
// `tune compile` (--compile-only): every config (or a covering sample) compiled with NVRTC, no GPU.
int compile_only(const TuneArgs& args);
// `tune space`: the family's axes, values and constraints, and its raw and valid config counts on
// --arch (default sm_90), after --restrict; as JSON with --json.
int describe_space(const TuneArgs& args);
// `tune run`: tune on one GPU or several and store every result.
int tune(const TuneArgs& args);
// `tune simulate LANDSCAPE` (--simulate): a strategy replayed on a recorded landscape.
int simulate_landscape(const TuneArgs& args);
// `tune strategies`: the strategies and their options (text or --json); with a FOLDER of
// landscapes, their scores on it (the old --strategy-bench).
int strategies(const TuneArgs& args);
// `tune report`: one HTML file per (device, family) and an index of them, or one per run with --run, or
// a comparison of two runs or devices with --compare.
int write_reports(const ReportArgs& args);

}  // namespace cutune
