#pragma once
// Choosing one config from successful measurements on several (device, problem) pairs: the rule
// behind the lookup's fallback levels, and the family defaults the writer keeps precomputed so
// that an application on an unknown device need not score every stored result.
// Compiled into the store (writer) and the lookup library (reader).
#include <cstdint>
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

struct Candidate {
  std::int64_t result_id, device_id, problem_id, size;
  std::size_t config;  // index into Candidates::configs
  double ms;
};

struct Candidates {
  std::vector<std::string> configs;  // each distinct config text once
  std::vector<Candidate> rows;
};

// Choices are made among problems of one family with one match key (problem_identity.hpp): the
// fields a lookup must match exactly, "op=sum,type=float32". Problems that differ only in their
// extents (sizes) share it.

// Positive sizes of the family's problems with this match key and a successful result on the devices.
std::vector<std::int64_t> stored_sizes(sql::Database& db, const std::string& family, const std::string& match_key,
                                       const DeviceSet& devices);

// The successful results of the family and match key on the devices; of one size unless size is
// 0; of one config unless config is empty.
Candidates candidates(sql::Database& db, const std::string& family, const std::string& match_key,
                      const DeviceSet& devices, std::int64_t size = 0, const std::string& config = {});

struct Choice {
  std::size_t config = 0;    // index into Candidates::configs
  std::size_t pairs = 0;     // the (device, problem) pairs it was measured on
  double geomean_ratio = 1;  // its geometric-mean time over the best time of those pairs
};

// On each pair a config's ratio is its time over the fastest time measured on that pair (1 means
// it is the best there). A config's score is the geometric mean of its ratios: the average that
// treats "2× slower here" and "2× slower there" alike whatever the pairs' absolute times, so a
// slow GPU or a large size does not dominate. Only the configs measured successfully on the most
// pairs compete: otherwise a config measured on a single pair, where it happened to win, would
// beat one that is within 1 % of the best everywhere, and a config that fails on some device
// loses coverage there. Ties go to the smaller config text, so answers are reproducible. On a
// single pair this is simply the fastest config. `candidates` must not be empty.
Choice choose_config(const Candidates& candidates);

// The family's default for a match key across every stored device and size (the choice above), as
// precomputed by refresh_family_defaults. nullopt when the precomputed table is stale (results
// changed since), so the caller scores the results itself; an empty string when it is fresh and
// the match key has no successful result.
std::optional<std::string> precomputed_family_default(sql::Database& db, const std::string& family,
                                                      const std::string& match_key);

// Recomputes every family default, in one transaction. The writer calls it after a tuning run or
// an import; a trigger on results marks the table stale whenever a result changes.
void refresh_family_defaults(sql::Database& db);

}  // namespace cutune::db
