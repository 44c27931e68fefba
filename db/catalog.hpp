#pragma once
// What a database holds, summarized for `tune db devices|families|runs`.
#include <cstdint>
#include <string>
#include <vector>

#include "interchange.hpp"

namespace cutune::db {

struct DeviceSummary {
  DeviceRecord device;
  std::int64_t results = 0, ok_results = 0;
};

struct FamilySummary {
  std::string family;
  std::int64_t templates = 0, problems = 0, devices = 0, results = 0, ok_results = 0, cubins = 0;
};

struct RunSummary {
  RunRecord run;
  std::string device_name;
  std::int64_t results = 0;
};

// Throws InterchangeError when a non-empty filter of the selection matches nothing.
void check_selection(sql::Database& db, const Selection& selection);

std::vector<DeviceSummary> device_summaries(sql::Database& db);
std::vector<FamilySummary> family_summaries(sql::Database& db);
// Runs of the selection's family and device (uuid or name), newest first; checked as above.
std::vector<RunSummary> run_summaries(sql::Database& db, const Selection& selection);

}  // namespace cutune::db
