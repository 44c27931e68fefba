#pragma once
// Choosing one config from successful measurements on several (device, problem) pairs: the rule
// behind the lookup's fallback levels, in one place. The writer applies it when it precomputes
// choices (choice_tables.hpp), the lookup library when results changed since (only for what
// changed) or when a database holds no precomputed choices. Compiled into the store (writer) and
// the lookup library (reader). No SQL here.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cutune::sql {
class Database;
}

namespace cutune::db {

// A time's natural logarithm in units of 2^-32, rounded. Scores are sums of differences of these:
// integers, so a score is exact whatever the order in which pairs were added or taken away, and a
// reader that corrects a precomputed score for a changed pair gets what scoring from scratch gets.
// Two times less than about 2^-32 apart (relatively) count as equal.
std::int64_t quantised_log(double ms);

// One successful result on one (device, problem) pair.
struct Measurement {
  std::uint32_t config = 0;  // index into the ConfigList the pair was read with
  std::int64_t log_ms = 0;   // quantised_log(median time)
  std::int64_t result_id = 0;
  double ms = 0;  // the time as stored; 0 where only log_ms was kept (a precomputed pair)
};

// The successful results of one (device, problem) pair, sorted by config, then time; a config
// appears once per template version it was measured with.
struct Pair {
  std::int64_t problem_id = 0, device_id = 0, size = 0;
  std::vector<Measurement> measurements;
};

// Sorts a pair's measurements into the order Pair requires.
void sort_measurements(std::vector<Measurement>& measurements);

// The config texts a set of pairs refers to by index: a sorted dictionary (the index order is the
// text order, so ties between dictionary configs need no text), then texts added later, in any
// order. Views into the dictionary stay valid as long as the storage it was made from.
class ConfigList {
 public:
  ConfigList() = default;
  // `sorted`: distinct texts in ascending order.
  explicit ConfigList(std::vector<std::string_view> sorted) : dictionary_(std::move(sorted)) {}
  ConfigList(ConfigList&&) = default;  // the views into extras_ move with it; a copy would dangle
  ConfigList& operator=(ConfigList&&) = default;

  std::size_t size() const { return dictionary_.size() + extras_.size(); }
  std::size_t dictionary_size() const { return dictionary_.size(); }
  std::string_view text(std::uint32_t index) const;
  // The index of `text`, added when absent. Fastest when called in ascending text order.
  std::uint32_t index_of(std::string_view text);
  std::optional<std::uint32_t> find(std::string_view text) const;
  bool less(std::uint32_t a, std::uint32_t b) const;  // by text

 private:
  std::vector<std::string_view> dictionary_;
  std::deque<std::string> extras_;  // owned texts, index dictionary_size() + i; a deque never moves them
  std::unordered_map<std::string_view, std::uint32_t> extra_index_;  // views into extras_
  std::size_t cursor_ = 0;                                           // where the last dictionary look-up ended
};

// Per config: on how many pairs it was measured, and the sum of its log ratios there (its fastest
// time on a pair over the fastest of any config on that pair, in quantised_log units).
struct Scores {
  std::vector<std::int64_t> coverage;
  std::vector<std::int64_t> log_ratio_sum;

  void resize(std::size_t configs);
  void add(const Pair& pair) { apply(pair, 1); }
  void remove(const Pair& pair) { apply(pair, -1); }  // undoes add(pair) exactly

 private:
  void apply(const Pair& pair, int sign);
};

struct Choice {
  std::uint32_t config = 0;  // index into the ConfigList
  std::uint32_t pairs = 0;   // the pairs it was measured on
};

// On each pair a config's ratio is its time over the fastest time measured on that pair (1 means
// it is the best there). A config's score is the geometric mean of its ratios: the average that
// treats "2× slower here" and "2× slower there" alike whatever the pairs' absolute times, so a
// slow GPU or a large size does not dominate. Only the configs measured successfully on the most
// pairs compete: otherwise a config measured on a single pair, where it happened to win, would
// beat one that is within 1 % of the best everywhere, and a config that fails on some device
// loses coverage there. Ties go to the smaller config text, so answers are reproducible. On a
// single pair this is simply the fastest config. nullopt when no config has been measured.
std::optional<Choice> choose(const Scores& scores, const ConfigList& configs);

// The measurement a choice is shown through: the fastest of `config` on these pairs (on equal
// times, the first pair's). nullptr when it has none there.
const Measurement* fastest(const std::vector<const Pair*>& pairs, std::uint32_t config);

// The geometric mean of `config`'s ratios over the pairs it was measured on, from the times as
// stored (Measurement::ms; for the writer's record, while choose() decides on the quantised sums).
double geomean_ratio(const std::vector<const Pair*>& pairs, std::uint32_t config);

// ---- the least energy near the fastest ----------------------------------------------------------
// The rule behind a lookup's Objective::lowest_energy and `tune db best --objective energy`, on one
// (device, problem) pair: of its successful results no slower than (1 + within_fraction) times the
// pair's fastest time, the one with the least energy per run. Ties go to the faster, then to the
// smaller config text, so that answers are reproducible. A result whose energy was not measured
// never wins, so the answer may be slower than the fastest only by what the caller allowed.

// One successful result of the pair.
struct EnergyCandidate {
  std::int64_t result_id = 0;
  double ms = 0;                   // its median time
  std::optional<double> energy_j;  // per run of its plan; nullopt: not measured
  std::string config;
};

// Whether `within_fraction` is a window: a finite fraction of at least 0 (0.05: 5 % slower at most).
bool valid_within_fraction(double within_fraction);

// The least time of the candidates (the window's reference), 0 when there are none.
double fastest_ms(const std::vector<EnergyCandidate>& candidates);

// The rule's choice among `candidates` (the pair's successful results, in any order); nullptr when
// no candidate in the window has an energy.
const EnergyCandidate* lowest_energy(const std::vector<EnergyCandidate>& candidates, double within_fraction);

// The candidates that some window chooses (lowest_energy for some within_fraction ≥ 0), fastest
// first: the pair's time–energy Pareto front under the rule's tie order. The writer stores their
// cubins, so that whichever window a lookup asks for, its answer has one.
std::vector<const EnergyCandidate*> energy_front(const std::vector<EnergyCandidate>& candidates);

// Recomputes what the lookup's levels read (choice_tables.hpp): for the match keys whose results
// changed since the last refresh, or for all of them when problems or devices changed. In one
// transaction. The writer calls it after a tuning run or an import; until then lookups correct the
// precomputed choices for what changed.
void refresh_family_defaults(sql::Database& db);

}  // namespace cutune::db
