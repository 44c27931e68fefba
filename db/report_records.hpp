#pragma once
// What the HTML reports (reports/) and `tune report` read of a results database, as records: each
// run with its result counts and source anomalies, the results of a (device, family), per-problem
// bests and counts, the (device, family) pairs with results and bench baselines. The reports only
// format what these return; the SQL lives here.
//
// Every reader takes a database as open_for_reading leaves it, or an older one opened as it is:
// what a schema version lacks reads as its default (result_columns), baselines before version 3
// as none.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "records.hpp"
#include "sqlite.hpp"

namespace cutune::db {

// Which results a reader takes; an unset field matches every device, run or family.
struct ResultFilter {
  std::optional<std::int64_t> device_id, run_id;
  std::optional<std::string> family;
};

// An ok result whose time lies outside the range of its own samples: the source's time is not a
// statistic of the samples it recorded (cutune's median never is; an imported file's may be).
bool time_outside_samples(const ResultRecord& result);

struct TimeOutsideSamples {
  std::string config;
  double time_ms = 0, min_ms = 0, max_ms = 0;
};

// A run with its device's uuid (an import that knows the device by name only gave it one of its
// own) and what its results say of their source.
struct RunQuality {
  RunRecord run;
  std::string device_uuid;
  std::int64_t results = 0, ok = 0;
  std::int64_t outside_samples = 0;                  // results as time_outside_samples says
  std::int64_t ok_without_samples = 0;               // ok results that recorded no sample
  std::vector<TimeOutsideSamples> outside_examples;  // the first of them, in the order stored
};

// The runs of a device (of one family, or one run, where the filter says), by id, each with at
// most `examples` outside_examples. The filter's device_id is required.
std::vector<RunQuality> run_qualities(sql::Database& db, const ResultFilter& filter, std::size_t examples);

// Every (device, family) that has results, by device id, then family.
struct DeviceFamily {
  std::int64_t device_id = 0;
  std::string family;
};
std::vector<DeviceFamily> device_families_with_results(sql::Database& db);

// The same pairs with how many results, ok results, problems, runs and results outside their
// samples' range each has, in the same order.
struct DeviceFamilyCounts {
  DeviceFamily pair;
  std::int64_t results = 0, ok = 0, problems = 0, runs = 0, outside_samples = 0;
};
std::vector<DeviceFamilyCounts> device_family_counts(sql::Database& db);

// The distinct (device, family, strategy) of the runs, with the device's uuid: what made them
// (an import names its format as its strategy).
struct RunSource {
  std::int64_t device_id = 0;
  std::string family, strategy, device_uuid;
};
std::vector<RunSource> run_sources(sql::Database& db);

// The fastest ok result per (device, problem) of the filter's results, by family, problem size,
// problem key, then device id. Of results equally fast, whichever SQLite's MIN() meets first.
struct ProblemBest {
  std::int64_t device_id = 0, problem_id = 0, run_id = 0;
  std::string family, problem_key;
  std::int64_t problem_size = 0;
  double time_ms = 0;
  std::string config, config_json;
  std::optional<double> gbs, gflops, copy_fraction;
};
std::vector<ProblemBest> best_per_problem(sql::Database& db, const ResultFilter& filter);

// How many results and ok results each problem has among the filter's results, by problem id.
struct ProblemCounts {
  std::int64_t problem_id = 0;
  std::string family, problem_key;
  std::int64_t problem_size = 0, results = 0, ok = 0;
};
std::vector<ProblemCounts> problem_counts(sql::Database& db, const ResultFilter& filter);

// The fastest ok time of one config for one problem among the filter's results; none where the
// config has no ok result there.
std::optional<double> fastest_time_of_config(sql::Database& db, const ResultFilter& filter, std::int64_t problem_id,
                                             const std::string& config);

// Hands each of the filter's results to `visit` with its problem, ordered by run, then as stored.
// One row at a time: a report of 100 000 results never holds them all as records.
void for_each_result(sql::Database& db, const ResultFilter& filter,
                     const std::function<void(const ResultRecord&, const ProblemRecord&)>& visit);

// The latest bench measurement per (device, problem, library) of a family, of one device where
// given, by problem key, library, then device id; none in a database older than schema 3.
std::vector<BaselineRecord> latest_baselines(sql::Database& db, const std::string& family,
                                             std::optional<std::int64_t> device_id = std::nullopt);

}  // namespace cutune::db
