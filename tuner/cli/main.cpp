// `tune`: the cutune command line. Parses arguments, validates everything that can be validated
// before touching the GPU or the database, then hands over to one command function.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "db_commands.hpp"
#include "integer_options.hpp"
#include "core/error.hpp"
#include "cuda_driver.hpp"
#include "sqlite.hpp"

int main(int argc, char** argv) {
  using namespace cutune;
  CLI::App app{"cutune: autotune CUDA kernel families and keep every result in SQLite", "tune"};
  app.set_version_flag("--version", tool_version());
  TuneArgs args;
  for (int i = 0; i < argc; ++i) args.command_line += (i ? " " : "") + std::string(argv[i]);

  app.add_flag("--list", args.list, "list the kernel families, one line each");
  app.add_flag("--best", args.best, "print the best stored config per (device, family, problem)");
  app.add_flag("--compile-only", args.compile_only, "compile every config of the space with NVRTC; no GPU needed");
  app.add_flag("--covering-sample", args.covering_sample,
               "with --compile-only: compile a sample in which every value of every axis occurs (chosen by --seed), "
               "not the whole space");
  app.add_option("--kernel,-k", args.kernel, "kernel family to tune (see --list)");
  app.add_option("--kernel-file", args.kernel_file,
                 "a kernel spec file (TOML, docs/kernel-spec.md): tune your own kernel instead of a built-in family");
  app.add_option("--samples", args.samples,
                 "exactly N timed samples per config (default: until the mean is known to 0.5 %, 10 to 200)");
  app.add_option("--cut-ratio", args.cut_ratio,
                 "stop sampling a config once its fastest of 3 samples is over R times the best median so far, and "
                 "store it as cut short (default 2; 0: measure every config in full)");
  app.add_flag("--energy", args.energy,
               "measure each config's energy per run and average power through NVML (read only), over a window of "
               "back-to-back runs after its samples (about 0.3 s more per config)");
  app.add_option("--energy-window", args.energy_window,
                 "with --energy: the least busy time, in seconds, the energy is read over (default 0.2; NVML's "
                 "counter moves every 100 ms on H100/H200)");
  app.add_option("--device,-d", args.device, "CUDA device ordinal");
  app.add_option("--devices", args.devices,
                 "GPUs of this host that share the run, e.g. 0,2,3 or all (one worker each; GPUs of one model share "
                 "one search, other models get their own)");
  app.add_option("--shard", args.shard,
                 "I/K or auto: tune every K-th problem from the I-th (auto: the rank and size from mpirun, srun or a "
                 "Slurm job array); {shard} in --db becomes I");
  app.add_option("--type", args.type, "element type of the problems (family-specific, e.g. int32)");
  app.add_option("--n", args.sizes, "problem sizes (elements); repeat or give several")
      ->expected(1, -1)
      ->check(int64_text());
  app.add_option("--restrict", args.restrictions,
                 "search only configs where EXPR holds, e.g. \"algo == regtile && tile >= 64\" (labels name their "
                 "values); repeatable")
      ->take_all();
  app.add_option("--arch", args.arch, "target architecture for --compile-only, e.g. sm_90");
  app.add_option("--strategy", args.strategy, "search strategy (default: " + default_strategy_name() + ")");
  app.add_option("--strategy-option", args.strategy_options,
                 "NAME=VALUE: an option of the strategy, e.g. initial=12 (see tune --list-strategies); repeatable. In "
                 "--strategy-bench, VALUE may list several (initial=4,8,12): one row per combination")
      ->take_all();
  app.add_flag("--no-warm-start", args.no_warm_start,
               "do not start the search from the family's results on other devices and problem sizes");
  app.add_option("--seed", args.seed, "seed for the strategy and the input data (0 or more)")->check(uint64_text());
  app.add_option("--max-evals", args.max_evals, "new evaluations per problem, at most")->check(int64_text());
  app.add_option("--time-limit", args.time_limit, "wall-time limit in seconds, compiles included");
  app.add_option("--db", args.db, "results database (default: $CUTUNE_DB, else ~/.local/share/cutune/cutune.db)");
  app.add_option("--jobs,-j", args.jobs, "parallel compile processes (default: one per core)");
  app.add_flag("--no-cache", args.no_cache, "do not read or write the compile cache");
  app.add_flag("--quiet,-q", args.quiet, "no progress line");
  app.add_option("--simulate", args.simulate,
                 "replay a recorded landscape on the CPU: a Kernel Tuner cache file (.json, .json.gz) or a cutune "
                 "database (then with --kernel, --problem and --device-uuid)");
  app.add_option("--trace", args.trace, "with --simulate: write the evaluations as CSV (index,config,cost_s,objective)");
  app.add_option("--problem", args.problems,
                 "a problem as its fields, e.g. \"n=1048576,op=min\" (fields left out take their defaults; see tune db "
                 "families); repeatable. With --simulate DB: the problem to replay")
      ->take_all();
  app.add_option("--device-uuid", args.device_uuid, "with --simulate DB: the device, e.g. GPU-8f3…");
  app.add_option("--strategy-bench", args.strategy_bench,
                 "score every strategy (or --strategy) on every landscape in FOLDER against random search");
  app.add_option("--repeats", args.repeats, "with --strategy-bench: seeds per strategy and landscape (default 5)");
  app.add_flag("--leave-one-out", args.leave_one_out,
               "with --strategy-bench: score each landscape with the option setting that did best on the others");
  app.add_flag("--warm-pairs", args.warm_pairs,
               "with --strategy-bench: also score each landscape warm-started from each other landscape of its kernel");

  ReportArgs report_args;
  CLI::App* report = app.add_subcommand("report", "write self-contained HTML tuning reports");
  report->add_option("--db", report_args.db, "results database (default as for tuning)");
  report->add_option("--run", report_args.run, "one report for this run id")->check(int64_text());
  report->add_option("--kernel,-k", report_args.kernel, "only this family");
  report->add_option("--device-uuid", report_args.device_uuid, "only this device");
  report->add_option("--out,-o", report_args.out, "folder for the HTML files (default: cutune-reports)");
  report->add_option("--compare", report_args.compare,
                     "A B: one page with the problems two runs (ids) or two devices (uuid, uuid prefix or name) both "
                     "measured, side by side")
      ->expected(2);
  TuneArgs space_args;
  bool space_json = false;
  CLI::App* space = app.add_subcommand("space", "print a family's tuning space: axes, values, constraints, config counts");
  space->add_option("--kernel,-k", space_args.kernel, "kernel family (see tune --list)");
  space->add_option("--kernel-file", space_args.kernel_file, "a kernel spec file instead of --kernel");
  space->add_option("--arch", space_args.arch, "architecture whose limits shape the space (default sm_90)");
  space->add_option("--restrict", space_args.restrictions, "as for tuning: count and list only configs where EXPR holds")
      ->take_all();
  space->add_flag("--json", space_json, "print JSON instead of text");
  DbArgs db_args;
  const CLI::App* db_command = add_db_commands(app, db_args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tune: error: " << shortened(e.what(), 285) << "\n";  // one line of ~300 characters at most, always
    return 2;
  }

  try {
    if (report->parsed()) return write_reports(report_args);
    if (space->parsed()) return describe_space(space_args, space_json);
    if (db_command->parsed()) {
      db_args.progress = !args.quiet;
      return run_db_command(*db_command, db_args, args.db, args.command_line);
    }
    return run_command(args);
  } catch (const UsageError& e) {
    std::cerr << "tune: error: " << shortened(e.what(), 285) << "\n";
    return 2;
  } catch (const EnvironmentError& e) {
    std::cerr << "tune: error: " << shortened(e.what(), 285) << "\n";
    return 3;
  } catch (const sql::DbError& e) {
    std::cerr << "tune: error: " << shortened(e.what(), 285) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tune: error: " << shortened(e.what(), 285) << "\n";
    return 1;
  }
}
