#pragma once
// `tune db …`: what is stored (devices, families, runs, best configs), what an application would
// get (lookup), and moving results in and out (cutune JSON, Kernel Tuner, T4, other databases).
// A thin layer over db/interchange and db/lookup: it parses, opens, calls and prints.
#include <cstdint>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace CLI {
class App;
}

namespace cutune {

struct DbArgs {
  std::string file;  // the file to import or export, or the database to merge
  std::string family, device, problem;
  // lookup
  std::optional<std::int64_t> n;
  std::string type, device_uuid, device_name, cc, arch;  // type "": the family's default
  // best and lookup: what the answer optimizes ("time", or "energy": the least energy within a time
  // window of the fastest) and that window in percent ("5" or "5%"; "": 5 %)
  std::string objective = "time";
  std::string within;
  // T4 import without a cutune section
  std::optional<std::int64_t> problem_size;
  // imports and merges: a progress line on stderr (off with tune's --quiet)
  bool progress = true;
};

// Adds `db` and its subcommands; returns the `db` subcommand (its parsed() says whether it ran).
CLI::App* add_db_commands(CLI::App& app, DbArgs& args);

// Runs the parsed subcommand on the database at `database` ($CUTUNE_DB or the default when
// unset). Throws UsageError for bad input, sql::DbError for an unusable database.
int run_db_command(const CLI::App& db_command, const DbArgs& args, const std::optional<std::string>& database,
                   const std::string& command_line);

// The one line for a database that does not exist, for every command that reads one.
UsageError no_database_error(const std::string& path);

}  // namespace cutune
