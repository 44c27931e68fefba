// `tune`: the cutune command line. One table of subcommands builds the parser (each subcommand
// with its options, help and examples) and dispatches to the command functions. `tune` without a
// subcommand is the short form of `tune run`, and still takes the old mode flags (--compile-only,
// --simulate, --strategy-bench, --best, --list) that scripts use. Everything that can be validated
// is, before the GPU or the database is touched; bad input is one `tune: error:` line and exit 2.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <initializer_list>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "core/error.hpp"
#include "cuda_driver.hpp"
#include "db_commands.hpp"
#include "integer_options.hpp"
#include "json_output.hpp"
#include "sqlite.hpp"
#include "tune_options.hpp"

namespace cutune {
namespace {

struct Arguments {
  TuneArgs tune;
  ReportArgs report;
  DbArgs db;
};

// A tune option a subcommand takes, by long name, with its own help where the default would mislead.
struct Take {
  const char* name;
  const char* help = nullptr;
};

void take(CLI::App& sub, TuneArgs& args, std::initializer_list<Take> options) {
  for (const Take& option : options) add_tune_option(sub, args, option.name, option.help);
}

struct Subcommand {
  const char* name;
  const char* summary;
  const char* examples;  // the last lines of its --help, one command a line
  void (*define)(CLI::App& sub, Arguments& args);
  int (*run)(const CLI::App& sub, Arguments& args);
};

void define_report(CLI::App& sub, ReportArgs& args) {
  sub.add_option("--db", args.db, database_option_help);
  sub.add_option("--run", args.run, "one report for this run id")->check(int64_text());
  sub.add_option("--kernel,-k", args.kernel, "only this family");
  sub.add_option("--device-uuid", args.device_uuid, "only this device");
  sub.add_option("--out,-o", args.out, "folder for the HTML files (default: cutune-reports)");
  sub.add_option("--compare", args.compare,
                 "A B: one page with the problems two runs (ids) or two devices (uuid, uuid prefix or name) both "
                 "measured, side by side")
      ->expected(2);
}

// Every subcommand, in the order `tune --help` lists them.
const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> all{
      {"run",
       "tune a kernel family on this host's GPUs and store every result (short form: tune --kernel K --device N)",
       "tune run --kernel scan --device 0\n"
       "  tune run --kernel matmul --devices all --max-evals 50 --restrict \"algo == regtile\"",
       [](CLI::App& sub, Arguments& a) {
         take(sub, a.tune, {{"--kernel"},   {"--kernel-file"},     {"--device"},
                            {"--devices"},  {"--shard"},           {"--type"},
                            {"--n"},        {"--problem"},         {"--restrict"},
                            {"--strategy"}, {"--strategy-option"}, {"--no-warm-start"},
                            {"--seed"},     {"--max-evals"},       {"--time-limit"},
                            {"--samples"},  {"--cut-ratio"},       {"--rematch"},
                            {"--energy"},   {"--energy-window"},   {"--db"},
                            {"--jobs"},     {"--no-cache"},        {"--quiet"}});
       },
       [](const CLI::App&, Arguments& a) { return tune(a.tune); }},
      {"compile", "compile a family's configs with NVRTC, no GPU needed (the old --compile-only)",
       "tune compile --kernel scan --arch sm_90 --covering-sample\n"
       "  tune compile --kernel-file my_kernel.toml --arch sm_90",
       [](CLI::App& sub, Arguments& a) {
         take(sub, a.tune,
              {{"--kernel"},
               {"--kernel-file"},
               {"--arch"},
               {"--covering-sample"},
               {"--type"},
               {"--n"},
               {"--problem"},
               {"--restrict"},
               {"--seed", "seed of the covering sample (0 or more)"},
               {"--shard",
                "I/K or auto: compile only every K-th problem from the I-th (auto: the rank and size from "
                "mpirun, srun or a Slurm job array)"},
               {"--jobs"},
               {"--quiet"}});
       },
       [](const CLI::App&, Arguments& a) { return compile_only(a.tune); }},
      {"simulate", "replay a recorded landscape on the CPU with a search strategy (the old --simulate)",
       "tune simulate landscape.json.gz --strategy nlopt_sbplx --max-evals 200 --trace t.csv\n"
       "  tune simulate cutune.db --kernel scan --problem n=1048576,type=int32 --device-uuid GPU-5f0e2c3a",
       [](CLI::App& sub, Arguments& a) {
         sub.add_option("LANDSCAPE", a.tune.simulate,
                        "a Kernel Tuner cache file (.json, .json.gz) or a cutune database (then with --kernel, "
                        "--problem and --device-uuid)");
         take(sub, a.tune,
              {{"--strategy"},
               {"--strategy-option"},
               {"--seed", "seed for the strategy (0 or more)"},
               {"--max-evals", "new evaluations, at most"},
               {"--time-limit", "limit in seconds of recorded time (compile, verification and benchmark)"},
               {"--trace"},
               {"--kernel", "with a database LANDSCAPE: the family"},
               {"--problem", "with a database LANDSCAPE: the problem to replay, as its fields"},
               {"--device-uuid"}});
       },
       [](const CLI::App&, Arguments& a) {
         if (!a.tune.simulate)
           throw UsageError(
               "tune simulate needs a LANDSCAPE: a Kernel Tuner cache file (.json, .json.gz) or a cutune "
               "database");
         return simulate_landscape(a.tune);
       }},
      {"strategies",
       "the search strategies and their options; with a FOLDER of landscapes, their scores on it against random "
       "search (the old --strategy-bench)",
       "tune strategies --strategy bayes_opt\n"
       "  tune strategies ../shared/landscapes --strategy bayes_opt --strategy-option initial=3,6 --leave-one-out",
       [](CLI::App& sub, Arguments& a) {
         sub.add_option("FOLDER", a.tune.strategy_bench,
                        "score the strategies on every landscape (.json, .json.gz) of this folder");
         take(sub, a.tune,
              {{"--strategy", "only this strategy"},
               {"--strategy-option",
                "with FOLDER, NAME=VALUE: an option of --strategy; VALUE may list several "
                "(initial=4,8,12): a row per combination; repeatable"},
               {"--repeats", "with FOLDER: seeds per strategy and landscape (default 5)"},
               {"--leave-one-out",
                "with FOLDER: score each landscape with the option setting that did best on the "
                "others"},
               {"--warm-pairs",
                "with FOLDER: also score each landscape warm-started from each other landscape of its "
                "kernel"},
               {"--quiet", "with FOLDER: no progress line"},
               {"--json", "without FOLDER: print the strategies as one JSON document"}});
       },
       [](const CLI::App&, Arguments& a) { return strategies(a.tune); }},
      {"space", "a family's tuning space: axes, values, constraints, config counts",
       "tune space --kernel reduce\n  tune space --kernel matmul --arch sm_90 --restrict \"algo == regtile\" --json",
       [](CLI::App& sub, Arguments& a) {
         take(sub, a.tune,
              {{"--kernel"},
               {"--kernel-file"},
               {"--arch", "architecture whose limits shape the space (default sm_90)"},
               {"--restrict", "as for tuning: count and list only configs where EXPR holds; repeatable"},
               {"--json"}});
       },
       [](const CLI::App&, Arguments& a) { return describe_space(a.tune); }},
      {"families", "the kernel families built into tune, one line each (the old --list)",
       "tune families\n  tune families --json", [](CLI::App& sub, Arguments& a) { take(sub, a.tune, {{"--json"}}); },
       [](const CLI::App&, Arguments& a) { return list_families(a.tune); }},
      {"report", "write self-contained HTML tuning reports",
       "tune report --db cutune.db --out reports\n  tune report --compare 3 7 --kernel scan",
       [](CLI::App& sub, Arguments& a) { define_report(sub, a.report); },
       [](const CLI::App&, Arguments& a) { return write_reports(a.report); }},
      {"db", "inspect the results database, look up configs, import, export and merge",
       "tune db best --family scan\n  tune db import-kt cache.json.gz --db results.db",
       [](CLI::App& sub, Arguments& a) {
         sub.require_subcommand(0, 1);
         add_db_commands(sub, a.db);
       },
       [](const CLI::App& sub, Arguments& a) { return run_db_command(sub, a.db); }},
  };
  return all;
}

std::vector<CLI::App*> every_subcommand(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}
bool has_subcommands(const CLI::App& app) {
  return !app.get_subcommands([](const CLI::App*) { return true; }).empty();
}

// `tune` itself: the subcommands, and every tune option for the short form of `tune run` and the
// old mode flags, listed in two groups.
void define(CLI::App& app, Arguments& args) {
  app.set_version_flag("--version", tool_version());
  app.require_subcommand(0, 1);
  for (const Subcommand& s : subcommands()) {
    CLI::App* sub = app.add_subcommand(s.name, s.summary);
    s.define(*sub, args);
    const std::string more =
        has_subcommands(*sub) ? fmt::format("\n\ntune {} SUBCOMMAND --help lists a subcommand's options.", s.name) : "";
    sub->footer(std::string("Examples:\n  ") + s.examples + more);
  }
  const CLI::App* run = app.get_subcommand("run");
  for (const TuneOption& option : tune_options()) {
    const bool runs = run->get_option_no_throw(std::string(option.long_name())) != nullptr;
    option.add(app, args.tune, option.names, option.help)
        ->group(runs ? "Options of the short form of tune run (tune --kernel K --device N …)"
                     : "Old forms (for scripts: tune compile, simulate, strategies, families and db best do the same)");
  }
  app.get_option("--json")->description(std::string("with --list or --best: ") + json_option_help);
  app.footer(
      "Examples:\n"
      "  tune run --kernel scan --device 0          (the same: tune --kernel scan --device 0)\n"
      "  tune db best --family scan --json\n\n"
      "tune SUBCOMMAND --help lists a subcommand's options.");
  // Arguments nobody takes are kept, not refused, so that the error can name who does take them.
  std::vector<CLI::App*> pending{&app};
  while (!pending.empty()) {
    CLI::App* a = pending.back();
    pending.pop_back();
    a->allow_extras();
    for (CLI::App* sub : every_subcommand(*a)) pending.push_back(sub);
  }
}

// tune, and the subcommand parsed, and its subcommand.
std::vector<const CLI::App*> parsed_chain(const CLI::App& app) {
  std::vector<const CLI::App*> chain{&app};
  while (!chain.back()->get_subcommands().empty()) chain.push_back(chain.back()->get_subcommands().front());
  return chain;
}

std::string name_of(const std::vector<const CLI::App*>& chain, std::size_t depth) {
  std::string name = "tune";
  for (std::size_t i = 1; i <= depth; ++i) name += " " + chain[i]->get_name();
  return name;
}

// The subcommands (at any depth) that take `option`, by their whole names ("tune db best").
void collect_takers(CLI::App& app, const std::string& option, const std::string& name,
                    std::vector<std::string>& found) {
  for (CLI::App* sub : every_subcommand(app)) {
    const std::string sub_name = name + " " + sub->get_name();
    if (sub->get_option_no_throw(option)) found.push_back(sub_name);
    collect_takers(*sub, option, sub_name, found);
  }
}

// "tune run, tune compile and tune space"; "" for none.
std::string subcommands_taking(CLI::App& app, const std::string& option) {
  std::vector<std::string> found;
  collect_takers(app, option, "tune", found);
  std::string text;
  for (std::size_t i = 0; i < found.size(); ++i)
    text += (i == 0 ? "" : i + 1 == found.size() ? " and " : ", ") + found[i];
  return text;
}

// The first argument that no command of the parsed chain took, in one line: an unknown
// subcommand, an option that belongs to other subcommands (named), or an argument too many.
std::optional<std::string> stray_argument(CLI::App& app, const std::vector<const CLI::App*>& chain) {
  for (std::size_t depth = 0; depth < chain.size(); ++depth) {
    const std::vector<std::string> extras = chain[depth]->remaining(false);
    if (extras.empty()) continue;
    const std::string& argument = extras.front();
    const std::string where = name_of(chain, depth);
    const bool is_option = argument.size() > 1 && argument[0] == '-';
    // `tune`, or `tune db` without its subcommand: the argument stands where a subcommand goes.
    if (depth + 1 == chain.size() && has_subcommands(*chain[depth]) && (depth > 0 || !is_option))
      return is_option ? fmt::format("{} needs a subcommand before {} ({} --help lists them)", where, argument, where)
                       : fmt::format("unknown subcommand '{}' ({} --help lists them)", argument, where);
    if (is_option) {
      const std::string option = argument.substr(0, argument.find('='));
      const std::string takers = subcommands_taking(app, option);
      return fmt::format(
          "{} has no option {}{}", where, option,
          takers.empty() ? " (" + where + " --help lists its options)" : "; it is an option of " + takers);
    }
    return fmt::format("{} does not take '{}' ({} --help)", where, argument, where);
  }
  return std::nullopt;
}

// An option of the short form given before a subcommand ("tune --db x report"): the subcommand
// would not see it.
std::optional<std::string> option_before(const CLI::App& app, const std::string& subcommand) {
  for (const CLI::Option* option : app.get_options()) {
    const std::string name = option->get_name();
    if (option->count() > 0 && name != "--help" && name != "--version")
      return fmt::format("{} is given before the subcommand '{}': give it after the subcommand (tune {} … {})", name,
                         subcommand, subcommand, name);
  }
  return std::nullopt;
}

int run(CLI::App& app, Arguments& args) {
  const std::vector<const CLI::App*> chain = parsed_chain(app);
  if (const auto stray = stray_argument(app, chain)) throw UsageError(*stray);
  if (chain.size() == 1) return run_command(args.tune);
  const std::string name = chain[1]->get_name();
  if (const auto early = option_before(app, name)) throw UsageError(*early);
  for (const Subcommand& s : subcommands())
    if (s.name == name) return s.run(*chain[1], args);
  throw std::logic_error("no subcommand " + name);
}

}  // namespace
}  // namespace cutune

int main(int argc, char** argv) {
  using namespace cutune;
  CLI::App app{"cutune: autotune CUDA kernel families and keep every result in SQLite", "tune"};
  Arguments args;
  for (int i = 0; i < argc; ++i) args.tune.command_line += (i ? " " : "") + std::string(argv[i]);
  args.db.command_line = args.tune.command_line;
  define(app, args);

  const auto error = [](const std::exception& e, int code) {
    std::cerr << "tune: error: " << shortened(e.what(), 285) << "\n";  // one line of ~300 characters at most, always
    return code;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return error(e, 2);
  }

  try {
    return run(app, args);
  } catch (const UsageError& e) {
    return error(e, 2);
  } catch (const EnvironmentError& e) {
    return error(e, 3);
  } catch (const sql::DbError& e) {
    return error(e, 2);
  } catch (const std::exception& e) {
    return error(e, 1);
  }
}
