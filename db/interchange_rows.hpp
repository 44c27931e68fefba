#pragma once
// What the interchange formats share: JSON forms of the rows, the selection an export reads, and
// the writing of imported rows in one transaction. Internal to db/interchange*.cpp.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "interchange.hpp"
#include "interchange_json.hpp"

namespace cutune::db::interchange {

Json parse_json_text_column(const std::string& text);  // stored JSON text; null when empty or invalid

// The rows' JSON forms. The readers refuse (InterchangeError naming the field) a member of the
// wrong type or range and a row that makes no sense (check_device, check_problem).
Json device_json(const DeviceRecord& device);
DeviceRecord device_from_json(const Json& json);
Json problem_json(const ProblemRecord& problem);
ProblemRecord problem_from_json(const Json& json);

// A result's measurement: everything but its row ids (config, status, times, error, launch plan,
// when). measurement_from_json sets the fields the object has and leaves the others alone; the
// whole row is judged once complete, by check_result.
Json measurement_json(const ResultRecord& result);
void measurement_from_json(const Json& json, ResultRecord& result);
// A result's observations as cutune writes them: the known ones (observations.hpp: to_json), in
// kObservationFields order.
Json observations_json(const Observations& observations);
// A result's observations (observations.hpp) from the JSON object cutune writes ("observations":
// {"energy_j": 0.5, ...}): members of the wrong type are refused, naming the member; unknown
// members are ignored, so that a newer cutune's file still imports.
Observations observations_of(const Json& object);
// A result's source_fields or a run's source_header as stored: member `key` of `json`, an object
// (InterchangeError otherwise), as JSON text; '' when absent or null.
std::string source_object_text(const Json& json, const char* key);

// ---- what a source file held that no column holds (schema version 7) ----------------------------
// An imported result keeps the members of its source entry that its row does not hold exactly,
// and its run the file's header, each as a JSON object under the format's name:
// {"kernel_tuner": {"times": [...], ...}}. An export to that format lays them over what it derives
// from the row, so that a file comes back as it was read.
inline constexpr const char* kKernelTunerSource = "kernel_tuner";
inline constexpr const char* kT4Source = "t4";

// `json` (an object) less the members `held` names, under `format`, as stored; '' when none is left.
std::string source_text(const char* format, const Json& json, const std::function<bool(const std::string&)>& held);
// What stored source_fields or a source_header kept from `format`: an object, empty when there is
// nothing (or only another format's).
Json kept_source(const std::string& stored, const char* format);
// The `format` header of the first of the results' runs (in result order) that has one; empty if none.
Json source_header_of_runs(sql::Database& db, const std::vector<ResultRecord>& results, const char* format);

// What any imported row must be, whichever format it came from; InterchangeError otherwise.
//   device: a uuid; a compute capability, counts and sizes of at least 0; a copy bandwidth,
//     where known, above 0.
//   problem: a family and key; a size of at least 0 (0: unknown).
//   result: a config as name=value text; a known status (ok, compile_error, load_error,
//     launch_error, runtime_fault, timeout, wrong_result); ok with a median time; every time
//     above 0, the spread, costs, rates and counts at least 0, all finite.
void check_device(const DeviceRecord& device);
void check_problem(const ProblemRecord& problem);
void check_result(const ResultRecord& result);
//   observations (part of check_result): energy, power, clock and occupancy finite and at least 0,
//     occupancy at most 1; counts and sizes at least 0; the method and throttle reasons one line.
void check_observations(const Observations& observations, const std::function<void(const std::string&)>& refuse);
bool is_result_status(std::string_view status);
// A launch plan as results and cubins store it (launch_json): a list of launch steps (kernel,
// grid, block, dynamic_shared_bytes) and memset steps, of the types the lookup library reads.
void check_launch_plan(const Json& plan);

std::string base64_encode(const std::vector<unsigned char>& bytes);
std::vector<unsigned char> base64_decode(const std::string& text);  // throws InterchangeError

// The rows an export reads. Throws InterchangeError when a non-empty filter matches nothing,
// naming what is stored instead.
std::vector<DeviceRecord> selected_devices(sql::Database& db, const Selection& selection);
std::vector<ProblemRecord> selected_problems(sql::Database& db, const Selection& selection);
// Results of the selected problems on the selected devices, in id order.
std::vector<ResultRecord> selected_results(sql::Database& db, const Selection& selection);

// An import's run: the stored run with the same family, device, template, strategy, seed,
// command and start time, or a new one. Importing the same file twice adds no run.
std::int64_t find_or_insert_run(Store& store, const RunRecord& run);
// A device's measured copy bandwidth comes along unless this database measured its own.
void keep_copy_bandwidth(Store& store, std::int64_t device_id, const DeviceRecord& device);

// Passes row `done` of `total` on to `progress` (when set) every 64 rows and for the last one:
// a progress line formats its text on every call, which a 50,000-row import should not pay for.
void report_progress(const ImportProgress& progress, std::size_t done, std::size_t total);

// Runs `fill` in one write transaction and refreshes the family defaults afterwards. JSON type
// and key errors become InterchangeError naming `source` and what `where` last said was read.
ImportSummary import_in_transaction(Store& store, const std::string& source,
                                    const std::function<void(ImportSummary&, std::string& where)>& fill);

}  // namespace cutune::db::interchange
