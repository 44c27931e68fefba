#pragma once
// The writer side of the results database: devices, templates, problems, runs and results.
// A tuning run writes the results that finished together in one transaction (add_results), as
// soon as it takes them in, so an interrupted run loses at most the configurations in flight.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "problem.hpp"
#include "records.hpp"
#include "run_lease.hpp"
#include "schema.hpp"
#include "sqlite.hpp"

namespace cutune::db {

// Where the database lives unless --db says otherwise: $CUTUNE_DB, else
// $XDG_DATA_HOME/cutune/cutune.db, else ~/.local/share/cutune/cutune.db.
std::string default_database_path();

// One stored measurement of a config, as a recorded landscape replays it.
struct ProblemResult {
  std::string config;  // canonical "name=value,…"
  std::string status;  // "ok" or the failure
  std::optional<double> time_ms_median;
  double compile_s = 0, verify_s = 0, benchmark_s = 0;
};

// The results of one (device, problem) of a family: a warm start's source.
struct SourceResults {
  std::string device_uuid, device_name, problem_key;
  std::vector<ProblemResult> results;
};

// A read-only connection to a cutune database, as Store::Access::read opens it.
sql::Database open_for_reading(const std::string& path);

// One (device, problem) pair's answer to the lowest-energy rule (Store::lowest_energy_best).
struct EnergyBestRow {
  BestRow chosen;                           // the chosen result; the fastest where no energy was compared
  std::optional<double> energy_j, power_w;  // the chosen result's, where measured
  // False: no result within the window has a measured energy, so `chosen` is the fastest.
  bool energy_compared = false;
  double fastest_ms = 0;  // the pair's fastest time: the window's reference
  std::string fastest_config;
};

class Store {
 public:
  // Opens (creating if needed, with parent folders) and brings the schema up to date.
  // Throws sql::DbError with the path and reason when the file cannot be opened or written.
  // write: creates the file and its folder if needed, migrates an older schema in place.
  // read: never changes the file (listings, reports, exports, simulations): a database that is
  // not cutune's or is newer is refused, an older one is migrated in a copy in memory, and one in
  // a folder the reader cannot write still opens (sql::Database's read-only fallback).
  enum class Access { write, read };
  explicit Store(const std::string& path, Access access = Access::write);

  std::int64_t upsert_device(
      const DeviceFingerprint& device);  // a DeviceRecord's id and copy bandwidth are not written
  std::optional<DeviceRecord> device_by_uuid(const std::string& uuid);
  std::vector<DeviceRecord> devices();
  void set_copy_bandwidth(std::int64_t device_id, double gbs);

  std::int64_t upsert_template(const std::string& family, const std::string& source_hash, const std::string& source);
  // Stores a problem; where the family's schema is stored, its key, size, dtype and match key are
  // derived from the descriptor (problem_identity.hpp), and a descriptor that does not fit throws
  // UsageError. Returns the problem's id.
  std::int64_t upsert_problem(const ProblemRecord& problem);
  // Stores a family's problem schema (before its problems) and re-derives stored problems when it
  // changed; lookups canonicalise queries with it.
  void put_problem_schema(const std::string& family, const ProblemSchema& schema);
  std::optional<ProblemSchema> problem_schema(const std::string& family);

  // Stores a run as 'running' and holds its lease (run_lease.hpp) until finish_run, or until this
  // process ends however it ends. Runs that still say 'running' but whose process is gone (killed
  // with -9, a lost node) are first marked 'interrupted'; their results stay.
  std::int64_t begin_run(const RunRecord& run);
  void finish_run(std::int64_t run_id, const std::string& status);
  // The marking on its own: how many abandoned runs were marked 'interrupted'.
  int mark_abandoned_runs();

  void add_result(const ResultRecord& result);  // in its own transaction
  // Several in one transaction: the results a tuning loop took in together (one commit instead of
  // one each). All are stored, or none where one fails.
  void add_results(std::span<const ResultRecord> results);
  // The same without a transaction, for callers that hold one over many rows (imports). A result
  // that is already stored for its (device, template, problem, config) is replaced unless the
  // stored one is newer (created_at), so merges keep the latest measurement.
  void insert_result(const ResultRecord& result);
  // Configs already measured (any status) for this device, template and problem, with their
  // median time when they succeeded.
  std::map<std::string, std::optional<double>> measured_configs(std::int64_t device_id, std::int64_t template_id,
                                                                std::int64_t problem_id);
  std::vector<ResultRecord> results_of_run(std::int64_t run_id);
  // Every result for one device, family and problem, oldest first: the landscape `tune
  // --simulate` replays. Where several template versions have results, those of the newest.
  std::vector<ProblemResult> problem_results(const std::string& device_uuid, const std::string& family,
                                             const std::string& problem_key);
  // Every result of one family, grouped by (device, problem), oldest first within each: what a
  // search of that family on another device or problem size can warm-start from.
  std::vector<SourceResults> family_results_by_source(const std::string& family);
  // The fastest ok result of one template on one device for one problem (ties: the smaller config text).
  std::optional<ResultRecord> best_result(std::int64_t device_id, std::int64_t template_id, std::int64_t problem_id);
  // Every timed ok result of the same, fastest first (ties as best_result's): what the leaders of a
  // problem are drawn from (the rematch, the energy front).
  std::vector<ResultRecord> ranked_results(std::int64_t device_id, std::int64_t template_id, std::int64_t problem_id);
  // The ok results of the same that some lowest-energy window chooses (config_choice.hpp:
  // energy_front), fastest first; none where no energy was measured.
  std::vector<ResultRecord> energy_front(std::int64_t device_id, std::int64_t template_id, std::int64_t problem_id);
  std::int64_t result_count();

  // Best ok result per (device, family, problem); empty filters match everything.
  std::vector<BestRow> best(const std::string& family = {}, const std::string& device_uuid = {});
  // The same pairs, each answered with the least energy within `within_fraction` of its fastest
  // time (config_choice.hpp: lowest_energy, as the lookup's Objective::lowest_energy), in one
  // snapshot. Throws std::invalid_argument for a within_fraction that is no window.
  std::vector<EnergyBestRow> lowest_energy_best(double within_fraction, const std::string& family = {},
                                                const std::string& device_uuid = {});

  // Stores (or replaces) the cubin of a config for one architecture.
  void put_cubin(const CubinRecord& cubin);
  // Recomputes the family defaults that the lookup library's third level reads (config_choice.hpp);
  // for after a tuning run or an import. Until then lookups score the results themselves.
  void refresh_family_defaults();

  void add_baseline(const BaselineRecord& baseline);

  sql::Database& database() { return db_; }

 private:
  int mark_abandoned_runs_in_transaction();
  struct RankedBest;
  std::vector<RankedBest> fastest_per_pair(const std::string& family, const std::string& device_uuid);

  sql::Database db_;
  // insert_result's statement, prepared once: parsing its 40-odd columns cost about a third of a
  // stored result's time, which a multi-GPU run pays on the one thread that also proposes.
  // Declared after db_, so it is finalised before the connection closes.
  std::unique_ptr<sql::Statement> insert_result_statement_;
  std::map<std::int64_t, RunLease> leases_;  // the runs this Store began and has not finished
};

// ISO-8601 UTC timestamp, second resolution, for the created_at columns.
std::string utc_now();

// Row readers for queries that select these columns first, in this order (exports, reports).
extern const char* const kDeviceColumns;
// Every results column: the measurement, then the observations in kObservationFields order.
extern const std::string kResultColumns;
// kResultColumns as a database of an older schema version has them (for merges, which read it as it is).
std::string result_columns(int schema_version);
DeviceRecord read_device(const sql::Statement& statement);
// Devices by row id, and every device in id order, of any open database (a reader's too).
std::optional<DeviceRecord> device_by_id(sql::Database& db, std::int64_t id);
std::vector<DeviceRecord> all_devices(sql::Database& db);

// The runs columns that every schema version has (all but source_header), each prefixed (e.g.
// "r."); read_run reads them from `first_column` on, a run still going with finished_at ''.
inline constexpr int kRunColumnCount = 12;
std::string run_columns(const std::string& table_prefix = "");
RunRecord read_run(const sql::Statement& statement, int first_column = 0);
std::optional<RunRecord> run_by_id(sql::Database& db, std::int64_t id);
ResultRecord read_result(const sql::Statement& statement);

// The observation columns in kObservationFields order (each prefixed, e.g. "r."), or in a database
// older than version 8, what they read as there: NULL, '' or 0 (unknown).
std::string observation_select(int schema_version, const std::string& table_prefix = "");
// The observations of a row whose observation columns (as observation_select) start at `first_column`.
Observations read_observations(const sql::Statement& statement, int first_column);
// Binds each observation, in kObservationFields order, to the parameters from `first_parameter` on.
void bind_observations(sql::Statement& statement, int first_parameter, const Observations& observations);

}  // namespace cutune::db
