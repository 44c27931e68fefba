#pragma once
// The options that fill TuneArgs, each defined once: its names, its help, the field it fills and
// the checks on its text. Each subcommand (main.cpp) takes its own by long name, saying a help in
// its own words where the default would mislead; the short form of `tune run` and the old mode
// flags (`tune --compile-only …`) take them all.
#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "db_commands.hpp"
#include "integer_options.hpp"
#include "json_output.hpp"

namespace cutune {

struct TuneOption {
  const char* names;  // as CLI11 takes them, long name first: "--kernel,-k"
  std::string help;   // the default help
  CLI::Option* (*add)(CLI::App& app, TuneArgs& args, const std::string& names, const std::string& help);

  std::string_view long_name() const {
    const std::string_view all(names);
    return all.substr(0, all.find(','));
  }
};

namespace tune_option_kinds {

template <auto field>
CLI::Option* value(CLI::App& app, TuneArgs& args, const std::string& names, const std::string& help) {
  return app.add_option(names, args.*field, help);
}
template <auto field>
CLI::Option* flag(CLI::App& app, TuneArgs& args, const std::string& names, const std::string& help) {
  return app.add_flag(names, args.*field, help);
}
// Repeatable: every occurrence's values are kept (--restrict A --restrict B).
template <auto field>
CLI::Option* repeated(CLI::App& app, TuneArgs& args, const std::string& names, const std::string& help) {
  return app.add_option(names, args.*field, help)->take_all();
}
// 64-bit integers: CLI11 alone would clamp an out-of-range text (integer_options.hpp).
template <auto field>
CLI::Option* int64(CLI::App& app, TuneArgs& args, const std::string& names, const std::string& help) {
  return app.add_option(names, args.*field, help)->check(int64_text());
}

}  // namespace tune_option_kinds

// Every TuneArgs option, in the order the short form's --help lists them.
inline const std::vector<TuneOption>& tune_options() {
  using namespace tune_option_kinds;
  static const std::vector<TuneOption> all{
      {"--kernel,-k", "kernel family (see tune families)", value<&TuneArgs::kernel>},
      {"--kernel-file", "a kernel spec file (TOML, docs/kernel-spec.md): your own kernel instead of a built-in family",
       value<&TuneArgs::kernel_file>},
      {"--device,-d", "CUDA device ordinal", value<&TuneArgs::device>},
      {"--devices",
       "GPUs of this host that share the run, e.g. 0,2,3 or all (one worker each; GPUs of one model share one search, "
       "other models get their own)",
       value<&TuneArgs::devices>},
      {"--shard",
       "I/K or auto: only every K-th problem from the I-th (auto: the rank and size from mpirun, srun or a Slurm job "
       "array); {shard} in --db becomes I",
       value<&TuneArgs::shard>},
      {"--type", "element type of the problems (family-specific, e.g. int32)", value<&TuneArgs::type>},
      {"--n", "problem sizes (elements); repeat or give several",
       [](CLI::App& app, TuneArgs& args, const std::string& names, const std::string& help) {
         return app.add_option(names, args.sizes, help)->expected(1, -1)->check(int64_text());
       }},
      {"--problem",
       "a problem as its fields, e.g. \"n=1048576,op=min\" (fields left out take their defaults; see tune db "
       "families); repeatable",
       repeated<&TuneArgs::problems>},
      {"--restrict",
       "only configs where EXPR holds, e.g. \"algo == regtile && tile >= 64\" (labels name their values); repeatable",
       repeated<&TuneArgs::restrictions>},
      {"--strategy", "search strategy (default: " + default_strategy_name() + "; tune strategies lists them)",
       value<&TuneArgs::strategy>},
      {"--strategy-option",
       "NAME=VALUE: an option of the strategy, e.g. initial=12 (tune strategies lists them); repeatable",
       repeated<&TuneArgs::strategy_options>},
      {"--no-warm-start", "do not start the search from the family's results on other devices and problem sizes",
       flag<&TuneArgs::no_warm_start>},
      {"--seed", "seed for the strategy and the input data (0 or more)",
       [](CLI::App& app, TuneArgs& args, const std::string& names, const std::string& help) {
         return app.add_option(names, args.seed, help)->check(uint64_text());
       }},
      {"--max-evals", "new evaluations per problem, at most", int64<&TuneArgs::max_evals>},
      {"--time-limit", "wall-time limit in seconds, compiles included", value<&TuneArgs::time_limit>},
      {"--samples", "exactly N timed samples per config (default: until the mean is known to 0.5 %, 10 to 200)",
       value<&TuneArgs::samples>},
      {"--cut-ratio",
       "stop sampling a config once its fastest of 3 samples is over R times the best median so far, and store it as "
       "cut short (default 2; 0: measure every config in full)",
       value<&TuneArgs::cut_ratio>},
      {"--rematch",
       "time each problem's leaders within 2 % of its best N more times at the end, in rotated order on fresh buffers, "
       "and store their pooled times (default 2; 0: keep the search's first measurements)",
       value<&TuneArgs::rematch>},
      {"--energy",
       "measure each config's energy per run and average power through NVML (read only), over a window of "
       "back-to-back runs after its samples (about 0.3 s more per config)",
       flag<&TuneArgs::energy>},
      {"--energy-window",
       "with --energy: the least busy time, in seconds, the energy is read over (default 0.2; NVML's counter moves "
       "every 100 ms on H100/H200)",
       value<&TuneArgs::energy_window>},
      {"--db", database_option_help, value<&TuneArgs::db>},
      {"--jobs,-j", "parallel compile processes (default: one per core)", value<&TuneArgs::jobs>},
      {"--no-cache", "do not read or write the compile cache", flag<&TuneArgs::no_cache>},
      {"--quiet,-q", "no progress line", flag<&TuneArgs::quiet>},
      // The rest belong to other subcommands; the short form takes them for the old mode flags.
      {"--arch", "target architecture, e.g. sm_90 (the default)", value<&TuneArgs::arch>},
      {"--covering-sample",
       "compile only a sample in which every axis value and every pair of values that valid configs take occurs "
       "(chosen by --seed), not the whole space",
       flag<&TuneArgs::covering_sample>},
      {"--trace", "write the evaluations as CSV (index,config,cost_s,objective)", value<&TuneArgs::trace>},
      {"--device-uuid", "with a database landscape: the device whose results to replay, e.g. GPU-8f3…",
       value<&TuneArgs::device_uuid>},
      {"--repeats", "seeds per strategy and landscape (default 5)", value<&TuneArgs::repeats>},
      {"--leave-one-out", "score each landscape with the option setting that did best on the others",
       flag<&TuneArgs::leave_one_out>},
      {"--warm-pairs", "also score each landscape warm-started from each other landscape of its kernel",
       flag<&TuneArgs::warm_pairs>},
      {"--json", json_option_help, flag<&TuneArgs::json>},
      // The old mode flags: each is a subcommand now, and stays for scripts.
      {"--compile-only", "the old form of tune compile", flag<&TuneArgs::compile_only>},
      {"--simulate", "FILE: the old form of tune simulate FILE", value<&TuneArgs::simulate>},
      {"--strategy-bench", "FOLDER: the old form of tune strategies FOLDER", value<&TuneArgs::strategy_bench>},
      {"--best",
       "the old form of tune db best (--kernel: the family; --device N: that GPU's results, which needs its driver)",
       flag<&TuneArgs::best>},
      {"--list", "the old form of tune families", flag<&TuneArgs::list>},
  };
  return all;
}

// Adds the option whose long name is `long_name` to `app`, with `help` instead of its default.
inline CLI::Option* add_tune_option(CLI::App& app, TuneArgs& args, std::string_view long_name,
                                    const char* help = nullptr) {
  for (const TuneOption& option : tune_options())
    if (option.long_name() == long_name) return option.add(app, args, option.names, help ? help : option.help);
  throw std::logic_error("no tune option " + std::string(long_name));  // a typo in a subcommand's list
}

}  // namespace cutune
