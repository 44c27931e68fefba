#pragma once
// Plain rows of the results database. The tuner fills them; the store writes them; readers
// (reports, lookup, db commands) get them back. No CUDA types here: the db layer stands alone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device_fingerprint.hpp"
#include "observations.hpp"

namespace cutune::db {

// A device as stored: its fingerprint (identity/device_fingerprint.hpp), the row's id, and the
// copy bandwidth measured on it once (what results' copy fractions are relative to).
struct DeviceRecord : DeviceFingerprint {
  std::int64_t id = 0;
  std::optional<double> copy_bandwidth_gbs;  // measured device-to-device copy, read + write bytes
  std::string copy_bandwidth_measured_at;
};

// A problem as stored. Where the family's problem schema is stored (problem_schemas), the store
// derives key, size, dtype and match_key from the descriptor itself (Store::upsert_problem), so
// they can never disagree with it; families without one (imported Kernel Tuner files) keep the
// key, size and dtype they came with and match on the element type alone.
struct ProblemRecord {
  std::int64_t id = 0;
  std::string family;
  std::string key;        // canonical "n=1048576,type=int32"; unique per family
  std::int64_t size = 0;  // the primary size (product of the extents), for nearest-size matching
  std::string dtype;
  std::string descriptor;  // JSON object of every problem field
  std::string match_key;   // the fields a lookup must match exactly: "op=sum,type=float32"
};

struct RunRecord {
  std::int64_t id = 0;
  std::string family;
  std::int64_t device_id = 0;
  std::int64_t template_id = 0;
  std::string strategy;
  std::int64_t seed = 0;
  std::string budget;  // human-readable stop conditions, e.g. "max_evals=200"
  std::string command;
  std::string tool_version;
  std::string started_at, finished_at;
  std::string status;  // running, finished, interrupted, failed
  // An import's: the source file's header as a JSON object keyed by its format (schema.hpp,
  // version 7); '' for a tuning run.
  std::string source_header;
};

struct ResultRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::int64_t device_id = 0;
  std::int64_t template_id = 0;
  std::int64_t problem_id = 0;
  std::string config;       // canonical "name=value,…" in axis order
  std::string config_json;  // the same as a JSON object
  std::string status;       // ok, compile_error, load_error, launch_error, runtime_fault, timeout, wrong_result
  std::optional<double> time_ms_median, time_ms_min, time_ms_max, time_ms_stdev;
  int samples = 0;
  double compile_s = 0, verify_s = 0, benchmark_s = 0;
  std::optional<double> gbs, gflops;
  std::optional<double> copy_fraction;  // GB/s over the device's measured copy bandwidth
  std::string error;                    // NVRTC log, CUDA error, or mismatch description
  std::optional<std::int64_t> error_index;
  std::string
      launch_json;         // the plan's steps in order: launches (grid, block, shared memory) and memsets (stored_step)
  bool verified = true;    // false: the family had no reference, so the outputs were not checked
  bool cut_short = false;  // sampling stopped early, the config clearly behind the best: a rough median
  // The physical GPU (uuid) that measured it, when not the result's device: a multi-GPU run stores
  // the results of same-model GPUs under one device (the run's first of that model). Empty: the device.
  std::string measured_on;
  std::string created_at;
  double elapsed_s = 0;  // seconds since the run started when this result was stored
  // An imported result's: the fields of its source entry that no column above holds exactly
  // (samples, framework time, the timestamp as written, ...), a JSON object keyed by the format
  // (schema.hpp, version 7); '' for cutune's own measurements.
  std::string source_fields;
  // Energy, clocks and resources (observations.hpp, version 8); unknown for older rows and imports.
  Observations observations;
};

// A ready-to-launch build of one config: what an application loads instead of running NVRTC.
struct CubinRecord {
  std::int64_t id = 0;
  std::string arch;  // "sm_90": the cubin runs on this architecture (and later minors of its major)
  std::int64_t template_id = 0;
  std::int64_t problem_id = 0;
  std::string config;
  std::vector<unsigned char> cubin;
  std::string launch_json;      // as in the result the config was measured in
  std::string compile_options;  // JSON array of the options NVRTC saw
  std::string nvrtc_version;
  std::string created_at;
};

// One bench/ measurement: a library doing the family's job on this device, and cutune's best
// stored config for the same problem, timed in the same run.
struct BaselineRecord {
  std::int64_t device_id = 0;
  std::string family, problem_key, library;
  double library_ms = 0, cutune_ms = 0;
  std::string cutune_config, measured_at, commit;
};

// The best "ok" result per (device, family, problem), with the names that make it readable.
struct BestRow {
  std::string device_name, device_uuid, family, problem_key, config, launch_json;
  std::string match_key;  // the problem's fields but its sizes (problem_identity.hpp)
  bool verified = true;
  std::int64_t problem_size = 0;
  std::string dtype;
  double time_ms = 0;
  std::optional<double> gbs, gflops, copy_fraction;
};

}  // namespace cutune::db
