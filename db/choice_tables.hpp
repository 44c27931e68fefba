#pragma once
// The choices the writer precomputes for the lookup library (schema version 6), and how a reader
// uses them: as they are where nothing changed since, corrected for what changed where something
// did, so that a fresh reader reads O(sizes) rows and never serves an answer that the current
// results would not give. The rule itself is config_choice.hpp's.
//
//   choices          per (family, match key, device rule, devices, size): the chosen config and
//                    the result it is shown through (levels 1 and 2)
//   family_defaults  per (family, match key): the family default (level 3; since version 2)
//   choice_sets      per (family, match key): the dictionary of config texts (sorted; a config's
//                    index is its place there) and each config's score over every pair
//   choice_pairs     per (problem, device): its successful results as (config index, quantised log
//                    time, result id), which is what a score is made of
//   changed_results  what triggers on results record since the last refresh: (problem, device,
//                    result id), once per change
//
// meta.choices_valid is 1 when the tables reflect every result except the changed ones, and 0
// after a change to problems' sizes or match keys or to devices' names or compute capabilities
// (which regroup pairs), until the next refresh: a reader then scores from the results.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cutune::sql {
class Database;
}

namespace cutune::db {

// Which stored devices a choice draws on.
struct DeviceSet {
  enum class Rule : int { uuid = 1, name = 2, compute_capability = 3, any = 4 };
  Rule rule = Rule::any;
  std::string text;  // the uuid or the name
  int cc_major = 0, cc_minor = 0;
};

// Inside the caller's write transaction: recomputes the tables for every (family, match key) when
// `all` or when meta.choices_valid is 0, else for those with changed results; then forgets the
// changes and sets choices_valid. refresh_family_defaults (config_choice.hpp) is this in a
// transaction of its own; the migration to version 6 runs it too.
void compute_choices(sql::Database& db, bool all);

// A stored size of a level and the result its chosen config is shown through; 0: not yet chosen.
struct SizeChoice {
  std::int64_t size = 0;
  std::int64_t result_id = 0;
};

// What one lookup of a (family, match key) reads, within the caller's read transaction.
class ChoiceReader {
 public:
  // `schema_version`: the database's; below 6 there is nothing precomputed but the family default.
  ChoiceReader(sql::Database& db, int schema_version, std::string family, std::string match_key);
  ~ChoiceReader();
  ChoiceReader(const ChoiceReader&) = delete;  // holds the decoded tables of one snapshot
  ChoiceReader& operator=(const ChoiceReader&) = delete;

  // False when the database holds no usable precomputed choices (an older schema, or
  // choices_valid 0): sizes() then leaves every result_id 0, for scored_choice() to fill.
  bool precomputed() const;

  // Levels 1 and 2: each positive size at which the devices have a successful result of the match
  // key, ascending, with the chosen config's fastest result there.
  std::vector<SizeChoice> sizes(const DeviceSet& devices);

  // Level 3: the config with the best score over every stored device and size; nullopt when the
  // match key has no successful result.
  std::optional<std::string> family_default();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Scored from the results on the spot, for a reader without precomputed choices: the chosen
// config's fastest result among the devices' results at one size; 0 when there is none.
std::int64_t scored_choice(sql::Database& db, const std::string& family, const std::string& match_key,
                           const DeviceSet& devices, std::int64_t size);

// What the lowest-energy rule (config_choice.hpp: lowest_energy) chose on one (problem, device) pair.
struct EnergyChoice {
  double fastest_ms = 0;       // the pair's fastest successful time: the window's reference
  std::int64_t result_id = 0;  // the chosen result; 0 when no result in the window has an energy
};

// The rule applied to the pair's successful results, read within the caller's transaction through
// the index on (problem, device, time) up to the end of the window only. The database must have
// schema version 8 (energy_j). nullopt when the pair has no successful result.
std::optional<EnergyChoice> lowest_energy_choice(sql::Database& db, std::int64_t problem_id, std::int64_t device_id,
                                                 double within_fraction);

}  // namespace cutune::db
