#pragma once
// `tune db …`: what is stored (devices, families, runs, best configs), what an application would
// get (lookup), and moving results in and out (cutune JSON, Kernel Tuner, T4, other databases).
// A thin layer over db/interchange and db/lookup: it parses, opens, calls and prints (text, or one
// JSON document with --json for the listings and the lookup).
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace CLI {
class App;
}

namespace cutune {

class ProblemSchema;
namespace db {
class Store;
}

// Every command's --db.
inline constexpr const char* database_option_help =
    "results database (default: $CUTUNE_DB, else $XDG_DATA_HOME/cutune/cutune.db, else "
    "~/.local/share/cutune/cutune.db)";

struct DbArgs {
  std::optional<std::string> database;  // --db; else $CUTUNE_DB or the default
  std::string file;                     // the file to import or export, or the database to merge
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
  bool quiet = false;        // imports and merges: no progress line on stderr
  bool json = false;         // listings and lookup: one JSON document instead of text
  std::string command_line;  // tune's whole command line, stored with imported runs
};

// Adds db's subcommands, each with its options, to `db` (the `tune db` subcommand).
void add_db_commands(CLI::App& db, DbArgs& args);

// Runs the subcommand of `db` that was parsed. Throws UsageError for bad input (a missing
// subcommand included), sql::DbError for an unusable database.
int run_db_command(const CLI::App& db, const DbArgs& args);

// The best stored config per (device, family, problem), as `tune db best` prints it: of `family`
// ("": every one) and of `device` (uuid or name; "": every one); the least energy within `within`
// of the fastest where given, else the fastest; a table, or JSON.
void print_best(std::ostream& out, db::Store& store, const std::string& family, const std::string& device,
                std::optional<double> within, bool json);

// A family's problem fields for listings: name, kind, choices, default, bounds, help.
nlohmann::ordered_json problem_fields_json(const ProblemSchema& schema);

// The one line for a database that does not exist, for every command that reads one.
UsageError no_database_error(const std::string& path);

}  // namespace cutune
