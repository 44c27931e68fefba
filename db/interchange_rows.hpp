#pragma once
// What the interchange formats share: JSON forms of the rows, the selection an export reads, and
// the writing of imported rows in one transaction. Internal to db/interchange*.cpp.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "interchange.hpp"

namespace cutune::db::interchange {

// Ordered, so that stored JSON text (configs, launch plans, descriptors) survives a round trip
// byte for byte.
using Json = nlohmann::ordered_json;

Json parse_json(const std::string& text, const std::string& source);  // throws InterchangeError naming source
Json parse_json_text_column(const std::string& text);                 // stored JSON text; null when empty or invalid

Json device_json(const DeviceRecord& device);
DeviceRecord device_from_json(const Json& json);
Json problem_json(const ProblemRecord& problem);
ProblemRecord problem_from_json(const Json& json);

// A result's measurement: everything but its row ids (config, status, times, error, launch plan,
// when). measurement_from_json sets the fields the object has and leaves the others alone.
Json measurement_json(const ResultRecord& result);
void measurement_from_json(const Json& json, ResultRecord& result);

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

// Runs `fill` in one write transaction and refreshes the family defaults afterwards. JSON type
// and key errors become InterchangeError naming `source` and what `where` last said was read.
ImportSummary import_in_transaction(Store& store, const std::string& source,
                                    const std::function<void(ImportSummary&, std::string& where)>& fill);

}  // namespace cutune::db::interchange
