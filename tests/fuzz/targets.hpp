#pragma once
// What the fuzz harness drives: the Kernel Tuner, T4 and cutune JSON importers, the --simulate
// landscape reader and the expression parser, in this process or through the `tune` binary.
// An input may be accepted or refused; refusing means the error type that `tune` turns into
// exit 2 (InterchangeError, UsageError), a message of at most 300 characters, and a database
// exactly as it was. Anything else (another exception type, a crash, a refusal that changed
// the database, an accepted input that stored nonsense) is a failure.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mutate.hpp"

namespace cutune::fuzz {

enum class Target { kernel_tuner, t4, cutune_json, simulate, expression };
constexpr Target kAllTargets[] = {Target::kernel_tuner, Target::t4, Target::cutune_json, Target::simulate,
                                  Target::expression};
const char* name_of(Target target);
std::optional<Target> target_named(std::string_view name);

struct Outcome {
  enum class Kind { accepted, refused, failure };
  Kind kind = Kind::accepted;
  std::string detail;  // the refusal's message, or what went wrong
};

// Where inputs are written and databases made; `base_database` is copied before each import so
// that a refusal can be checked to leave stored results alone.
struct Workspace {
  std::filesystem::path folder;
  std::string base_database;
  bool vary_files = true;  // now and then gzip the input, or cut the gzipped file short; off: the input as it is
};

// A small database with every kind of row (devices with copy bandwidth, ok and failed results,
// a cubin) in `path`, standing for earlier work.
void make_base_database(const std::string& path);
// Seed inputs made by exporting that database: cutune JSON, a Kernel Tuner file and a T4 file.
struct Exports {
  std::string cutune_json, kernel_tuner, t4;
};
Exports export_seeds(const std::string& database, const std::filesystem::path& folder);

// One input through one target in this process.
Outcome run_in_process(Target target, const std::string& input, const Workspace& workspace, Rng& rng);
// The same through `tune` (not for expressions): exit 0 or 2, one stderr line on 2, no signal.
Outcome run_binary(Target target, const std::string& input, const Workspace& workspace, const std::string& tune,
                   Rng& rng);

// The input file a target reads (gzipped when `gzip`), written into the workspace.
std::string write_input(const Workspace& workspace, const std::string& input, bool gzip);

}  // namespace cutune::fuzz
