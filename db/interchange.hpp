#pragma once
// Moving results between databases and tools:
//   - cutune's own JSON document: a whole database or a filtered part, every row kept (cubins
//     too); import and merge collapse duplicates on (device uuid, template hash, problem key,
//     config), the newer measurement winning;
//   - Kernel Tuner cache files (.json or .json.gz), in and out;
//   - T4 results files (the auto-tuning community's "Open Autotuning Results Schema"), in and out.
// Every import runs in one transaction: bad input changes nothing already stored.
//
// Kernel Tuner and T4 files carry less than a result row (no device identity, no launch plan,
// one status string). Exports add a "cutune" object (at the top and in each entry) that both
// formats allow and other tools ignore; imports use it when present, so our own exports come
// back unchanged, and otherwise derive what they can (see interchange_kernel_tuner.cpp).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "store.hpp"

namespace cutune::db {

// Bad input: an unreadable or malformed file, a filter that matches nothing, a file that does
// not say what it holds. The message names the file or the filter.
struct InterchangeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Which part of a database to export; an empty field matches everything.
struct Selection {
  std::string family;
  std::string device;   // a device's uuid or name
  std::string problem;  // a problem key, e.g. "n=1048576,type=int32"
};

struct ImportSummary {
  std::int64_t devices = 0, problems = 0, runs = 0, results = 0, cubins = 0;  // rows read from the input
};

// Told how far an import has got as it writes: `done` of `total` rows (results and cubins), now
// and then and always for the last row, so that a command can show a progress line.
using ImportProgress = std::function<void(std::size_t done, std::size_t total)>;

// ---- cutune JSON ------------------------------------------------------------------------------
void export_json(Store& store, const Selection& selection, const std::string& path);
ImportSummary import_json(Store& store, const std::string& path, const ImportProgress& progress = {});
// Reads another database (read-only, any schema version up to ours) into this one.
ImportSummary merge_database(Store& store, const std::string& other_path, const ImportProgress& progress = {});

// ---- Kernel Tuner and T4 ----------------------------------------------------------------------
// What to call imported results when the file itself does not say (a plain Kernel Tuner file
// names its device and kernel; a plain T4 file names neither).
struct ImportTarget {
  std::string family;             // overrides the file's kernel_name
  std::string device_name;        // for T4 files without a cutune section
  std::int64_t problem_size = 0;  // for T4 files without a cutune section; 0: unknown
  std::string command;            // stored with the import's run
};

ImportSummary import_kernel_tuner(Store& store, const std::string& path, const ImportTarget& target = {},
                                  const ImportProgress& progress = {});
ImportSummary import_t4(Store& store, const std::string& path, const ImportTarget& target = {},
                        const ImportProgress& progress = {});
// Both formats hold one device, kernel and problem: the selection must narrow down to exactly
// one (device, problem) of a family; the newest template measured there is exported.
void export_kernel_tuner(Store& store, const Selection& selection, const std::string& path);
void export_t4(Store& store, const Selection& selection, const std::string& path);

// The synthetic uuid a Kernel Tuner device gets: "kernel-tuner-" + a hash of its name, the same
// on every machine, so imports of the same device from several files land on one device row.
std::string synthetic_device_uuid(const std::string& device_name);

}  // namespace cutune::db
